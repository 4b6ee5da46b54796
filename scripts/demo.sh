#!/usr/bin/env bash
# The main job on a fresh machine: build ycsbctl, load 100,000 records of
# YCSB workload A into the embedded store (a temp directory), then run
# 500,000 operations with 8 threads and a status line every 2 seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/ycsbctl ] || make build
dir="${YCSBCTL_DEMO_DIR:-$(mktemp -d -t ycsbctl-demo.XXXXXX)}"
common=(-P workloada -p recordcount=100000 -p embedded.dir="$dir" -p status.interval=2 -threads 8 -s)
echo "== load (embedded store in $dir)"
bin/ycsbctl load embedded "${common[@]}"
echo "== run"
bin/ycsbctl run embedded "${common[@]}" -p operationcount=500000
rm -rf "$dir"

#!/usr/bin/env bash
# The main job on a fresh machine: build ycsbctl, load 100,000 records of
# YCSB workload A into the embedded store (a temp directory), then run
# 500,000 operations with 8 threads and a status line every 2 seconds.
# YCSBCTL_DEMO_RECORDS and YCSBCTL_DEMO_OPS change the counts (the
# documentation's test runs a tenth of them: the same commands in a
# fraction of the time).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/ycsbctl ] || make build
dir="${YCSBCTL_DEMO_DIR:-$(mktemp -d -t ycsbctl-demo.XXXXXX)}"
records="${YCSBCTL_DEMO_RECORDS:-100000}"
ops="${YCSBCTL_DEMO_OPS:-500000}"
common=(-P workloada -p recordcount="$records" -p embedded.dir="$dir" -p status.interval=2 -threads 8 -s)
echo "== load (embedded store in $dir)"
bin/ycsbctl load embedded "${common[@]}"
echo "== run"
bin/ycsbctl run embedded "${common[@]}" -p operationcount="$ops"
rm -rf "$dir"

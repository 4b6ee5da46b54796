#!/usr/bin/env bash
# End-to-end harness cost: `ycsbctl run basic` with YCSB's workload A
# (100k records, 2M operations) at 1 and 16 threads, reporting CPU seconds
# per operation (user+sys from GNU time), the figure to compare with Java
# YCSB (~1.1-1.3 us/op) and go-ycsb (~1.6-1.8 us/op) on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/ycsbctl ] || make build
ops=2000000
for t in 1 16; do
  for i in 1 2 3; do
    out=$( { /usr/bin/time -f 'TIME %U %S %e' bin/ycsbctl run basic -P workloada \
        -p recordcount=100000 -p operationcount=$ops -p basicdb.verbose=false -threads $t; } 2>&1 )
    read -r u s e <<<"$(grep '^TIME' <<<"$out" | cut -d' ' -f2-)"
    thr=$(grep 'Throughput' <<<"$out" | awk -F', ' '{print $3}')
    awk -v t="$t" -v u="$u" -v s="$s" -v e="$e" -v ops="$ops" -v thr="$thr" 'BEGIN {
      printf "threads=%-3d cpu=%.2fs wall=%.2fs cpu/op=%.3fus reported=%.0f ops/s\n", t, u+s, e, (u+s)*1e6/ops, thr }'
  done
done

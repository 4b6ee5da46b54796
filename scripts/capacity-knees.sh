#!/usr/bin/env bash
# How close `ycsbctl capacity` lands to a knee known in advance, for two
# models of the basic adapter: sleeping a fixed delay per call with a
# fixed number of threads (YCSB's BasicDB: at most threads/delay, but a
# loaded host oversleeps, which lowers what the search finds), and the
# simulated server of basicdb.slots (slots/delay, however loaded the
# host: docs/capacity.md). Prints, per search, the knee, the capacity
# found, its error, the probes and the time taken, and the load average.
# The integration tests hold the simulated server's searches to their
# knees.
#
#   scripts/capacity-knees.sh            # make capacity-knees
#   PROBE=4s WARMUP=1s PRECISION=10% scripts/capacity-knees.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/ycsbctl ] || make build
PROBE=${PROBE:-4s} WARMUP=${WARMUP:-1s} PRECISION=${PRECISION:-10%} DELAY_MS=${DELAY_MS:-2}
out=$(mktemp -d)
agents=()
cleanup() {
  for pid in "${agents[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT

# search NAME KNEE ARGS...: one search, one line of figures (KNEE 0: not
# known, no error printed).
search() {
  local name=$1 knee=$2; shift 2
  local dir="$out/$name" start end answer
  start=$(date +%s.%N)
  answer=$(bin/ycsbctl "$@" -P workloadc -p basicdb.verbose=false -p basicdb.simulatedelay="$DELAY_MS" \
    --probe "$PROBE" --warmup "$WARMUP" --interval 500ms --precision "$PRECISION" --results "$dir" 2>"$dir.log" |
    grep '^Capacity: ') || { echo "$name: the search failed, see its log:"; tail -20 "$dir.log"; exit 1; }
  end=$(date +%s.%N)
  awk -v n="$name" -v k="$knee" -v a="$answer" -v p="$(find "$dir" -maxdepth 1 -name 'probe-*' | wc -l)" \
      -v s="$start" -v e="$end" 'BEGIN {
    split(a, f, " "); found = (f[2] == "none") ? 0 : f[2]
    err = (k > 0) ? sprintf("%+.1f%%", 100 * (found - k) / k) : "-"
    printf "%-24s knee=%-6s found=%-6s error=%-7s probes=%-3d time=%.0fs\n", n, (k > 0 ? k : "-"), found, err, p, e - s }'
}

echo "capacity-knees: probe $PROBE, warm-up $WARMUP, precision $PRECISION, delay ${DELAY_MS} ms; load average $(cut -d' ' -f1-3 /proc/loadavg)"
knee1=$((4 * 1000 / DELAY_MS))
search one-host-4x${DELAY_MS}ms "$knee1" capacity basic -threads 4 -p basicdb.randomizedelay=false \
  --slo 'READ.p99<=200ms' --start $((knee1 * 35 / 100))

# Three agent processes of 2 threads each: the capacity adds up.
: >"$out/agents.log"
for _ in 1 2 3; do
  bin/ycsbctl agent --listen 127.0.0.1:0 2>>"$out/agents.log" &
  agents+=($!)
done
for _ in $(seq 600); do
  [ "$(grep -c 'agent: listening on' "$out/agents.log")" = 3 ] && break
  sleep 0.1
done
addrs=$(grep 'agent: listening on' "$out/agents.log" | awk '{print $NF}' | paste -sd,)
[ "$(tr ',' '\n' <<<"$addrs" | grep -c .)" = 3 ] || { echo "the agents did not start:"; cat "$out/agents.log"; exit 1; }
knee3=$((3 * 2 * 1000 / DELAY_MS))
search 3-agents-2x${DELAY_MS}ms "$knee3" coordinator capacity basic --agents "$addrs" -threads 2 \
  -p basicdb.randomizedelay=false --slo 'READ.p99<=200ms' --start $((knee3 * 35 / 100))

# A delay drawn from 0 to DELAY_MS: latency grows with load well before
# saturation (4 threads at DELAY_MS/2 mean), so a tighter objective gives
# a lower capacity.
knee4=$((4 * 2 * 1000 / DELAY_MS))
search random-p99-200ms "$knee4" capacity basic -threads 4 -p basicdb.randomizedelay=true \
  --slo 'READ.p99<=200ms' --start $((knee4 / 2))
search random-p99-3ms 0 capacity basic -threads 4 -p basicdb.randomizedelay=true \
  --slo 'READ.p99<=3ms' --start $((knee4 / 2))

# The simulated server: 4 slots per load generator, 16 threads each to
# keep its queue fed, an objective far above the service time.
slots=(-p basicdb.slots=4 -p basicdb.randomizedelay=false --slo 'READ.p99<=1s')
search slots-one-host-16x4x${DELAY_MS}ms "$knee1" capacity basic -threads 16 "${slots[@]}" --start $((knee1 * 75 / 100))
knee6=$((3 * 4 * 1000 / DELAY_MS))
search slots-3-agents-16x4x${DELAY_MS}ms "$knee6" coordinator capacity basic --agents "$addrs" -threads 16 "${slots[@]}" \
  --start $((knee6 * 75 / 100))
# Delays drawn from 0 to 40 ms on one slot: 50 ops/s, queueing well
# before it, so the tight objective finds less.
rnd=(-threads 8 -p basicdb.slots=1 -p basicdb.randomizedelay=true --start 25)
DELAY_MS=40 search slots-random-p99-1s 50 capacity basic "${rnd[@]}" --slo 'READ.p99<=1s'
DELAY_MS=40 search slots-random-p90-50ms 0 capacity basic "${rnd[@]}" --slo 'READ.p90<=50ms'
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# The scale run (issue 23, "At scale"): AGENTS real `ycsbctl agent`
# processes (default 10) on 127.0.0.1, THREADS threads each (default 64),
# driven by one real `ycsbctl coordinator run basic` for DURATION (default
# 30m) over RECORDCOUNT keys (default 10^8; basic stores nothing, so no load
# phase), status every 10 s. While it runs it samples /proc every 10 s: the
# coordinator's and every agent's RSS, CPU time and write bytes, and the
# spool's size. After it ends it prints `scale-figure:` lines: coordinator
# CPU per interval, spool and wire bytes per agent per interval, RSS at
# 1/5/10/20/30 min with its slope over the last two thirds of the run, and
# whether the merged counts are exact. Not in CI: `make scale`.
#
#   TARGET    total ops/s over all agents (default 20000, which leaves this
#             2-core machine usable; 0 = unthrottled)
#   SCALE_DIR where the raw samples and the run bundle go (default: a new
#             directory under /tmp, named in the output)
#
# Exit 0 when the run completed and its counts are exact, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

DURATION=${DURATION:-30m}
TARGET=${TARGET:-20000}
AGENTS=${AGENTS:-10}
THREADS=${THREADS:-64}
RECORDCOUNT=${RECORDCOUNT:-100000000}
INTERVAL_S=10

case "$DURATION" in
  *h) dur_s=$(( ${DURATION%h} * 3600 )) ;;
  *m) dur_s=$(( ${DURATION%m} * 60 )) ;;
  *s) dur_s=${DURATION%s} ;;
  *[!0-9]*|'') echo "scale-run: DURATION=$DURATION: expected a whole number of seconds, minutes or hours, e.g. 30m" >&2; exit 2 ;;
  *) dur_s=$DURATION ;;
esac
if ! [[ "$dur_s" =~ ^[0-9]+$ ]] || (( dur_s < 2 * INTERVAL_S )); then
  echo "scale-run: DURATION=$DURATION: expected at least $((2 * INTERVAL_S))s (two status intervals)" >&2; exit 2
fi
for v in TARGET AGENTS THREADS RECORDCOUNT; do
  if ! [[ "${!v}" =~ ^[0-9]+$ ]]; then echo "scale-run: $v=${!v}: expected a whole number" >&2; exit 2; fi
done
(( AGENTS >= 1 && THREADS >= 1 )) || { echo "scale-run: AGENTS and THREADS: expected at least 1" >&2; exit 2; }

[ -x bin/ycsbctl ] || make build
out=${SCALE_DIR:-$(mktemp -d /tmp/ycsbctl-scale.XXXXXX)}
mkdir -p "$out"
if [ -e "$out/results" ] || [ -e "$out/samples.tsv" ]; then
  echo "scale-run: SCALE_DIR=$out already holds a scale run; name a new directory" >&2; exit 2
fi
echo "scale-run: raw samples, logs and the run bundle in $out"

agent_pids=()
coord_pid=
stop_all() {
  # Only the processes this script started, by PID.
  [ -n "$coord_pid" ] && kill "$coord_pid" 2>/dev/null || true
  for p in "${agent_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${agent_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_all EXIT

addrs=()
for ((i = 0; i < AGENTS; i++)); do
  bin/ycsbctl agent --listen 127.0.0.1:0 >"$out/agent$i.log" 2>&1 &
  agent_pids+=($!)
done
for ((i = 0; i < AGENTS; i++)); do
  a=
  for ((w = 0; w < 600; w++)); do # up to a minute on a loaded machine
    a=$(sed -n 's/.*agent: listening on \([0-9.]*:[0-9]*\).*/\1/p' "$out/agent$i.log" | head -1)
    [ -n "$a" ] && break
    kill -0 "${agent_pids[$i]}" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$a" ]; then echo "scale-run: agent $i did not report its address; its log:" >&2; cat "$out/agent$i.log" >&2; exit 1; fi
  addrs+=("$a")
done
agents_csv=$(IFS=,; echo "${addrs[*]}")

# TARGET=0 runs unthrottled; operationcount=0 leaves the time budget
# (maxexecutiontime) as the only bound.
/usr/bin/time -o "$out/coordinator.time" -f '%e %U %S %M' \
  bin/ycsbctl coordinator run basic --agents "$agents_csv" -P workloada \
    -p recordcount="$RECORDCOUNT" -p operationcount=0 -p maxexecutiontime="$dur_s" \
    -p basicdb.verbose=false -threads "$THREADS" -target "$TARGET" \
    --interval ${INTERVAL_S}s -s --no-tui --results "$out/results" \
    >"$out/coordinator.out" 2>"$out/coordinator.err" &
time_pid=$!
for ((w = 0; w < 100; w++)); do
  coord_pid=$(pgrep -P "$time_pid" || true)
  [ -n "$coord_pid" ] && break
  sleep 0.05
done
[ -n "$coord_pid" ] || { echo "scale-run: the coordinator did not start" >&2; cat "$out/coordinator.err" >&2; exit 1; }

# One line per process per sample: seconds since start, role, RSS (KiB),
# CPU seconds (utime+stime), bytes written through write(2) and friends
# (for an agent that is almost all gRPC to the coordinator).
tck=$(getconf CLK_TCK)
sample() {
  local t=$1 role=$2 pid=$3 rss cpu wchar
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || return 0
  cpu=$(awk -v tck="$tck" '{sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / tck}' "/proc/$pid/stat" 2>/dev/null) || return 0
  wchar=$(awk '/^wchar:/ {print $2}' "/proc/$pid/io" 2>/dev/null) || return 0
  [ -n "$rss" ] && printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$role" "$rss" "$cpu" "$wchar" >>"$out/samples.tsv"
}
# The agents' TCP connections to the coordinator as the kernel counts
# them (ss), one line per agent: what went over the wire, gRPC framing and
# heartbeats included, which /proc/PID/io cannot tell from the runtime's
# own writes.
ss_filter=$(for a in "${addrs[@]}"; do printf 'sport = :%s or ' "${a##*:}"; done)
ss_filter="( ${ss_filter% or } )"
wire_sample() {
  ss -tinH state established "$ss_filter" 2>/dev/null | awk -v t="$1" '
    NR % 2 == 1 { n = split($(NF - 1), l, ":"); port = l[n]; next }
    { for (i = 1; i <= NF; i++) { split($i, kv, ":"); if (kv[1] == "bytes_sent") s[port] += kv[2]; if (kv[1] == "bytes_received") r[port] += kv[2] } }
    END { for (p in s) printf "%s\t%s\t%s\t%s\n", t, p, s[p], r[p] }' >>"$out/wire.tsv"
}
printf 't_s\tagent_port\tbytes_sent\tbytes_received\n' >"$out/wire.tsv"
printf 't_s\trole\trss_kib\tcpu_s\twchar_bytes\n' >"$out/samples.tsv"
printf 't_s\tspool_bytes\n' >"$out/spool.tsv"
t0=$(date +%s.%N)
k=0
while kill -0 "$coord_pid" 2>/dev/null; do
  t=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN {printf "%.1f", a - b}')
  sample "$t" coordinator "$coord_pid"
  for ((i = 0; i < AGENTS; i++)); do sample "$t" "agent$i" "${agent_pids[$i]}"; done
  wire_sample "$t"
  sp=$(find "$out/results" -maxdepth 1 -name '.spool-*' -printf '%s\n' 2>/dev/null | head -1)
  [ -n "$sp" ] && printf '%s\t%s\n' "$t" "$sp" >>"$out/spool.tsv"
  k=$((k + 1))
  # Sample on a fixed 10 s grid from the start, not 10 s after the last sample.
  sleep "$(awk -v k="$k" -v s="$INTERVAL_S" -v b="$t0" -v now="$(date +%s.%N)" 'BEGIN {d = b + k * s - now; printf "%.2f", (d > 0 ? d : 0)}')"
done
set +e
wait "$time_pid"
coord_rc=$?
set -e
coord_pid=
echo "scale-run: coordinator exited $coord_rc; stderr tail:"
tail -3 "$out/coordinator.err"

python3 "$repo/scripts/scale-figures.py" "$out" "$dur_s" "$TARGET" "$AGENTS" "$THREADS" "$RECORDCOUNT" "$coord_rc" | tee "$out/figures.txt"
exit "${PIPESTATUS[0]}"

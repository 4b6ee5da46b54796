#!/usr/bin/env bash
# Throughput and client CPU per operation of ycsbctl against each real test
# server on this machine, with the `basic` adapter (no database) as the
# harness floor:
#
#   scripts/bench-dbs.sh [basic] [cassandra] [hbase] [mongodb]   (default: all four)
#
# For each database: start its server with integration/servers.sh (one at a
# time: the JVM servers never run together), drop and init the schema, then
# a 16-thread load and a 16-thread workload A run, each under GNU time.
# Client CPU per operation is the ycsbctl process's user+sys divided by the
# operations it reports; the server's own CPU over the same phase (from
# /proc/<pid>/stat) is shown beside it, since client and server share the
# machine's cores. The server is stopped afterwards.
#
# The "mongodb" server here is FerretDB 1.24 on SQLite, a MongoDB
# wire-protocol stand-in (integration/scripts/mongodb.sh): its figures are
# FerretDB's and are labelled so; they say nothing about MongoDB.
#
# Environment:
#   THREADS          client threads (default 16)
#   RECORDS, OPS     load records and workload A operations (default 20000 each)
#   FERRET_RECORDS, FERRET_OPS   the same for FerretDB (default 5000 each)
#   BASIC_OPS        an extra basic run of this many operations, showing the
#                    floor without start-up costs (default 1000000; 0 skips)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

THREADS="${THREADS:-16}"
RECORDS="${RECORDS:-20000}"
OPS="${OPS:-20000}"
FERRET_RECORDS="${FERRET_RECORDS:-5000}"
FERRET_OPS="${FERRET_OPS:-5000}"
BASIC_OPS="${BASIC_OPS:-1000000}"

dbs=("$@")
[ ${#dbs[@]} -gt 0 ] || dbs=(basic cassandra hbase mongodb)
for db in "${dbs[@]}"; do
  case "$db" in basic|cassandra|hbase|mongodb) ;; *) echo "bench-dbs.sh: unknown db $db" >&2; exit 2 ;; esac
done
[ -x /usr/bin/time ] || { echo "bench-dbs.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }

echo "building bin/ycsbctl" >&2
make -s build >&2
bin="$root/bin/ycsbctl"
servers_dir="${YCSBCTL_SERVERS_DIR:-$root/.servers}"
work="$(mktemp -d)"
running=""
cleanup() {
  if [ -n "$running" ]; then
    echo "stopping $running" >&2
    bash integration/servers.sh stop "$running" >&2 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ticks=$(getconf CLK_TCK)

# server_cpu prints the server process's user+sys CPU seconds, or "-".
server_cpu() {
  local pidfile
  case "$1" in
    cassandra) pidfile="$servers_dir/cassandra/cassandra.pid" ;;
    hbase) pidfile="$servers_dir/hbase/hbase.pid" ;;
    mongodb) pidfile="$servers_dir/mongodb/ferretdb.pid" ;;
    *) echo "-"; return ;;
  esac
  local pid
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  if [ -z "$pid" ] || [ ! -r "/proc/$pid/stat" ]; then echo "-"; return; fi
  # Fields after the ")" that ends the command name: utime is the 12th, stime the 13th.
  sed 's/^.*) //' "/proc/$pid/stat" | awk -v t="$ticks" '{ printf "%.2f", ($12 + $13) / t }'
}

label() {
  case "$1" in
    basic) echo "basic (no DB, harness floor)" ;;
    cassandra) echo "Cassandra 5.0.9" ;;
    hbase) echo "HBase 2.6.4 (standalone)" ;;
    mongodb) echo "FerretDB 1.24/SQLite (MongoDB wire protocol; not MongoDB)" ;;
  esac
}

props() {
  case "$1" in
    basic) echo "-p basicdb.verbose=false" ;;
    cassandra) echo "-p hosts=127.0.0.1" ;;
    hbase) echo "-p columnfamily=family -p hbase.zookeeper.quorum=127.0.0.1:2181" ;;
    mongodb) echo "-p mongodb.url=mongodb://127.0.0.1:27017/ycsb" ;;
  esac
}

results=()

# measure DB PHASE RECORDS OPS: one timed ycsbctl invocation; appends a
# result row.
measure() {
  local db="$1" phase="$2" records="$3" ops="$4"
  local out="$work/$db-$phase.out" err="$work/$db-$phase.err"
  local -a args
  # shellcheck disable=SC2207
  args=($(props "$db") -p recordcount="$records")
  if [ "$phase" = run ]; then args+=(-p operationcount="$ops"); fi
  local s0 s1
  s0="$(server_cpu "$db")"
  echo "$db: $phase (records=$records ops=$ops threads=$THREADS)" >&2
  if ! /usr/bin/time -f 'TIME %U %S %e' -o "$work/time" \
      "$bin" "$phase" "$db" -P workloada "${args[@]}" -threads "$THREADS" >"$out" 2>"$err"; then
    echo "bench-dbs.sh: ycsbctl $phase $db failed:" >&2
    tail -n 20 "$err" >&2
    cat "$work/time" >&2 || true
    exit 1
  fi
  s1="$(server_cpu "$db")"
  local u s e
  read -r u s e <<<"$(grep '^TIME' "$work/time" | cut -d' ' -f2-)"
  local thr n
  thr="$(awk -F', ' '/^\[OVERALL\], Throughput/ {print $3}' "$out")"
  # Operations: the sum of the Return= counts of the database operations
  # (workload A has no read-modify-write, so each operation counts once).
  n="$(awk -F', ' '$2 ~ /^Return=/ && $1 !~ /VERIFY|CLEANUP/ {n += $3} END {print n+0}' "$out")"
  local bad
  bad="$(awk -F', ' '$2 ~ /^Return=/ && $2 != "Return=OK" && $2 != "Return=BATCHED_OK" && $1 !~ /VERIFY|CLEANUP/ {print $1 " " $2 " " $3}' "$out" | tr '\n' ';')"
  local srv="-"
  if [ "$s0" != "-" ] && [ "$s1" != "-" ]; then
    srv="$(awk -v a="$s0" -v b="$s1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) * 1e6 / n }')"
  fi
  results+=("$(awk -v l="$(label "$db")" -v p="$phase" -v n="$n" -v t="$THREADS" -v u="$u" -v s="$s" -v e="$e" -v thr="$thr" -v srv="$srv" -v bad="$bad" 'BEGIN {
    line = sprintf("%-58s %-4s %8d %3d %8.2f %10.0f %7.2f %7.2f %10.1f %10s", l, p, n, t, e, thr, u, s, (u + s) * 1e6 / n, srv)
    if (bad != "") line = line "  non-OK: " bad
    print line }')")
}

for db in "${dbs[@]}"; do
  records="$RECORDS" ops="$OPS"
  if [ "$db" = mongodb ]; then records="$FERRET_RECORDS" ops="$FERRET_OPS"; fi
  if [ "$db" != basic ]; then
    if bash integration/servers.sh status "$db" >/dev/null 2>&1; then
      echo "bench-dbs.sh: a $db server is already running (someone else's run?); not touching it" >&2
      exit 1
    fi
    echo "starting $db" >&2
    running="$db"
    bash integration/servers.sh start "$db" >&2
    # shellcheck disable=SC2046
    "$bin" drop "$db" $(props "$db") >&2
    # shellcheck disable=SC2046
    "$bin" init "$db" $(props "$db") >&2
  fi
  measure "$db" load "$records" 0
  measure "$db" run "$records" "$ops"
  if [ "$db" = basic ] && [ "$BASIC_OPS" -gt 0 ]; then
    measure basic run "$records" "$BASIC_OPS"
  fi
  if [ "$db" != basic ]; then
    bash integration/servers.sh stop "$db" >&2
    running=""
  fi
done

echo
echo "ycsbctl $("$bin" --version 2>/dev/null | awk '{print $NF}'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "cpu/op = (user+sys of the ycsbctl process, GNU time) / operations; srv = the server process's CPU over the same phase / operations"
printf "%-58s %-4s %8s %3s %8s %10s %7s %7s %10s %10s\n" "server" "" "ops" "thr" "wall(s)" "ops/s" "user(s)" "sys(s)" "cpu/op(us)" "srv(us/op)"
for r in "${results[@]}"; do echo "$r"; done

#!/usr/bin/env bash
# Client CPU per operation, throughput, latency and memory of ycsbctl beside
# Java YCSB 0.17.0 and, against Cassandra, latte (the Rust benchmark on the
# ScyllaDB driver, the lightest Cassandra client there is), against each
# real test server on this machine:
#
#   scripts/bench-dbs.sh [basic] [cassandra] [hbase] [mongodb]   (default: all four)
#
# "basic" compares ycsbctl's basic adapter with Java YCSB's BasicDB (no
# database: the harness floor); it always runs Java YCSB, whose core jar
# comes from Maven Central (integration/scripts/javaycsb.sh). For each real
# database the script starts its server with integration/servers.sh (one at
# a time: the JVM servers never run together), drops and creates the schema,
# loads it with ycsbctl, then runs workload A at each thread count, REPEATS
# times, alternating ycsbctl and Java YCSB's adapter for that database so
# that both see the same server, data and machine load.
#
# Java YCSB's cassandra-cql, hbase2 and mongodb adapters are not on Maven
# Central. Point JAVA_YCSB_HOME at a built Java YCSB 0.17.0 distribution
# (the layout of ycsb-0.17.0.tar.gz: lib/*.jar plus <adapter>-binding/lib
# per adapter) to measure cassandra-cql and hbase2 (hbase20-binding);
# without it the script says so and measures ycsbctl alone. The mongodb
# adapter's old Java driver cannot talk to FerretDB (see java_adapter), so
# for FerretDB ycsbctl is always measured alone.
#
# latte runs YCSB workload A's read and update against the table ycsbctl
# loaded (scripts/latte-workloada.rn: same table, keys, 100-byte field,
# whole-row read, one-field update, QUORUM; keys drawn uniformly), with as
# many requests in flight on one thread as ycsbctl has threads. It is built
# from crates.io into .tools/latte on first use (scripts/latte.sh, about 11
# minutes of CPU); without cargo the script says so and skips it. LATTE=0
# skips it too.
#
# Each run is one process under GNU time. CPU per operation is the client
# process's user+sys, start-up included (a JVM's start-up is part of Java
# YCSB's cost as ycsbctl's is of its own), divided by the operations it
# reports; user and system time, voluntary context switches and peak RSS
# come from the same run. Unless SYSCALLS is 0, each client, thread count
# and BUSY level gets SYSCALLS more runs under `strace -f -c` (when strace
# is installed) and as many under `perf stat -e raw_syscalls:sys_enter`
# (when perf can count that tracepoint here) for its system calls per
# operation; those runs' CPU is not used. The two counts differ: strace
# stops the process at every call, which changes its timing and with it
# the count; perf's tracepoint counts in the kernel without stopping
# anything (the "untraced" column). One run of either is not a figure to
# go by: against Cassandra, ycsbctl's strace count ranged from 0.93 to
# 1.61 calls per operation over ten runs on a quiet machine, so the table
# shows their median and range, beside the timed runs' medians (and, for
# CPU, range). Nothing here asserts a timing; the figures are printed
# only.
#
# The "mongodb" server is FerretDB 1.24 on SQLite, a MongoDB wire-protocol
# stand-in (integration/scripts/mongodb.sh): its figures are FerretDB's and
# are labelled so; they say nothing about MongoDB.
#
# Environment:
#   THREADS          thread counts (default "1 16 64")
#   REPEATS          runs per client and thread count, alternating (default 2)
#   RECORDS, OPS     records loaded and workload A operations (default 20000)
#   OPS_1            operations at 1 thread (default 4000)
#   FERRET_RECORDS, FERRET_OPS   the same for FerretDB (default 5000 each)
#   BASIC_OPS        operations of the basic runs (default 1000000)
#   WARMUP           operations of one unmeasured ycsbctl run of workload A
#                    against each real server after its load, at the
#                    largest of THREADS, before any measured run (default:
#                    OPS, FERRET_OPS for FerretDB; 0: no warm-up run).
#                    A server fresh from its load is still compiling its
#                    hot paths: against Cassandra the first run after the
#                    load cost ycsbctl 47.5 us/op at 4.2k ops/s where the
#                    next ones cost 33-37 at 11-13k, and without this run
#                    that cost fell on whichever client went first
#   JAVA_YCSB_HOME   a built Java YCSB distribution (optional, see above)
#   JAVA             java 17 binary (default /usr/lib/jvm/java-17-openjdk-amd64/bin/java)
#   LATTE            0: do not run latte (default 1: build it if needed)
#   SYSCALLS         counting runs per client, thread count and BUSY
#                    level, under strace and under perf each (default 3;
#                    0: none)
#   BUSY             CPU-bound processes run beside every measured run
#                    (default 0): BUSY=2 on a 2-core machine measures the
#                    clients on a loaded machine (each burner is a shell
#                    loop at normal priority, started before the run and
#                    killed after it). A list, BUSY="0 2", measures each
#                    level in every repeat, interleaved with the clients,
#                    so that the idle and the loaded runs meet the same
#                    server, data and outside load; the table then has a
#                    row per level and, under it, each client's idle
#                    against loaded difference (the issue tracker's
#                    comparison; separate invocations compare a server
#                    warmed and compacted differently)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

THREADS="${THREADS:-1 16 64}"
REPEATS="${REPEATS:-2}"
RECORDS="${RECORDS:-20000}"
OPS="${OPS:-20000}"
OPS_1="${OPS_1:-4000}"
FERRET_RECORDS="${FERRET_RECORDS:-5000}"
FERRET_OPS="${FERRET_OPS:-5000}"
BASIC_OPS="${BASIC_OPS:-1000000}"
JAVA="${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}"
JAVA_YCSB_HOME="${JAVA_YCSB_HOME:-}"
LATTE="${LATTE:-1}"
SYSCALLS="${SYSCALLS:-3}"
BUSY="${BUSY:-0}"
WARMUP="${WARMUP-}"

dbs=("$@")
[ ${#dbs[@]} -gt 0 ] || dbs=(basic cassandra hbase mongodb)
for db in "${dbs[@]}"; do
  case "$db" in basic|cassandra|hbase|mongodb) ;; *) echo "bench-dbs.sh: unknown db $db (expected basic, cassandra, hbase or mongodb)" >&2; exit 2 ;; esac
done
levels=0
for b in $BUSY; do
  case "$b" in *[!0-9]*) levels=0; break ;; esac
  levels=$((levels + 1))
done
[ "$levels" -gt 0 ] || { echo "bench-dbs.sh: BUSY must be a number of busy processes, or a list of them such as \"0 2\" (got '$BUSY')" >&2; exit 2; }
for n in $THREADS $REPEATS $RECORDS $OPS $OPS_1 $FERRET_RECORDS $FERRET_OPS $BASIC_OPS; do
  case "$n" in ''|*[!0-9]*|0) echo "bench-dbs.sh: THREADS, REPEATS, RECORDS, OPS, OPS_1, FERRET_*, BASIC_OPS must be positive integers (got '$n')" >&2; exit 2 ;; esac
done
case "$WARMUP" in *[!0-9]*) echo "bench-dbs.sh: WARMUP must be a number of operations of the unmeasured warm-up run, 0 for none (got '$WARMUP')" >&2; exit 2 ;; esac
case "$SYSCALLS" in ''|*[!0-9]*) echo "bench-dbs.sh: SYSCALLS must be a number of system call counting runs (under strace and under perf each), 0 for none (got '$SYSCALLS')" >&2; exit 2 ;; esac
SYSCALLS=$((10#$SYSCALLS)) # "00" is 0 and "03" is 3 below
[ -z "$WARMUP" ] || WARMUP=$((10#$WARMUP))
max_threads=0
for t in $THREADS; do [ "$t" -le "$max_threads" ] || max_threads="$t"; done
[ -x /usr/bin/time ] || { echo "bench-dbs.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }
[ -x "$JAVA" ] || { echo "bench-dbs.sh: JAVA=$JAVA is not executable (a JDK 17 java is needed for Java YCSB)" >&2; exit 1; }
if [ -n "$JAVA_YCSB_HOME" ] && [ ! -d "$JAVA_YCSB_HOME/lib" ]; then
  echo "bench-dbs.sh: JAVA_YCSB_HOME=$JAVA_YCSB_HOME has no lib/ directory (expected a built Java YCSB distribution)" >&2
  exit 2
fi

echo "building bin/ycsbctl" >&2
make -s build >&2
bin="$root/bin/ycsbctl"
core_cp="$(bash integration/scripts/javaycsb.sh)"
latte_bin=""
latte_note=""
if [ "$LATTE" != 0 ] && [[ " ${dbs[*]} " == *" cassandra "* ]]; then
  rc=0
  latte_bin="$(bash scripts/latte.sh)" || rc=$?
  if [ $rc -eq 3 ]; then
    latte_bin=""
    latte_note="latte skipped: cargo is not installed (install Rust's cargo to compare with latte)."
  elif [ $rc -ne 0 ]; then
    echo "bench-dbs.sh: building latte failed (scripts/latte.sh exit $rc); LATTE=0 skips it" >&2
    exit 1
  fi
fi
strace_ok="" perf_ok="" perf_note=""
if [ "$SYSCALLS" != 0 ]; then
  if command -v strace >/dev/null 2>&1; then strace_ok=1; fi
  # perf may be installed yet unable to count a tracepoint (no tracefs, or
  # perf_event_open refused): say which, rather than print no column.
  if ! command -v perf >/dev/null 2>&1; then
    perf_note="untraced syscalls/op not measured: perf is not installed (Debian's linux-perf)."
  elif ! perf_err="$(perf stat -e raw_syscalls:sys_enter -x, -o /dev/null -- true 2>&1)"; then
    perf_note="untraced syscalls/op not measured: perf stat cannot count raw_syscalls:sys_enter here ($(printf '%s' "$perf_err" | head -n 1))."
  else
    perf_ok=1
  fi
fi
work="$(mktemp -d)"
running=""
burners=()
# busy_start N and busy_stop put N CPU-bound processes beside a run.
busy_start() {
  local i
  for ((i = 0; i < $1; i++)); do
    bash -c 'while :; do :; done' &
    burners+=($!)
  done
}
busy_stop() {
  [ ${#burners[@]} -gt 0 ] || return 0
  kill "${burners[@]}" 2>/dev/null || true
  wait "${burners[@]}" 2>/dev/null || true
  burners=()
}
cleanup() {
  busy_stop
  if [ -n "$running" ]; then
    echo "stopping $running" >&2
    bash integration/servers.sh stop "$running" >&2 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

label() {
  case "$1" in
    basic) echo "none (basic / BasicDB)" ;;
    cassandra) echo "Cassandra 5.0.9" ;;
    hbase) echo "HBase 2.6.4 standalone" ;;
    mongodb) echo "FerretDB 1.24/SQLite (not MongoDB)" ;;
  esac
}

# ycsbctl_props and java_props are each client's properties for a server.
ycsbctl_props() {
  case "$1" in
    basic) echo "-p basicdb.verbose=false" ;;
    cassandra) echo "-p hosts=127.0.0.1" ;;
    hbase) echo "-p columnfamily=family -p hbase.zookeeper.quorum=127.0.0.1:2181" ;;
    mongodb) echo "-p mongodb.url=mongodb://127.0.0.1:27017/ycsb" ;;
  esac
}
java_props() {
  case "$1" in
    basic) echo "-p basicdb.verbose=false" ;;
    cassandra) echo "-p hosts=127.0.0.1" ;;
    # Java YCSB's HBase client reads the ZooKeeper quorum from the HBase
    # configuration, whose default is localhost:2181.
    hbase) echo "-p columnfamily=family -p hbase.zookeeper.quorum=127.0.0.1" ;;
    mongodb) echo "-p mongodb.url=mongodb://127.0.0.1:27017/ycsb" ;;
  esac
}

# java_binding DB sets cls, dirs (under JAVA_YCSB_HOME, the first that has
# a lib/ wins) and adapter (Java YCSB's name) for a database's binding
# outside Java YCSB's core; all empty when there is none.
java_binding() {
  cls="" dirs="" adapter=""
  case "$1" in
    # No mongodb: Java YCSB 0.17.0's adapter ships MongoDB Java driver 3.8,
    # whose handshake is a legacy OP_QUERY command that FerretDB 1.24
    # rejects (error 352, UnsupportedOpQueryCommand): every operation then
    # waits out the driver's 30 s server selection. It can only be
    # compared against a real MongoDB, which this machine does not have
    # (java_missing says so).
    cassandra) cls=site.ycsb.db.CassandraCQLClient dirs="cassandra-binding" adapter=cassandra-cql ;;
    hbase) cls=site.ycsb.db.hbase20.HBaseClient20 dirs="hbase20-binding hbase2-binding" adapter=hbase2 ;;
  esac
}

# java_adapter prints "class<TAB>classpath" for Java YCSB's adapter of a
# database, or nothing when it is not available.
java_adapter() {
  if [ "$1" = basic ]; then
    printf '%s\t%s\n' site.ycsb.BasicDB "$core_cp"
    return
  fi
  [ -n "$JAVA_YCSB_HOME" ] || return 0
  local cls dirs adapter d
  java_binding "$1"
  for d in $dirs; do
    if compgen -G "$JAVA_YCSB_HOME/$d/lib/*.jar" >/dev/null; then
      printf '%s\t%s\n' "$cls" "$JAVA_YCSB_HOME/lib/*:$JAVA_YCSB_HOME/$d/lib/*"
      return
    fi
  done
}

# java_missing DB: why Java YCSB is not measured against DB (java_adapter
# found none).
java_missing() {
  if [ "$1" = mongodb ]; then
    echo "mongodb, because Java YCSB's mongodb adapter (MongoDB Java driver 3.8) cannot connect to FerretDB, the only MongoDB-protocol server here"
    return
  fi
  local cls dirs adapter d where=""
  java_binding "$1"
  if [ -z "$JAVA_YCSB_HOME" ]; then
    echo "$1, because Java YCSB's $adapter adapter is not on Maven Central (set JAVA_YCSB_HOME to a built Java YCSB 0.17.0 distribution to compare it)"
  else
    for d in $dirs; do where="$where${where:+ or }$d/lib"; done
    echo "$1, because JAVA_YCSB_HOME=$JAVA_YCSB_HOME has no $where with its $adapter adapter"
  fi
}

# client_cmd DB CLIENT THREADS OPS RECORDS TAG: sets cmd to the command of
# one run of workload A.
client_cmd() {
  local db="$1" client="$2" threads="$3" ops="$4" records="$5" tag="$6"
  local common=(-P "$root/workloads/workloada" -threads "$threads" -p recordcount="$records"
    -p operationcount="$ops" -p hdrhistogram.percentiles=50,95,99)
  case "$client" in
    ycsbctl)
      # shellcheck disable=SC2207
      cmd=("$bin" run "$db" "${common[@]}" $(ycsbctl_props "$db")) ;;
    latte)
      # One thread with THREADS requests in flight: latte's way of
      # running THREADS YCSB client threads' worth of load.
      # latte writes a log file into its working directory: keep it in
      # the scratch directory.
      cmd=(env -C "$work" "$latte_bin" run "$root/scripts/latte-workloada.rn" -f read:1 -f update:1 -d "$ops" -w 0
        -t 1 -p "$threads" -q --consistency QUORUM -P records="$records" -o "$tag.json" 127.0.0.1) ;;
    java)
      local cls cp
      IFS=$'\t' read -r cls cp <<<"$(java_adapter "$db")"
      # shellcheck disable=SC2207
      cmd=("$JAVA" -cp "$cp" site.ycsb.Client -t -db "$cls" "${common[@]}" $(java_props "$db")) ;;
  esac
}

# parse_ops CLIENT OPS FILE: prints "ops thr p50r p50u p99r p99u" of a
# run's output (latencies in us), or fails.
parse_ops() {
  local client="$1" ops="$2" out="$3"
  if [ "$client" = latte ]; then
    # latte prints per-function latency tables in ms; the operations are
    # the cycles asked for, provided none failed.
    awk -v ops="$ops" '
      $1 == "Errors" && $2 == "[op]" { err = $3 }
      $1 == "Throughput" && $2 == "[op/s]" { thr = $3 }
      /CYCLE LATENCY for read/ { fn = "r" } /CYCLE LATENCY for update/ { fn = "u" }
      fn != "" && $1 == "50" { p50[fn] = $2 * 1000 }
      fn != "" && $1 == "99" { p99[fn] = $2 * 1000 }
      END {
        if (thr == "" || err == "") { print "no latte summary" > "/dev/stderr"; exit 1 }
        if (err != 0) { print "latte: " err " failed operations" > "/dev/stderr"; exit 1 }
        printf "%d %s %.0f %.0f %.0f %.0f\n", ops, thr, p50["r"], p50["u"], p99["r"], p99["u"]
      }' "$out"
    return
  fi
  # Operations: the sum of the Return= counts of the database operations
  # (workload A has no read-modify-write, so each operation counts once).
  awk -F', ' '
    $2 ~ /^Return=/ && $1 !~ /VERIFY|CLEANUP/ { n += $3; if ($2 != "Return=OK") bad = bad " " $1 $2 }
    $1 == "[OVERALL]" && $2 == "Throughput(ops/sec)" { thr = $3 }
    $1 == "[READ]" && $2 == "50thPercentileLatency(us)" { p50r = $3 }
    $1 == "[UPDATE]" && $2 == "50thPercentileLatency(us)" { p50u = $3 }
    $1 == "[READ]" && $2 == "99thPercentileLatency(us)" { p99r = $3 }
    $1 == "[UPDATE]" && $2 == "99thPercentileLatency(us)" { p99u = $3 }
    END {
      if (n == 0) { print "no operations reported" > "/dev/stderr"; exit 1 }
      if (bad != "") print "non-OK results:" bad > "/dev/stderr"
      printf "%d %.0f %s %s %s %s\n", n, thr, p50r, p50u, p99r, p99u
    }' "$out"
}

# measure DB CLIENT THREADS OPS RECORDS REP BUSY: one timed run of workload
# A beside BUSY burners; appends "db client threads busy cpu_us user_us
# sys_us thr p50r p50u p99r p99u rss_kb vcs_per_op allocs_per_op
# bytes_per_op" to $work/rows (the heap allocations from ycsbctl's
# YCSBCTL_RUNTIMESTATS, -1 for the other clients).
measure() {
  local db="$1" client="$2" threads="$3" ops="$4" records="$5" rep="$6" busy="$7"
  local tag="$work/$db-$client-$threads-$busy-$rep"
  local -a cmd
  client_cmd "$db" "$client" "$threads" "$ops" "$records" "$tag"
  echo "$db: $client threads=$threads ops=$ops busy=$busy run $rep" >&2
  rm -f "$tag.rt"
  busy_start "$busy"
  local rc=0
  YCSBCTL_RUNTIMESTATS="$tag.rt" /usr/bin/time -f 'TIME %U %S %e %M %w' -o "$tag.time" "${cmd[@]}" >"$tag.out" 2>"$tag.err" || rc=$?
  busy_stop
  if [ $rc -ne 0 ]; then
    echo "bench-dbs.sh: $client run $db failed:" >&2
    tail -n 20 "$tag.err" >&2
    cat "$tag.time" >&2 || true
    exit 1
  fi
  local u s e m w n thr p50r p50u p99r p99u
  read -r u s e m w <<<"$(grep '^TIME' "$tag.time" | cut -d' ' -f2-)"
  read -r n thr p50r p50u p99r p99u <<<"$(parse_ops "$client" "$ops" "$tag.out")" ||
    { echo "bench-dbs.sh: cannot read $client output for $db" >&2; tail -n 20 "$tag.out" >&2; exit 1; }
  [ -n "$n" ] || { echo "bench-dbs.sh: cannot read $client output for $db" >&2; tail -n 20 "$tag.out" >&2; exit 1; }
  local objs=-1 bytes=-1
  if [ -s "$tag.rt" ]; then
    objs="$(awk '$1 == "/gc/heap/allocs:objects" { print $2 }' "$tag.rt")"
    bytes="$(awk '$1 == "/gc/heap/allocs:bytes" { print $2 }' "$tag.rt")"
  fi
  awk -v db="$db" -v c="$client" -v t="$threads" -v busy="$busy" -v u="$u" -v s="$s" -v m="$m" -v w="$w" -v n="$n" \
    -v thr="$thr" -v a="$p50r" -v b="$p50u" -v x="$p99r" -v y="$p99u" -v objs="${objs:--1}" -v bytes="${bytes:--1}" 'BEGIN {
      printf "%s %s %d %d %.2f %.2f %.2f %.0f %s %s %s %s %d %.3f %.1f %.0f\n", db, c, t, busy, (u + s) * 1e6 / n, u * 1e6 / n, s * 1e6 / n,
        thr, a, b, x, y, m, w / n, objs < 0 ? -1 : objs / n, bytes < 0 ? -1 : bytes / n }' >>"$work/rows"
}

# warm_up DB THREADS OPS RECORDS: one unmeasured ycsbctl run of workload A
# against DB's server, fresh from its load; appends "db threads ops
# ops_per_s" to $work/warmups for the header.
warm_up() {
  local db="$1" threads="$2" ops="$3" records="$4"
  local tag="$work/$db-warmup"
  local -a cmd
  client_cmd "$db" ycsbctl "$threads" "$ops" "$records" "$tag"
  echo "$db: warm-up, ycsbctl threads=$threads ops=$ops (not measured)" >&2
  local rc=0
  "${cmd[@]}" >"$tag.out" 2>"$tag.err" || rc=$?
  if [ $rc -ne 0 ]; then
    echo "bench-dbs.sh: the warm-up run of ycsbctl against $db failed:" >&2
    tail -n 20 "$tag.err" >&2
    exit 1
  fi
  local n thr
  read -r n thr _ <<<"$(parse_ops ycsbctl "$ops" "$tag.out")" ||
    { echo "bench-dbs.sh: cannot read the warm-up run's output for $db" >&2; tail -n 20 "$tag.out" >&2; exit 1; }
  echo "$db $threads $n $thr" >>"$work/warmups"
}

# count_syscalls DB CLIENT THREADS OPS RECORDS BUSY REP TOOL: one more
# run beside BUSY burners, its system calls counted by TOOL: strace (-f
# -c) or perf (stat of the raw_syscalls:sys_enter tracepoint, which
# follows threads and children as strace -f does); appends "db client
# threads busy syscalls_per_op" to $work/syscalls-TOOL.
count_syscalls() {
  local db="$1" client="$2" threads="$3" ops="$4" records="$5" busy="$6" rep="$7" tool="$8"
  local tag="$work/$db-$client-$threads-$busy-$tool-$rep"
  local -a cmd counter
  client_cmd "$db" "$client" "$threads" "$ops" "$records" "$tag"
  local how
  case "$tool" in
    strace) how="under strace" counter=(strace -f -c -o "$tag.count") ;;
    perf) how="counted by perf" counter=(perf stat -e raw_syscalls:sys_enter -x, -o "$tag.count" --) ;;
  esac
  echo "$db: $client threads=$threads ops=$ops busy=$busy $how, run $rep" >&2
  busy_start "$busy"
  local rc=0
  "${counter[@]}" "${cmd[@]}" >"$tag.out" 2>"$tag.err" || rc=$?
  busy_stop
  if [ $rc -ne 0 ]; then
    echo "bench-dbs.sh: $client run $db under $tool failed:" >&2
    tail -n 20 "$tag.err" >&2
    exit 1
  fi
  local n calls
  read -r n _ <<<"$(parse_ops "$client" "$ops" "$tag.out")" || n=""
  case "$tool" in
    strace) calls="$(awk '$NF == "total" { print $4 }' "$tag.count")" ;;
    # perf's CSV: count,unit,event,...; "<not counted>" is no figure.
    perf) calls="$(awk -F, '$3 == "raw_syscalls:sys_enter" && $1 ~ /^[0-9]+$/ { print $1 }' "$tag.count")" ;;
  esac
  if [ -z "$n" ] || [ -z "$calls" ]; then
    echo "bench-dbs.sh: cannot read the $tool run of $client for $db:" >&2
    cat "$tag.count" >&2 || true
    exit 1
  fi
  awk -v k="$db $client $threads $busy" -v c="$calls" -v n="$n" 'BEGIN { printf "%s %.2f\n", k, c / n }' >>"$work/syscalls-$tool"
}

missing_java="" served=""
for db in "${dbs[@]}"; do
  records="$RECORDS" ops="$OPS"
  [ "$db" = mongodb ] && records="$FERRET_RECORDS" ops="$FERRET_OPS"
  clients=(ycsbctl)
  if [ -n "$(java_adapter "$db")" ]; then
    clients+=(java)
  else
    missing_java="$missing_java${missing_java:+; }$(java_missing "$db")"
  fi
  [ "$db" = cassandra ] && [ -n "$latte_bin" ] && clients+=(latte)
  if [ "$db" != basic ]; then
    if bash integration/servers.sh status "$db" >/dev/null 2>&1; then
      echo "bench-dbs.sh: a $db server is already running (someone else's run?); not touching it" >&2
      exit 1
    fi
    echo "starting $db" >&2
    running="$db" served=1
    bash integration/servers.sh start "$db" >&2
    # shellcheck disable=SC2046
    "$bin" drop "$db" $(ycsbctl_props "$db") >&2
    # shellcheck disable=SC2046
    "$bin" init "$db" $(ycsbctl_props "$db") >&2
    # shellcheck disable=SC2046
    "$bin" load "$db" -P workloads/workloada -p recordcount="$records" -threads 16 $(ycsbctl_props "$db") >"$work/load.out" 2>&1 ||
      { echo "bench-dbs.sh: ycsbctl load $db failed" >&2; tail -n 20 "$work/load.out" >&2; exit 1; }
    warm="${WARMUP:-$ops}"
    [ "$warm" = 0 ] || warm_up "$db" "$max_threads" "$warm" "$records"
  fi
  for t in $THREADS; do
    n="$ops"
    [ "$db" = basic ] && n="$BASIC_OPS"
    [ "$t" = 1 ] && [ "$db" != basic ] && n=$((OPS_1 < ops ? OPS_1 : ops))
    for ((r = 1; r <= REPEATS; r++)); do
      # Alternate which client goes first, so neither always meets a
      # server freshly warmed (or compacting) by the other.
      local_n=${#clients[@]}
      order=()
      for ((i = 0; i < local_n; i++)); do order+=("${clients[$(((i + r - 1) % local_n))]}"); done
      for b in $BUSY; do
        for c in "${order[@]}"; do measure "$db" "$c" "$t" "$n" "$records" "$r" "$b"; done
      done
    done
    # Interleaved as the timed runs are.
    for ((r = 1; r <= SYSCALLS; r++)); do
      for b in $BUSY; do
        for c in "${clients[@]}"; do
          [ -z "$strace_ok" ] || count_syscalls "$db" "$c" "$t" "$n" "$records" "$b" "$r" strace
          [ -z "$perf_ok" ] || count_syscalls "$db" "$c" "$t" "$n" "$records" "$b" "$r" perf
        done
      done
    done
  done
  if [ "$db" != basic ]; then
    bash integration/servers.sh stop "$db" >&2
    running=""
  fi
done

echo
latte_ver=""
[ -n "$latte_bin" ] && latte_ver=" and $("$latte_bin" --version 2>/dev/null | awk '{print "latte " $NF}')"
echo "ycsbctl $("$bin" --version 2>/dev/null | awk '{print $NF}') beside Java YCSB 0.17.0 ($("$JAVA" -version 2>&1 | head -n 1))$latte_ver, workload A, $(nproc) CPUs, busy processes beside each run (BUSY): $BUSY, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
# runs N: "median of N runs [min-max]", or "one run".
runs() { if [ "$1" = 1 ]; then echo "one run"; else echo "median of $1 runs [min-max]"; fi; }
echo "cpu/op = client user+sys (start-up included) / operations: $(runs "$REPEATS"); user/sys split, ops/s, p50, p99 (READ/UPDATE, us), max RSS, voluntary context switches and (ycsbctl) heap allocations per op: medians${strace_ok:+; syscalls/op: $(runs "$SYSCALLS") under strace -f -c}${perf_ok:+; untraced syscalls/op: $(runs "$SYSCALLS") counted by perf stat -e raw_syscalls:sys_enter (no stops, unlike strace)}"
if [ -n "$missing_java" ]; then
  echo "Measured without Java YCSB: $missing_java."
fi
[ -z "$latte_note" ] || echo "$latte_note"
# The warm-up runs, with their throughput: how cold each server was.
if [ -s "$work/warmups" ]; then
  while read -r wdb wt wn wthr; do
    echo "$(label "$wdb") was warmed after its load by one unmeasured ycsbctl run: $wn operations at $wt threads, $wthr ops/s"
  done <"$work/warmups"
elif [ "${WARMUP:-}" = 0 ] && [ -n "$served" ]; then
  echo "No warm-up run (WARMUP=0): the first client of the first repeat met each server fresh from its load."
fi
[ -n "$strace_ok" ] || echo "syscalls/op not measured (strace is not installed, or SYSCALLS=0)."
[ -z "$perf_note" ] || echo "$perf_note"
touch "$work/syscalls-strace" "$work/syscalls-perf"
printf "%-34s %-8s %4s %4s %22s %13s %9s %13s %15s %7s %7s %18s %18s %10s\n" "server" "client" "thr" "busy" "cpu/op us [range]" "user/sys us" "ops/s" "p50 R/U" "p99 R/U" "RSS MB" "vcs/op" "sysc/op [range]" "untraced [range]" "allocs/op"
sort -k1,1 -k3,3n -k4,4n -k2,2 "$work/rows" | awk -v stracefile="$work/syscalls-strace" -v perffile="$work/syscalls-perf" -v labels="$(for d in basic cassandra hbase mongodb; do printf '%s=%s;' "$d" "$(label "$d")"; done)" '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  # counted T: the median [range] of counting tool T'"'"'s figures for key.
  function counted(t,   s, v, i, m, k) {
    k = t SUBSEP key
    if (!(k in ncount)) return sprintf("%18s", "-")
    m = ncount[k]
    for (i = 1; i <= m; i++) v[i] = count[t, key, i]
    s = sprintf("%5.2f", median(v, m))
    # median() sorted v in place: v[1] and v[m] are the extremes.
    if (m > 1) s = s sprintf(" [%4.2f-%4.2f]", v[1], v[m])
    return sprintf("%18s", s)
  }
  function readcounts(t, file,   line, f, k) {
    while ((getline line < file) > 0) { split(line, f, " "); k = f[1] " " f[2] " " f[3] " " f[4]; count[t, k, ++ncount[t, k]] = f[5] }
  }
  function flush(   al) {
    if (key == "") return
    al = median(objs, n)
    al = (al < 0) ? sprintf("%10s", "-") : sprintf("%10.1f", al)
    med[key] = median(cpu, n)
    printf "%-34s %-8s %4d %4d %9.1f [%5.1f-%5.1f] %6.1f/%-6.1f %9.0f %6.0f/%-6.0f %7.0f/%-7.0f %7.0f %7.2f %s %s %s\n", lab[db], cl, th, bz,
      med[key], lo, hi, median(usr, n), median(sy, n), median(thr, n), median(p50r, n), median(p50u, n),
      median(p99r, n), median(p99u, n), median(rss, n) / 1024, median(vcs, n), counted("strace"), counted("perf"), al
    if (!((db " " th " " bz) in seen)) { seen[db " " th " " bz] = 1; order[++norder] = db " " th " " bz }
    if (!((db " " cl " " th) in seenc)) { seenc[db " " cl " " th] = 1; corder[++ncorder] = db " " cl " " th }
    if (!(bz in seenb)) { seenb[bz] = 1; nb++; if (nb == 1 || bz < bmin) bmin = bz; if (nb == 1 || bz > bmax) bmax = bz }
  }
  BEGIN {
    split(labels, kv, ";"); for (i in kv) if (kv[i] != "") { split(kv[i], p, "="); lab[p[1]] = p[2] }
    readcounts("strace", stracefile); readcounts("perf", perffile)
  }
  {
    k = $1 " " $2 " " $3 " " $4
    if (k != key) { flush(); key = k; db = $1; cl = $2; th = $3; bz = $4; n = 0; lo = 1e18; hi = 0 }
    n++; cpu[n] = $5; usr[n] = $6; sy[n] = $7; thr[n] = $8; p50r[n] = $9; p50u[n] = $10; p99r[n] = $11; p99u[n] = $12
    rss[n] = $13; vcs[n] = $14; objs[n] = $15
    if ($5 < lo) lo = $5; if ($5 > hi) hi = $5
  }
  END {
    flush()
    # The ratios the issue sets its goals in, from the medians above.
    for (i = 1; i <= norder; i++) {
      split(order[i], dt, " "); y = dt[1] " ycsbctl " dt[2] " " dt[3]
      if (!(y in med) || med[y] <= 0) continue
      line = ""
      j = dt[1] " java " dt[2] " " dt[3]; if (j in med) line = line sprintf("  Java YCSB / ycsbctl %.2fx", med[j] / med[y])
      l = dt[1] " latte " dt[2] " " dt[3]; if (l in med && med[l] > 0) line = line sprintf("  ycsbctl / latte %.2fx", med[y] / med[l])
      if (line != "") printf "cpu/op ratio, %s at %d threads, busy %d:%s\n", lab[dt[1]], dt[2], dt[3], line
    }
    # Idle against loaded: each client'"'"'s median cpu/op with the fewest
    # burners against the most, the difference taken over the smaller of
    # the two (the stricter reading of "at most N % difference").
    if (nb < 2) exit
    for (i = 1; i <= ncorder; i++) {
      split(corder[i], dt, " "); a = corder[i] " " bmin; b = corder[i] " " bmax
      if (!(a in med) || !(b in med) || med[a] <= 0 || med[b] <= 0) continue
      d = med[a] - med[b]; m = (med[a] < med[b]) ? med[a] : med[b]
      printf "cpu/op busy %d against busy %d, %s at %d threads, %s: %.1f against %.1f us, %+.1f us, a difference of %.0f%%\n", bmin, bmax, lab[dt[1]], dt[3], dt[2], med[a], med[b], d, 100 * (d < 0 ? -d : d) / m
    }
  }'

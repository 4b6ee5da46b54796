#!/usr/bin/env bash
# MongoDB-protocol test server for ycsbctl's integration tests.
#
#   mongodb.sh start|stop|status|endpoint      (normally via ../servers.sh)
#   mongodb.sh build                           (only build the server binary)
#
# start builds the server if its sources changed, starts it on a fresh
# data directory, waits until it answers real commands and prints the
# endpoint; stop sends SIGTERM to the recorded PID (SIGKILL after a grace
# period); status exits 0 when running and 1 when not.
#
# There is no genuine mongod in any registry we can reach, so this runs
# FerretDB v1.24 (SQLite backend) through the small wrapper module in
# integration/ferretdb. It speaks the MongoDB wire protocol well enough for
# functional tests; its throughput says nothing about MongoDB's.
#
# Environment:
#   YCSBCTL_SERVERS_DIR     state directory (set by servers.sh; default .servers)
#   YCSBCTL_MONGODB_PORT    TCP port on 127.0.0.1 (default 27017)
#   YCSBCTL_MONGODB_WAIT    seconds to wait for readiness (default 60)
#   YCSBCTL_MONGODB_STOP_WAIT  seconds between SIGTERM and SIGKILL (default 15)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../ferretdb" && pwd)"
servers="${YCSBCTL_SERVERS_DIR:-$(cd "$here/../.." && pwd)/.servers}"
dir="$servers/mongodb"
bin="$dir/ferretdb"
stamp="$dir/ferretdb.build-id"
pidfile="$dir/ferretdb.pid"
log="$dir/ferretdb.log"
data="$dir/data"
port="${YCSBCTL_MONGODB_PORT:-27017}"
endpoint="mongodb://127.0.0.1:$port/ycsb"
wait_s="${YCSBCTL_MONGODB_WAIT:-60}"
stop_wait_s="${YCSBCTL_MONGODB_STOP_WAIT:-15}"

# Build flags live in one place: the build id below hashes them, so changing
# them forces a rebuild. ferretdb_no_postgresql drops the unused PostgreSQL
# backend (pgx), which shortens the cold build.
build_tags="ferretdb_no_postgresql"

die() { echo "mongodb.sh: $*" >&2; exit 1; }

case "$port" in ''|*[!0-9]*) die "YCSBCTL_MONGODB_PORT=$port is not a port number" ;; esac

# build_id identifies the wrapper sources, the toolchain and the flags; the
# binary is rebuilt only when it changes (a cold build takes minutes).
build_id() {
    {
        go version
        echo "tags=$build_tags"
        (cd "$src" && sha256sum go.mod go.sum *.go)
    } | sha256sum | cut -d' ' -f1
}

build() {
    mkdir -p "$dir"
    command -v go >/dev/null || die "go is not on PATH; it is needed to build FerretDB"
    local id
    id="$(build_id)"
    if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$id" ]; then
        return 0
    fi
    echo "mongodb.sh: building FerretDB wrapper into $bin (a cold build takes ~2 min)" >&2
    local t0=$SECONDS
    # Its own module: GOWORK=off keeps any go.work out; -mod=readonly makes
    # the build use exactly the committed go.sum (GOFLAGS may say otherwise).
    (cd "$src" && GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" \
        go build -tags "$build_tags" -trimpath -o "$bin.tmp" .) || die "building FerretDB failed"
    mv -f "$bin.tmp" "$bin"
    echo "$id" >"$stamp"
    echo "mongodb.sh: built in $((SECONDS - t0)) s" >&2
}

# our_pid prints the recorded PID if that process is alive and still is our
# binary (PIDs are reused; never signal a stranger).
our_pid() {
    [ -f "$pidfile" ] || return 1
    local pid
    pid="$(cat "$pidfile")"
    case "$pid" in ''|*[!0-9]*) return 1 ;; esac
    kill -0 "$pid" 2>/dev/null || return 1
    local exe
    exe="$(readlink "/proc/$pid/exe" 2>/dev/null || true)"
    case "$exe" in "$bin"|"$bin (deleted)") ;; *) return 1 ;; esac
    echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

stop() {
    local pid
    if ! pid="$(our_pid)"; then
        rm -f "$pidfile"
        echo "mongodb: not running"
        return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + stop_wait_s))
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "mongodb.sh: pid $pid ignored SIGTERM for ${stop_wait_s}s; sending SIGKILL" >&2
            kill -KILL "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.1
    done
    # A killed child is reaped by init; wait until it is really gone so that
    # the port is free for the next start.
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    rm -f "$pidfile"
    echo "mongodb: stopped pid $pid"
}

start() {
    build
    if our_pid >/dev/null; then
        echo "mongodb.sh: a previous server is still running; stopping it for a fresh start" >&2
        stop >&2
    fi
    if port_open; then
        die "127.0.0.1:$port is already in use by another process (set YCSBCTL_MONGODB_PORT)"
    fi
    # Every start gets an empty database, so tests never see old data.
    rm -rf "$data"
    mkdir -p "$data"
    : >"$log"
    # stdin/stdout/stderr go to files so that the caller's pipes close when
    # this script exits (go test's exec waits for them).
    "$bin" -listen "127.0.0.1:$port" -data-dir "$data" -log-level warn </dev/null >>"$log" 2>&1 &
    local pid=$!
    echo "$pid" >"$pidfile"
    local deadline=$((SECONDS + wait_s))
    while :; do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$pidfile"
            tail -n 20 "$log" >&2 || true
            die "FerretDB (pid $pid) exited during start-up; log: $log"
        fi
        # A real driver handshake plus commands that open the SQLite store.
        if port_open && "$bin" -ping "$endpoint" -timeout 2s 2>/dev/null; then
            break
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            tail -n 20 "$log" >&2 || true
            stop >&2 || true
            die "FerretDB did not become ready on 127.0.0.1:$port within ${wait_s}s; log: $log"
        fi
        sleep 0.1
    done
    echo "$endpoint"
}

status() {
    local pid
    if pid="$(our_pid)"; then
        echo "mongodb: running pid $pid at $endpoint (FerretDB stand-in)"
        return 0
    fi
    echo "mongodb: not running"
    return 1
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
endpoint) echo "$endpoint" ;;
build) build ;;
*) die "usage: $0 start|stop|status|endpoint|build" ;;
esac

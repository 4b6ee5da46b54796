#!/usr/bin/env bash
# Start, stop or query a real database server for the integration tests.
#
#   integration/servers.sh start|stop|status|endpoint cassandra|hbase|mongodb
#   integration/servers.sh install cassandra|hbase   (fetch the jars only, for the cluster test)
#
# Each database has its own script under integration/scripts/ that installs
# what it needs (Maven jars, a JDK 17 check, the FerretDB build) into
# $YCSBCTL_SERVERS_DIR (default: .servers/ in the checkout), starts the
# server on 127.0.0.1, waits until it really serves, prints the endpoint and
# records the PID so that `stop` can end exactly that process.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() { echo "usage: $0 start|stop|status|endpoint cassandra|hbase|mongodb, or install cassandra|hbase" >&2; exit 2; }
[ $# -eq 2 ] || usage
action="$1"; db="$2"
case "$action" in start|stop|status|endpoint|install) ;; *) usage ;; esac
case "$db" in cassandra|hbase|mongodb) ;; *) usage ;; esac
[ "$action" != install ] || [ "$db" != mongodb ] || usage
export YCSBCTL_SERVERS_DIR="${YCSBCTL_SERVERS_DIR:-$(cd "$here/.." && pwd)/.servers}"
mkdir -p "$YCSBCTL_SERVERS_DIR"
exec bash "$here/scripts/$db.sh" "$action"

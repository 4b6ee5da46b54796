#!/usr/bin/env bash
# Apache Cassandra 5.0.9 for the integration tests, run from Maven Central
# jars on JDK 17 and bound to 127.0.0.1 only (recipe: shared/notes/cassandra.md).
#
#   cassandra.sh start|stop|status|endpoint|install
#
# Normally called through integration/servers.sh, which sets
# $YCSBCTL_SERVERS_DIR. Layout under $YCSBCTL_SERVERS_DIR/cassandra/:
#   pom.xml, lib/   jars (cached across starts; lib/.complete marks a full copy)
#   conf/           logback.xml and the JDK 17 argfile (rewritten each start)
#   run/            cassandra.yaml, data, commitlog, logs: wiped at every start
#   cassandra.pid   PID of the JVM we started; stop only ever signals that PID
#
# Environment: YCSBCTL_START_TIMEOUT (seconds, default 300) bounds the wait
# for readiness; JAVA17_HOME picks a specific JDK 17.
set -euo pipefail

CASSANDRA_VERSION=5.0.9
HOST=127.0.0.1
CQL_PORT=9042
STORAGE_PORT=7000
MAIN_CLASS=org.apache.cassandra.service.CassandraDaemon

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
servers_dir="${YCSBCTL_SERVERS_DIR:-$(cd "$here/../.." && pwd)/.servers}"
base="$servers_dir/cassandra"
pidfile="$base/cassandra.pid"
rundir="$base/run"
log="$rundir/logs/system.log"
start_timeout="${YCSBCTL_START_TIMEOUT:-300}"

NAME=cassandra.sh
# shellcheck source=jvmserver.sh
. "$here/jvmserver.sh"

endpoint() { echo "$HOST:$CQL_PORT"; }

install_jars() {
	maven_fetch "$1" cassandra-all "$CASSANDRA_VERSION" "
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>$CASSANDRA_VERSION</version>
    </dependency>"
}

# write_tls makes a throwaway CA, a server certificate for 127.0.0.1 and a
# client certificate (once; kept across starts), so that tests can connect
# with cassandra.useSSL and the cassandra.ssl.* files under tls/.
write_tls() {
	local d="$base/tls"
	[ -f "$d/server.p12" ] && [ -f "$d/client.crt" ] && return 0
	mkdir -p "$d"
	(
		cd "$d"
		openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=ycsbctl-test-ca \
			-keyout ca.key -out ca.crt 2>/dev/null
		openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr 2>/dev/null
		printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
		openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
			-extfile server.ext -out server.crt 2>/dev/null
		openssl pkcs12 -export -in server.crt -inkey server.key -certfile ca.crt -name cassandra \
			-passout pass:ycsbctl -out server.p12
		openssl req -newkey rsa:2048 -nodes -subj /CN=ycsbctl-client -keyout client.key -out client.csr 2>/dev/null
		openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
			-out client.crt 2>/dev/null
	) || die "could not generate the TLS test certificates in $d"
}

write_config() {
	mkdir -p "$base/conf" "$rundir/logs"
	write_tls
	# Every key below is required by 5.0 (it refuses to start without them);
	# the rest keeps its defaults (num_tokens 1, ports 9042/7000).
	cat >"$rundir/cassandra.yaml" <<EOF
cluster_name: ycsbctl-test
listen_address: $HOST
rpc_address: $HOST
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$HOST:$STORAGE_PORT"
commitlog_sync: periodic
commitlog_sync_period: 10000ms
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
# Client TLS is optional, so one server serves both plain and TLS clients
# (the adapter's cassandra.useSSL test).
client_encryption_options:
  enabled: true
  optional: true
  keystore: $base/tls/server.p12
  keystore_password: ycsbctl
  store_type: PKCS12
  require_client_auth: false
EOF
	cat >"$base/conf/logback.xml" <<'EOF'
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>${cassandra.logdir}/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
EOF
	# JPMS flags Cassandra needs on JDK 17 (its jvm17-server.options block).
	cat >"$base/conf/jvm17.options" <<'EOF'
-Djdk.attach.allowAttachSelf=true
--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED
--add-exports=java.sql/java.sql=ALL-UNNAMED
--add-exports=java.base/java.lang.ref=ALL-UNNAMED
--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
--add-exports=jdk.attach/sun.tools.attach=ALL-UNNAMED
--add-opens=java.base/java.lang.module=ALL-UNNAMED
--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED
--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED
--add-opens=java.base/jdk.internal.math=ALL-UNNAMED
--add-opens=java.base/jdk.internal.module=ALL-UNNAMED
--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED
--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED
--add-opens=java.base/java.io=ALL-UNNAMED
--add-opens=java.base/java.lang.reflect=ALL-UNNAMED
--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
--add-opens=java.base/java.lang=ALL-UNNAMED
--add-opens=java.base/java.util=ALL-UNNAMED
-Dio.netty.tryReflectionSetAccessible=true
-Dio.netty.allocator.useCacheForAllThreads=true
-Dio.netty.allocator.maxOrder=11
EOF
}

# ready succeeds once the CQL port accepts connections and the daemon has
# logged the end of its startup sequence.
ready() { port_open "$CQL_PORT" && grep -q 'Startup complete' "$log" 2>/dev/null; }

show_logs() {
	echo "---- tail of $log ----" >&2
	tail -n 40 "$log" >&2 2>/dev/null || true
	echo "---- tail of $rundir/stdout.log ----" >&2
	tail -n 20 "$rundir/stdout.log" >&2 2>/dev/null || true
}

wait_ready() {
	local pid="$1" t0=$SECONDS
	while ! ready; do
		if ! kill -0 "$pid" 2>/dev/null; then
			show_logs
			rm -f "$pidfile"
			die "Cassandra (pid $pid) exited during startup"
		fi
		if ((SECONDS - t0 >= start_timeout)); then
			show_logs
			stop_server
			die "Cassandra not ready after ${start_timeout}s (stopped it)"
		fi
		sleep 0.5
	done
	echo "cassandra.sh: ready after $((SECONDS - t0))s (pid $pid)" >&2
}

start_server() {
	local pid
	if pid="$(recorded_pid)"; then
		wait_ready "$pid"
		endpoint
		return 0
	fi
	rm -f "$pidfile"
	if port_open "$CQL_PORT" || port_open "$STORAGE_PORT"; then
		die "port $CQL_PORT or $STORAGE_PORT on $HOST is already in use by a process this script did not start; stop it first"
	fi
	local java java_home
	java="$(find_java17)" || die "no JDK 17 found (checked \$JAVA17_HOME, \$JAVA_HOME, java on PATH, /usr/lib/jvm/*17*); Cassandra $CASSANDRA_VERSION needs exactly JDK 17 (JDK 25 fails)"
	java_home="$(cd "$(dirname "$java")/.." && pwd)"
	install_jars "$java_home"
	# A fresh data directory per start keeps runs independent.
	rm -rf "$rundir"
	write_config
	local jamm
	jamm="$(ls "$base"/lib/jamm-*.jar 2>/dev/null | head -n1 || true)"
	# setsid detaches the JVM from the caller's process group and terminal so
	# that it outlives this script; stdio goes to files so that a caller
	# reading our stdout (e.g. Go's exec with pipes) is not held open by it;
	# fd 9 (the lock) is closed so that the JVM does not hold the lock.
	# The last three -D flags are test-only startup/shutdown speed-ups.
	cd "$base"
	setsid "$java" -Xms1G -Xmx1G -Xss256k -XX:+UseG1GC -XX:+ParallelRefProcEnabled \
		-XX:MaxTenuringThreshold=1 -XX:G1HeapRegionSize=16m -XX:MaxGCPauseMillis=300 \
		-XX:+ExitOnOutOfMemoryError @conf/jvm17.options ${jamm:+"-javaagent:$jamm"} \
		-Djava.net.preferIPv4Stack=true -Dcassandra-foreground=yes \
		-Dcassandra.storagedir="$rundir" -Dcassandra.logdir="$rundir/logs" \
		-Dcassandra.config="file://$rundir/cassandra.yaml" \
		-Dlogback.configurationFile="$base/conf/logback.xml" \
		-Dcassandra.unsafesystem=true -Dcassandra.shutdown_announce_in_ms=0 \
		-Dcassandra.skip_paxos_state_rebuild=true \
		-cp "$base/lib/*" "$MAIN_CLASS" </dev/null >"$rundir/stdout.log" 2>&1 9>&- &
	pid=$!
	echo "$pid" >"$pidfile"
	echo "cassandra.sh: started pid $pid with $java; waiting up to ${start_timeout}s" >&2
	wait_ready "$pid"
	endpoint
}

mkdir -p "$base"
case "${1:-}" in
start)
	lock
	start_server
	;;
stop)
	lock
	stop_server
	;;
status)
	if pid="$(recorded_pid)"; then
		echo "running (pid $pid)"
	else
		echo "stopped"
		exit 1
	fi
	;;
endpoint) endpoint ;;
install)
	# The jars only (the cluster test runs its own nodes from them).
	lock
	java="$(find_java17)" || die "no JDK 17 found; Cassandra $CASSANDRA_VERSION needs exactly JDK 17"
	install_jars "$(cd "$(dirname "$java")/.." && pwd)"
	;;
*)
	echo "usage: $0 start|stop|status|endpoint" >&2
	exit 2
	;;
esac

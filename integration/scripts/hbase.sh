#!/usr/bin/env bash
# Apache HBase 2.6.4 in standalone mode (one JVM: HMaster, RegionServer and
# an in-process ZooKeeper) for the integration tests, run from Maven Central
# jars on JDK 17 and bound to 127.0.0.1 only (recipe: shared/notes/hbase.md).
#
#   hbase.sh start|stop|status|endpoint|install   (install: the jars only)
#
# Normally called through integration/servers.sh, which sets
# $YCSBCTL_SERVERS_DIR. Layout under $YCSBCTL_SERVERS_DIR/hbase/:
#   pom.xml, lib/   jars (cached across starts; lib/.complete marks a full copy)
#   conf/           hbase-site.xml and log4j2.properties (rewritten each start)
#   run/            data (rootdir, ZooKeeper) and logs: wiped at every start
#   hbase.pid       PID of the JVM we started; stop only ever signals that PID
#
# The endpoint printed is the ZooKeeper quorum, 127.0.0.1:2181, which is what
# HBase clients are given.
#
# Environment: YCSBCTL_START_TIMEOUT (seconds, default 300) bounds the wait
# for readiness; JAVA17_HOME picks a specific JDK 17.
set -euo pipefail

HBASE_VERSION=2.6.4
LOG4J_VERSION=2.17.2
HOST=127.0.0.1
ZK_PORT=2181
MASTER_PORT=16000
RS_PORT=16020
INFO_PORT=16010
MAIN_CLASS=org.apache.hadoop.hbase.master.HMaster

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
servers_dir="${YCSBCTL_SERVERS_DIR:-$(cd "$here/../.." && pwd)/.servers}"
base="$servers_dir/hbase"
pidfile="$base/hbase.pid"
rundir="$base/run"
log="$rundir/logs/hbase.out"
start_timeout="${YCSBCTL_START_TIMEOUT:-300}"

NAME=hbase.sh
# shellcheck source=jvmserver.sh
. "$here/jvmserver.sh"

endpoint() { echo "$HOST:$ZK_PORT"; }

# Exclusions: slf4j-reload4j/reload4j would add a second SLF4J binding;
# json-smart is declared with a version range, which makes every resolve
# query unreachable snapshot repositories (24 s instead of 4 s). log4j 2
# is the logging backend (Hadoop 2.10 code calls the log4j 1 API).
install_jars() {
	maven_fetch "$1" hbase-server "$HBASE_VERSION" "
    <dependency>
      <groupId>org.apache.hbase</groupId>
      <artifactId>hbase-server</artifactId>
      <version>$HBASE_VERSION</version>
      <exclusions>
        <exclusion><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId></exclusion>
        <exclusion><groupId>ch.qos.reload4j</groupId><artifactId>reload4j</artifactId></exclusion>
        <exclusion><groupId>net.minidev</groupId><artifactId>json-smart</artifactId></exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-1.2-api</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>"
}

write_config() {
	mkdir -p "$base/conf" "$rundir/logs" "$rundir/data"
	# The master's web UI (whose /jmx telemetry reads) looks for its
	# webapp directories on the class path; Maven's jars do not ship them
	# (the binary tarball does) and the master fails to construct without.
	# Empty ones serve /jmx: its servlets are built in.
	mkdir -p "$base/conf/hbase-webapps/master" "$base/conf/hbase-webapps/regionserver" "$base/conf/hbase-webapps/static"
	# Every key was verified in the notes; the comments say why each is set.
	cat >"$base/conf/hbase-site.xml" <<EOF
<?xml version="1.0"?>
<configuration>
  <!-- standalone: one JVM runs master, RegionServer and ZooKeeper -->
  <property><name>hbase.cluster.distributed</name><value>false</value></property>
  <!-- \${hbase.tmp.dir} comes from -Dhbase.tmp.dir (the per-start data dir) -->
  <property><name>hbase.rootdir</name><value>file://\${hbase.tmp.dir}/hbase</value></property>
  <property><name>hbase.zookeeper.property.dataDir</name><value>\${hbase.tmp.dir}/zookeeper</value></property>
  <property><name>hbase.zookeeper.quorum</name><value>$HOST</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$ZK_PORT</value></property>
  <!-- loopback only, and the name registered in ZK and meta is the IP
       clients dial: no DNS involved -->
  <property><name>hbase.master.ipc.address</name><value>$HOST</value></property>
  <property><name>hbase.regionserver.ipc.address</name><value>$HOST</value></property>
  <property><name>hbase.master.hostname</name><value>$HOST</value></property>
  <property><name>hbase.unsafe.regionserver.hostname</name><value>$HOST</value></property>
  <property><name>hbase.master.port</name><value>$MASTER_PORT</value></property>
  <property><name>hbase.regionserver.port</name><value>$RS_PORT</value></property>
  <!-- the master's web UI on loopback only: its /jmx servlet is what
       ycsbctl's telemetry reads (standalone: the region server's beans
       are there too); the region server has none of its own -->
  <property><name>hbase.master.info.port</name><value>$INFO_PORT</value></property>
  <property><name>hbase.master.info.bindAddress</name><value>$HOST</value></property>
  <property><name>hbase.regionserver.info.port</name><value>-1</value></property>
  <!-- the region server's figures on /jmx (memstore, requests) are
       refreshed every second, not every 5 s: telemetry reads them once
       an interval, and a load of a few seconds otherwise saw none -->
  <property><name>hbase.regionserver.metrics.period</name><value>1000</value></property>
  <!-- a WAL on the local filesystem cannot hflush/hsync as HDFS does -->
  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
  <!-- fast SIGTERM: without these the RegionServer retries ZK ~20 s after
       the in-process ZK is gone -->
  <property><name>zookeeper.recovery.retry</name><value>1</value></property>
  <property><name>zookeeper.recovery.retry.intervalmill</name><value>100</value></property>
  <!-- the master otherwise waits 4.5 s for RegionServers to check in -->
  <property><name>hbase.master.wait.on.regionservers.timeout</name><value>500</value></property>
  <property><name>hbase.master.wait.on.regionservers.interval</name><value>100</value></property>
  <!-- a loaded 2-core machine can stall the JVM for many seconds; the
       default 40 s ZooKeeper session (20 ticks of 2 s) then expired and
       killed the RegionServer during startup -->
  <property><name>hbase.zookeeper.property.tickTime</name><value>6000</value></property>
  <property><name>zookeeper.session.timeout</name><value>120000</value></property>
</configuration>
EOF
	# org.apache.hadoop.hbase stays at INFO: readiness greps its log line.
	cat >"$base/conf/log4j2.properties" <<'EOF'
status = warn
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_OUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %m%n
rootLogger = INFO,console
logger.zookeeper.name = org.apache.zookeeper
logger.zookeeper.level = WARN
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = WARN
logger.hbase.name = org.apache.hadoop.hbase
logger.hbase.level = INFO
EOF
}

# ready succeeds once ZooKeeper and the RegionServer accept connections and
# the master has finished initializing (meta and namespace online). Open
# ports alone are not enough: DDL before this fails with PleaseHoldException.
ready() {
	grep -q 'Master has completed initialization' "$log" 2>/dev/null &&
		port_open "$ZK_PORT" && port_open "$RS_PORT"
}

# classpath prints the JVM's class path, from the jars install_jars put in
# lib/ (it must run first: on a fresh install directory the jar below is
# not there before, and the first start ran without it). The web UI needs
# the Servlet 3.1 API; Hadoop's dependencies also bring servlet-api 2.5,
# whose older ServletContext would otherwise come first on the class path
# (NoSuchMethodError ... ServletContext.createFilter).
classpath() {
	local servlet="$base/lib/javax.servlet-api-3.1.0.jar"
	if [ ! -f "$servlet" ]; then
		echo "$servlet is missing after the jars were installed (the web UI needs the Servlet 3.1 API)"
		return 1
	fi
	echo "$base/conf:$servlet:$base/lib/*"
}

show_logs() {
	echo "---- tail of $log ----" >&2
	tail -n 50 "$log" >&2 2>/dev/null || true
}

# A start that fails exits 1 when another try may succeed (the JVM died or
# stalled, as it can under heavy load: see the ZooKeeper session note in
# write_config) and FINAL (3) when it would fail the same way again: a port
# in use, no JDK 17, jars that cannot be installed, or a JVM that died of a
# linkage error (a wrong class path: servlet-api 2.5 before 3.1 once made
# every first start on a fresh clone die, and a retry hid it). A retryable
# failure leaves its reason in $failure for the retry's message.
FINAL=3
failure="$base/start-failure"
final() { echo "$NAME: $*" >&2; exit "$FINAL"; }
retryable() { echo "$*" >"$failure"; die "$*"; }

# log_cause prints the first error the start's log names: a Java exception
# or error (with its message), else the first ERROR or FATAL line, else
# its last line; cut to 300 characters.
log_cause() {
	local c
	c="$(grep -m1 -oE '[a-z][a-zA-Z0-9_]*(\.[a-zA-Z0-9_$]+)+(Exception|Error)\b.*' "$log" 2>/dev/null ||
		grep -m1 -E ' (ERROR|FATAL) ' "$log" 2>/dev/null || tail -n1 "$log" 2>/dev/null || true)"
	echo "${c:-its log $log is empty}" | cut -c1-300
}

# linkage_error succeeds when the log holds a Java linkage error: classes
# that do not fit together, which no retry changes.
linkage_error() {
	grep -qE 'java\.lang\.(NoSuchMethodError|NoSuchFieldError|NoClassDefFoundError|UnsupportedClassVersionError|AbstractMethodError|IncompatibleClassChangeError)\b' "$log" 2>/dev/null
}

wait_ready() {
	local pid="$1" t0=$SECONDS
	while ! ready; do
		if ! kill -0 "$pid" 2>/dev/null; then
			show_logs
			rm -f "$pidfile"
			if linkage_error; then
				final "HBase (pid $pid) exited during startup of a linkage error, which a retry would meet again: $(log_cause)"
			fi
			retryable "HBase (pid $pid) exited during startup: $(log_cause)"
		fi
		if ((SECONDS - t0 >= start_timeout)); then
			show_logs
			stop_server
			retryable "HBase not ready after ${start_timeout}s (stopped it); first error in its log: $(log_cause)"
		fi
		sleep 0.5
	done
	echo "hbase.sh: ready after $((SECONDS - t0))s (pid $pid)" >&2
}

start_server() {
	local pid
	if pid="$(recorded_pid)"; then
		wait_ready "$pid"
		endpoint
		return 0
	fi
	rm -f "$pidfile"
	local p
	for p in "$ZK_PORT" "$MASTER_PORT" "$RS_PORT" "$INFO_PORT"; do
		if port_open "$p"; then
			final "port $p on $HOST is already in use by a process this script did not start; stop it first"
		fi
	done
	local java java_home
	java="$(find_java17)" || final "no JDK 17 found (checked \$JAVA17_HOME, \$JAVA_HOME, java on PATH, /usr/lib/jvm/*17*); HBase $HBASE_VERSION needs JDK 17 (JDK 25 fails)"
	java_home="$(cd "$(dirname "$java")/.." && pwd)"
	(install_jars "$java_home") || final "the HBase jars could not be installed (above)"
	# The class path is computed from the installed jars, so only now.
	local cp
	cp="$(classpath)" || final "$cp"
	# A fresh data directory per start keeps runs independent (and avoids
	# WAL splitting after an unclean stop).
	rm -rf "$rundir"
	write_config
	# setsid detaches the JVM from the caller's process group and terminal so
	# that it outlives this script; stdio goes to files so that a caller
	# reading our stdout (e.g. Go's exec with pipes) is not held open by it;
	# fd 9 (the lock) is closed so that the JVM does not hold the lock.
	# The JDK 17 flags are the ones bin/hbase adds on JDK >= 11; without them
	# HBase falls back to slower non-Unsafe byte access.
	cd "$base"
	setsid "$java" -Xms512m -Xmx1g -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError \
		-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true \
		--add-modules jdk.unsupported \
		--add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED \
		--add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
		--add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED \
		--add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED \
		--add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
		--add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED \
		--add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED \
		-Djava.net.preferIPv4Stack=true \
		-Dhbase.tmp.dir="$rundir/data" -Dhbase.log.dir="$rundir/logs" \
		-Dlog4j2.configurationFile="$base/conf/log4j2.properties" \
		-cp "$cp" "$MAIN_CLASS" start </dev/null >"$log" 2>&1 9>&- &
	pid=$!
	echo "$pid" >"$pidfile"
	echo "hbase.sh: started pid $pid with $java; waiting up to ${start_timeout}s" >&2
	wait_ready "$pid"
	endpoint
}

mkdir -p "$base"
case "${1:-}" in
start)
	lock
	# One retry, for a start that failed as one can under heavy load (see
	# the ZooKeeper session note in write_config): a fresh start usually
	# works. It says what failed and why, and keeps the failed start's log
	# (the retry wipes the run directory); a failure that would recur is
	# not retried (see FINAL).
	rm -f "$failure"
	rc=0
	(start_server) || rc=$?
	if [ "$rc" = "$FINAL" ]; then exit 1; fi
	if [ "$rc" != 0 ]; then
		kept="$base/failed-start.log"
		cp -f "$log" "$kept" 2>/dev/null || kept="(no log)"
		echo "hbase.sh: RETRY: the first start failed: $(cat "$failure" 2>/dev/null || echo "exit status $rc, no reason recorded"); retrying once with a fresh data directory (the failed start's log: $kept)" >&2
		stop_server >/dev/null 2>&1 || true
		(start_server) || exit 1
	fi
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
	# The jars only (the cluster test runs its own daemons from them).
	lock
	java="$(find_java17)" || die "no JDK 17 found; HBase $HBASE_VERSION needs JDK 17 (JDK 25 fails)"
	install_jars "$(cd "$(dirname "$java")/.." && pwd)"
	;;
*)
	echo "usage: $0 start|stop|status|endpoint|install" >&2
	exit 2
	;;
esac

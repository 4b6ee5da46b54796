#!/usr/bin/env bash
# One Cassandra node of the cluster, run inside a host (cluster.sh exec hN)
# as the systemd unit cassandra.service, so that "stop a node" is
# `systemctl stop cassandra` exactly as on a real host.
#
#   cassandra-node.sh install ADDR SEEDS HEAP LIBDIR [TOKENS]   write config + unit, start
#   cassandra-node.sh ready ADDR                       0 once CQL on ADDR:9042 answers
#
# ADDR is the host's own address (listen, broadcast and CQL); SEEDS a comma
# list of addresses; HEAP the JVM heap (e.g. 512M); LIBDIR the Cassandra
# 5.0.9 jars installed by integration/servers.sh (visible inside the host
# through its overlay root). Config and logs live under
# /var/lib/ycsbctl-cassandra, i.e. in the host's own upper layer; the data
# and commit log on the host's disk (/srv/ycsbctl-disk, see cluster.sh)
# when it has one, so that a load writes to a block device. TOKENS,
# 16 comma separated, fixes the node's tokens: the ring is then the same in
# every run, and nodes that bootstrap at the same time do not compute the
# same ones (the allocation is deterministic from the ring they see, and
# the later node is ignored).
set -euo pipefail

DIR=/var/lib/ycsbctl-cassandra
STORAGE=$DIR
[ -d /srv/ycsbctl-disk ] && STORAGE=/srv/ycsbctl-disk/cassandra
JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java

die() { echo "cassandra-node.sh: $*" >&2; exit 1; }

install_node() {
	local addr=$1 seeds=$2 heap=$3 lib=$4 tokens=${5:-} s jamm tokenconf="allocate_tokens_for_local_replication_factor: 3"
	[ -x "$JAVA" ] || die "no JDK 17 at $JAVA (Cassandra 5.0.9 needs exactly 17)"
	[ -f "$lib/.complete" ] || die "no Cassandra jars in $lib: run integration/servers.sh install cassandra"
	jamm="$(ls "$lib"/jamm-*.jar | head -n1)"
	mkdir -p "$DIR/logs"
	s=""
	for a in ${seeds//,/ }; do s="${s:+$s,}$a:7000"; done
	if [ -n "$tokens" ]; then
		[ "$(echo "$tokens" | tr ',' '\n' | grep -cE '^-?[0-9]+$')" = 16 ] || die "install: TOKENS must be 16 comma separated integers, got '$tokens'"
		tokenconf="initial_token: $tokens"
	fi
	# Every key is required by 5.0. num_tokens 16 spreads the ring over the
	# three nodes the way a real cluster is set up.
	cat >"$DIR/cassandra.yaml" <<-EOF
		cluster_name: ycsbctl-cluster
		num_tokens: 16
		$tokenconf
		listen_address: $addr
		rpc_address: $addr
		seed_provider:
		  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
		    parameters:
		      - seeds: "$s"
		commitlog_sync: periodic
		commitlog_sync_period: 10000ms
		partitioner: org.apache.cassandra.dht.Murmur3Partitioner
		endpoint_snitch: SimpleSnitch
		# A stopped node's hints are not needed by the test and would only
		# cost memory on the other two.
		hinted_handoff_enabled: false
	EOF
	cat >"$DIR/logback.xml" <<-'EOF'
		<configuration>
		  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
		    <file>${cassandra.logdir}/system.log</file>
		    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
		  </appender>
		  <root level="INFO"><appender-ref ref="FILE"/></root>
		</configuration>
	EOF
	# The JPMS block of Cassandra's jvm17-server.options.
	{
		echo "-Djdk.attach.allowAttachSelf=true"
		for m in java.base/jdk.internal.misc java.management.rmi/com.sun.jmx.remote.internal.rmi java.rmi/sun.rmi.registry \
			java.rmi/sun.rmi.server java.sql/java.sql java.base/java.lang.ref jdk.unsupported/sun.misc \
			jdk.compiler/com.sun.tools.javac.file jdk.attach/sun.tools.attach; do
			echo "--add-exports=$m=ALL-UNNAMED"
		done
		for m in java.base/java.lang.module java.base/jdk.internal.loader java.base/jdk.internal.ref java.base/jdk.internal.reflect \
			java.base/jdk.internal.math java.base/jdk.internal.module java.base/jdk.internal.util.jar \
			jdk.management/com.sun.management.internal java.base/sun.nio.ch java.base/java.io java.base/java.lang.reflect \
			jdk.compiler/com.sun.tools.javac java.base/java.lang java.base/java.util; do
			echo "--add-opens=$m=ALL-UNNAMED"
		done
		echo "-Dio.netty.tryReflectionSetAccessible=true"
		echo "-Dio.netty.allocator.useCacheForAllThreads=true"
		echo "-Dio.netty.allocator.maxOrder=11"
	} >"$DIR/jvm17.options"
	# Join fast: no gossip settle wait, a short ring delay, and no check
	# that no other node is joining (the ring is empty, nothing streams;
	# the cluster test starts the nodes one after another all the same).
	cat >/etc/systemd/system/cassandra.service <<-EOF
		[Unit]
		Description=Apache Cassandra 5.0.9 (ycsbctl cluster test)
		After=network.target

		[Service]
		Type=simple
		WorkingDirectory=$DIR
		ExecStart=$JAVA -Xms$heap -Xmx$heap -Xss256k -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxTenuringThreshold=1 -XX:MaxGCPauseMillis=300 -XX:+ExitOnOutOfMemoryError @$DIR/jvm17.options -javaagent:$jamm -Djava.net.preferIPv4Stack=true -Dcassandra-foreground=yes -Dcassandra.jmx.local.port=7199 -Dcassandra.storagedir=$STORAGE -Dcassandra.logdir=$DIR/logs -Dcassandra.config=file://$DIR/cassandra.yaml -Dlogback.configurationFile=$DIR/logback.xml -Dcassandra.skip_wait_for_gossip_to_settle=0 -Dcassandra.ring_delay_ms=3000 -Dcassandra.consistent.rangemovement=false -Dcassandra.shutdown_announce_in_ms=0 -Dcassandra.skip_paxos_state_rebuild=true -cp $lib/* org.apache.cassandra.service.CassandraDaemon
		StandardOutput=append:$DIR/logs/stdout.log
		StandardError=append:$DIR/logs/stdout.log
		LimitNOFILE=100000
		LimitMEMLOCK=infinity
		TimeoutStopSec=60
		# The JVM exits 143 on SIGTERM after its shutdown hooks ran.
		SuccessExitStatus=143

		[Install]
		WantedBy=multi-user.target
	EOF
	systemctl daemon-reload
	systemctl start cassandra.service
}

ready() {
	grep -q "Starting listening for CQL clients on /$1:9042" "$DIR/logs/system.log" 2>/dev/null &&
		timeout 2 bash -c "exec 3<>/dev/tcp/$1/9042" 2>/dev/null
}

case "${1:-}" in
install)
	[ $# -eq 5 ] || [ $# -eq 6 ] || die "install: expected ADDR SEEDS HEAP LIBDIR [TOKENS]"
	install_node "$2" "$3" "$4" "$5" "${6:-}"
	;;
ready)
	[ $# -eq 2 ] || die "ready: expected ADDR"
	ready "$2"
	;;
*) die "usage: cassandra-node.sh install ADDR SEEDS HEAP LIBDIR [TOKENS] | ready ADDR" ;;
esac

#!/usr/bin/env bash
# One HBase daemon of the cluster, run inside a host (cluster.sh exec hN)
# as a systemd unit hbase-ROLE.service, so that stopping it is
# `systemctl stop hbase-ROLE` exactly as on a real host.
#
#   hbase-node.sh install ROLE ADDR ZK HEAP LIBDIR   write config + unit, start
#   hbase-node.sh ready ROLE ADDR                    0 once the daemon serves
#
# ROLE is zookeeper, master or regionserver; ADDR the host's own address
# (the daemon binds it and registers under it, so clients dial exactly that
# address and no name resolution is involved); ZK the ZooKeeper host; HEAP
# the JVM heap (e.g. 384m); LIBDIR the HBase 2.6.4 jars installed by
# `integration/servers.sh install hbase` (visible inside the host through
# its overlay root; ZooKeeper 3.8.4 comes with them).
#
# hbase.rootdir is /srv/ycsbctl-shared/hbase, the directory every host of
# cluster.sh sees: HBase on a shared file system instead of HDFS, so the
# master and the region servers of different hosts read and write the same
# tables, WALs and region directories. Config, logs and ZooKeeper's data are
# per host under /var/lib/ycsbctl-hbase (the host's own upper layer).
set -euo pipefail

DIR=/var/lib/ycsbctl-hbase
SHARED=/srv/ycsbctl-shared
JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
ZK_PORT=2181
MASTER_PORT=16000
RS_PORT=16020

die() { echo "hbase-node.sh: $*" >&2; exit 1; }

# The JPMS flags bin/hbase adds on JDK >= 11 (without them HBase falls back
# to slower non-Unsafe byte access).
JDK17_OPTS="-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true --add-modules jdk.unsupported \
--add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED \
--add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
--add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED \
--add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED \
--add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED \
--add-exports java.base/sun.net.dns=ALL-UNNAMED --add-exports java.base/sun.net.util=ALL-UNNAMED"

write_log_config() {
	# org.apache.hadoop.hbase stays at INFO: `ready` greps its log lines.
	cat >"$DIR/conf/log4j2.properties" <<-'EOF'
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

write_zookeeper_config() {
	local addr=$1
	# Standalone (no server.N lines): one ZooKeeper on h1 is the quorum.
	# tickTime 6 s lets sessions last up to 120 s (20 ticks): a loaded
	# 2-core machine can stall a JVM long enough to expire the default
	# 40 s and kill a region server. No admin server (no extra socket).
	cat >"$DIR/conf/zoo.cfg" <<-EOF
		tickTime=6000
		initLimit=10
		syncLimit=5
		dataDir=$DIR/zookeeper
		clientPort=$ZK_PORT
		clientPortAddress=$addr
		maxClientCnxns=0
		admin.enableServer=false
		4lw.commands.whitelist=srvr
	EOF
}

write_hbase_config() {
	local addr=$1 zk=$2
	cat >"$DIR/conf/hbase-site.xml" <<-EOF
		<?xml version="1.0"?>
		<configuration>
		  <property><name>hbase.cluster.distributed</name><value>true</value></property>
		  <!-- the directory all hosts share (cluster.sh), not HDFS -->
		  <property><name>hbase.rootdir</name><value>file://$SHARED/hbase</value></property>
		  <property><name>hbase.tmp.dir</name><value>$DIR/tmp</value></property>
		  <!-- a WAL on a local file system cannot hflush/hsync as on HDFS -->
		  <property><name>hbase.unsafe.stream.capability.enforce</name><value>false</value></property>
		  <property><name>hbase.zookeeper.quorum</name><value>$zk</value></property>
		  <property><name>hbase.zookeeper.property.clientPort</name><value>$ZK_PORT</value></property>
		  <!-- bind the host's address and register under it: the name in
		       ZooKeeper and hbase:meta is the address clients dial -->
		  <property><name>hbase.master.ipc.address</name><value>$addr</value></property>
		  <property><name>hbase.master.hostname</name><value>$addr</value></property>
		  <property><name>hbase.regionserver.ipc.address</name><value>$addr</value></property>
		  <property><name>hbase.unsafe.regionserver.hostname</name><value>$addr</value></property>
		  <property><name>hbase.master.port</name><value>$MASTER_PORT</value></property>
		  <property><name>hbase.regionserver.port</name><value>$RS_PORT</value></property>
		  <!-- web UIs on the host's address: their /jmx servlet is what
		       ycsbctl's telemetry reads (memstore, block cache, queues, GC) -->
		  <property><name>hbase.master.info.port</name><value>16010</value></property>
		  <property><name>hbase.master.info.bindAddress</name><value>$addr</value></property>
		  <property><name>hbase.regionserver.info.port</name><value>16030</value></property>
		  <property><name>hbase.regionserver.info.bindAddress</name><value>$addr</value></property>
		  <!-- the master finishes initializing only once both region
		       servers checked in, so a pre-split table created after it is
		       assigned across both -->
		  <property><name>hbase.master.wait.on.regionservers.mintostart</name><value>2</value></property>
		  <property><name>hbase.master.wait.on.regionservers.timeout</name><value>500</value></property>
		  <property><name>hbase.master.wait.on.regionservers.interval</name><value>100</value></property>
		  <!-- see zoo.cfg: sessions survive a stalled JVM on a loaded machine -->
		  <property><name>zookeeper.session.timeout</name><value>120000</value></property>
		  <!-- a stopping daemon whose ZooKeeper is gone gives up quickly -->
		  <property><name>zookeeper.recovery.retry</name><value>1</value></property>
		  <property><name>zookeeper.recovery.retry.intervalmill</name><value>100</value></property>
		  <!-- region servers report their load (request counts the test
		       reads through the master) every second, not every 3 s -->
		  <property><name>hbase.regionserver.msginterval</name><value>1000</value></property>
		  <!-- small heaps: keep the block cache and memstores in proportion -->
		  <property><name>hfile.block.cache.size</name><value>0.2</value></property>
		</configuration>
	EOF
}

install_node() {
	local role=$1 addr=$2 zk=$3 heap=$4 lib=$5 main args unit
	[ -x "$JAVA" ] || die "no JDK 17 at $JAVA (HBase 2.6.4 needs 17; JDK 25 fails)"
	[ "$(cat "$lib/.complete" 2>/dev/null)" = 2.6.4 ] || die "no HBase 2.6.4 jars in $lib: run integration/servers.sh install hbase"
	[[ "$heap" =~ ^[0-9]+[mMgG]$ ]] || die "install: HEAP must look like 384m, got '$heap'"
	case "$role" in
	zookeeper)
		main=org.apache.zookeeper.server.quorum.QuorumPeerMain
		args="$DIR/conf/zoo.cfg"
		;;
	master)
		main=org.apache.hadoop.hbase.master.HMaster
		args=start
		;;
	regionserver)
		main=org.apache.hadoop.hbase.regionserver.HRegionServer
		args=start
		;;
	*) die "install: ROLE must be zookeeper, master or regionserver, got '$role'" ;;
	esac
	[ "$role" = zookeeper ] || mountpoint -q "$SHARED" || die "$SHARED is not mounted in this host (cluster.sh makes it)"
	mkdir -p "$DIR/conf" "$DIR/logs" "$DIR/tmp" "$DIR/zookeeper"
	# The web UI (whose /jmx telemetry reads) wants its webapp directories
	# on the class path; Maven's jars do not ship them (the binary
	# tarball does). Empty ones serve /jmx, the servlets are built in.
	mkdir -p "$DIR/conf/hbase-webapps/master" "$DIR/conf/hbase-webapps/regionserver" "$DIR/conf/hbase-webapps/static"
	write_log_config
	if [ "$role" = zookeeper ]; then write_zookeeper_config "$addr"; else write_hbase_config "$addr" "$zk"; fi
	unit="hbase-$role"
	# The conf dir goes first on the class path: hbase-site.xml is read
	# from there. Then the Servlet 3.1 API: the web UI needs it, and
	# Hadoop's dependencies also bring servlet-api 2.5, whose older
	# ServletContext would otherwise come first (the master then fails to
	# construct with NoSuchMethodError createFilter).
	local servlet="$lib/javax.servlet-api-3.1.0.jar"
	[ -f "$servlet" ] || die "no $servlet (the web UI telemetry reads needs it): run integration/servers.sh install hbase"
	cat >"/etc/systemd/system/$unit.service" <<-EOF
		[Unit]
		Description=HBase 2.6.4 $role (ycsbctl cluster test)
		After=network.target

		[Service]
		Type=simple
		WorkingDirectory=$DIR
		ExecStart=$JAVA -Xms$heap -Xmx$heap -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError $JDK17_OPTS -Djava.net.preferIPv4Stack=true -Dhbase.log.dir=$DIR/logs -Dzookeeper.admin.enableServer=false -Dlog4j2.configurationFile=$DIR/conf/log4j2.properties -cp $DIR/conf:$servlet:$lib/* $main $args
		StandardOutput=append:$DIR/logs/$role.log
		StandardError=append:$DIR/logs/$role.log
		LimitNOFILE=100000
		TimeoutStopSec=60
		# The JVM exits 143 on SIGTERM after its shutdown hooks ran.
		SuccessExitStatus=143

		[Install]
		WantedBy=multi-user.target
	EOF
	systemctl daemon-reload
	systemctl start "$unit.service"
}

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }

# ready: open ports are not enough. ZooKeeper must answer srvr as a
# standalone server; the master must have finished initializing (meta and
# namespace online: DDL before that fails with PleaseHoldException); a
# region server must have been accepted by the master ("Serving as").
ready() {
	local role=$1 addr=$2
	case "$role" in
	zookeeper)
		timeout 3 bash -c "exec 3<>/dev/tcp/$addr/$ZK_PORT; echo srvr >&3; cat <&3" 2>/dev/null | grep -q '^Mode: standalone'
		;;
	master)
		grep -q 'Master has completed initialization' "$DIR/logs/master.log" 2>/dev/null && port_open "$addr" "$MASTER_PORT"
		;;
	regionserver)
		grep -q "Serving as $addr,$RS_PORT," "$DIR/logs/regionserver.log" 2>/dev/null && port_open "$addr" "$RS_PORT"
		;;
	*) die "ready: ROLE must be zookeeper, master or regionserver, got '$role'" ;;
	esac
}

case "${1:-}" in
install)
	[ $# -eq 6 ] || die "install: expected ROLE ADDR ZK HEAP LIBDIR"
	install_node "$2" "$3" "$4" "$5" "$6"
	;;
ready)
	[ $# -eq 3 ] || die "ready: expected ROLE ADDR"
	ready "$2" "$3"
	;;
*) die "usage: hbase-node.sh install ROLE ADDR ZK HEAP LIBDIR | ready ROLE ADDR" ;;
esac

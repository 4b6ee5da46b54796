# Shared helpers of the JVM server scripts (cassandra.sh, hbase.sh); they
# source this file after setting:
#   NAME        script name for messages, e.g. cassandra.sh
#   HOST        address the server binds
#   MAIN_CLASS  the JVM's main class, to recognise our process
#   base        the server's directory under $YCSBCTL_SERVERS_DIR
#   pidfile     where the PID of the JVM we started is kept
#   start_timeout  seconds to wait for readiness

die() { echo "$NAME: $*" >&2; exit 1; }

# port_open succeeds when something accepts TCP connections on HOST:$1.
# bash's /dev/tcp avoids depending on nc, which this machine lacks.
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }

# recorded_pid prints the PID from the pidfile if that process is alive and
# is still our JVM (guards against PID reuse after a crash).
recorded_pid() {
	[ -f "$pidfile" ] || return 1
	local pid
	pid="$(cat "$pidfile" 2>/dev/null || true)"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$MAIN_CLASS" || return 1
	echo "$pid"
}

# find_java17 prints a java binary whose version is 17. JDK 25, also on this
# machine, breaks Cassandra 5.0.9 and HBase 2.6.4.
find_java17() {
	local c v
	for c in ${JAVA17_HOME:+"$JAVA17_HOME/bin/java"} ${JAVA_HOME:+"$JAVA_HOME/bin/java"} \
		"$(command -v java 2>/dev/null || true)" /usr/lib/jvm/*17*/bin/java; do
		[ -n "$c" ] && [ -x "$c" ] || continue
		v="$("$c" -version 2>&1 | head -n1 || true)"
		if [[ "$v" =~ version\ \"17[.\"] ]]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

# stop_server sends SIGTERM to the recorded PID (the server's shutdown
# hooks flush its data), waits up to 30 s, then SIGKILLs it. It never
# signals a process this script did not start.
stop_server() {
	local pid
	if ! pid="$(recorded_pid)"; then
		rm -f "$pidfile"
		echo "$NAME: not running" >&2
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	local i
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "$NAME: pid $pid still alive after 30s, sending SIGKILL" >&2
		kill -KILL "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	rm -f "$pidfile"
	echo "$NAME: stopped pid $pid" >&2
}

# lock serialises start and stop of one server.
lock() {
	mkdir -p "$base"
	exec 9>"$base/.lock"
	flock -w $((start_timeout + 120)) 9 || die "timed out waiting for $base/.lock (another start or stop is running)"
}

# maven_fetch JAVA_HOME ARTIFACT VERSION DEPENDENCIES_XML copies the runtime
# jars of a throwaway pom (packaging pom, the given <dependency> elements)
# into $base/lib, once per VERSION; ARTIFACT names the main jar, which must
# be there afterwards. The dependency plugin is pinned: Maven's default
# resolves to the old 2.8.
maven_fetch() {
	local java_home="$1" artifact="$2" version="$3" deps="$4"
	if [ -f "$base/lib/.complete" ] && [ "$(cat "$base/lib/.complete")" = "$version" ]; then
		return 0
	fi
	command -v mvn >/dev/null || die "mvn not found: it is needed once to fetch $artifact $version from Maven Central"
	mkdir -p "$base"
	cat >"$base/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>ycsbctl.servers</groupId>
  <artifactId>$artifact-server</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
$deps
  </dependencies>
</project>
POM
	rm -rf "$base/lib"
	echo "$NAME: fetching $artifact $version jars (once)..." >&2
	(cd "$base" && JAVA_HOME="$java_home" mvn -B -q \
		org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$base/lib") >&2 ||
		die "maven could not fetch $artifact $version"
	ls "$base"/lib/"$artifact"-*.jar >/dev/null 2>&1 || die "$artifact jar missing after maven run"
	echo "$version" >"$base/lib/.complete"
}

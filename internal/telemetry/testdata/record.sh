#!/usr/bin/env bash
# Records the /proc snapshots the summary tests read (proc0 and proc1, one
# second apart), from this machine, with two real processes running: a JVM
# whose main class is Cassandra's (a stand-in that burns CPU and writes to
# disk with fsync, so that the database figures move) and a Python loop as
# the load generator. Only the files the sampler reads are kept.
#
#   internal/telemetry/testdata/record.sh      (needs java, javac, python3)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'kill $db $client 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/org/apache/cassandra/service"
cat >"$tmp/src/org/apache/cassandra/service/CassandraDaemon.java" <<'JAVA'
package org.apache.cassandra.service;
import java.io.*;
public class CassandraDaemon {
  public static void main(String[] a) throws Exception {
    byte[] b = new byte[1 << 20];
    try (FileOutputStream f = new FileOutputStream(a[0])) {
      long x = 0;
      while (true) {
        for (int i = 0; i < 20_000_000; i++) x += i ^ x;
        f.write(b); f.getFD().sync();
        if (x == 42) System.out.println(x);
      }
    }
  }
}
JAVA
javac -d "$tmp/classes" "$tmp/src/org/apache/cassandra/service/CassandraDaemon.java"
java -Xmx64m -cp "$tmp/classes" org.apache.cassandra.service.CassandraDaemon "$tmp/data" &
db=$!
python3 -c 'while True: sum(range(10000))' &
client=$!
sleep 3
snap() {
	local out="$here/$1"
	rm -rf "$out"
	mkdir -p "$out"
	# When the snapshot was taken, for the rates.
	date +%s%N >"$out/.unix_ns"
	for f in stat loadavg meminfo diskstats; do cp "/proc/$f" "$out/$f"; done
	for p in $db $client; do
		mkdir -p "$out/$p/net" "$out/$p/fd"
		for f in stat comm cmdline io; do cat "/proc/$p/$f" >"$out/$p/$f"; done
		for f in /proc/$p/fd/*; do : >"$out/$p/fd/$(basename "$f")"; done
	done
	# The load generator's network namespace is the host's.
	cp /proc/$client/net/dev "$out/$client/net/dev"
	cp /proc/$client/net/snmp "$out/$client/net/snmp"
}
snap proc0
sleep 1
snap proc1
mkdir -p "$here/sys" && : >"$here/sys/.keep"
echo "db=$db client=$client" >"$here/pids"
echo "recorded $here/proc0 and proc1 (db pid $db, load generator pid $client)"

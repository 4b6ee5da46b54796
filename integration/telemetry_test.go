//go:build integration

package integration

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// Telemetry against the real servers: each adapter's internals reader
// (Cassandra's system_views, HBase's JMX servlet, FerretDB's partial
// serverStatus) read directly, then a single-host load through the CLI
// whose bundle must name the server's own process (the pid servers.sh
// recorded), its CPU and memory, and the internals per interval.

// serverPid is the pid servers.sh recorded for db's server.
func serverPid(t *testing.T, db, file string) int {
	t.Helper()
	dir := os.Getenv("YCSBCTL_SERVERS_DIR")
	if dir == "" {
		dir = filepath.Join(cliRoot(), ".servers")
	}
	b, err := os.ReadFile(filepath.Join(dir, db, file))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

// thisHost is what the sampler tells an adapter about this machine when
// roles of the server run here.
func thisHost(roles ...string) adapters.Host {
	h := adapters.Host{Addrs: []string{"127.0.0.1", "::1"}, Roles: roles}
	if as, err := net.InterfaceAddrs(); err == nil {
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok {
				h.Addrs = append(h.Addrs, n.IP.String())
			}
		}
	}
	return h
}

// openAdapter opens db with props and returns it with its close.
func openAdapter(ctx context.Context, t *testing.T, db string, props map[string]string) (adapters.DB, func()) {
	t.Helper()
	info, err := adapters.Lookup(db)
	require.NoError(t, err)
	d, err := info.Driver.Open(ctx, properties.FromMap(props))
	require.NoError(t, err)
	return d, func() { _ = d.(adapters.Closer).Close() }
}

// readInternals opens the adapter's internals for this host and reads
// them twice (counters need two readings to become rates in the sampler).
func readInternals(t *testing.T, db string, props map[string]string, roles ...string) adapters.InternalsReading {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, closeDB := openAdapter(ctx, t, db, props)
	defer closeDB()
	sp, ok := d.(adapters.ServerProcesses)
	require.True(t, ok, "%s names its server processes", db)
	require.NotEmpty(t, sp.ServerProcesses())
	src, ok := d.(adapters.InternalsSource)
	require.True(t, ok, "%s reads its internals", db)
	in, err := src.OpenInternals(ctx, thisHost(roles...))
	require.NoError(t, err)
	require.NotNil(t, in, "the server runs on this host")
	defer func() { _ = in.Close() }()
	r, err := in.Read(ctx)
	require.NoError(t, err)
	r2, err := in.Read(ctx)
	require.NoError(t, err)
	t.Logf("%s internals from %s: %v", r2.Product, r2.Source, r2.Metrics)
	assert.Equal(t, r.Product, r2.Product)
	none, err := src.OpenInternals(ctx, adapters.Host{Addrs: []string{"192.0.2.1"}})
	require.NoError(t, err)
	assert.Nil(t, none, "a host without the server that is not the one reading a remote server reads nothing")
	return r2
}

// readInternalsAt opens the adapter's internals as host h and reads them once.
func readInternalsAt(t *testing.T, db string, props map[string]string, h adapters.Host) adapters.InternalsReading {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, closeDB := openAdapter(ctx, t, db, props)
	defer closeDB()
	in, err := d.(adapters.InternalsSource).OpenInternals(ctx, h)
	require.NoError(t, err, "internals as %+v", h)
	require.NotNil(t, in, "a host with the server's role reads its internals")
	defer func() { _ = in.Close() }()
	r, err := in.Read(ctx)
	require.NoError(t, err)
	return r
}

func metric(r adapters.InternalsReading, name string) (adapters.Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return adapters.Metric{}, false
}

// telemetryLoad runs a single-host load through the CLI with --results and
// reads back its bundle's telemetry.
func telemetryLoad(t *testing.T, db string, records int, props map[string]string) (*bundle.Run, *cliResult) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	args := []string{"load", db, "-P", filepath.Join(cliRoot(), "workloads/workloada"), "-threads", "8",
		"-p", "recordcount=" + strconv.Itoa(records), "-p", "status.interval=1", "--results", dir}
	if _, ok := props["target"]; !ok {
		// Paced to last three seconds or more: the host is sampled once a
		// second, and a quiet machine once loaded 3,000 records in 1.07 s,
		// leaving no sample inside the run (a run under a second has no
		// host figures, by design).
		args = append(args, "-p", "target="+strconv.Itoa(max(records/3, 1)))
	}
	for k, v := range props {
		args = append(args, "-p", k+"="+v)
	}
	r := runCLI(t, 5*time.Minute, "", args...)
	requireExit(t, r, 0)
	b, err := os.ReadFile(filepath.Join(dir, bundle.FileRunJSON))
	require.NoError(t, err)
	var run bundle.Run
	require.NoError(t, json.Unmarshal(b, &run))
	require.NotNil(t, run.Telemetry, "run.json has a telemetry section")
	require.Len(t, run.Telemetry.Hosts, 1)
	require.Equal(t, telemetry.RawFile, run.Telemetry.RawFile)
	f, err := os.Open(filepath.Join(dir, telemetry.RawFile))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Greater(t, len(rows), 1, "telemetry.csv holds the raw samples")
	return &run, r
}

// checkServerFound: the bundle names the server's process by the pid its
// script recorded, and its CPU and memory were measured.
func checkServerFound(t *testing.T, run *bundle.Run, r *cliResult, role string, pid int) {
	t.Helper()
	h := run.Telemetry.Hosts[0]
	want := role + " (pid " + strconv.Itoa(pid) + ")"
	assert.Contains(t, strings.Join(h.Notes, "\n"), want, "run.json notes")
	assert.Contains(t, r.stderr, want, "said on stderr")
	assert.Positive(t, h.Summary.DBRSSMax, "the server's memory")
	cpu := 0.0
	for _, iv := range h.Intervals {
		cpu += iv.DB.CPUPct
		assert.Equal(t, 1, iv.DB.Count, "interval %d: one server process", iv.Seq)
	}
	assert.Positive(t, cpu, "the server used CPU during the load")
	assert.Positive(t, h.Summary.ClientCPUPct, "the load generator's own CPU")
	assert.Positive(t, h.Cores)
}

// startDecoy starts a process that looks like a server on this host by
// name and main class (a script named java whose command line holds the
// class) and listens on nothing; it ends with the test.
func startDecoy(t *testing.T, mainClass string) {
	t.Helper()
	java := filepath.Join(t.TempDir(), "java")
	require.NoError(t, os.WriteFile(java, []byte("#!/bin/sh\nread line\n"), 0o755))
	cmd := exec.Command(java, "-cp", "lib/*", mainClass)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	waitForComm(t, cmd.Process.Pid, "java")
}

// waitForComm waits until process pid runs under the name comm (a
// started process takes its name at exec).
func waitForComm(t *testing.T, pid int, comm string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if err == nil && strings.TrimSpace(string(b)) == comm {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: name %q, want %q (%v)", pid, strings.TrimSpace(string(b)), comm, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// internalsInBundle returns the intervals' internals.
func internalsInBundle(run *bundle.Run) []*telemetry.Internals {
	var out []*telemetry.Internals
	for _, iv := range run.Telemetry.Hosts[0].Intervals {
		if iv.Internals != nil {
			out = append(out, iv.Internals)
		}
	}
	return out
}

func TestTelemetryCassandra(t *testing.T) {
	endpoint := startServer(t, "cassandra")
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err)
	props := map[string]string{"hosts": host, "port": port, "cassandra.connecttimeoutmillis": "5000"}

	requireExit(t, runCLI(t, 2*time.Minute, "", "init", "cassandra", "-p", "hosts="+host, "-p", "port="+port), 0)
	// disk_usage counts SSTables only: the table's memtable is flushed
	// every second so that the load's rows reach the disk while it runs
	// (by default a memtable of a few MB stays in memory).
	cl := gocql.NewCluster(host)
	cl.Port, _ = strconv.Atoi(port)
	cl.Timeout = 30 * time.Second
	s, err := cl.CreateSession()
	require.NoError(t, err)
	require.NoError(t, s.Query("ALTER TABLE ycsb.usertable WITH memtable_flush_period_in_ms = 1000").Exec())
	s.Close()
	// A look-alike of the node on this host (a cluster test's nodes in
	// their namespaces are others): only the process listening at the
	// contact point is the server.
	startDecoy(t, "org.apache.cassandra.service.CassandraDaemon")
	run, res := telemetryLoad(t, "cassandra", 3000, props)
	checkServerFound(t, run, res, "cassandra", serverPid(t, "cassandra", "cassandra.pid"))
	ins := internalsInBundle(run)
	require.NotEmpty(t, ins, "internals read during the load")
	var completed bool
	var onDisk float64
	for _, in := range ins {
		assert.True(t, strings.HasPrefix(in.Product, "Cassandra 5.0"), in.Product)
		if v, ok := in.Value("thread_pool.MutationStage.completed_per_sec"); ok && v > 0 {
			completed = true
		}
		// A read has the interval to finish in (1 s here): on a loaded
		// machine the later tables may miss it, so not every interval
		// has them (that is said in a note).
		total, ok := in.Value("disk_usage_bytes")
		ks, ok2 := in.Value("keyspace_disk_usage_bytes")
		if ok && ok2 {
			assert.LessOrEqual(t, ks, total, "the keyspace is part of the node")
			onDisk = max(onDisk, ks)
		}
	}
	assert.True(t, completed, "the node completed mutations during the load: %+v", ins)
	t.Logf("largest keyspace disk usage during the load: %.0f MiB", onDisk/(1<<20))
	assert.Positive(t, onDisk, "the keyspace's flushed SSTables on disk during the load: %+v", ins)
	assert.Positive(t, run.Telemetry.Hosts[0].Summary.DBWriteBytes+int64(run.Telemetry.Hosts[0].Summary.DiskWriteBps),
		"a load writes: the commit log reaches the page cache of a disk-backed directory")

	// Read directly after the load: a fresh node lists a thread pool and
	// its disk usage only once it has written.
	r := readInternals(t, "cassandra", props, "cassandra")
	assert.True(t, strings.HasPrefix(r.Product, "Cassandra 5.0"), r.Product)
	assert.Contains(t, r.Source, "system_views on 127.0.0.1")
	for _, name := range []string{"thread_pool.MutationStage.pending", "thread_pool.ReadStage.blocked", "thread_pools.pending", "thread_pools.blocked",
		"compactions_pending", "compactions_running"} {
		_, ok := metric(r, name)
		assert.True(t, ok, "%s in %v", name, r.Metrics)
	}
	// Disk usage: system_views.disk_usage's mebibytes is a bigint (the
	// reader once scanned it into a float64 and lost it on every read).
	// The flushed load is on disk now; the node's total holds it.
	total, ok := metric(r, "disk_usage_bytes")
	require.True(t, ok, "disk_usage_bytes in %v", r.Metrics)
	ks, ok := metric(r, "keyspace_disk_usage_bytes")
	require.True(t, ok, "keyspace_disk_usage_bytes in %v", r.Metrics)
	t.Logf("disk usage after loading 3000 records: keyspace ycsb %.0f MiB, node %.0f MiB", ks.Value/(1<<20), total.Value/(1<<20))
	assert.Positive(t, ks.Value, "the load's flushed SSTables")
	assert.GreaterOrEqual(t, total.Value, ks.Value)
	m, ok := metric(r, "thread_pool.MutationStage.completed")
	require.True(t, ok)
	assert.True(t, m.Counter, "completed tasks only grow")

	// The node on this host is not a contact point (a cluster host whose
	// node the ring was reached through another): internals go to the
	// host's own addresses, then loopback, and read that node only. (A
	// filter on the ring refused gocql's control connection to the
	// contact point, and the cluster's nodes read no internals.)
	var own []string
	for _, a := range thisHost().Addrs {
		if a != "127.0.0.1" && a != "::1" {
			own = append(own, a)
		}
	}
	local := readInternalsAt(t, "cassandra", props, adapters.Host{Addrs: own, Roles: []string{"cassandra"}})
	assert.Contains(t, local.Source, "system_views on 127.0.0.1")
	_, ok = metric(local, "thread_pools.pending")
	assert.True(t, ok, "%v", local.Metrics)
}

func TestTelemetryHBase(t *testing.T) {
	quorum := startServer(t, "hbase")
	props := map[string]string{"hbase.zookeeper.quorum": quorum, "columnfamily": "family", "hbase.timeout": "10000",
		// Standalone: one JVM, whose master web UI serves the region
		// server's beans too (servers.sh turns it on, on loopback).
		"hbase.regionserver.info.port": "-1"}
	requireExit(t, runCLI(t, 2*time.Minute, "", "init", "hbase", "-p", "hbase.zookeeper.quorum="+quorum, "-p", "columnfamily=family"), 0)
	startDecoy(t, "org.apache.hadoop.hbase.master.HMaster") // a look-alike not serving the web UI port
	// Paced to about ten seconds (a quiet machine loaded the 10,000 rows
	// in 4 s and no interval's reading showed them in the memstore).
	props["target"] = "1000"
	run, res := telemetryLoad(t, "hbase", 10000, props)
	delete(props, "target")
	checkServerFound(t, run, res, "hbase-master", serverPid(t, "hbase", "hbase.pid"))
	ins := internalsInBundle(run)
	require.NotEmpty(t, ins)
	var memstore bool
	for _, in := range ins {
		if v, ok := in.Value("regionserver.memstore_bytes"); ok && v > 0 {
			memstore = true
		}
	}
	assert.True(t, memstore, "the load's rows sit in the memstore: %+v", ins)

	// Read directly after the load: the region server's beans are
	// registered some seconds after the server answers.
	r := readInternals(t, "hbase", props, "hbase-master")
	// HBase 2.x has no bean with its version: it comes from /conf.
	assert.Regexp(t, `^HBase \d+\.\d+\.\d+`, r.Product)
	assert.Contains(t, r.Source, "http://127.0.0.1:16010/jmx")
	for _, name := range []string{"regionserver.memstore_bytes", "regionserver.block_cache_hit_pct", "regionserver.compaction_queue",
		"regionserver.flush_queue", "master.region_servers", "master.jvm.gc_time_ms"} {
		_, ok := metric(r, name)
		assert.True(t, ok, "%s in %v", name, r.Metrics)
	}
	rs, _ := metric(r, "master.region_servers")
	assert.Equal(t, 1.0, rs.Value, "standalone: one region server")
	// The region server refreshes its counters every 5 s
	// (hbase.regionserver.metrics.period), so a load of a few seconds
	// may show no per-interval rate: its count after the load does.
	wr, _ := metric(r, "regionserver.write_requests")
	assert.Positive(t, wr.Value, "the region server counted the load's writes")
}

func TestTelemetryFerretDB(t *testing.T) {
	endpoint := startServer(t, "mongodb")
	t.Cleanup(func() { stopServer(t, "mongodb") })
	props := map[string]string{"mongodb.url": endpoint}
	r := readInternals(t, "mongodb", props, "ferretdb")
	assert.True(t, strings.HasPrefix(r.Product, "FerretDB "), "FerretDB is named as itself: %s", r.Product)
	assert.NotContains(t, strings.SplitN(r.Product, " (", 2)[0], "MongoDB")
	_, hasOps := metric(r, "opcounters.insert")
	assert.False(t, hasOps, "FerretDB has no opcounters: nothing is made up")

	run, res := telemetryLoad(t, "mongodb", 2000, props)
	checkServerFound(t, run, res, "ferretdb", serverPid(t, "mongodb", "ferretdb.pid"))
	ins := internalsInBundle(run)
	require.NotEmpty(t, ins)
	var inserts bool
	for _, in := range ins {
		assert.True(t, strings.HasPrefix(in.Product, "FerretDB "), in.Product)
		if v, ok := in.Value("commands.insert_per_sec"); ok && v > 0 {
			inserts = true
		}
	}
	assert.True(t, inserts, "FerretDB's own command counters saw the inserts: %+v", ins)
	assert.Equal(t, "FerretDB", strings.Fields(run.Telemetry.Hosts[0].Summary.Database)[0])
}

package workbook

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/environ"
	"github.com/ycsbctl/ycsbctl/internal/suite"
)

// envStep is a measured step of database db whose bundle recorded env.
func envStep(seq int, db, dir string, env *bundle.Environment) *Step {
	return &Step{
		State:  suite.StepState{Seq: seq, Database: db, Dir: db + "/" + dir, Kind: suite.KindRun, Status: suite.StatusPassed},
		Bundle: &bundle.Bundle{Run: &bundle.Run{DB: db, Environment: env}},
	}
}

func blockCache(v string) []environ.Setting {
	return []environ.Setting{{Name: "family f BLOCKCACHE", Value: v}, {Name: "family f VERSIONS", Value: "1"}}
}

// TestEnvironmentRows: the version and each distinct command once, each
// host once however many steps it ran, each database's product and
// topology from its first described step, and its schema as a block per
// change whose Subject lists the steps that ran on it: a sweep's value
// that returns to an earlier schema starts a new block (the schema
// changed twice), and two databases keep their blocks apart. A step
// without an environment (a bundle from before it was recorded) adds
// nothing.
func TestEnvironmentRows(t *testing.T) {
	host := environ.Host{Address: "local", Hostname: "h1", Cores: 2, CPUModel: "cpu", MemoryBytes: 2 << 30, Kernel: "6.1",
		ClockSource: "tsc", FDLimit: 1024, OS: "linux", Arch: "amd64"}
	hb := func(bc string) *environ.Database {
		return &environ.Database{Adapter: "hbase", Product: "Apache HBase", Version: "2.6.4", DescribedBy: "local",
			Nodes:      []environ.Node{{Address: "m:16000", Role: "master", Status: "active"}},
			Partitions: []environ.Partition{{Name: "t,,1.a.", Start: "", End: "user5", Node: "rs:16020"}},
			Schema:     blockCache(bc)}
	}
	env := func(cmd string, db *environ.Database) *bundle.Environment {
		return &bundle.Environment{Version: "v1", Command: []string{"ycsbctl", "suite", cmd}, Hosts: []environ.Host{host}, Database: db}
	}
	cass := &environ.Database{Adapter: "cassandra", Product: "Apache Cassandra", Version: "5.0.9", DescribedBy: "local",
		Nodes:  []environ.Node{{Address: "n1:9042", Role: "node", Status: "UP NORMAL", DataCenter: "dc1", Rack: "r1", Tokens: []string{"-9", "3"}}},
		Schema: []environ.Setting{{Name: "keyspace ycsb replication", Value: "rf 1"}}}
	d := &Data{Steps: []*Step{
		envStep(1, "hbase", "01-load-hbase.blockcache=true", env("s.yaml", hb("true"))),
		envStep(2, "hbase", "02-run-hbase.blockcache=true", env("s.yaml", hb("true"))),
		envStep(3, "hbase", "01-load-hbase.blockcache=false", env("s.yaml", hb("false"))),
		envStep(4, "hbase", "02-run-hbase.blockcache=false", env("s.yaml", hb("false"))),
		envStep(5, "hbase", "03-old", nil),
		// A resume: another command line, the same host.
		envStep(6, "hbase", "04-load-default", env("--resume", hb("true"))),
		envStep(7, "cass", "01-load", env("s.yaml", cass)),
		envStep(8, "cass", "02-run", env("s.yaml", cass)),
	}}
	want := [][]Cell{
		{"ycsbctl", "", "", "version", "v1"},
		{"ycsbctl", "", "", "command", "ycsbctl suite s.yaml"},
		{"ycsbctl", "", "", "command", "ycsbctl suite --resume"},
		{"host", "", "local", "hostname", "h1"},
		{"host", "", "local", "cores", "2"},
		{"host", "", "local", "cpu model", "cpu"},
		{"host", "", "local", "memory", "2.0 GiB (2147483648 bytes)"},
		{"host", "", "local", "kernel", "6.1"},
		{"host", "", "local", "clock source", "tsc"},
		{"host", "", "local", "file-descriptor limit", "1024"},
		{"host", "", "local", "os/arch", "linux/amd64"},
		{"database", "hbase", "hbase", "product", "Apache HBase"},
		{"database", "hbase", "hbase", "version", "2.6.4"},
		{"database", "hbase", "hbase", "described by", "local"},
		{"topology", "hbase", "m:16000", "master", "status active"},
		{"partition", "hbase", "t,,1.a.", "range", "[, user5) on rs:16020"},
		{"schema", "hbase", "01-load-hbase.blockcache=true, 02-run-hbase.blockcache=true", "family f BLOCKCACHE", "true"},
		{"schema", "hbase", "01-load-hbase.blockcache=true, 02-run-hbase.blockcache=true", "family f VERSIONS", "1"},
		{"schema", "hbase", "01-load-hbase.blockcache=false, 02-run-hbase.blockcache=false", "family f BLOCKCACHE", "false"},
		{"schema", "hbase", "01-load-hbase.blockcache=false, 02-run-hbase.blockcache=false", "family f VERSIONS", "1"},
		{"schema", "hbase", "04-load-default", "family f BLOCKCACHE", "true"},
		{"schema", "hbase", "04-load-default", "family f VERSIONS", "1"},
		{"database", "cass", "cassandra", "product", "Apache Cassandra"},
		{"database", "cass", "cassandra", "version", "5.0.9"},
		{"database", "cass", "cassandra", "described by", "local"},
		{"topology", "cass", "n1:9042", "node", "status UP NORMAL; datacenter dc1; rack r1; 2 token(s): -9 3"},
		{"schema", "cass", "01-load, 02-run", "keyspace ycsb replication", "rf 1"},
	}
	assert.Equal(t, want, d.EnvironmentRows())
}

// search is a capacity step of database db with its record.
func search(db, dir string, sweep []suite.SweepValue, status string, exit int, rec *capacity.Record) *Search {
	st := suite.StepState{Database: db, Dir: db + "/" + dir, Kind: suite.KindCapacity, StepIndex: 2, Step: "capacity-workloada",
		Sweep: sweep, Status: status}
	st.ExitCode = &exit
	return &Search{State: st, Record: rec}
}

func objectives(t *testing.T, s ...string) []capacity.Objective {
	t.Helper()
	var out []capacity.Objective
	for _, x := range s {
		o, err := capacity.ParseObjective(x)
		require.NoError(t, err)
		out = append(out, o)
	}
	return out
}

// TestCapacityRows: a search that found a capacity shows it, its probe's
// achieved throughput and the first objective's operation's p99 (intended
// and service time) at that probe, and every objective's value there; one
// that found none leaves those cells empty and says why it ended; a
// failed step says its exit code; the sweep value is in its column.
func TestCapacityRows(t *testing.T) {
	found := &capacity.Record{DB: "cassandra", Threads: 16, Status: capacity.StatusComplete,
		Settings: capacity.Settings{Objectives: objectives(t, "READ.p99<=10ms", "UPDATE.p99<=20ms"), MaxErrorRate: 0.001},
		Probes: []capacity.Probe{
			{N: 1, Verdict: capacity.Pass, Measured: capacity.Measured{Target: 1000, Achieved: 999.5}},
			{N: 2, Verdict: capacity.Pass, Measured: capacity.Measured{Target: 2000, Achieved: 1998.25, Latency: []capacity.OpLatency{
				{Op: "READ", Count: 10, Intended: map[string]float64{"p99": 4100}, Service: map[string]float64{"p99": 3900}},
				{Op: "UPDATE", Count: 10, Intended: map[string]float64{"p99": 15000}, Service: map[string]float64{"p99": 9000}},
			}}},
			{N: 3, Verdict: capacity.Fail, Measured: capacity.Measured{Target: 4000, Achieved: 3100}},
		},
		Answer: capacity.Answer{Found: true, Capacity: 2000, Achieved: 1998.25, Probe: 2, Steady: true, Ended: capacity.EndBudget}}
	none := &capacity.Record{DB: "embedded", Threads: 2, Status: capacity.StatusComplete,
		Settings: capacity.Settings{Objectives: objectives(t, "READ.p99<=10ms"), MaxErrorRate: 0.01},
		Probes:   []capacity.Probe{{N: 1, Verdict: capacity.Fail, Measured: capacity.Measured{Target: 500, Achieved: 480}}},
		Answer:   capacity.Answer{Ended: capacity.EndNoPass}}
	failed := &capacity.Record{DB: "embedded", Threads: 2, Status: capacity.StatusStopped,
		Settings: capacity.Settings{Objectives: objectives(t, "READ.p99<=10ms"), MaxErrorRate: 0.001},
		Answer:   capacity.Answer{Ended: capacity.EndInterrupted}}
	d := &Data{State: &suite.State{}, Searches: []*Search{
		search("cassandra", "02-capacity-workloada-threads=16", []suite.SweepValue{{Key: "threads", Value: "16"}}, suite.StatusPassed, 0, found),
		search("embedded", "02-capacity-workloada", nil, suite.StatusPassed, 0, none),
		search("embedded", "02-capacity-workloada-again", nil, suite.StatusFailed, 3, failed),
	}}
	want := [][]Cell{
		{"cassandra", "cassandra", "02-capacity-workloada", "threads=16", int64(16), "READ.p99<=10ms, UPDATE.p99<=20ms", "0.1%", "complete",
			2000.0, 1998.25, "READ", 4100.0, 3900.0, "READ.p99 4.1ms, UPDATE.p99 15ms", int64(3), "probe budget spent", "cassandra/02-capacity-workloada-threads=16"},
		{"embedded", "embedded", "02-capacity-workloada", "", int64(2), "READ.p99<=10ms", "1%", "complete",
			"", "", "READ", "", "", "", int64(1), "no target passed", "embedded/02-capacity-workloada"},
		{"embedded", "embedded", "02-capacity-workloada", "", int64(2), "READ.p99<=10ms", "0.1%", "failed (exit 3)",
			"", "", "READ", "", "", "", int64(0), "interrupted", "embedded/02-capacity-workloada-again"},
	}
	rows := d.CapacityRows()
	assert.Equal(t, want, rows)
	for _, r := range rows {
		assert.Len(t, r, len(CapacityHeader), "a cell per column")
	}

	// The sheet as written: the Capacity sheet, read back with its
	// header and the same text summary.csv would hold.
	path := filepath.Join(t.TempDir(), "summary.xlsx")
	require.NoError(t, d.WriteXLSX(path))
	x, err := excelize.OpenFile(path)
	require.NoError(t, err)
	defer func() { _ = x.Close() }()
	assert.Contains(t, x.GetSheetList(), SheetCapacity)
	got, err := x.GetRows(SheetCapacity, excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	require.Len(t, got, 1+len(want))
	assert.Equal(t, CapacityHeader, got[0])
	for i, w := range want {
		var text []string
		for _, c := range w {
			text = append(text, FormatCell(c))
		}
		// excelize drops a row's trailing empty cells; none of these
		// rows ends with one.
		assert.Equal(t, text, got[1+i], "row %d", i+1)
	}
}

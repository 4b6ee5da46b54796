package workbook_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
)

// hostsStudy is a suite results directory of two databases, each with a
// load and a run step over two agents, every step's run.json carrying
// telemetry as the bundle builder writes it (a telemetry.Builder's
// record). Host h1 is busier than h2; each database's server names
// itself through its internals; the run steps' first host is saturated,
// so they carry a client-bound verdict.
func hostsStudy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st := &suite.State{Name: "study", Databases: []string{"cassandra", "mongodb"}}
	seq := 0
	for _, db := range []struct{ name, product string }{{"cassandra", "Cassandra 5.0.9"}, {"mongodb", "MongoDB 7.0.14"}} {
		for i, kind := range []suite.Kind{suite.KindLoad, suite.KindRun} {
			seq++
			step := map[suite.Kind]string{suite.KindLoad: "load", suite.KindRun: "workloada"}[kind]
			stepDir := filepath.Join(db.name, "0"+strconv.Itoa(i+1)+"-"+step)
			b := telemetry.NewBuilder([]string{"10.0.0.11:7420", "10.0.0.12:7420"}, []string{"h1", "h2"})
			for n := int64(1); n <= 4; n++ {
				busy := 40.0 + 10*float64(i)
				if kind == suite.KindRun {
					busy = 95
				}
				for agent, scale := range []float64{1, 0.5} {
					b.Add(agent, n, n*10e9, (n+1)*10e9, &telemetry.Interval{Samples: 10, Cores: 8,
						CPU: telemetry.CPU{User: busy * scale, IOWait: 2 * scale, Idle: 100 - busy*scale - 2*scale}, BusyMax: busy * scale,
						Disks:     []telemetry.Device{{Name: "vda", WriteBps: 50e6 * scale, UtilPct: 30 * scale, UtilPctMax: 30 * scale}},
						Links:     []telemetry.Link{{Name: "eth0", RxBps: 20e6 * scale, TxBps: 10e6 * scale}},
						DB:        telemetry.Process{Count: 1, CPUPct: 30 * scale, CPUPctMax: 35 * scale, RSSMax: int64(2e9 * scale), WriteBytes: int64(100e6 * scale)},
						Client:    telemetry.Process{Count: 1, CPUPct: 10 * scale, CPUPctMax: 12 * scale, RSSMax: 80e6},
						Internals: &telemetry.Internals{Product: db.product}})
				}
			}
			r := bundle.Run{RunID: db.name + "-" + step, Tool: "ycsbctl", Status: run.StatusComplete, DB: db.name, Phase: map[suite.Kind]string{suite.KindLoad: "load", suite.KindRun: "run"}[kind],
				Mode: "distributed", StartedAt: time.Unix(10, 0), EndedAt: time.Unix(50, 0), Telemetry: b.Record()}
			js, err := json.Marshal(r)
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, stepDir), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, stepDir, bundle.FileRunJSON), js, 0o644))
			code := 0
			st.Steps = append(st.Steps, suite.StepState{Seq: seq, DB: db.name, Database: db.name, StepIndex: i + 1, Step: step, Kind: kind,
				Dir: stepDir, Status: suite.StatusPassed, ExitCode: &code})
		}
	}
	require.NoError(t, suite.WriteState(dir, st))
	return dir
}

// The workbook's Hosts sheet, read back from the xlsx a suite's report
// writes: one row per database × step × host, in the suite's order, with
// each host's figures from its step's run.json.
func TestHostsSheetOfTwoDatabases(t *testing.T) {
	dir := hostsStudy(t)
	d, err := workbook.Collect(dir)
	require.NoError(t, err)
	path := filepath.Join(dir, "summary.xlsx")
	require.NoError(t, d.WriteXLSX(path))

	f, err := excelize.OpenFile(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	rows, err := f.GetRows(workbook.SheetHosts)
	require.NoError(t, err)
	require.Len(t, rows, 1+2*2*2, "a header, then 2 databases × 2 steps × 2 hosts")
	assert.Equal(t, workbook.HostsHeader, rows[0])
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	cell := func(r []string, name string) string {
		i, ok := col[name]
		require.True(t, ok, name)
		if i >= len(r) {
			return ""
		}
		return r[i]
	}
	num := func(r []string, name string) float64 {
		v, err := strconv.ParseFloat(cell(r, name), 64)
		require.NoError(t, err, "%s = %q", name, cell(r, name))
		return v
	}
	type key struct{ db, step, host string }
	want := []key{
		{"cassandra", "01-load", "h1"}, {"cassandra", "01-load", "h2"}, {"cassandra", "02-workloada", "h1"}, {"cassandra", "02-workloada", "h2"},
		{"mongodb", "01-load", "h1"}, {"mongodb", "01-load", "h2"}, {"mongodb", "02-workloada", "h1"}, {"mongodb", "02-workloada", "h2"},
	}
	for i, w := range want {
		r := rows[1+i]
		assert.Equal(t, w, key{cell(r, "Database"), cell(r, "Step"), cell(r, "Host")}, "row %d", i+1)
		h1 := w.host == "h1"
		scale := map[bool]float64{true: 1, false: 0.5}[h1]
		assert.Equal(t, map[bool]string{true: "10.0.0.11:7420", false: "10.0.0.12:7420"}[h1], cell(r, "Address"))
		assert.Equal(t, map[bool]string{true: "0", false: "1"}[h1], cell(r, "Agent"))
		assert.Equal(t, "8", cell(r, "Cores"))
		assert.Equal(t, "4", cell(r, "Intervals"))
		busy := 40.0
		if w.step == "02-workloada" {
			busy = 95
		}
		assert.InDelta(t, busy*scale, num(r, "CPU busy (%)"), 1e-9, "row %d", i+1)
		assert.InDelta(t, 50*scale, num(r, "Disk write (MB/s)"), 1e-9)
		assert.InDelta(t, 20*scale, num(r, "Net in (MB/s)"), 1e-9)
		assert.InDelta(t, 2000*scale, num(r, "DB RSS max (MB)"), 1e-9)
		assert.InDelta(t, 4*100*scale, num(r, "DB written (MB)"), 1e-9, "four intervals of writes")
		assert.InDelta(t, 10*scale, num(r, "Client CPU (%)"), 1e-9)
		assert.Equal(t, map[string]string{"cassandra": "Cassandra 5.0.9", "mongodb": "MongoDB 7.0.14"}[w.db], cell(r, "Server"))
		verdict := ""
		if w.step == "02-workloada" && h1 {
			verdict = telemetry.ClientBound
		}
		assert.Equal(t, verdict, cell(r, "Verdicts"), "row %d", i+1)
	}
}

// TestHostRowsLeaveUnreadBlank: every Hosts row has the header's cells;
// a host never read (notes only) has empty cells but for its names and
// its 0 intervals, a host whose database was not found has empty
// database cells, and what was read is kept.
func TestHostRowsLeaveUnreadBlank(t *testing.T) {
	b := telemetry.NewBuilder([]string{"a0", "a1"}, []string{"h0", "h1"})
	b.Add(0, 1, 0, 1e9, &telemetry.Interval{Notes: []string{"no reading"}})
	b.Add(1, 1, 0, 1e9, &telemetry.Interval{Samples: 1, Cores: 4, CPU: telemetry.CPU{User: 20, Idle: 80}, Client: telemetry.Process{Count: 1, CPUPct: 5, RSSMax: 1e6}})
	d := &workbook.Data{Steps: []*workbook.Step{{State: suite.StepState{Database: "basic", Step: "workloada", StepIndex: 1},
		Bundle: &bundle.Bundle{Run: &bundle.Run{Telemetry: b.Record()}}}}}
	rows := d.HostRows()
	require.Len(t, rows, 2)
	col := map[string]int{}
	for i, h := range workbook.HostsHeader {
		col[h] = i
	}
	for _, r := range rows {
		assert.Len(t, r, len(workbook.HostsHeader))
	}
	for name, i := range col {
		switch name {
		case "Database", "Step", "Sweep", "Agent", "Host", "Address":
		case "Intervals":
			assert.Equal(t, int64(0), rows[0][i])
		default:
			assert.Equal(t, "", rows[0][i], "%s of a host never read", name)
		}
	}
	for _, name := range []string{"DB CPU (%)", "DB CPU max (%)", "DB RSS max (MB)", "DB written (MB)"} {
		assert.Equal(t, "", rows[1][col[name]], "%s of a database not found", name)
	}
	assert.Equal(t, int64(4), rows[1][col["Cores"]])
	assert.Equal(t, 20.0, rows[1][col["CPU busy (%)"]])
}

package cli_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/cli"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spool"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/testutil/suitecheck"
	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
)

// smallSuite is the test suite: two databases × three steps, each
// swept over two values, sized to run in a few seconds.
func smallSuite(dir string) string {
	return `name: small
properties:
  recordcount: 300
  status.interval: 0.2
  basicdb.verbose: false
  embedded.dir: ` + filepath.Join(dir, "emb") + `
databases:
  - db: basic
  - db: embedded
steps:
  - load: workloada
    threads: [1, 2]
  - pause: 100ms
  - run: workloadc
    operations: 3000
    threads: [1, 2]
  - run: workloadb
    warmup: 100
    operations: 400
    target: [800, 1600]
`
}

var smallDirs = []string{"01-load-workloada-threads1", "01-load-workloada-threads2", "03-run-workloadc-threads1", "03-run-workloadc-threads2",
	"04-run-workloadb-target800", "04-run-workloadb-target1600"}

func TestSuiteEndToEnd(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "small.yaml", smallSuite(dir))
	res := filepath.Join(dir, "results")
	r := execute(t, "", "suite", file, "--results", res)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "suite small: step 1/14 basic 01-load-workloada-threads1")
	assert.Contains(t, r.stderr, "suite small: step 14/14 embedded 04-run-workloadb-target1600: passed (suite done in")

	// Every bundle exists and is complete.
	bundles := map[string]*bundle.Bundle{}
	for _, db := range []string{"basic", "embedded"} {
		for _, d := range smallDirs {
			b, err := bundle.Read(filepath.Join(res, db, d))
			require.NoError(t, err)
			assert.Equal(t, run.StatusComplete, b.Run.Status, d)
			assert.Equal(t, db, b.Run.DB)
			bundles[db+"/"+d] = b
		}
	}
	assert.Equal(t, "2", bundles["embedded/03-run-workloadc-threads2"].Run.Config.Properties["threadcount"])
	assert.Equal(t, "1600", bundles["basic/04-run-workloadb-target1600"].Run.Config.Properties["target"])
	assert.Equal(t, int64(400), bundles["basic/04-run-workloadb-target800"].Run.Summary.Operations)
	assert.Equal(t, int64(100), bundles["basic/04-run-workloadb-target800"].Run.Summary.WarmupOps)

	// The workbook, read back: the sheets, one Overall row per database ×
	// step × sweep value with the bundles' numbers exactly.
	x, err := excelize.OpenFile(filepath.Join(res, "summary.xlsx"))
	require.NoError(t, err)
	defer func() { _ = x.Close() }()
	assert.Equal(t, []string{"Overall", "Operations", "Periods", "Hosts", "Environment", "Throughput chart"}, x.GetSheetList())
	// Environment: the version and the command, this host, and each
	// database as its adapter described it, from the bundles.
	env, err := x.GetRows("Environment", excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	assert.Equal(t, workbook.EnvironmentHeader, env[0])
	facts := map[string]string{}
	for _, row := range env[1:] {
		for len(row) < 5 {
			row = append(row, "")
		}
		facts[row[0]+"|"+row[1]+"|"+row[2]+"|"+row[3]] = row[4]
	}
	host, _ := os.Hostname()
	assert.Equal(t, host, facts["host||local|hostname"], "%v", facts)
	assert.NotEmpty(t, facts["host||local|cores"])
	assert.Contains(t, facts["ycsbctl|||command"], "ycsbctl suite "+file)
	assert.Contains(t, facts["database|basic|basic|product"], "BasicDB")
	assert.Contains(t, facts["database|embedded|embedded|product"], "Pebble")
	assert.Contains(t, facts["topology|embedded|"+filepath.Join(dir, "emb")+"|embedded store"], "open")
	for _, b := range bundles {
		e := b.Run.Environment
		require.NotNil(t, e)
		require.Len(t, e.Hosts, 1)
		assert.Equal(t, "local", e.Hosts[0].Address)
		assert.Greater(t, e.Hosts[0].Cores, 0)
		require.NotNil(t, e.Database)
		assert.Equal(t, b.Run.DB, e.Database.Adapter)
		assert.Equal(t, []string{"ycsbctl", "suite", file, "--results", res}, e.Command)
		require.NotNil(t, b.Run.Suite)
		assert.Equal(t, "small", b.Run.Suite.Suite)
		assert.Len(t, b.Run.Suite.Fingerprint, 32)
	}
	overall, err := x.GetRows("Overall", excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	require.Len(t, overall, 1+len(bundles))
	assert.Equal(t, workbook.OverallHeader, overall[0])
	col := func(name string) int {
		for i, h := range overall[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %q", name)
		return -1
	}
	seen := map[string]bool{}
	for _, row := range overall[1:] {
		b := bundles[row[col("Bundle")]]
		require.NotNil(t, b, row)
		seen[row[col("Bundle")]] = true
		tput, err := strconv.ParseFloat(row[col("Throughput (ops/s)")], 64)
		require.NoError(t, err)
		// Equal to the bundle's figure at Excel's 15 significant digits.
		assert.Equal(t, workbook.Round15(b.Run.Summary.Throughput), tput, row)
		if b.Run.Summary.RunTimeMs > 0 {
			// YCSB's throughput is operations per whole millisecond of
			// run time: a sub-millisecond basic run reports 0.
			assert.InEpsilon(t, b.Run.Summary.Throughput, tput, 1e-14)
			assert.Greater(t, tput, 0.0)
		}
		assert.Equal(t, strconv.FormatInt(b.Run.Summary.RunTimeMs, 10), row[col("Run time (ms)")])
		assert.Equal(t, strconv.FormatInt(b.Run.Summary.Operations, 10), row[col("Operations")])
		assert.Equal(t, strconv.FormatInt(workbook.Errors(b.Run.Summary.Returns), 10), row[col("Errors")])
		threads := b.Run.Config.Properties["threadcount"]
		if threads == "" {
			threads = "1" // YCSB's default
		}
		assert.Equal(t, threads, row[col("Threads")])
		assert.Equal(t, strconv.Itoa(b.Run.Agents[0].Threads), row[col("Threads")])
		assert.Equal(t, b.Run.DB, row[col("Database")])
	}
	assert.Len(t, seen, len(bundles))
	// Operations: one row per database × step × series, numbers equal.
	ops, err := x.GetRows("Operations", excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	wantOps := 0
	for _, b := range bundles {
		wantOps += len(b.Run.Summary.Series)
	}
	require.Len(t, ops, 1+wantOps)
	for _, row := range ops[1:] {
		b := bundles[row[0]+"/"+stepDir(row[1], row[2])]
		require.NotNil(t, b, row)
		var found bool
		for _, s := range b.Run.Summary.Series {
			if s.Series == row[3] {
				found = true
				assert.Equal(t, strconv.FormatInt(s.Count, 10), row[4])
				assert.Equal(t, strconv.FormatInt(s.P99Us, 10), row[10])
				assert.Equal(t, strconv.FormatInt(s.MaxUs, 10), row[7])
			}
		}
		assert.True(t, found, row)
	}
	// Periods: one row per status interval.
	periods, err := x.GetRows("Periods", excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	wantPeriods := 0
	for _, b := range bundles {
		wantPeriods += len(b.Run.Intervals)
	}
	assert.Len(t, periods, 1+wantPeriods)
	assert.Greater(t, wantPeriods, len(bundles), "the timed steps have several intervals")
	// The chart is a real drawing part of the package.
	zr, err := zip.OpenReader(filepath.Join(res, "summary.xlsx"))
	require.NoError(t, err)
	var chart bool
	for _, f := range zr.File {
		chart = chart || strings.HasPrefix(f.Name, "xl/charts/chart")
	}
	require.NoError(t, zr.Close())
	assert.True(t, chart, "no chart part in summary.xlsx")

	// summary.csv is the Overall sheet, cell for cell.
	cf, err := os.Open(filepath.Join(res, "summary.csv"))
	require.NoError(t, err)
	recs, err := csv.NewReader(cf).ReadAll()
	require.NoError(t, cf.Close())
	require.NoError(t, err)
	require.Equal(t, len(overall), len(recs))
	for i := range recs {
		got := overall[i]
		for len(got) < len(recs[i]) {
			got = append(got, "") // GetRows drops trailing empty cells
		}
		assert.Equal(t, recs[i], got, "row %d", i)
	}

	// LibreOffice opens the workbook and reads the same Overall rows.
	t.Run("LibreOffice", func(t *testing.T) { checkInLibreOffice(t, filepath.Join(res, "summary.xlsx"), recs) })

	// The comparison page renders without console errors.
	html := filepath.Join(res, "compare.html")
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), "03-run-workloadc: throughput vs threads")
	assert.Contains(t, string(page), "04-run-workloadb: p99 latency vs target")
	t.Run("Chromium", func(t *testing.T) { suitecheck.CheckCompare(t, html, 6) }) // sweep and comparison charts

	// suite report rewrites the summaries from the bundles alone.
	for _, f := range []string{"summary.xlsx", "summary.csv", "compare.html"} {
		require.NoError(t, os.Remove(filepath.Join(res, f)))
	}
	r = execute(t, "", "suite", "report", res)
	require.Equal(t, 0, r.code, r.stderr)
	again, err := os.ReadFile(filepath.Join(res, "summary.csv"))
	require.NoError(t, err)
	var want bytes.Buffer
	w := csv.NewWriter(&want)
	require.NoError(t, w.WriteAll(recs))
	assert.Equal(t, want.String(), string(again))
	for _, f := range []string{"summary.xlsx", "compare.html"} {
		assert.FileExists(t, filepath.Join(res, f))
	}

	// The same --results again is refused rather than mixed.
	r = execute(t, "", "suite", file, "--results", res)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--resume")
}

// stepDir rebuilds a bundle directory from a workbook row's step and
// sweep ("03-run-workloadc", "threads=2").
func stepDir(step, sweep string) string {
	for _, kv := range strings.Split(sweep, ", ") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			step += "-" + k + v
		}
	}
	return step
}

// fakeSignals delivers a synthetic Ctrl-C to every channel registered
// through SignalNotify, as the OS does.
type fakeSignals struct {
	mu    sync.Mutex
	chans []chan<- os.Signal
}

func (f *fakeSignals) notify(c chan<- os.Signal, _ ...os.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chans = append(f.chans, c)
}

func (f *fakeSignals) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.chans)
}

func (f *fakeSignals) interrupt() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.chans {
		select {
		case c <- os.Interrupt:
		default:
		}
	}
}

func TestSuiteResumeRunsOnlyTheMissingSteps(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "resume.yaml", `name: resume
properties: {recordcount: 200, status.interval: 0.2, basicdb.verbose: false}
databases: [basic]
steps:
  - load: workloada
  - run: workloadc
    operations: 500
  - run: workloada
    duration: 5s
  - run: workloadc
    operations: 500
`)
	res := filepath.Join(dir, "results")
	sig := &fakeSignals{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Ctrl-C once the timed step runs and has its own handler (the
		// suite's is the first registration, the steps' follow).
		for ctx.Err() == nil {
			if spools, _ := spool.Find(filepath.Join(res, "basic", "03-run-workloada")); len(spools) > 0 && sig.count() >= 4 {
				time.Sleep(300 * time.Millisecond)
				sig.interrupt()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	r := executeWithSignals(t, "", sig.notify, "suite", file, "--results", res)
	cancel()
	require.Equal(t, 6, r.code, "one Ctrl-C stops the suite as it stops a run\n%s", r.stderr)
	assert.Less(t, time.Since(start), 15*time.Second, "the interrupted step did not stop gracefully")
	assert.Contains(t, r.stderr, "interrupted: ending the current step")
	assert.Contains(t, r.stderr, "--resume --results "+res)
	st, err := suite.ReadState(res)
	require.NoError(t, err)
	var statuses []string
	for _, s := range st.Steps {
		statuses = append(statuses, s.Status)
	}
	assert.Equal(t, []string{suite.StatusPassed, suite.StatusPassed, suite.StatusIncomplete, suite.StatusPending}, statuses)
	assert.True(t, st.Interrupted)
	assert.Equal(t, suite.SuiteStopped, st.Status)
	require.NotNil(t, st.ExitCode)
	assert.Equal(t, 6, *st.ExitCode)
	b, err := bundle.Read(filepath.Join(res, "basic", "03-run-workloada"))
	require.NoError(t, err)
	assert.Equal(t, run.StatusStopped, b.Run.Status, "the step was stopped gracefully")
	ids := map[string]string{}
	for _, d := range []string{"01-load-workloada", "02-run-workloadc"} {
		b, err := bundle.Read(filepath.Join(res, "basic", d))
		require.NoError(t, err)
		ids[d] = b.Run.RunID
	}
	logsBefore, _ := os.ReadDir(filepath.Join(res, "logs"))
	logText := map[string]string{}
	for _, e := range logsBefore {
		b, err := os.ReadFile(filepath.Join(res, "logs", e.Name()))
		require.NoError(t, err)
		logText[e.Name()] = string(b)
	}

	// Resuming with another configuration is refused before anything
	// runs, naming the steps and the property (issue 19: a changed -p
	// once reused the old bundles and a sweep mixed two configurations).
	r = execute(t, "", "suite", file, "--results", res, "--resume", "-p", "maxexecutiontime=1")
	require.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, `basic/01-load-workloada: property maxexecutiontime: unset → "1"`)
	assert.Contains(t, r.stderr, "basic/02-run-workloadc")
	logsRefused, _ := os.ReadDir(filepath.Join(res, "logs"))
	assert.Equal(t, len(logsBefore), len(logsRefused), "nothing ran")

	// The same configuration resumes.
	r = execute(t, "", "suite", file, "--results", res, "--resume")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, 2, strings.Count(r.stderr, "already complete, skipped"), r.stderr)
	assert.NotContains(t, r.stderr, "drop and create the schema", "the load was complete: no reload")
	for d, id := range ids {
		b, err := bundle.Read(filepath.Join(res, "basic", d))
		require.NoError(t, err)
		assert.Equal(t, id, b.Run.RunID, "%s ran again", d)
	}
	for _, d := range []string{"03-run-workloada", "04-run-workloadc"} {
		b, err := bundle.Read(filepath.Join(res, "basic", d))
		require.NoError(t, err)
		assert.Equal(t, run.StatusComplete, b.Run.Status, d)
	}
	logsAfter, _ := os.ReadDir(filepath.Join(res, "logs"))
	assert.Equal(t, len(logsBefore)+2, len(logsAfter), "only the two missing steps ran")
	// The interrupted attempt's logs are part of the record: a resumed
	// suite adds to them and never truncates one.
	for name, text := range logText {
		b, err := os.ReadFile(filepath.Join(res, "logs", name))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(b), text), "log %s lost the first attempt's output", name)
	}
	st, err = suite.ReadState(res)
	require.NoError(t, err)
	assert.False(t, st.Interrupted)
	assert.Equal(t, suite.StatusResumed, st.Steps[0].Status)
	assert.Equal(t, suite.StatusPassed, st.Steps[2].Status)
	assert.FileExists(t, filepath.Join(res, "summary.xlsx"))

	// Without FILE, --resume takes the copy kept in the results; all
	// done now, nothing runs.
	r = execute(t, "", "suite", "--resume", "--results", res)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, 4, strings.Count(r.stderr, "already complete, skipped"), r.stderr)
	logsFinal, _ := os.ReadDir(filepath.Join(res, "logs"))
	assert.Equal(t, len(logsAfter), len(logsFinal))
}

func TestSuiteBadFiles(t *testing.T) {
	dir := t.TempDir()
	base := "name: bad\ndatabases: [basic]\n"
	tests := []struct {
		name, src string
		want      []string
	}{
		{"unknown key", base + "steps:\n  - run: workloada\n    threds: 4\n", []string{"line 5", `key "threds"`, "unknown key"}},
		{"wrong type", base + "steps:\n  - run: workloada\n    target: fast\n", []string{"line 5", `key "target"`, `"fast"`}},
		{"empty steps", base + "steps: []\n", []string{"line 3", `key "steps"`, "at least one step"}},
		{"bad duration", base + "steps:\n  - run: workloada\n    duration: 10 minutes\n", []string{"line 5", `key "duration"`, `"10 minutes"`}},
		{"sweep on a non-sweepable key", base + "steps:\n  - run: workloada\n    warmup: [1s, 2s]\n", []string{"line 5", `key "warmup"`, "cannot be swept"}},
		{"unknown workload", base + "steps:\n  - run: workloadz\n", []string{"line 4", `key "run"`, `"workloadz"`}},
		{"unknown adapter", "name: bad\ndatabases:\n  - db: nosuchdb\nsteps:\n  - run: workloada\n", []string{"line 3", `key "db"`, `"nosuchdb"`}},
		{"bad property value", base + "steps:\n  - run: workloada\n    properties: {requestdistribution: gaussian}\n", []string{"line 5", `key "properties.requestdistribution"`, "step run-workloada of basic", "gaussian"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.src)
			res := filepath.Join(dir, "res-"+strings.ReplaceAll(tc.name, " ", "-"))
			r := execute(t, "", "suite", file, "--results", res)
			assert.Equal(t, 2, r.code, r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.NoDirExists(t, res, "nothing may run for a bad file")
		})
	}
	r := execute(t, "", "suite", "nosuchsuite")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "comparison2014")
}

func TestSuiteDryRunComparison2014(t *testing.T) {
	res := filepath.Join(t.TempDir(), "r")
	r := execute(t, "", "suite", "comparison2014", "-p", "recordcount=20000", "-p", "hosts=127.0.0.1", "--db", "cassandra,embedded", "--dry-run", "--results", res)
	require.Equal(t, 0, r.code, r.stderr)
	out := r.stdout
	t.Log("\n" + out)
	assert.Contains(t, out, "Suite comparison2014: 2 database(s) × 9 step(s) = 18 planned item(s), 18 measured run(s)")
	assert.Contains(t, out, "[2/18] cassandra  02-bulkload  load comparison2014-bulkload")
	assert.Contains(t, out, "[18/18] embedded  09-insertread  run comparison2014-insertread  est. 5m30s")
	assert.Regexp(t, regexp.MustCompile(`properties: batchsize=3000 .*recordcount=20000`), out)
	assert.Contains(t, out, "ycsbctl run cassandra -P comparison2014-read ")
	assert.NoDirExists(t, res)

	// A property for every database reaches the adapters that read it:
	// hosts goes to cassandra's steps, not embedded's; fieldcount to both.
	r = execute(t, "", "suite", "comparison2014", "--db", "cassandra,embedded", "-p", "hosts=10.1.2.3", "-p", "embedded.dir=/tmp/x", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	for _, line := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.Contains(line, "ycsbctl load cassandra"):
			assert.Contains(t, line, "-p hosts=10.1.2.3")
			assert.NotContains(t, line, "embedded.dir")
			assert.Contains(t, line, "-p fieldcount=10")
		case strings.Contains(line, "ycsbctl load embedded"):
			assert.NotContains(t, line, "hosts=")
			assert.Contains(t, line, "-p embedded.dir=/tmp/x")
			assert.Contains(t, line, "-p fieldcount=10")
		}
	}

	// The study's client settings, per agent: on four agents 24, 8 and
	// 36 threads each are 96 / 32 / 144 in all; HBase's write buffer per
	// load step and MongoDB's write concern reach only those adapters.
	r = execute(t, "", "suite", "comparison2014", "--db", "hbase,mongodb", "-p", "columnfamily=f", "--dry-run",
		"--agents", "h1:7420,h2:7420,h3:7420,h4:7420")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Distributed over 4 agent(s): h1:7420, h2:7420, h3:7420, h4:7420 (threads are per agent)")
	threads := map[string]string{}
	for _, line := range strings.Split(r.stdout, "\n") {
		if !strings.Contains(line, "ycsbctl coordinator") {
			continue
		}
		f := strings.Fields(line)
		db, dir := f[3], filepath.Base(f[len(f)-1])
		threads[dir] = regexp.MustCompile(`threadcount=(\d+)`).FindStringSubmatch(line)[1]
		switch {
		case db == "hbase" && dir == "01-load":
			assert.Contains(t, line, "-p clientbuffering=true")
			assert.Contains(t, line, "-p writebuffersize=2048 ")
		case db == "hbase" && dir == "02-bulkload":
			assert.Contains(t, line, "-p writebuffersize=4194304 ")
			assert.Contains(t, line, "-p batchsize=3000")
		case db == "hbase":
			assert.NotContains(t, line, "writebuffersize")
			assert.NotContains(t, line, "mongodb.writeConcern")
		case db == "mongodb":
			assert.Contains(t, line, "-p mongodb.writeConcern=acknowledged")
			assert.NotContains(t, line, "writebuffersize")
			assert.NotContains(t, line, "columnfamily")
		}
	}
	assert.Equal(t, map[string]string{"01-load": "24", "02-bulkload": "8", "03-read": "36", "04-readmostly": "36", "05-updateheavy": "36",
		"06-readmodifywrite": "36", "07-readlatest": "36", "08-scan": "36", "09-insertread": "36"}, threads)

	// The HBase PerformanceEvaluation study: WAL on and off, batching,
	// and the block cache as a schema option that recreates and reloads.
	r = execute(t, "", "suite", "hbase-pe", "-p", "recordcount=1000", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{"01-randomwrite-durability=SYNC_WAL", "01-randomwrite-durability=SKIP_WAL", "02-sequentialwrite-durability=SKIP_WAL",
		"03-batchedwrite-writebuffersize=4194304", "04-cache-hbase.blockcache=false  load", "05-randomread-hbase.blockcache=false  run",
		"06-scan10-hbase.blockcache=true", "07-scan100-hbase.blockcache=false"} {
		assert.Contains(t, r.stdout, want)
	}
	assert.Contains(t, r.stdout, "Suite hbase-pe: 1 database(s) × 7 step(s) = 16 planned item(s)")

	r = execute(t, "", "suites")
	require.Equal(t, 0, r.code)
	for _, s := range []string{"bankmark", "comparison2014", "hbase-pe", "threadscan"} {
		assert.Contains(t, r.stdout, s)
	}
	for _, s := range []string{"bankmark", "threadscan"} {
		r = execute(t, "", "suite", s, "--dry-run")
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "thread scan: threads 1, 2, 4")
	}
}

func TestSuiteThreadScanReportsTheKnee(t *testing.T) {
	res := filepath.Join(t.TempDir(), "scan")
	// The built-in thread scan, sized down: one-second tries on the
	// no-op database, which stops scaling once the cores are busy.
	r := execute(t, "", "suite", "threadscan", "--db", "basic", "--results", res,
		"-p", "recordcount=100", "-p", "maxexecutiontime=1", "-p", "warmuptime=0", "-p", "basicdb.verbose=false", "-p", "status.interval=0.25")
	require.Equal(t, 0, r.code, r.stderr)
	st, err := suite.ReadState(res)
	require.NoError(t, err)
	require.Len(t, st.Scans, 1)
	sc := st.Scans[0]
	require.GreaterOrEqual(t, len(sc.Threads), 2)
	assert.Contains(t, sc.Threads, sc.Knee)
	assert.Contains(t, r.stdout, "Thread scan basic 02-run-workloadc-threads: knee at "+strconv.Itoa(sc.Knee)+" thread(s)")
	// Every try has its bundle, with the thread count it ran with.
	for i, th := range sc.Threads {
		b, err := bundle.Read(filepath.Join(res, "basic", "02-run-workloadc-threads"+strconv.Itoa(th)))
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(th), b.Run.Config.Properties["threadcount"])
		assert.Equal(t, b.Run.Summary.Throughput, sc.Throughput[i])
	}
	x, err := excelize.OpenFile(filepath.Join(res, "summary.xlsx"))
	require.NoError(t, err)
	defer func() { _ = x.Close() }()
	rows, err := x.GetRows("Thread scans", excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	require.Len(t, rows, 1+len(sc.Threads))
	var knees []string
	for _, row := range rows[1:] {
		if len(row) > 5 && row[5] != "" {
			knees = append(knees, row[5])
		}
	}
	assert.Equal(t, []string{strconv.Itoa(sc.Knee)}, knees)
	overall, err := x.GetRows("Overall")
	require.NoError(t, err)
	assert.Len(t, overall, 2+len(sc.Threads), "the load and every try")
}

// checkInLibreOffice converts the workbook's first sheet (Overall) to CSV
// with LibreOffice, headless, and compares it with want: the same text,
// numbers equal to within LibreOffice's display of 15 digits.
func checkInLibreOffice(t *testing.T, xlsx string, want [][]string) {
	t.Helper()
	bin, err := exec.LookPath("soffice")
	if err != nil {
		tools.Missing(t, "LibreOffice (soffice)", "apt-get install libreoffice-calc-nogui")
		return
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "-env:UserInstallation=file://"+filepath.Join(out, "profile"),
		"--convert-to", "csv", "--outdir", out, xlsx)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, string(msg))
	f, err := os.Open(filepath.Join(out, strings.TrimSuffix(filepath.Base(xlsx), ".xlsx")+".csv"))
	require.NoError(t, err, string(msg))
	got, err := csv.NewReader(f).ReadAll()
	require.NoError(t, f.Close())
	require.NoError(t, err)
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.Equal(t, len(want[i]), len(got[i]), "row %d", i)
		for j := range want[i] {
			w, errW := strconv.ParseFloat(want[i][j], 64)
			g, errG := strconv.ParseFloat(got[i][j], 64)
			if errW == nil && errG == nil && w != 0 {
				assert.InEpsilon(t, w, g, 1e-14, "row %d column %d", i, j)
				continue
			}
			assert.Equal(t, want[i][j], got[i][j], "row %d column %d", i, j)
		}
	}
}

func TestSuiteWarmupWorkload(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "warm.yaml", `name: warm
properties: {recordcount: 100, basicdb.verbose: false, status.interval: 0.25}
databases: [basic]
steps:
  - run: workloada
    warmup_workload: workloadc
    warmup: 1s
    operations: 400
`)
	res := filepath.Join(dir, "r")
	r := execute(t, "", "suite", file, "--results", res)
	require.Equal(t, 0, r.code, r.stderr)
	// The warm-up is a run of its own with the other mix, kept aside...
	w, err := bundle.Read(filepath.Join(res, "basic", "01-run-workloada-warmup"))
	require.NoError(t, err)
	assert.Equal(t, "1", w.Run.Config.Properties["maxexecutiontime"])
	assert.Equal(t, "workloadc", w.Workload())
	assert.Greater(t, w.Run.Summary.Operations, int64(0))
	for op := range w.Run.Summary.Returns {
		assert.Equal(t, "READ", op, "workload C reads only")
	}
	// ...and the measured run counts only its own operations.
	m, err := bundle.Read(filepath.Join(res, "basic", "01-run-workloada"))
	require.NoError(t, err)
	assert.Equal(t, int64(400), m.Run.Summary.Operations)
	assert.Contains(t, m.Run.Summary.Returns, "UPDATE")
	assert.GreaterOrEqual(t, m.Run.StartedAt.Sub(w.Run.StartedAt), time.Second, "the warm-up ran first, for its second")
	// The summaries hold the measured run only.
	b, err := os.ReadFile(filepath.Join(res, "summary.csv"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(b), "\n"), string(b))
}

// On a terminal every step gets the live view, headed by the suite's
// progress (step i of n, database, suite ETA); the steps still write their
// bundles and the suite its workbook.
func TestSuiteLiveViewShowsProgress(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "live.yaml", `name: live
properties: {recordcount: 200, status.interval: 0.2, basicdb.verbose: false}
databases: [basic]
steps:
  - load: workloada
  - run: workloadc
    duration: 1s
`)
	res := filepath.Join(dir, "results")
	var stdout, stderr lockedBuffer
	gs := &cli.GlobalState{Ctx: context.Background(), Args: []string{"suite", file, "--results", res}, Stdin: strings.NewReader(""),
		Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Clock: clock.NewReal(), IsTerminal: true,
		ReadFile: properties.ReadFile, SignalNotify: func(chan<- os.Signal, ...os.Signal) {}, SignalStop: func(chan<- os.Signal) {}}
	require.Equal(t, 0, cli.Execute(gs), stderr.String())
	out := stdout.String()
	assert.Equal(t, 2, strings.Count(out, "\x1b[?1049h"), "each step took the screen for its live view")
	for _, want := range []string{"suite live: step 1/2", "suite live: step 2/2", "basic"} {
		assert.Contains(t, out, want, "the view's header shows the suite's progress")
	}
	for _, step := range []string{"01-load-workloada", "02-run-workloadc"} {
		_, err := os.Stat(filepath.Join(res, "basic", step, bundle.FileRunJSON))
		assert.NoError(t, err, "bundle of %s", step)
	}
	_, err := os.Stat(filepath.Join(res, "summary.xlsx"))
	assert.NoError(t, err)
}

package suite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

const example = `name: small-comparison
properties: {recordcount: 20000}
databases:
  - db: cassandra
    properties: {hosts: 127.0.0.1}
  - db: embedded
agents: []
steps:
  - load: workloada
    threads: 8
  - load: workloada
    name: bulkload
    properties: {batchsize: 100}
  - pause: 5s
  - run: workloadc
    warmup: 10s
    duration: 30s
    threads: [1, 4, 16]
  - run: workloadb
    target: 5000
`

func TestParseIssueExample(t *testing.T) {
	f, err := Parse("s.yaml", []byte(example), nil)
	require.NoError(t, err)
	assert.Equal(t, "small-comparison", f.Name)
	require.Len(t, f.Databases, 2)
	assert.Equal(t, []Prop{{"hosts", "127.0.0.1"}}, f.Databases[0].Properties)
	require.Len(t, f.Steps, 5)
	assert.Equal(t, KindLoad, f.Steps[0].Kind)
	assert.Equal(t, []int{8}, f.Steps[0].Threads)
	assert.Equal(t, 5*time.Second, f.Steps[2].Pause)
	assert.Equal(t, []int{1, 4, 16}, f.Steps[3].Threads)
	assert.Equal(t, 10*time.Second, f.Steps[3].WarmupTime)
	assert.Equal(t, 30*time.Second, f.Steps[3].Duration)
	assert.Equal(t, []float64{5000}, f.Steps[4].Target)
	assert.Equal(t, 15, f.Steps[3].Line)

	p := Expand(f, map[string]string{"hosts": "127.0.0.2"}, nil)
	// Per database: load, bulkload, pause, 3 sweep values, workloadb.
	require.Len(t, p.Items, 14)
	var dirs []string
	for _, it := range p.Items[:7] {
		dirs = append(dirs, it.Dir)
	}
	assert.Equal(t, []string{"cassandra/01-load-workloada", "cassandra/02-bulkload", "", "cassandra/04-run-workloadc-threads1",
		"cassandra/04-run-workloadc-threads4", "cassandra/04-run-workloadc-threads16", "cassandra/05-run-workloadb"}, dirs)
	c := p.Items[3]
	assert.Equal(t, "10", c.Props["warmuptime"])
	assert.Equal(t, "30", c.Props["maxexecutiontime"])
	assert.Equal(t, "0", c.Props["operationcount"])
	assert.Equal(t, "20000", c.Props["recordcount"])
	assert.Equal(t, "127.0.0.2", c.Props["hosts"], "-p beats the database's properties")
	assert.Equal(t, 40*time.Second, c.Estimate)
	assert.True(t, p.Items[0].Schema && p.Items[1].Schema)
	assert.Equal(t, "100", p.Items[1].Props["batchsize"])
	assert.Equal(t, []string{"run", "embedded", "-P", "workloadb", "-p", "recordcount=20000", "-p", "hosts=127.0.0.2", "-target", "5000",
		"--results", filepath.Join("R", "embedded/05-run-workloadb"), "--no-tui"}[:4], p.Args(p.Items[13], "R", p.Items[13].Dir, 0)[:4])
	args := strings.Join(p.Args(p.Items[13], "R", p.Items[13].Dir, 0), " ")
	assert.Contains(t, args, "-target 5000 --results R/embedded/05-run-workloadb --no-tui")

	// Applies keeps a suite-wide property from databases that do not read it.
	only := Expand(f, map[string]string{"cassandra.x": "1"}, nil, Hooks{Applies: func(db, key string) bool { return key != "cassandra.x" || db == "cassandra" }})
	assert.Equal(t, "1", only.Items[0].Props["cassandra.x"])
	assert.NotContains(t, only.Items[7].Props, "cassandra.x")
	assert.Equal(t, "embedded", only.Items[7].DB.DB)

	dist := Expand(f, nil, []string{"a:1", "b:2"})
	assert.Equal(t, []string{"coordinator", "load", "cassandra", "--agents", "a:1,b:2"}, dist.Args(dist.Items[0], "R", dist.Items[0].Dir, 0)[:5])

	var out bytes.Buffer
	require.NoError(t, p.Print(&out, "R"))
	assert.Contains(t, out.String(), "[4/14] cassandra  04-run-workloadc-threads1  run workloadc  sweep threads=1  est. 40s")
	assert.Contains(t, out.String(), "first: ycsbctl drop cassandra")
}

func TestRecordCountSweepRepeatsTheSegment(t *testing.T) {
	f, err := Parse("s.yaml", []byte(`name: sizes
databases: [embedded]
steps:
  - load: workloadc
    recordcount: [1000, 2000]
  - run: workloadc
    operations: 500
  - load: workloada
  - run: workloada
    warmup_workload: workloadc
    warmup: 2s
    operations: 100
`), nil)
	require.NoError(t, err)
	p := Expand(f, nil, nil)
	var got []string
	for _, it := range p.Items {
		got = append(got, string(it.Kind)+" "+it.Dir+" rc="+it.Props["recordcount"])
	}
	assert.Equal(t, []string{
		"load embedded/01-load-workloadc-recordcount1000 rc=1000",
		"run embedded/02-run-workloadc-recordcount1000 rc=1000",
		"load embedded/01-load-workloadc-recordcount2000 rc=2000",
		"run embedded/02-run-workloadc-recordcount2000 rc=2000",
		"load embedded/03-load-workloada rc=",
		"warmup embedded/04-run-workloada-warmup rc=",
		"run embedded/04-run-workloada rc=",
	}, got)
	w := p.Items[5]
	assert.Equal(t, "workloadc", w.Workload)
	assert.Equal(t, "2", w.Props["maxexecutiontime"])
	assert.Equal(t, "0", w.Props["operationcount"])
	assert.Equal(t, "100", p.Items[6].Props["operationcount"])
	assert.NotContains(t, p.Items[6].Props, "warmuptime", "the warm-up is the separate run")
}

func TestParseErrors(t *testing.T) {
	base := "name: s\ndatabases: [basic]\n"
	tests := []struct {
		name, src string
		line      int
		want      []string
	}{
		{"unknown top-level key", base + "stepz:\n  - run: workloada\n", 3, []string{`key "stepz"`, "unknown key", "steps"}},
		{"unknown step key", base + "steps:\n  - run: workloada\n    threds: 4\n", 5, []string{`key "threds"`, "unknown key", "threads"}},
		{"wrong type", base + "steps:\n  - run: workloada\n    threads: many\n", 5, []string{`key "threads"`, `"many"`, "integer"}},
		{"wrong type for properties", base + "properties: [a, b]\nsteps:\n  - run: workloada\n", 3, []string{`key "properties"`, "mapping"}},
		{"empty steps", base + "steps: []\n", 3, []string{`key "steps"`, "at least one step"}},
		{"no steps key", base, 1, []string{`key "steps"`, "at least one step"}},
		{"bad duration", base + "steps:\n  - run: workloada\n    duration: 30 seconds\n", 5, []string{`key "duration"`, `"30 seconds"`, "30s"}},
		{"bad pause", base + "steps:\n  - pause: soon\n  - run: workloada\n", 4, []string{`key "pause"`, `"soon"`}},
		{"fractional duration", base + "steps:\n  - run: workloada\n    duration: 1500ms\n", 5, []string{`key "duration"`, "whole seconds"}},
		{"sweep on a non-sweepable key", base + "steps:\n  - run: workloada\n    duration: [10s, 20s]\n", 5, []string{`key "duration"`, "cannot be swept"}},
		{"sweep on operations", base + "steps:\n  - run: workloada\n    operations: [10, 20]\n", 5, []string{`key "operations"`, "cannot be swept"}},
		{"recordcount sweep on a run step", base + "steps:\n  - run: workloada\n    recordcount: [10, 20]\n", 5, []string{`key "recordcount"`, "load step"}},
		{"two kinds", base + "steps:\n  - run: workloada\n    load: workloada\n", 5, []string{`key "load"`, "not both"}},
		{"no kind", base + "steps:\n  - threads: 4\n", 4, []string{"load: WORKLOAD"}},
		{"threads zero", base + "steps:\n  - run: workloada\n    threads: [1, 0]\n", 5, []string{`key "threads"`, `"0"`}},
		{"negative target", base + "steps:\n  - run: workloada\n    target: -5\n", 5, []string{`key "target"`}},
		{"warmup on load", base + "steps:\n  - load: workloada\n    warmup: 10s\n", 5, []string{`key "warmup"`, "load step"}},
		{"warmup_workload without warmup", base + "steps:\n  - run: workloada\n    warmup_workload: workloadc\n", 5, []string{`key "warmup_workload"`, "warmup"}},
		{"threads scan without a scan", base + "steps:\n  - run: workloada\n    threads: scan\n", 4, []string{`key "threads"`, "threadscan"}},
		{"bad yaml", base + "steps:\n  - run: [workloada\n", 3, []string{"not valid YAML"}},
		{"missing name", "databases: [basic]\nsteps:\n  - run: workloada\n", 1, []string{`key "name"`, "missing"}},
		{"bad name", "name: a/b\ndatabases: [basic]\nsteps:\n  - run: workloada\n", 1, []string{`key "name"`, `"a/b"`}},
		{"duplicate database", "name: s\ndatabases: [basic, basic]\nsteps:\n  - run: workloada\n", 2, []string{"listed twice"}},
		{"database without db", "name: s\ndatabases:\n  - name: x\nsteps:\n  - run: workloada\n", 3, []string{`key "db"`, "missing"}},
		{"property value not scalar", base + "steps:\n  - run: workloada\n    properties: {a: [1]}\n", 5, []string{`key "properties.a"`}},
		{"key twice", base + "steps:\n  - run: workloada\n    threads: 1\n    threads: 2\n", 6, []string{`key "threads"`, "twice"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.src), nil)
			require.Error(t, err)
			msg := err.Error()
			assert.Contains(t, msg, "s.yaml: line "+strconv.Itoa(tc.line)+":", msg)
			for _, w := range tc.want {
				assert.Contains(t, msg, w)
			}
		})
	}
}

func TestUnknownWorkloadIsRefused(t *testing.T) {
	_, err := Parse("s.yaml", []byte("name: s\ndatabases: [basic]\nsteps:\n  - run: workloada\n  - run: nosuch\n"), func(w string) bool { return w == "workloada" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), `line 5: key "run": workload "nosuch"`)
}

// fakeExec stands in for the CLI: it records command lines and writes a
// bundle whose throughput tput(args) decides.
type fakeExec struct {
	mu    sync.Mutex
	calls [][]string
	tput  func(args []string) float64
	fail  func(args []string) int
}

func (f *fakeExec) Execute(_ context.Context, args []string) int {
	f.mu.Lock()
	f.calls = append(f.calls, args)
	f.mu.Unlock()
	if f.fail != nil {
		if c := f.fail(args); c != 0 {
			return c
		}
	}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--results" {
			dir := args[i+1]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				panic(err)
			}
			tp := 1000.0
			if f.tput != nil {
				tp = f.tput(args)
			}
			if err := bundle.WriteRun(dir, &bundle.Run{Status: run.StatusComplete, Summary: bundle.Summary{Throughput: tp}}); err != nil {
				panic(err)
			}
		}
	}
	return 0
}

func (f *fakeExec) verbs() []string {
	var out []string
	for _, c := range f.calls {
		v := c[0] + " " + c[1]
		threads := ""
		for i := 0; i+1 < len(c); i++ {
			if c[i] == "--results" {
				v += " " + filepath.Base(c[i+1])
			}
			if c[i] == "-threads" {
				threads = " t" + c[i+1]
			}
		}
		if strings.Contains(v, "-threads") {
			v += threads
		}
		out = append(out, v)
	}
	return out
}

func mustPlan(t *testing.T, src string) *Plan {
	t.Helper()
	f, err := Parse("s.yaml", []byte(src), nil)
	require.NoError(t, err)
	return Expand(f, nil, nil)
}

func TestRunnerPausesOnTheClockAndResumes(t *testing.T) {
	p := mustPlan(t, `name: s
databases: [basic]
steps:
  - load: workloada
  - pause: 30m
  - run: workloadc
    operations: 10
    threads: [1, 2]
`)
	dir := t.TempDir()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	ex := &fakeExec{}
	var lines []string
	r := &Runner{Plan: p, Dir: dir, Exec: ex, Clock: clk, Progress: func(pr Progress) { lines = append(lines, pr.Line()) }}
	done := make(chan exitcode.Code)
	go func() { _, c := r.Run(context.Background()); done <- c }()
	// The pause waits on the injected clock: advance it until the runner
	// is through.
	for {
		select {
		case c := <-done:
			assert.Equal(t, exitcode.OK, c)
			assert.Equal(t, []string{"drop basic", "init basic", "load basic 01-load-workloada", "run basic 03-run-workloadc-threads1 t1", "run basic 03-run-workloadc-threads2 t2"}, ex.verbs())
			assert.Contains(t, strings.Join(lines, "\n"), "suite s: step 2/4 basic 02-pause 30m")
			st, err := ReadState(dir)
			require.NoError(t, err)
			for _, s := range st.Steps {
				assert.Equal(t, StatusPassed, s.Status, s.Dir)
			}
			// Resume: everything complete, nothing runs again.
			ex2 := &fakeExec{}
			r2 := &Runner{Plan: p, Dir: dir, Exec: ex2, Clock: clk, Resume: true}
			_, c2 := r2.Run(context.Background())
			assert.Equal(t, exitcode.OK, c2)
			assert.Empty(t, ex2.calls)
			// Remove one bundle: only that step runs.
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "basic", "03-run-workloadc-threads2")))
			ex3 := &fakeExec{}
			r3 := &Runner{Plan: p, Dir: dir, Exec: ex3, Clock: clk, Resume: true}
			_, c3 := r3.Run(context.Background())
			assert.Equal(t, exitcode.OK, c3)
			assert.Equal(t, []string{"run basic 03-run-workloadc-threads2 t2"}, ex3.verbs())
			return
		case <-time.After(time.Millisecond):
			clk.Advance(time.Minute)
		}
	}
}

func TestRunnerFailureStopsUnlessKeepGoing(t *testing.T) {
	src := `name: s
databases: [basic, embedded]
steps:
  - run: workloada
    operations: 10
  - run: workloadc
    operations: 10
`
	failFirst := func(args []string) int {
		if args[1] == "basic" && strings.Contains(strings.Join(args, " "), "workloada") {
			return int(exitcode.DBErrors)
		}
		return 0
	}
	for _, keep := range []bool{false, true} {
		ex := &fakeExec{fail: failFirst}
		dir := t.TempDir()
		r := &Runner{Plan: mustPlan(t, src), Dir: dir, Exec: ex, Clock: clock.NewReal(), KeepGoing: keep}
		st, code := r.Run(context.Background())
		assert.Equal(t, exitcode.DBErrors, code, "keep-going %v", keep)
		assert.Equal(t, StatusFailed, st.Steps[0].Status)
		if keep {
			assert.Len(t, ex.calls, 4)
			assert.Equal(t, StatusPassed, st.Steps[3].Status)
			// The failed step wrote no bundle here; give it a complete
			// one, as a run failing on its error rate does: --resume
			// still runs it again, because the suite recorded it failed.
			require.NoError(t, os.MkdirAll(filepath.Join(dir, st.Steps[0].Dir), 0o755))
			require.NoError(t, bundle.WriteRun(filepath.Join(dir, st.Steps[0].Dir), &bundle.Run{Status: run.StatusComplete}))
			ex2 := &fakeExec{}
			r2 := &Runner{Plan: mustPlan(t, src), Dir: dir, Exec: ex2, Clock: clock.NewReal(), Resume: true}
			_, c2 := r2.Run(context.Background())
			assert.Equal(t, exitcode.OK, c2)
			assert.Len(t, ex2.calls, 1)
			assert.Contains(t, strings.Join(ex2.calls[0], " "), "basic/01-run-workloada")
		} else {
			assert.Len(t, ex.calls, 1)
			assert.Equal(t, StatusPending, st.Steps[1].Status)
		}
	}
}

func TestRunnerStopMarksIncomplete(t *testing.T) {
	p := mustPlan(t, "name: s\ndatabases: [basic]\nsteps:\n  - run: workloada\n    operations: 10\n  - run: workloadc\n    operations: 10\n")
	var r *Runner
	ex := &fakeExec{fail: func(args []string) int {
		// Ctrl-C arrives during the first step, which ends as a
		// gracefully stopped run does.
		r.Stop()
		return int(exitcode.Aborted)
	}}
	r = &Runner{Plan: p, Dir: t.TempDir(), Exec: ex, Clock: clock.NewReal()}
	st, code := r.Run(context.Background())
	assert.Equal(t, exitcode.Aborted, code)
	assert.True(t, st.Interrupted)
	assert.Equal(t, StatusIncomplete, st.Steps[0].Status)
	assert.Equal(t, StatusPending, st.Steps[1].Status)
	assert.Len(t, ex.calls, 1)
}

func TestThreadScanFindsTheKnee(t *testing.T) {
	p := mustPlan(t, `name: s
databases: [basic]
steps:
  - run: workloadc
    threadscan: {gain: 10%, max: 64}
    duration: 5s
  - run: workloada
    threads: scan
    duration: 5s
`)
	// Throughput doubles up to 8 threads, then grows 5 %.
	curve := map[string]float64{"1": 100, "2": 200, "4": 400, "8": 800, "16": 840, "32": 850}
	ex := &fakeExec{tput: func(args []string) float64 {
		for i := range args {
			if args[i] == "-threads" {
				return curve[args[i+1]]
			}
		}
		return 1
	}}
	dir := t.TempDir()
	r := &Runner{Plan: p, Dir: dir, Exec: ex, Clock: clock.NewReal()}
	st, code := r.Run(context.Background())
	require.Equal(t, exitcode.OK, code)
	require.Len(t, st.Scans, 1)
	assert.Equal(t, 8, st.Scans[0].Knee)
	assert.Equal(t, []int{1, 2, 4, 8, 16}, st.Scans[0].Threads)
	assert.Contains(t, st.Scans[0].Reason, "8 → 16 threads grew throughput +5.0%")
	assert.Equal(t, []string{"run basic 01-run-workloadc-threads1 t1", "run basic 01-run-workloadc-threads2 t2", "run basic 01-run-workloadc-threads4 t4",
		"run basic 01-run-workloadc-threads8 t8", "run basic 01-run-workloadc-threads16 t16", "run basic 02-run-workloada"}, ex.verbs())
	assert.Contains(t, strings.Join(ex.calls[5], " "), "-threads 8 ", "threads: scan takes the knee")
	// The tries are recorded as steps of their own, in suite.json too.
	saved, err := ReadState(dir)
	require.NoError(t, err)
	var tries int
	for _, s := range saved.Steps {
		if s.ScanOf == "01-run-workloadc-threads" {
			tries++
		}
	}
	assert.Equal(t, 5, tries)
	assert.Equal(t, 8, saved.Steps[1].Threads)
}

func TestBuiltinStyleFileRoundTrips(t *testing.T) {
	// FormatDuration is what plans and ETAs show.
	assert.Equal(t, "?", FormatDuration(0))
	assert.Equal(t, "200ms", FormatDuration(200*time.Millisecond))
	assert.Equal(t, "45s", FormatDuration(45*time.Second))
	assert.Equal(t, "5m30s", FormatDuration(330*time.Second))
	assert.Equal(t, "1h17m", FormatDuration(77*time.Minute))
}

package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/ycsbctl/ycsbctl/adapters/all"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
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
	require.Len(t, f.Databases[0].Properties, 1)
	assert.Equal(t, Prop{Key: "hosts", Value: "127.0.0.1", Line: f.Databases[0].Properties[0].Line}, f.Databases[0].Properties[0])
	assert.Positive(t, f.Databases[0].Properties[0].Line)
	require.Len(t, f.Steps, 5)
	assert.Equal(t, KindLoad, f.Steps[0].Kind)
	assert.Equal(t, []Sweep{{Key: "threads", Property: "threadcount", Values: []string{"8"}, Line: 10}}, f.Steps[0].Sweeps)
	assert.Equal(t, 5*time.Second, f.Steps[2].Pause)
	sw, ok := f.Steps[3].Sweep("threadcount")
	require.True(t, ok)
	assert.Equal(t, []string{"1", "4", "16"}, sw.Values)
	assert.Equal(t, 10*time.Second, f.Steps[3].WarmupTime)
	assert.Equal(t, 30*time.Second, f.Steps[3].Duration)
	tg, _ := f.Steps[4].Sweep("target")
	assert.Equal(t, []string{"5000"}, tg.Values)
	assert.Equal(t, 15, f.Steps[3].Line)

	p, err := Expand(f, Options{Overrides: map[string]string{"hosts": "127.0.0.2"}, ResultsDir: "R"})
	require.NoError(t, err)
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
	assert.Equal(t, "1", c.Props["threadcount"])
	assert.Equal(t, "127.0.0.2", c.Props["hosts"], "-p beats the database's properties")
	assert.Equal(t, 40*time.Second, c.Estimate)
	// The run's specification is parsed once, at expansion.
	require.NotNil(t, c.Spec)
	assert.Equal(t, 1, c.Spec.Threads)
	assert.Equal(t, 30*time.Second, c.Spec.MaxExecution)
	assert.Equal(t, filepath.Join("R", "cassandra/04-run-workloadc-threads1"), c.Spec.Output.ResultsDir)
	assert.True(t, p.Items[0].Schema && p.Items[1].Schema)
	assert.Equal(t, "100", p.Items[1].Props["batchsize"])
	assert.Equal(t, 5000.0, p.Items[13].Spec.Target)
	args := strings.Join(p.CommandLine(p.Items[13], p.Items[13].Spec), " ")
	assert.True(t, strings.HasPrefix(args, "run embedded -P workloadb -p "), args)
	assert.Contains(t, args, "-p target=5000 --results R/embedded/05-run-workloadb")
	// A property only another adapter reads stays out of a database's
	// steps: hosts is cassandra's (and mongodb's), not embedded's.
	assert.NotContains(t, p.Items[13].Props, "hosts")
	assert.Equal(t, "embedded", p.Items[13].DB.DB)

	dist, err := Expand(f, Options{Agents: []string{"a:1", "b:2"}, ResultsDir: "R"})
	require.NoError(t, err)
	assert.Equal(t, []string{"coordinator", "load", "cassandra", "--agents", "a:1,b:2"}, dist.CommandLine(dist.Items[0], dist.Items[0].Spec)[:5])

	var out bytes.Buffer
	require.NoError(t, p.Print(&out))
	assert.Contains(t, out.String(), "[4/14] cassandra  04-run-workloadc-threads1  run workloadc  sweep threads=1  est. 40s")
	assert.Contains(t, out.String(), "first: ycsbctl drop cassandra, then ycsbctl init cassandra")
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
	p, err := Expand(f, Options{})
	require.NoError(t, err)
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
// fakeExec records what the runner asks for and writes a complete bundle
// for every run, whose throughput tput(spec) decides.
type fakeExec struct {
	mu    sync.Mutex
	calls []string
	specs []*spec.Spec
	tput  func(sp *spec.Spec) float64
	fail  func(it *Item) exitcode.Code
}

func (f *fakeExec) Schema(_ context.Context, it *Item) exitcode.Code {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "schema "+it.DB.DB)
	return exitcode.OK
}

func (f *fakeExec) Run(_ context.Context, it *Item, sp *spec.Spec, step *bundle.SuiteStep) exitcode.Code {
	f.mu.Lock()
	v := sp.Phase.String() + " " + it.DB.DB + " " + filepath.Base(sp.Output.ResultsDir)
	if sp != it.Spec {
		v += " t" + strconv.Itoa(sp.Threads)
	}
	f.calls = append(f.calls, v)
	f.specs = append(f.specs, sp)
	f.mu.Unlock()
	if f.fail != nil {
		if c := f.fail(it); c != exitcode.OK {
			return c
		}
	}
	dir := sp.Output.ResultsDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	tp := 1000.0
	if f.tput != nil {
		tp = f.tput(sp)
	}
	if err := bundle.WriteRun(dir, &bundle.Run{Status: run.StatusComplete, Suite: step, Config: bundle.Config{Properties: sp.Props.Map()},
		Summary: bundle.Summary{Throughput: tp}}); err != nil {
		panic(err)
	}
	return exitcode.OK
}

// Capacity records the search and writes a complete capacity bundle:
// capacity.json with step's record and one probe's run bundle at the
// target start.
func (f *fakeExec) Capacity(_ context.Context, it *Item, sp *spec.Spec, step *bundle.SuiteStep) exitcode.Code {
	f.mu.Lock()
	f.calls = append(f.calls, "capacity "+it.DB.DB+" "+filepath.Base(sp.Output.ResultsDir))
	f.specs = append(f.specs, sp)
	f.mu.Unlock()
	dir := sp.Output.ResultsDir
	set := it.Step.Capacity
	probe, err := sp.With(map[string]string{spec.PropTarget: fmtFloat(set.Start), spec.PropResults: filepath.Join(dir, bundle.ProbeDir(1))})
	if err != nil {
		panic(err)
	}
	if err := os.MkdirAll(probe.Output.ResultsDir, 0o755); err != nil {
		panic(err)
	}
	if err := bundle.WriteRun(probe.Output.ResultsDir, &bundle.Run{Status: run.StatusComplete, Config: bundle.Config{Properties: probe.Props.Map()}}); err != nil {
		panic(err)
	}
	rec := &capacity.Record{Kind: capacity.RecordKind, DB: it.DB.DB, Settings: *set, Status: capacity.StatusComplete, Suite: step,
		Probes: []capacity.Probe{{N: 1, Measured: capacity.Measured{Target: set.Start, Achieved: set.Start, Bundle: bundle.ProbeDir(1)}, Verdict: capacity.Pass, Steady: true}},
		Answer: capacity.Answer{Found: true, Capacity: set.Start, Probe: 1, Ended: capacity.EndAtMax}}
	if err := rec.Write(dir); err != nil {
		panic(err)
	}
	return exitcode.OK
}

func mustPlan(t *testing.T, src string, dir string, overrides ...string) *Plan {
	t.Helper()
	f, err := Parse("s.yaml", []byte(src), nil)
	require.NoError(t, err)
	o := map[string]string{}
	for i := 0; i+1 < len(overrides); i += 2 {
		o[overrides[i]] = overrides[i+1]
	}
	p, err := Expand(f, Options{ResultsDir: dir, Overrides: o})
	require.NoError(t, err)
	return p
}

func TestRunnerPausesOnTheClockAndResumes(t *testing.T) {
	dir := t.TempDir()
	p := mustPlan(t, `name: s
databases: [basic]
steps:
  - load: workloada
  - pause: 30m
  - run: workloadc
    operations: 10
    threads: [1, 2]
`, dir)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	ex := &fakeExec{}
	var lines []string
	r := &Runner{Plan: p, Exec: ex, Clock: clk, Progress: func(pr Progress) { lines = append(lines, pr.Line()) }}
	done := make(chan exitcode.Code)
	go func() { _, c := r.Run(context.Background()); done <- c }()
	// The pause waits on the injected clock: advance it until the runner
	// is through.
	for {
		select {
		case c := <-done:
			assert.Equal(t, exitcode.OK, c)
			assert.Equal(t, []string{"schema basic", "load basic 01-load-workloada", "run basic 03-run-workloadc-threads1", "run basic 03-run-workloadc-threads2"}, ex.calls)
			assert.Equal(t, 2, ex.specs[2].Threads, "the sweep value is the spec's")
			assert.Contains(t, strings.Join(lines, "\n"), "suite s: step 2/4 basic 02-pause 30m")
			st, err := ReadState(dir)
			require.NoError(t, err)
			for _, s := range st.Steps {
				assert.Equal(t, StatusPassed, s.Status, s.Dir)
				code, ok := s.Exit()
				assert.True(t, ok && code == 0, s.Dir)
				if s.Kind != KindPause {
					assert.NotEmpty(t, s.Fingerprint)
				}
			}
			// Resume: everything complete, nothing runs again.
			require.NoError(t, p.CheckResume())
			ex2 := &fakeExec{}
			r2 := &Runner{Plan: p, Exec: ex2, Clock: clk, Resume: true}
			_, c2 := r2.Run(context.Background())
			assert.Equal(t, exitcode.OK, c2)
			assert.Empty(t, ex2.calls)
			// Remove one bundle: only that step runs.
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "basic", "03-run-workloadc-threads2")))
			ex3 := &fakeExec{}
			r3 := &Runner{Plan: p, Exec: ex3, Clock: clk, Resume: true}
			_, c3 := r3.Run(context.Background())
			assert.Equal(t, exitcode.OK, c3)
			assert.Equal(t, []string{"run basic 03-run-workloadc-threads2"}, ex3.calls)
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
	failFirst := func(it *Item) exitcode.Code {
		if it.DB.DB == "basic" && it.Workload == "workloada" {
			return exitcode.DBErrors
		}
		return exitcode.OK
	}
	for _, keep := range []bool{false, true} {
		ex := &fakeExec{fail: failFirst}
		dir := t.TempDir()
		r := &Runner{Plan: mustPlan(t, src, dir), Exec: ex, Clock: clock.NewReal(), KeepGoing: keep}
		st, code := r.Run(context.Background())
		assert.Equal(t, exitcode.DBErrors, code, "keep-going %v", keep)
		assert.Equal(t, StatusFailed, st.Steps[0].Status)
		if keep {
			assert.Len(t, ex.calls, 4)
			assert.Equal(t, StatusPassed, st.Steps[3].Status)
			// The failed step wrote no bundle here; give it a complete
			// one, as a run failing on its error rate does: --resume
			// still runs it again, because the suite recorded it failed.
			p := mustPlan(t, src, dir)
			it := p.Items[0]
			require.NoError(t, os.MkdirAll(filepath.Join(dir, st.Steps[0].Dir), 0o755))
			require.NoError(t, bundle.WriteRun(filepath.Join(dir, st.Steps[0].Dir), &bundle.Run{Status: run.StatusComplete,
				Suite: p.suiteStep(it, it.Spec.Props.Map()), Config: bundle.Config{Properties: it.Spec.Props.Map()}}))
			require.NoError(t, p.CheckResume())
			ex2 := &fakeExec{}
			r2 := &Runner{Plan: p, Exec: ex2, Clock: clock.NewReal(), Resume: true}
			_, c2 := r2.Run(context.Background())
			assert.Equal(t, exitcode.OK, c2)
			assert.Equal(t, []string{"run basic 01-run-workloada"}, ex2.calls)
		} else {
			assert.Len(t, ex.calls, 1)
			assert.Equal(t, StatusPending, st.Steps[1].Status)
		}
	}
}

func TestRunnerStopMarksIncomplete(t *testing.T) {
	dir := t.TempDir()
	p := mustPlan(t, "name: s\ndatabases: [basic]\nsteps:\n  - run: workloada\n    operations: 10\n  - run: workloadc\n    operations: 10\n", dir)
	var r *Runner
	ex := &fakeExec{fail: func(*Item) exitcode.Code {
		// Ctrl-C arrives during the first step, which ends as a
		// gracefully stopped run does.
		r.Stop()
		return exitcode.Stopped
	}}
	r = &Runner{Plan: p, Exec: ex, Clock: clock.NewReal()}
	st, code := r.Run(context.Background())
	assert.Equal(t, exitcode.Stopped, code, "one Ctrl-C stops the suite (6), as it stops a run")
	assert.True(t, st.Interrupted)
	assert.Equal(t, SuiteStopped, st.Status)
	assert.Equal(t, StatusIncomplete, st.Steps[0].Status)
	assert.Equal(t, StatusPending, st.Steps[1].Status)
	assert.Len(t, ex.calls, 1)
	// A pending step has no exit code in suite.json, not a 0 that reads
	// as passed.
	raw, err := os.ReadFile(filepath.Join(dir, FileState))
	require.NoError(t, err)
	var doc struct {
		Steps []map[string]any `json:"steps"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Len(t, doc.Steps, 2)
	assert.Equal(t, float64(exitcode.Stopped), doc.Steps[0]["exit_code"])
	assert.NotContains(t, doc.Steps[1], "exit_code", "pending step: %v", doc.Steps[1])
}

func TestThreadScanFindsTheKnee(t *testing.T) {
	dir := t.TempDir()
	p := mustPlan(t, `name: s
databases: [basic]
steps:
  - run: workloadc
    threadscan: {gain: 10%, max: 64}
    duration: 5s
  - run: workloada
    threads: scan
    duration: 5s
`, dir)
	// Throughput doubles up to 8 threads, then grows 5 %.
	curve := map[int]float64{1: 100, 2: 200, 4: 400, 8: 800, 16: 840, 32: 850}
	ex := &fakeExec{tput: func(sp *spec.Spec) float64 { return curve[sp.Threads] }}
	r := &Runner{Plan: p, Exec: ex, Clock: clock.NewReal()}
	st, code := r.Run(context.Background())
	require.Equal(t, exitcode.OK, code)
	require.Len(t, st.Scans, 1)
	assert.Equal(t, 8, st.Scans[0].Knee)
	assert.Equal(t, []int{1, 2, 4, 8, 16}, st.Scans[0].Threads)
	assert.Contains(t, st.Scans[0].Reason, "8 → 16 threads grew throughput +5.0%")
	assert.Equal(t, []string{"run basic 01-run-workloadc-threads1 t1", "run basic 01-run-workloadc-threads2 t2", "run basic 01-run-workloadc-threads4 t4",
		"run basic 01-run-workloadc-threads8 t8", "run basic 01-run-workloadc-threads16 t16", "run basic 02-run-workloada t8"}, ex.calls)
	assert.Equal(t, 8, ex.specs[5].Threads, "threads: scan takes the knee")
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
	// Resumed, nothing runs again: every try's bundle and the scan-sized
	// step carry their fingerprints.
	require.NoError(t, p.CheckResume())
	ex2 := &fakeExec{tput: ex.tput}
	st2, code := (&Runner{Plan: p, Exec: ex2, Clock: clock.NewReal(), Resume: true}).Run(context.Background())
	require.Equal(t, exitcode.OK, code)
	assert.Empty(t, ex2.calls)
	assert.Equal(t, 8, st2.Scans[0].Knee)
}

func TestBuiltinStyleFileRoundTrips(t *testing.T) {
	// FormatDuration is what plans and ETAs show.
	assert.Equal(t, "?", FormatDuration(0))
	assert.Equal(t, "200ms", FormatDuration(200*time.Millisecond))
	assert.Equal(t, "45s", FormatDuration(45*time.Second))
	assert.Equal(t, "5m30s", FormatDuration(330*time.Second))
	assert.Equal(t, "1h17m", FormatDuration(77*time.Minute))
}

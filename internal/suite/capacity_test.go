package suite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
)

const capacitySuite = `name: s
databases: [basic]
steps:
  - load: workloada
  - capacity: workloadc
    slo: ['READ.p99<=10ms', 'READ.p50<=2ms']
    precision: 10%
    probe: 6s
    warmup: 2s
    start: 500
    max: 8000
    max_probes: 6
    max_error_rate: 0.1%
    threads: [2, 4]
`

// TestCapacityStepPlan: a capacity step is one search per database and
// sweep value, with the settings `ycsbctl capacity` takes, its probes'
// run parsed once (intended-time latencies recorded, each probe's length
// and warm-up, no target), and the equivalent command the runner records.
func TestCapacityStepPlan(t *testing.T) {
	dir := t.TempDir()
	p := mustPlan(t, capacitySuite, dir, "recordcount", "100")
	require.Len(t, p.Items, 3)
	assert.Equal(t, 3, p.Measured())
	it := p.Items[2]
	assert.Equal(t, KindCapacity, it.Kind)
	assert.Equal(t, filepath.Join("basic", "02-capacity-workloadc-threads4"), it.Dir)
	c := it.Step.Capacity
	require.NotNil(t, c)
	assert.Equal(t, "READ.p99<=10ms, READ.p50<=2ms", c.ObjectivesText())
	assert.InDelta(t, 0.10, c.Precision, 1e-12)
	assert.InDelta(t, 0.001, c.MaxErrorRate, 1e-12)
	assert.Equal(t, 6*time.Second, c.Probe)
	assert.Equal(t, 2*time.Second, c.Warmup)
	assert.Equal(t, 500.0, c.Start)
	assert.Equal(t, 8000.0, c.Max)
	assert.Equal(t, 6, c.MaxProbes)

	sp := it.Spec
	assert.Equal(t, 4, sp.Threads)
	assert.Equal(t, 6*time.Second, sp.MaxExecution)
	assert.Equal(t, 2*time.Second, sp.WarmupTime)
	assert.Equal(t, "both", sp.Props.String("measurement.interval", ""))
	assert.False(t, sp.Props.Has("target"))
	assert.Equal(t, filepath.Join(dir, it.Dir), sp.Output.ResultsDir)
	assert.Zero(t, it.Estimate, "how many probes a search takes depends on the database")
	assert.Equal(t, strings.Join(c.Args(), " "), it.Definition["capacity"])

	cmd := strings.Join(p.CommandLine(it, sp), " ")
	assert.True(t, strings.HasPrefix(cmd, "capacity basic -P workloadc "), cmd)
	for _, w := range []string{"-p threadcount=4", "--slo READ.p99<=10ms --slo READ.p50<=2ms", "--precision 0.1", "--probe 6s", "--warmup 2s",
		"--start 500", "--max 8000", "--max-probes 6", "--max-error-rate 0.001", "--results " + sp.Output.ResultsDir} {
		assert.Contains(t, cmd, w)
	}
	assert.NotContains(t, cmd, "warmuptime", "the warm-up is the search's setting, not a -p")

	var out strings.Builder
	require.NoError(t, p.Print(&out))
	assert.Contains(t, out.String(), "capacity search at READ.p99<=10ms, READ.p50<=2ms: probes of 6s after a 2s warm-up, from 500 ops/s up to 8000, at most 6, to within 10%")
}

// TestCapacityStepRunsAndResumes: the runner hands a capacity item to the
// executor's search, records it in suite.json, and on resume takes a
// complete search with the same configuration as done; another objective
// is refused, naming what differs, and never re-run silently.
func TestCapacityStepRunsAndResumes(t *testing.T) {
	dir := t.TempDir()
	p := mustPlan(t, capacitySuite, dir)
	ex := &fakeExec{}
	st, code := (&Runner{Plan: p, Exec: ex, Clock: clock.NewReal()}).Run(context.Background())
	require.Equal(t, exitcode.OK, code)
	assert.Equal(t, []string{"schema basic", "load basic 01-load-workloada", "capacity basic 02-capacity-workloadc-threads2", "capacity basic 02-capacity-workloadc-threads4"}, ex.calls)
	ss := st.Steps[2]
	assert.True(t, ss.Searched())
	assert.False(t, ss.Measured(), "a capacity bundle is not a run bundle")
	assert.Equal(t, StatusPassed, ss.Status)
	assert.Equal(t, "capacity", ss.Args[0])
	rec, err := capacity.Read(filepath.Join(dir, ss.Dir))
	require.NoError(t, err)
	require.NotNil(t, rec.Suite)
	assert.Equal(t, ss.Fingerprint, rec.Suite.Fingerprint)

	require.NoError(t, mustPlan(t, capacitySuite, dir).CheckResume())
	ex2 := &fakeExec{}
	st2, code := (&Runner{Plan: p, Exec: ex2, Clock: clock.NewReal(), Resume: true}).Run(context.Background())
	require.Equal(t, exitcode.OK, code)
	assert.Empty(t, ex2.calls)
	assert.Equal(t, StatusResumed, st2.Steps[2].Status)

	changed := strings.Replace(capacitySuite, "READ.p50<=2ms", "READ.p50<=1ms", 1)
	err = mustPlan(t, changed, dir).CheckResume()
	var me *MismatchError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Len(t, me.Steps, 2)
	assert.Equal(t, filepath.Join("basic", "02-capacity-workloadc-threads2"), me.Steps[0].Dir)
	assert.Contains(t, err.Error(), `capacity: "--slo READ.p99<=10ms --slo READ.p50<=2ms`)
	assert.Contains(t, err.Error(), `READ.p50<=1ms`)

	// A property of the probes' run differs: named as for any step.
	err = mustPlan(t, capacitySuite, dir, "fieldcount", "3").CheckResume()
	require.True(t, errors.As(err, &me), "%v", err)
	assert.Contains(t, err.Error(), `basic/02-capacity-workloadc-threads2: property fieldcount: unset → "3"`)

	// A search that did not end by its own rules is run again.
	rec.Status = capacity.StatusStopped
	require.NoError(t, rec.Write(filepath.Join(dir, ss.Dir)))
	ex3 := &fakeExec{}
	_, code = (&Runner{Plan: p, Exec: ex3, Clock: clock.NewReal(), Resume: true}).Run(context.Background())
	require.Equal(t, exitcode.OK, code)
	assert.Equal(t, []string{"capacity basic " + filepath.Base(ss.Dir)}, ex3.calls)
	_ = os.Remove(filepath.Join(dir, FileState))
}

func TestCapacityStepErrors(t *testing.T) {
	base := "name: s\ndatabases: [basic]\nsteps:\n"
	tests := []struct {
		name, src string
		line      int
		want      []string
	}{
		{"no objective", base + "  - capacity: workloadc\n    probe: 5s\n", 4, []string{`key "slo"`, "at least one objective"}},
		{"bad objective", base + "  - capacity: workloadc\n    slo: READ.p99\n", 5, []string{`key "slo"`, "OPERATION.PERCENTILE<=DURATION"}},
		{"bad precision", base + "  - capacity: workloadc\n    slo: READ.p99<=1ms\n    precision: fine\n", 6, []string{`key "precision"`, `"fine"`, "0.05 or 5%"}},
		{"precision too coarse", base + "  - capacity: workloadc\n    slo: READ.p99<=1ms\n    precision: 60%\n", 6, []string{`key "precision"`, "from 0.1% to 50%"}},
		{"max below start", base + "  - capacity: workloadc\n    slo: READ.p99<=1ms\n    start: 100\n    max: 10\n", 7, []string{`key "max"`, "at least --start"}},
		{"probe in fractions", base + "  - capacity: workloadc\n    slo: READ.p99<=1ms\n    probe: 1500ms\n", 6, []string{`key "probe"`, "whole seconds"}},
		{"warmup as operations", base + "  - capacity: workloadc\n    slo: READ.p99<=1ms\n    warmup: 100\n", 6, []string{`key "warmup"`, "a duration"}},
		{"a target", base + "  - capacity: workloadc\n    slo: READ.p99<=1ms\n    target: 100\n", 6, []string{`key "target"`, "capacity step"}},
		{"a duration", base + "  - capacity: workloadc\n    slo: READ.p99<=1ms\n    duration: 10s\n", 6, []string{`key "duration"`, "capacity step"}},
		{"slo on a run step", base + "  - run: workloadc\n    slo: READ.p99<=1ms\n", 5, []string{`key "slo"`, "only a capacity step"}},
		{"two kinds", base + "  - run: workloadc\n    capacity: workloadc\n", 5, []string{`key "capacity"`, "not both"}},
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
	// Checked when the plan parses the probes' run: an objective on an
	// operation the mix never does.
	f, err := Parse("s.yaml", []byte(base+"  - capacity: workloadc\n    slo: UPDATE.p99<=1ms\n"), nil)
	require.NoError(t, err)
	_, err = Expand(f, Options{ResultsDir: t.TempDir()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 4:")
	assert.Contains(t, err.Error(), "never does UPDATE")
}

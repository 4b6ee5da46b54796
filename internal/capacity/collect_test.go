package capacity

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// interval builds one second of READs: n calls whose intended latency is
// i·step for i = 1..n and whose service time is half that, failed of
// them failing.
func interval(seq, start int64, n int, step time.Duration, failed int64) *measurement.Interval {
	iv := measurement.NewInterval(seq, start, start+1e9)
	in, sv := measurement.NewHistogram(), measurement.NewHistogram()
	for i := 1; i <= n; i++ {
		_ = in.RecordValue(int64(i) * int64(step))
		_ = sv.RecordValue(int64(i) * int64(step) / 2)
	}
	iv.Hist[measurement.SeriesOf(measurement.Read, measurement.Intended, false)] = in
	iv.Hist[measurement.SeriesOf(measurement.Read, measurement.Service, false)] = sv
	iv.Returns[measurement.Read][adapters.OK] = int64(n) - failed
	iv.Returns[measurement.Read][adapters.Error] = failed
	iv.Returns[measurement.Read][adapters.Cancelled] = 7 // neither success nor failure
	iv.Ops = int64(n)
	return iv
}

// TestCollector feeds a collector a warm-up interval and three measured
// ones, as a session would, and checks what the search gets: the
// warm-up left out, per-interval throughput and objective values, the
// whole probe's percentiles intended and service, achieved throughput
// and the error rate.
func TestCollector(t *testing.T) {
	obj, err := ParseObjective("READ.p99.9<=10ms")
	require.NoError(t, err)
	c := NewCollector([]Objective{obj}, 0)
	c.OnInterval(&run.Update{Interval: interval(0, 0, 5000, time.Microsecond, 0), Progress: run.Progress{Warmup: true}})
	cum := measurement.NewInterval(0, 0, 0)
	for k := range 3 {
		iv := interval(int64(k+1), int64(k+1)*1e9, 1000, time.Duration(k+1)*time.Microsecond, 1)
		cum.Add(iv)
		c.OnInterval(&run.Update{Interval: iv, Cumulative: cum.Clone(), Progress: run.Progress{Final: k == 2}})
	}
	m := c.Measured(1000, true)
	require.Len(t, m.Intervals, 3)
	assert.Equal(t, 1000.0, m.Intervals[0].OpsPerSec)
	assert.InDelta(t, 999, m.Intervals[0].Objectives[0], 1, "the first interval's own p99.9: 999 µs")
	assert.InDelta(t, 1998, m.Intervals[1].Objectives[0], 2)
	assert.Equal(t, int64(3000), m.Operations)
	assert.InDelta(t, 1000, m.Achieved, 1e-9)
	assert.Equal(t, int64(3), m.Failed)
	assert.Equal(t, int64(3000), m.Calls, "cancelled calls are not counted")
	read := m.Op("READ")
	require.NotNil(t, read)
	assert.Equal(t, int64(3000), read.Count)
	for _, k := range []string{"p50", "p95", "p99", "p99.9"} {
		assert.Contains(t, read.Intended, k)
		assert.Contains(t, read.Service, k)
	}
	v, ok := m.Value(obj)
	assert.True(t, ok)
	assert.InDelta(t, 2994, v, 3, "p99.9 of the union of the three intervals")
	assert.InDelta(t, v/2, read.Service["p99.9"], 2, "service time is half the intended in this fixture")
	assert.Nil(t, m.Op("UPDATE"))
}

// TestCollectorWindowIsTheProbe: a run whose last cut came late (an
// empty trailing interval after the probe's two seconds) achieved its
// calls over the probe's length, not over the late cut's.
func TestCollectorWindowIsTheProbe(t *testing.T) {
	obj, err := ParseObjective("READ.p99<=10ms")
	require.NoError(t, err)
	cum := measurement.NewInterval(0, 0, 0)
	feed := func(c *Collector) {
		cum = measurement.NewInterval(0, 0, 0)
		for k := range 2 {
			iv := interval(int64(k+1), int64(k+1)*1e9, 375, time.Microsecond, 0)
			cum.Add(iv)
			c.OnInterval(&run.Update{Interval: iv, Cumulative: cum.Clone()})
		}
		late := measurement.NewInterval(3, 3e9, 3e9+220e6)
		cum.Add(late)
		c.OnInterval(&run.Update{Interval: late, Cumulative: cum.Clone(), Progress: run.Progress{Final: true}})
	}
	c := NewCollector([]Objective{obj}, 2*time.Second)
	feed(c)
	m := c.Measured(375, true)
	assert.InDelta(t, 2000, m.RunTimeMs, 1e-9)
	assert.InDelta(t, 375, m.Achieved, 1e-9)
	assert.False(t, Saturated(m))
	// Without a probe length the run's own window stands: 750 calls in 2.22 s.
	c = NewCollector([]Objective{obj}, 0)
	feed(c)
	m = c.Measured(375, true)
	assert.InDelta(t, 2220, m.RunTimeMs, 1e-6)
	assert.True(t, Saturated(m))
}

// TestCollectorWindowOfAShortRun: a probe whose calls all ended early (a
// target so low that one call was due: its run ended with that 0.1 ms
// call) achieved its calls over the probe's length, not over the call's
// own time (7,323 ops/s at a target of 0.008); a probe stopped before its
// end measured its span.
func TestCollectorWindowOfAShortRun(t *testing.T) {
	obj, err := ParseObjective("READ.p99<=10ms")
	require.NoError(t, err)
	c := NewCollector([]Objective{obj}, time.Second)
	iv := interval(1, 0, 1, 200*time.Microsecond, 0) // service time half of it
	iv.EndNs = 100e3
	cum := measurement.NewInterval(0, 0, 0)
	cum.Add(iv)
	c.OnInterval(&run.Update{Interval: iv, Cumulative: cum.Clone(), Progress: run.Progress{Final: true}})
	m := c.Measured(0.008, true)
	assert.InDelta(t, 1000, m.RunTimeMs, 1e-9)
	assert.InDelta(t, 1, m.Achieved, 1e-9, "one call over the 1 s probe")
	assert.InDelta(t, 100, m.ServiceMeanUs, 1, "the mean service time")
	m = c.Measured(0.008, false)
	assert.InDelta(t, 0.1, m.RunTimeMs, 1e-9, "stopped: the span it ran")
}

func TestRecordRoundTrip(t *testing.T) {
	dir := t.TempDir()
	obj, _ := ParseObjective("READ.p99<=10ms")
	r := &Record{Kind: RecordKind, Tool: "ycsbctl", DB: "basic", Workload: "workloadc", Mode: run.ModeSingleHost, Agents: []string{"local"},
		Settings: Settings{Objectives: []Objective{obj}, MaxErrorRate: 0.001, Precision: 0.05, Start: 1000, Max: 1e7, MaxProbes: 20},
		Status:   StatusComplete, CommandLine: []string{"ycsbctl", "capacity", "--token", "s3cret"},
		Probes: []Probe{
			{N: 1, Measured: Measured{Target: 1000, Achieved: 999.5, Calls: 1000, Latency: []OpLatency{{Op: "READ", Count: 1000, Intended: map[string]float64{"p99": 2100}}}}, Verdict: Pass, Steady: true},
			{N: 2, Measured: Measured{Target: 2000, Achieved: 1500, Calls: 1000, Latency: []OpLatency{{Op: "READ", Count: 1000, Intended: map[string]float64{"p99": 250000}}}}, Verdict: Fail, Saturated: true},
		},
		Answer: Answer{Found: true, Capacity: 1000, Achieved: 999.5, Probe: 1, Steady: true, Bracket: Bracket{Pass: 1000, Fail: 1050}, Converged: true, Ended: EndConverged}}
	require.NoError(t, r.Write(dir))
	assert.True(t, IsBundle(dir))
	back, err := Read(dir)
	require.NoError(t, err)
	assert.Equal(t, r.Probes, back.Probes)
	assert.Equal(t, r.Settings.Objectives, back.Settings.Objectives)
	assert.NotContains(t, back.CommandLine, "s3cret", "secrets redacted")
	assert.Equal(t, 1, back.AtCapacity().N)
	var b bytes.Buffer
	require.NoError(t, back.WriteTable(&b))
	out := b.String()
	for _, want := range []string{"Capacity of basic (workloadc) at READ.p99<=10ms, errors <= 0.1%", "READ p99", "2.1ms", "250ms",
		"Capacity: 1000 ops/s (achieved 1000 ops/s, probe 1); the lowest failing target was 1050 ops/s (within 5%)"} {
		assert.Contains(t, out, want)
	}
	_, err = Read(t.TempDir())
	assert.ErrorContains(t, err, "not a capacity bundle")
}

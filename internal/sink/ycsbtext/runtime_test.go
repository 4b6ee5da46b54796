package ycsbtext_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
)

// TestRuntimeSampler: the sampler a single host and every agent read
// through counts collections since the previous sample and since Begin.
func TestRuntimeSampler(t *testing.T) {
	var s ycsbtext.RuntimeSampler
	s.Begin()
	runtime.GC()
	runtime.GC()
	a := s.Sample()
	assert.GreaterOrEqual(t, a.GCs, int64(2))
	assert.Equal(t, a.GCs, a.TotalGCs, "the first sample counts from Begin")
	assert.Positive(t, a.Goroutines)
	runtime.GC()
	b := s.Sample()
	assert.GreaterOrEqual(t, b.GCs, int64(1))
	assert.Equal(t, a.TotalGCs+b.GCs, b.TotalGCs)
	assert.Equal(t, a.TotalGCPause+b.GCPause, b.TotalGCPause)
}

func agentsUpdate(samples ...*run.RuntimeSample) *run.Update {
	u := &run.Update{AgentRuntime: samples}
	for i := range samples {
		u.Agents = append(u.Agents, run.Agent{Index: i, Address: "10.0.0." + string(rune('1'+i)) + ":7000"})
		u.AgentIntervals = append(u.AgentIntervals, measurement.NewInterval(1, 0, 1))
	}
	return u
}

// TestAgentRuntimeTracker: a distributed run's runtime series are across
// the agents: Count is the agents reporting, gauges are Max/Min/Avg over
// them, GC totals are summed.
func TestAgentRuntimeTracker(t *testing.T) {
	var rt ycsbtext.AgentRuntimeTracker
	rt.OnInterval(agentsUpdate(
		&run.RuntimeSample{Goroutines: 30, HeapInUseMB: 100, GCs: 2, GCPause: 3 * time.Millisecond, TotalGCs: 2, TotalGCPause: 3 * time.Millisecond},
		&run.RuntimeSample{Goroutines: 10, HeapInUseMB: 40, GCs: 1, GCPause: time.Millisecond, TotalGCs: 5, TotalGCPause: 9 * time.Millisecond},
		&run.RuntimeSample{Goroutines: 20, HeapInUseMB: 70, GCs: 0, TotalGCs: 1, TotalGCPause: time.Millisecond},
	))
	assert.Equal(t, "[GOROUTINES: Count=3, Max=30, Min=10, Avg=20, 90=30, 99=30, 99.9=30, 99.99=30] "+
		"[HEAP_IN_USE_MB: Count=3, Max=100, Min=40, Avg=70, 90=100, 99=100, 99.9=100, 99.99=100] "+
		"[GCS: Count=3, Max=2, Min=0, Avg=1, 90=2, 99=2, 99.9=2, 99.99=2] "+
		"[GCS_TIME: Count=3, Max=3, Min=0, Avg=1.33, 90=3, 99=3, 99.9=3, 99.99=3] ", rt.Status())

	// The next interval: agent 2 sent nothing (it ended); a late record's
	// older totals never lower the sums.
	rt.OnInterval(agentsUpdate(
		&run.RuntimeSample{Goroutines: 31, HeapInUseMB: 120, GCs: 1, GCPause: time.Millisecond, TotalGCs: 3, TotalGCPause: 4 * time.Millisecond},
		&run.RuntimeSample{Goroutines: 9, HeapInUseMB: 35, TotalGCs: 4, TotalGCPause: 8 * time.Millisecond},
		nil,
	))
	assert.Regexp(t, `^\[GOROUTINES: Count=2, Max=31, Min=9, Avg=20, `, rt.Status())
	got := map[string]any{}
	for _, l := range rt.Lines(2 * time.Second) {
		got[l.Metric] = l.Value
	}
	assert.Equal(t, map[string]any{
		"TOTAL_GCs": int64(3 + 5 + 1), "TOTAL_GC_TIME": int64(4 + 9 + 1),
		"TOTAL_GC_TIME_%":    float64(14) / float64(2000*3) * 100,
		"MAX_HEAP_IN_USE_MB": int64(120), "MIN_HEAP_IN_USE_MB": int64(35),
		"MAX_GOROUTINES": int64(31), "MIN_GOROUTINES": int64(9), "RUNTIME_AGENTS": int64(3),
	}, got)
	notes := rt.Notes("ycsbctl.trackruntime")
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "the agents' own processes (3 reporting)")
	assert.NotContains(t, notes[0], ", ", "a [NOTE] line's text has no field separator")
}

// TestAgentRuntimeTrackerOldAgents: agents that deliver intervals without
// samples (older agents) are named; with none reporting there are no
// lines, not zeros.
func TestAgentRuntimeTrackerOldAgents(t *testing.T) {
	var rt ycsbtext.AgentRuntimeTracker
	rt.OnInterval(agentsUpdate(&run.RuntimeSample{Goroutines: 5, HeapInUseMB: 3}, nil))
	assert.Regexp(t, `^\[GOROUTINES: Count=1, Max=5, `, rt.Status())
	notes := rt.Notes("ycsbctl.trackruntime")
	require.Len(t, notes, 2)
	assert.Equal(t, "ycsbctl.trackruntime: agent 1 (10.0.0.2:7000) sent no runtime samples (older agent?); the runtime figures leave them out", notes[1])
	assert.Equal(t, 1, rt.Reporting())

	var none ycsbtext.AgentRuntimeTracker
	none.OnInterval(agentsUpdate(nil, nil))
	assert.Empty(t, none.Status())
	assert.Nil(t, none.Lines(time.Second))
	assert.Equal(t, []string{"ycsbctl.trackruntime: no agent sent runtime samples (agents older than this coordinator send none); no runtime lines are reported"}, none.Notes("ycsbctl.trackruntime"))
}

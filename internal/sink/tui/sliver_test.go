package tui

import (
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// The sparkline folds a final sliver into the last point, as the report's
// charts do, instead of ending in a collapse.
func TestSparklineFoldsTrailingSliver(t *testing.T) {
	st := &state{interval: 10 * time.Second}
	const s = int64(time.Second)
	iv := func(seq, start, end, ops int64) *measurement.Interval {
		x := measurement.NewInterval(seq, start, end)
		x.Ops = ops
		return x
	}
	now := time.Now()
	st.update(Snapshot{Interval: iv(1, 0, 10*s, 50000)}, now)
	st.update(Snapshot{Interval: iv(2, 10*s, 20*s, 50000)}, now)
	st.update(Snapshot{Interval: iv(3, 20*s, 20*s+int64(9*time.Millisecond), 6), Progress: run.Progress{Final: true}}, now)
	if len(st.history) != 2 {
		t.Fatalf("history %v, want 2 points", st.history)
	}
	if r := st.history[1]; r < 4990 || r > 5010 {
		t.Fatalf("last point %g, want about 5000", r)
	}
	// A sliver that is not the run's end (it cannot happen, but a short
	// interval mid-run) is shown as it is.
	st2 := &state{interval: 10 * time.Second}
	st2.update(Snapshot{Interval: iv(1, 0, 10*s, 50000)}, now)
	st2.update(Snapshot{Interval: iv(2, 10*s, 10*s+int64(time.Millisecond), 1)}, now)
	if len(st2.history) != 2 {
		t.Fatalf("history %v", st2.history)
	}
}

package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
)

// The last interval of a run can be a sliver of a few milliseconds; the
// throughput charts fold it into the interval before it instead of
// plotting a collapse (single host and per agent alike).
func TestThroughputChartFoldsTrailingSliver(t *testing.T) {
	const s = int64(time.Second)
	ivs := []bundle.Interval{
		{Seq: 1, StartUnixNs: 0, EndUnixNs: 10 * s, Operations: 50000, OpsPerSec: 5000,
			Agents: []bundle.AgentSlice{{Index: 0, Operations: 25000, OpsPerSec: 2500}, {Index: 1, Operations: 25000, OpsPerSec: 2500}}},
		{Seq: 2, StartUnixNs: 10 * s, EndUnixNs: 20 * s, Operations: 50000, OpsPerSec: 5000,
			Agents: []bundle.AgentSlice{{Index: 0, Operations: 25000, OpsPerSec: 2500}, {Index: 1, Operations: 25000, OpsPerSec: 2500}}},
		{Seq: 3, StartUnixNs: 20 * s, EndUnixNs: 20*s + 9*int64(time.Millisecond), Operations: 6, OpsPerSec: 666,
			Agents: []bundle.AgentSlice{{Index: 0, Operations: 6, OpsPerSec: 666}}},
	}
	b := &bundle.Bundle{Run: &bundle.Run{Config: bundle.Config{IntervalNs: 10 * s}, Intervals: ivs}}
	c := throughputChart(FromBundle(b))
	if len(c.Series) != 3 {
		t.Fatalf("%d series", len(c.Series))
	}
	total := c.Series[0]
	if len(total.Y) != 2 {
		t.Fatalf("total has %d points, want 2 (sliver folded)", len(total.Y))
	}
	if last := total.Y[1]; last < 4990 || last > 5010 {
		t.Fatalf("last total point %g, want about 5000", last)
	}
	if x := total.X[1]; x < 20.008 || x > 20.01 {
		t.Fatalf("last point at %gs, want the run's end", x)
	}
	if a0 := c.Series[1].Y; len(a0) != 2 || a0[1] < 2495 || a0[1] > 2505 {
		t.Fatalf("agent 0 points %v", a0)
	}
	// The bundle itself keeps the raw interval.
	if len(b.Run.Intervals) != 3 || b.Run.Intervals[1].EndUnixNs != 20*s {
		t.Fatal("the bundle's intervals were modified")
	}
}

// The badge and the compare table say when a run exited non-zero even
// though its status is complete (errors above ycsbctl.maxerrorrate).
func TestVerdictShowsExitCode(t *testing.T) {
	ok := FromBundle(&bundle.Bundle{Run: &bundle.Run{Status: "complete", ExitReason: "ok"}})
	if text, class := ok.Verdict(); text != "complete" || class != "complete" {
		t.Fatalf("ok run: %q %q", text, class)
	}
	failed := FromBundle(&bundle.Bundle{Run: &bundle.Run{Status: "complete", ExitCode: 5, ExitReason: "database errors above threshold"}})
	text, class := failed.Verdict()
	if text != "complete · exit 5 (database errors above threshold)" || class != "aborted" {
		t.Fatalf("exit 5 run: %q %q", text, class)
	}
	var page strings.Builder
	if err := WriteHTML(&page, failed, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<span class="badge aborted">complete · exit 5 (database errors above threshold)</span>`) {
		t.Fatal("the report's badge does not show the exit code")
	}
}

package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
)

// sweepRun is a step's run with a throughput and a mix; readCount and
// updateCount say what happened to run.
func sweepRun(db, value string, tput float64, mix map[string]string, readP99, updateP99 int64) SuiteRun {
	b := &bundle.Bundle{Dir: "x", Run: &bundle.Run{DB: db, Phase: "run", Config: bundle.Config{Properties: mix},
		Summary: bundle.Summary{Throughput: tput, Series: []bundle.SeriesStats{
			{Series: "READ", Count: 100, P99Us: readP99}, {Series: "UPDATE", Count: 120, P99Us: updateP99}}}}}
	return SuiteRun{Database: db, Step: "03-run-workloada", Sweep: []SweepPoint{{Key: "threads", Value: value}}, Run: FromBundle(b)}
}

func xTicks(svg string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text class="xtick"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

func xPositions(svg string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text class="xtick" x="([^"]*)"`).FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestSweepChartAxisIsTheSweptValues: a doubling sweep gets one tick per
// value, evenly spaced (log scale), not a 0–8 axis with fractional ticks.
func TestSweepChartAxisIsTheSweptValues(t *testing.T) {
	mix := map[string]string{"readproportion": "0.5", "updateproportion": "0.5", "operationcount": "10"}
	p := &SuitePage{Name: "s", Databases: []string{"a"}}
	for i, v := range []string{"1", "2", "4", "8"} {
		p.Runs = append(p.Runs, sweepRun("a", v, float64(100*(i+1)), mix, 10, 99))
	}
	charts := p.sweepCharts()
	if len(charts) != 2 {
		t.Fatalf("%d charts", len(charts))
	}
	svg := charts[0].SVG()
	if got := strings.Join(xTicks(svg), ","); got != "1,2,4,8" {
		t.Errorf("x ticks %q, want the swept values 1,2,4,8", got)
	}
	pos := xPositions(svg)
	if len(pos) != 4 {
		t.Fatalf("positions %v", pos)
	}
	// Log scale: 1→2, 2→4, 4→8 are the same distance apart.
	d := func(a, b string) float64 { return parseF(t, b) - parseF(t, a) }
	if a, b := d(pos[0], pos[1]), d(pos[2], pos[3]); a-b > 0.2 || b-a > 0.2 {
		t.Errorf("doubling sweep not on a log scale: positions %v", pos)
	}
	// p99 is the mix's main operation's: 50/50 read/update ties to READ
	// (CoreWorkload's order), though UPDATE ran more often.
	if got := p.Runs[0].Run.MainSeries(); got != "READ" {
		t.Errorf("main series %q, want READ (the mix's, not the most frequent)", got)
	}

	// Values that do not double: a linear axis, still one tick per value.
	p.Runs = nil
	for _, v := range []string{"1000", "1500", "2000"} {
		p.Runs = append(p.Runs, sweepRun("a", v, 100, mix, 10, 99))
	}
	svg = p.sweepCharts()[0].SVG()
	if got := strings.Join(xTicks(svg), ","); got != "1000,1500,2000" {
		t.Errorf("x ticks %q", got)
	}

	// Words are categories, in the order they ran.
	p.Runs = nil
	for _, v := range []string{"SYNC_WAL", "SKIP_WAL", "ASYNC_WAL"} {
		r := sweepRun("a", v, 100, mix, 10, 99)
		r.Sweep[0].Key = "durability"
		p.Runs = append(p.Runs, r)
	}
	charts = p.sweepCharts()
	if len(charts) != 2 {
		t.Fatalf("a categorical sweep gets its charts too: %d", len(charts))
	}
	if got := strings.Join(xTicks(charts[0].SVG()), ","); got != "SYNC_WAL,SKIP_WAL,ASYNC_WAL" {
		t.Errorf("x ticks %q", got)
	}
	if !strings.Contains(charts[0].SVG(), `data-points="3"`) {
		t.Errorf("points missing: %s", charts[0].SVG())
	}
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSweepTicksAreTheValuesAsSwept: a numeric sweep's ticks and point
// titles read as the values the bundle paths and the workbook's Sweep
// column show (hbase-pe's write buffer sizes), not rounded to a unit
// (65536 read "65.536k" and 1048576 "1.049M", not a value that was swept).
func TestSweepTicksAreTheValuesAsSwept(t *testing.T) {
	mix := map[string]string{"insertproportion": "1", "operationcount": "10"}
	p := &SuitePage{Name: "s", Databases: []string{"hbase"}}
	sizes := []string{"4096", "65536", "1048576", "4194304"}
	for i, v := range sizes {
		r := sweepRun("hbase", v, float64(100*(i+1)), mix, 10, 99)
		r.Sweep[0].Key = "writebuffersize"
		p.Runs = append(p.Runs, r)
	}
	charts := p.sweepCharts()
	if len(charts) != 2 {
		t.Fatalf("%d charts", len(charts))
	}
	for _, c := range charts {
		svg := c.SVG()
		if got := strings.Join(xTicks(svg), ","); got != strings.Join(sizes, ",") {
			t.Errorf("%s: x ticks %q, want the swept values %s", c.ID, got, strings.Join(sizes, ","))
		}
		for _, v := range sizes {
			if !strings.Contains(svg, " at "+v+"</title>") {
				t.Errorf("%s: no point titled with %s (ticks %q)", c.ID, v, xTicks(svg))
			}
		}
	}
	// Still a log scale: each value at least doubles the one before.
	pos := xPositions(charts[0].SVG())
	if len(pos) != 4 {
		t.Fatalf("positions %v", pos)
	}
	if d := parseF(t, pos[1]) - parseF(t, pos[0]); d < 100 {
		t.Errorf("4096 and 65536 %.1f apart: not a log scale (%v)", d, pos)
	}
}

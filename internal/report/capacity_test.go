package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// capacityFixture is the record of a search over a database whose
// latency grows as 1/(1−ρ) up to 4000 ops/s: READ and UPDATE, an
// objective on each, a saturated probe and a repeat among the probes.
func capacityFixture() *capacity.Record {
	read := capacity.Objective{Op: measurement.Read, Percentile: 99, Bound: 10 * time.Millisecond}
	upd := capacity.Objective{Op: measurement.Update, Percentile: 99.9, Bound: 20 * time.Millisecond}
	rec := &capacity.Record{Kind: capacity.RecordKind, Tool: "ycsbctl", DB: "cassandra", Workload: "workloada", Mode: "distributed",
		Agents: []string{"10.0.0.1:7420", "10.0.0.2:7420"}, Threads: 16, Status: capacity.StatusComplete,
		Settings:     capacity.Settings{Objectives: []capacity.Objective{read, upd}, MaxErrorRate: 0.001, Precision: 0.05, Start: 1000, Max: 1e7, MaxProbes: 20},
		ProbeSeconds: 60, WarmupSeconds: 20, IntervalSeconds: 10}
	n := 0
	add := func(target float64, repeat bool, verdict capacity.Verdict) {
		n++
		rho := target / 4000
		achieved := min(target, 4000)
		lat := func(base float64) float64 {
			if rho >= 1 {
				return 2e6
			}
			return base / (1 - rho)
		}
		p := capacity.Probe{N: n, Repeat: repeat, Verdict: verdict, Steady: !repeat, Measured: capacity.Measured{Target: target, Achieved: achieved,
			Operations: int64(achieved * 60), Calls: int64(achieved * 60), Bundle: "probe-0" + string(rune('0'+n)),
			Latency: []capacity.OpLatency{
				{Op: "READ", Count: int64(achieved * 30), Intended: map[string]float64{"p50": lat(800), "p95": lat(1500), "p99": lat(2500), "p99.9": lat(4000)},
					Service: map[string]float64{"p50": 700, "p95": 1300, "p99": 2000, "p99.9": 3500}},
				{Op: "UPDATE", Count: int64(achieved * 30), Intended: map[string]float64{"p50": lat(900), "p95": lat(1700), "p99": lat(2800), "p99.9": lat(4500)},
					Service: map[string]float64{"p50": 800, "p95": 1500, "p99": 2300, "p99.9": 3900}},
			}}}
		if verdict == capacity.Fail {
			p.Reasons = []string{"READ.p99<=10ms: intended p99 " + capacity.FormatMicros(lat(2500))}
		}
		if !p.Steady {
			p.Unsteady = "READ p99 rises by 3ms over the last 6 intervals"
		}
		rec.Probes = append(rec.Probes, p)
	}
	add(1000, false, capacity.Pass)
	add(2000, false, capacity.Pass)
	add(4000, false, capacity.Fail)
	add(3000, false, capacity.Pass)
	add(3000, true, capacity.Pass)
	add(3500, false, capacity.Fail)
	add(3250, false, capacity.Fail)
	rec.Answer = capacity.Answer{Found: true, Capacity: 3000, Achieved: 3000, Probe: 5, Bracket: capacity.Bracket{Pass: 3000, Fail: 3250},
		Converged: false, Ended: capacity.EndBudget}
	return rec
}

func TestCapacityReport(t *testing.T) {
	rec := capacityFixture()
	var b bytes.Buffer
	if err := WriteCapacityHTML(&b, rec, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`id="curve-READ"`, `id="curve-UPDATE"`, `id="achieved"`,
		"READ.p99&lt;=10ms", "UPDATE.p99.9&lt;=20ms", // the objectives drawn across
		"capacity 3000 ops/s", // the knee marked
		"p99 intended", "p99 service",
		`<a href="probe-05/">probe-05</a>`, "5 (repeat)", "not steady: READ p99 rises",
		"READ p99 at capacity", "Capacity: 3000 ops/s (achieved 3000 ops/s, probe 5, not steady",
		"10.0.0.1:7420, 10.0.0.2:7420",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the capacity report lacks %q", want)
		}
	}
	// The curve has one point per judged probe, in target order.
	curves := CapacityCurves(rec, "c")
	if len(curves) != 2 {
		t.Fatalf("%d curves, want one per operation", len(curves))
	}
	for _, s := range curves[0].Series {
		if len(s.X) != len(rec.Probes) {
			t.Errorf("%s: %d points for %d probes", s.Name, len(s.X), len(rec.Probes))
		}
	}
	if len(curves[0].HLines) != 1 || len(curves[1].HLines) != 1 || len(curves[0].VLines) != 1 {
		t.Errorf("reference lines: READ %d/%d, UPDATE %d", len(curves[0].HLines), len(curves[0].VLines), len(curves[1].HLines))
	}

	b.Reset()
	if err := WriteCapacityCSV(&b, rec); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*len(rec.Probes) {
		t.Fatalf("%d CSV rows, want a header and one per probe and operation", len(rows))
	}
	if got := strings.Join(rows[0][:9], ","); got != "probe,repeat,target_ops_per_sec,achieved_ops_per_sec,verdict,steady,error_rate,op,count" {
		t.Errorf("header %s", got)
	}
	if rows[1][7] != "READ" || rows[1][13] != "700" {
		t.Errorf("first row %v", rows[1])
	}
}

// suiteCapacityFixture is a suite page with a load run and one capacity
// step searched on two databases (the second sustains less).
func suiteCapacityFixture(load *Run) *SuitePage {
	a := capacityFixture()
	b := capacityFixture()
	b.DB = "mongodb"
	b.Answer.Capacity, b.Answer.Achieved = 2000, 1990
	for i := range b.Probes {
		b.Probes[i].Achieved *= 0.7
	}
	return &SuitePage{Name: "s", Databases: []string{"cassandra", "mongodb"},
		Runs: []SuiteRun{{Database: "cassandra", Step: "01-load-workloada", Run: load}},
		Capacities: []SuiteCapacity{
			{Database: "cassandra", Step: "02-capacity-workloada", Record: a},
			{Database: "mongodb", Step: "02-capacity-workloada", Record: b},
		}}
}

// TestSuiteCapacitySection: compare.html's capacity section has one bar
// per database at its capacity, and per objective the databases' curves
// overlaid (every judged probe a point, the bound drawn across).
func TestSuiteCapacitySection(t *testing.T) {
	p := suiteCapacityFixture(nil)
	bars, curves := p.capacityCharts()
	if bars == nil {
		t.Fatal("no capacity bars")
	}
	if len(bars.Groups) != 1 || bars.Groups[0] != "02-capacity-workloada" {
		t.Errorf("groups %v", bars.Groups)
	}
	if len(bars.Bars) != 2 || bars.Bars[0].Values[0] != 3000 || bars.Bars[1].Values[0] != 2000 {
		t.Errorf("bars %+v", bars.Bars)
	}
	if len(curves) != 2 {
		t.Fatalf("%d curves, expected one per objective (READ.p99, UPDATE.p99.9)", len(curves))
	}
	c := curves[0]
	if !strings.Contains(c.Title, "READ p99 intended") || len(c.HLines) != 1 || c.HLines[0].Value != 10000 {
		t.Errorf("curve %q, lines %+v", c.Title, c.HLines)
	}
	if len(c.Series) != 2 || c.Series[0].Name != "cassandra" || c.Series[1].Name != "mongodb" {
		t.Fatalf("series %+v", c.Series)
	}
	if n := len(c.Series[0].X); n != len(judged(p.Capacities[0].Record)) {
		t.Errorf("%d points, expected one per judged probe", n)
	}
	notes := p.capacityNotes()
	if len(notes) != 2 || !strings.Contains(notes[1], "mongodb 02-capacity-workloada: Capacity: 2000 ops/s") {
		t.Errorf("notes %q", notes)
	}
}

// TestSuiteCapacityOnly: a suite of capacity steps alone (no run bundle)
// still gets its page.
func TestSuiteCapacityOnly(t *testing.T) {
	p := suiteCapacityFixture(nil)
	p.Runs = nil
	var b bytes.Buffer
	if err := p.WriteHTML(&b, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `id="suite-capacity"`) {
		t.Error("no capacity bars")
	}
}

package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

func TestStudentT(t *testing.T) {
	// Reference values of Student's t distribution.
	for _, c := range []struct{ t, df, cdf float64 }{
		{0, 5, 0.5}, {2.0, 10, 0.963306}, {1.0, 1, 0.75}, {-2.228139, 10, 0.025}, {3.0, 30, 0.997306},
	} {
		if got := studentCDF(c.t, c.df); math.Abs(got-c.cdf) > 1e-5 {
			t.Errorf("studentCDF(%g, %g) = %g, want %g", c.t, c.df, got, c.cdf)
		}
	}
	if q := tQuantile(0.975, 10); math.Abs(q-2.228139) > 1e-4 {
		t.Errorf("t(0.975, 10) = %g", q)
	}
	if q := tQuantile(0.975, 1e9); math.Abs(q-1.959964) > 1e-4 {
		t.Errorf("t(0.975, inf) = %g", q)
	}
}

func TestWelch(t *testing.T) {
	a := Summarize([]float64{10, 11, 9, 10.5, 9.5, 10.2, 9.8})
	b := Summarize([]float64{12, 13, 11.5, 12.5, 12.2, 11.8, 12.4})
	if v, p := Compare(a, b); v != Significant || p > 0.001 {
		t.Errorf("clearly different samples: %v p=%g", v, p)
	}
	c := Summarize([]float64{10.1, 9.7, 10.4, 9.9, 10.3, 9.6, 10.0})
	if v, p := Compare(a, c); v != WithinNoise || p < 0.5 {
		t.Errorf("same distribution: %v p=%g", v, p)
	}
	if v, _ := Compare(a, Summarize([]float64{1, 2})); v != Unknown {
		t.Error("two samples judged")
	}
	// A trend is autocorrelated: fewer effective samples, wider CI.
	trend := Summarize([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	if trend.R1 <= 0 || trend.NEff >= float64(trend.N) {
		t.Errorf("trend: r1=%g neff=%g", trend.R1, trend.NEff)
	}
	noise := rand.New(rand.NewPCG(1, 1))
	var xs []float64
	for range 50 {
		xs = append(xs, 100+noise.NormFloat64())
	}
	s := Summarize(xs)
	if ci := s.CI95(); ci < 0.2 || ci > 0.5 {
		t.Errorf("CI95 of 50 N(100,1) samples = %g", ci)
	}
}

func TestBundleRoundTrip(t *testing.T) {
	dir := makeBundle(t, filepath.Join(t.TempDir(), "local"), fixture{db: "basic", workload: "workloada", intervals: 6, rate: 800, jitter: 0.05, latencyUs: 300, seed: 1})
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Run.Mode != "single-host" || len(b.Run.Agents) != 1 || len(b.Run.Intervals) != 6 || !strings.Contains(b.Summary, "[OVERALL], RunTime(ms), 60000") {
		t.Fatalf("bundle: mode %q, %d agents, %d intervals, summary:\n%s", b.Run.Mode, len(b.Run.Agents), len(b.Run.Intervals), b.Summary)
	}
	if got := b.Run.Config.Properties["mongodb.url"]; strings.Contains(got, "secret") {
		t.Errorf("password not redacted: %s", got)
	}
	hs, err := b.Histograms()
	if err != nil {
		t.Fatal(err)
	}
	read := hs.All[measurement.SeriesOf(measurement.Read, measurement.Service, false)]
	var want int64
	for _, s := range b.Run.Summary.Series {
		if s.Series == "READ" {
			want = s.Count
		}
	}
	if read == nil || read.TotalCount() != want {
		t.Fatalf("merged.hlog READ total %v, summary %d", read, want)
	}
	if r := FromBundle(b); r.Scenario() != "workloada" || r.MainSeries() == "" {
		t.Errorf("scenario %q main %q", r.Scenario(), r.MainSeries())
	}
}

func TestDistributedHistograms(t *testing.T) {
	dir := makeBundle(t, filepath.Join(t.TempDir(), "dist"), fixture{db: "mongodb", workload: "workloadb", agents: 3, intervals: 4, rate: 600, latencyUs: 500, seed: 2})
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := r.B.Histograms()
	if err != nil {
		t.Fatal(err)
	}
	if len(hs.Agents) != 3 {
		t.Fatalf("%d agents in merged.hlog", len(hs.Agents))
	}
	// The .all merge equals the sum of the agents' lines: exact merging.
	s := measurement.SeriesOf(measurement.Read, measurement.Service, false)
	sum := measurement.NewHistogram()
	for _, a := range hs.Agents {
		sum.Merge(a[s])
	}
	if !sum.Equals(hs.All[s]) {
		t.Fatal("agent histograms do not add up to the merged one")
	}
	// Without command line, the scenario comes from the properties.
	if sc := r.Scenario(); sc != "workloadb" {
		t.Errorf("scenario %q, want workloadb", sc)
	}
}

func reportHTML(t *testing.T, dir string) string {
	t.Helper()
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r, Options{Now: time.Unix(1_790_000_000, 0)}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// selfContained fails on anything the page would fetch.
func selfContained(t *testing.T, page string) {
	t.Helper()
	for _, re := range []string{`<script[^>]+src=`, `<link[^>]+href=`, `url\(`, `@import`, `<img`, `<iframe`} {
		if regexp.MustCompile(re).MatchString(page) {
			t.Errorf("page references an external resource (%s)", re)
		}
	}
	page = strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		i := strings.Index(page, "http")
		t.Errorf("page contains a URL: %q", page[max(i-40, 0):min(i+60, len(page))])
	}
}

func TestReportHTMLSingleHost(t *testing.T) {
	page := reportHTML(t, makeBundle(t, filepath.Join(t.TempDir(), "local"), fixture{db: "basic", workload: "workloada", intervals: 8, rate: 900, jitter: 0.1, latencyUs: 250, seed: 3}))
	for _, want := range []string{"ycsbctl run · basic · workloada", "Throughput over time", "Latency percentiles over time", "Latency distribution",
		`id="latency-READ"`, `id="latency-UPDATE"`, `id="distribution"`, "Agents", "Configuration and environment", "NOT_FOUND", "[OVERALL], RunTime(ms)",
		"ycsbctl run basic -P workloada -threads 8", "99.9%", "charts-ready"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(page, "secret") {
		t.Error("report leaks a password")
	}
	if n := strings.Count(page, `<svg class="chart"`); n != 4 {
		t.Errorf("%d charts, want 4 (throughput, 2 latency, distribution)", n)
	}
	selfContained(t, page)
}

func TestReportHTMLDistributed(t *testing.T) {
	page := reportHTML(t, makeBundle(t, filepath.Join(t.TempDir(), "dist"), fixture{db: "cassandra", workload: "workloadb", agents: 3, intervals: 6, rate: 1500, jitter: 0.05, latencyUs: 800, seed: 4}))
	for _, want := range []string{"10.0.0.1:7420", "loader3", `id="agents-throughput"`, `id="agents-p99"`, "agent 2", `class="warn"`, "Plan (work split across agents)", "threads_per_agent"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	selfContained(t, page)
}

func TestCSV(t *testing.T) {
	root := t.TempDir()
	a, _ := Load(makeBundle(t, filepath.Join(root, "a"), fixture{db: "basic", workload: "workloada", intervals: 5, rate: 500, latencyUs: 100, seed: 5}))
	b, _ := Load(makeBundle(t, filepath.Join(root, "b"), fixture{db: "mongodb", workload: "workloada", agents: 2, intervals: 3, rate: 500, latencyUs: 100, seed: 6}))
	var buf bytes.Buffer
	if err := WriteCSV(&buf, []*Run{a, b}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Header, 5 local intervals, 3 merged + 6 per-agent rows.
	if len(recs) != 1+5+3+6 {
		t.Fatalf("%d records", len(recs))
	}
	head := strings.Join(recs[0], ",")
	for _, col := range []string{"run,run_id,db,scenario,phase,scope,seq", "ops_per_sec", "READ_p99_us", "UPDATE_p99_9_us"} {
		if !strings.Contains(head, col) {
			t.Errorf("header lacks %s: %s", col, head)
		}
	}
	if recs[1][5] != "all" || recs[7][5] != "agent-0" {
		t.Errorf("scopes %q %q", recs[1][5], recs[7][5])
	}
}

func TestCompare(t *testing.T) {
	root := t.TempDir()
	var runs []*Run
	for _, f := range []fixture{
		{db: "mongodb", workload: "workloada", intervals: 12, rate: 1000, jitter: 0.03, latencyUs: 400, seed: 10},
		{db: "cassandra", workload: "workloada", intervals: 12, rate: 1500, jitter: 0.03, latencyUs: 300, seed: 11},
		{db: "mongodb", workload: "workloadc", intervals: 12, rate: 2000, jitter: 0.05, latencyUs: 200, seed: 12},
		// Same as the baseline but another sample: within noise.
		{db: "cassandra", workload: "workloadc", intervals: 12, rate: 2000, jitter: 0.05, latencyUs: 200, seed: 13},
	} {
		r, err := Load(makeBundle(t, filepath.Join(root, f.db+"-"+f.workload), f))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	c := NewComparison(runs)
	if len(c.Scenarios) != 2 || c.Rows[1].TputVerdict != Significant || c.Rows[3].TputVerdict != WithinNoise {
		t.Fatalf("scenarios %v, verdicts %v %v", c.Scenarios, c.Rows[1].TputVerdict, c.Rows[3].TputVerdict)
	}
	if d := c.Rows[1].TputDelta; d < 0.4 || d > 0.6 {
		t.Errorf("cassandra vs mongodb delta %g, want about +50%%", d)
	}
	var tbl bytes.Buffer
	if err := c.WriteTable(&tbl); err != nil {
		t.Fatal(err)
	}
	out := tbl.String()
	for _, want := range []string{"SCENARIO", "workloada", "workloadc", "baseline", " *", " ≈", "Welch"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	var page bytes.Buffer
	if err := c.WriteHTML(&page, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="compare-throughput"`, `id="compare-latency-workloada"`, `id="compare-time-workloadc"`, "≈", "sig up"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("comparison page lacks %q", want)
		}
	}
	selfContained(t, page.String())
}

func TestChartsEmptyAndTicks(t *testing.T) {
	c := &LineChart{ID: "e", Title: "empty"}
	if svg := c.SVG(); !strings.Contains(svg, `data-points="0"`) || !strings.Contains(svg, "no data") {
		t.Errorf("empty chart: %s", svg)
	}
	lo, hi, ticks := logTicks(3, 4000, fmtNumber)
	if lo != 1 || hi != 10000 || len(ticks) < 5 {
		t.Errorf("log ticks %g..%g %v", lo, hi, ticks)
	}
	if got := fmtMicros(1234); got != "1.23ms" {
		t.Errorf("fmtMicros = %s", got)
	}
	if got := fmtSeconds(3725); got != "62m05s" {
		t.Errorf("fmtSeconds = %s", got)
	}
}

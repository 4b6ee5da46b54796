package report

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/version"
)

// A comparison groups runs by scenario (workload and phase) and compares
// each run with the first run of its group, the baseline, the way the
// published YCSB comparisons lined up databases per workload.

// Row is one run in a comparison.
type Row struct {
	Run      *Run
	Scenario string
	// Label tells runs of one scenario apart: the database, or the run's
	// name when a database appears twice.
	Label    string
	Baseline *Run
	// Throughput and its verdict against the baseline.
	Throughput  Sample
	TputDelta   float64 // relative, e.g. 0.12 = +12 %
	TputVerdict Verdict
	TputP       float64
	// Main latency series and its whole-run percentiles (µs).
	Series     string
	P50, P95   float64
	P99, P999  float64
	P99Samples Sample
	P99Delta   float64
	P99Verdict Verdict
	// P99NA says why a run has no p99 against its baseline (empty when
	// it has one).
	P99NA string
}

// Comparison is a set of runs laid out for comparing.
type Comparison struct {
	Rows      []*Row
	Scenarios []string
}

// NewComparison builds a comparison; runs keep their order, which decides
// baselines (the first run of each scenario).
func NewComparison(runs []*Run) *Comparison {
	return newComparison(runs, func(_ int, r *Run) string { return scenarioKey(r) }, nil)
}

// newComparison groups runs by scenario(i, run); label(i, run), when not
// nil, names the run within its scenario instead of the database.
func newComparison(runs []*Run, scenario, label func(i int, r *Run) string) *Comparison {
	c := &Comparison{}
	baseline := map[string]*Row{}
	dbCount := map[string]int{}
	for i, r := range runs {
		dbCount[scenario(i, r)+"\x00"+r.DB()]++
	}
	for i, r := range runs {
		sc := scenario(i, r)
		row := &Row{Run: r, Scenario: sc, Label: r.DB(), Throughput: r.Throughput, Series: r.MainSeries()}
		if label != nil {
			row.Label = label(i, r)
		} else if dbCount[sc+"\x00"+r.DB()] > 1 {
			row.Label = r.DB() + " · " + r.Name()
		}
		if s, ok := seriesStat(r.B.Run.Summary.Series, row.Series); ok {
			row.P50, row.P95, row.P99, row.P999 = float64(s.P50Us), float64(s.P95Us), float64(s.P99Us), float64(s.P999Us)
		}
		row.P99Samples = Summarize(intervalP99(r, row.Series))
		base, ok := baseline[sc]
		if !ok {
			baseline[sc] = row
			c.Scenarios = append(c.Scenarios, sc)
		} else {
			row.Baseline = base.Run
			if base.Throughput.Mean > 0 {
				row.TputDelta = row.Throughput.Mean/base.Throughput.Mean - 1
			}
			row.TputVerdict, row.TputP = Compare(base.Throughput, row.Throughput)
			switch {
			case base.Series != row.Series:
				row.P99NA = fmt.Sprintf("n/a: the baseline's main operation is %s", base.Series)
			case base.P99 <= 0:
				// Latencies below 1 µs truncate to 0, as YCSB's do
				// (a no-op database): no ratio exists.
				row.P99NA = "n/a: the baseline's P99 is 0 µs"
			default:
				row.P99Delta = row.P99/base.P99 - 1
				row.P99Verdict, _ = Compare(base.P99Samples, row.P99Samples)
			}
		}
		c.Rows = append(c.Rows, row)
	}
	return c
}

func scenarioKey(r *Run) string {
	sc := r.Scenario()
	if p := r.B.Run.Phase; p != "" && p != "run" {
		sc += " (" + p + ")"
	}
	return sc
}

// intervalP99 returns the p99 of a series in each usable interval.
func intervalP99(r *Run, series string) []float64 {
	var out []float64
	for _, iv := range r.usable() {
		if s, ok := seriesStat(iv.Series, series); ok && s.Count > 0 {
			out = append(out, float64(s.P99Us))
		}
	}
	return out
}

// mark renders a verdict next to a delta: "+12.3% *" significant,
// "+0.8% ≈" within noise, "?" too few intervals to tell.
func mark(delta float64, v Verdict) string {
	d := fmt.Sprintf("%+.1f%%", delta*100)
	switch v {
	case Significant:
		return d + " *"
	case WithinNoise:
		return d + " ≈"
	default:
		return d + " ?"
	}
}

// WriteTable prints the comparison as an aligned text table.
func (c *Comparison) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// row keeps the first write error; the rows after it are not written.
	var werr error
	row := func(format string, a ...any) {
		if werr == nil {
			_, werr = fmt.Fprintf(tw, format, a...)
		}
	}
	row("%s\n", "SCENARIO\tRUN\tDB\tOPS/S (95% CI)\tVS BASELINE\tSERIES\tP50\tP95\tP99\tP99.9\tP99 VS BASELINE\tSTATUS")
	for _, r := range c.Rows {
		vs, lvs := "baseline", "baseline"
		if r.Baseline != nil {
			vs = mark(r.TputDelta, r.TputVerdict)
			lvs = r.P99NA
			if lvs == "" {
				lvs = mark(r.P99Delta, r.P99Verdict)
			}
		}
		tput := fmtNumber(math.Round(r.Throughput.Mean))
		if ci := r.Throughput.CI95(); ci > 0 {
			tput += " ± " + fmtNumber(math.Round(ci))
		}
		row("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Scenario, r.Run.Name(), r.Run.DB(), tput, vs, r.Series,
			fmtMicros(r.P50), fmtMicros(r.P95), fmtMicros(r.P99), fmtMicros(r.P999), lvs, verdictText(r.Run))
	}
	if err := errors.Join(werr, tw.Flush()); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n* differs from the baseline (Welch's t-test over per-interval values, p < 0.05); ≈ within run-to-run noise; ? too few intervals to tell")
	return err
}

const compareHeader = `
<header>
  <h1>ycsbctl comparison</h1>
  <div class="sub"><span>{{len .Rows}} runs</span><span>{{len .Scenarios}} scenarios</span><span>baseline: the first run of each scenario</span></div>
</header>
`

// compareSections are the comparison's sections, shared by the compare
// page and the suite page.
const compareSections = `
<h2>Results</h2>
<table>
<tr><th class="l">Scenario</th><th class="l">Run</th><th class="l">Database</th><th>Ops/s (95% CI)</th><th>vs baseline</th><th class="l">Series</th><th>P50</th><th>P95</th><th>P99</th><th>P99.9</th><th>P99 vs baseline</th><th class="l">Status</th></tr>
{{range .Rows}}<tr><td class="l">{{.Scenario}}</td><td class="l">{{.Name}}</td><td class="l">{{.DB}}</td><td>{{.Tput}}</td><td class="{{.TputClass}}">{{.TputVs}}</td><td class="l">{{.Series}}</td><td>{{.P50}}</td><td>{{.P95}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td class="{{.LatClass}}">{{.LatVs}}</td><td class="l">{{.Status}}</td></tr>
{{end}}</table>
<p class="muted">* differs from the baseline beyond run-to-run noise (Welch's t-test over per-interval throughput or p99, sample sizes corrected for autocorrelation, p &lt; 0.05); ≈ within noise; ? fewer than three steady intervals on a side. Whiskers are 95% confidence intervals of the interval mean.</p>

<h2>Throughput per scenario and database</h2>
<div class="charts"><div class="chartbox">{{.TputChart}}</div></div>

<h2>Latency percentiles</h2>
<div class="charts">{{range .LatCharts}}<div class="chartbox">{{.}}</div>{{end}}</div>

{{if .TimeCharts}}
<h2>Throughput over time</h2>
<div class="charts">{{range .TimeCharts}}<div class="chartbox">{{.}}</div>{{end}}</div>
{{else}}
<p class="muted">No throughput-over-time chart: every run here has fewer than two intervals (a run shorter than its status.interval is one point, not a line).</p>
{{end}}
{{if .HostRows}}
<h2>Hosts per scenario and database</h2>
<p class="muted">What every load generator's host did over the measured run (ycsbctl.telemetry): means, and the worst interval where it says more.</p>
<div class="charts">{{range .HostCharts}}<div class="chartbox">{{.}}</div>{{end}}</div>
<table class="hosts">
<tr><th class="l">Scenario</th><th class="l">Database</th><th class="l">Host</th><th>CPU busy</th><th>worst</th><th>iowait</th><th>Disk write</th><th>Disk util max</th><th>Network</th><th>DB CPU</th><th>DB RSS max</th><th>DB written</th><th>Load gen. CPU</th><th class="l">Server</th><th class="l">Verdicts</th></tr>
{{range .HostRows}}<tr{{if .Hot}} class="warn"{{end}}><td class="l">{{.Scenario}}</td><td class="l">{{.Label}}</td><td class="l">{{.Host}}</td><td>{{.Busy}}</td><td>{{.BusyMax}}</td><td>{{.IOWait}}</td><td>{{.DiskW}}</td><td>{{.DiskUtil}}</td><td>{{.Net}}</td><td>{{.DBCPU}}</td><td>{{.DBRSS}}</td><td>{{.DBWritten}}</td><td>{{.Client}}</td><td class="l">{{.Database}}</td><td class="l">{{.Verdicts}}</td></tr>
{{end}}</table>
{{end}}
`

var (
	compareTmpl         = template.Must(template.New("compare").Parse(compareHeader + "<main>" + compareSections + "</main>\n"))
	compareSectionsTmpl = template.Must(template.New("sections").Parse(compareSections))
)

type compareData struct {
	Rows       []compareRow
	Scenarios  []string
	TputChart  template.HTML
	LatCharts  []template.HTML
	TimeCharts []template.HTML
	HostCharts []template.HTML
	HostRows   []compareHostRow
}

type compareRow struct {
	Scenario, Name, DB, Tput, TputVs, TputClass, Series, P50, P95, P99, P999, LatVs, LatClass, Status string
}

func verdictClass(delta float64, v Verdict, higherIsBetter bool) string {
	switch v {
	case Significant:
		if (delta > 0) == higherIsBetter {
			return "sig up"
		}
		return "sig down"
	case WithinNoise:
		return "noise"
	}
	return "noise"
}

// WriteHTML writes the comparison as one self-contained HTML page.
func (c *Comparison) WriteHTML(w io.Writer, now time.Time) error {
	if now.IsZero() {
		now = time.Now()
	}
	var body bytes.Buffer
	if err := compareTmpl.Execute(&body, c.data()); err != nil {
		return err
	}
	return writePage(w, pageData{Title: "ycsbctl comparison", Version: version.Version, Generated: now.UTC().Format("2006-01-02 15:04 MST"), Body: template.HTML(body.String())})
}

func (c *Comparison) data() compareData {
	var rows []compareRow
	for _, r := range c.Rows {
		cr := compareRow{Scenario: r.Scenario, Name: r.Run.Name(), DB: r.Run.DB(), Series: r.Series, Status: verdictText(r.Run),
			P50: fmtMicros(r.P50), P95: fmtMicros(r.P95), P99: fmtMicros(r.P99), P999: fmtMicros(r.P999), TputVs: "baseline", LatVs: "baseline"}
		cr.Tput = fmtNumber(math.Round(r.Throughput.Mean))
		if ci := r.Throughput.CI95(); ci > 0 {
			cr.Tput += " ± " + fmtNumber(math.Round(ci))
		}
		if r.Baseline != nil {
			cr.TputVs, cr.TputClass = mark(r.TputDelta, r.TputVerdict), verdictClass(r.TputDelta, r.TputVerdict, true)
			cr.LatVs = r.P99NA
			if cr.LatVs == "" {
				cr.LatVs, cr.LatClass = mark(r.P99Delta, r.P99Verdict), verdictClass(r.P99Delta, r.P99Verdict, false)
			}
		}
		rows = append(rows, cr)
	}
	data := compareData{Rows: rows, Scenarios: c.Scenarios, TputChart: template.HTML(c.throughputBars().SVG())}
	for _, ch := range c.latencyBars() {
		data.LatCharts = append(data.LatCharts, template.HTML(ch.SVG()))
	}
	for _, ch := range c.timeCharts() {
		data.TimeCharts = append(data.TimeCharts, template.HTML(ch.SVG()))
	}
	data.HostRows = c.hostRows()
	for _, ch := range c.hostBars() {
		data.HostCharts = append(data.HostCharts, template.HTML(ch.SVG()))
	}
	return data
}

// labels returns the distinct row labels in first-seen order.
func (c *Comparison) labels() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range c.Rows {
		if !seen[r.Label] {
			seen[r.Label] = true
			out = append(out, r.Label)
		}
	}
	return out
}

// throughputBars: one group per scenario, one bar per database, whiskers
// at the 95 % CI, "≈" over bars within noise of their baseline.
func (c *Comparison) throughputBars() *BarChart {
	ch := &BarChart{ID: "compare-throughput", Title: "Throughput (interval mean, ops/s)", YLabel: "ops/s", Width: 1200, Height: 360, Groups: c.Scenarios}
	for i, l := range c.labels() {
		b := Bar{Name: l, Color: color(i), Values: make([]float64, len(c.Scenarios)), Err: make([]float64, len(c.Scenarios)), Note: make([]string, len(c.Scenarios))}
		for g, sc := range c.Scenarios {
			for _, r := range c.Rows {
				if r.Scenario == sc && r.Label == l {
					b.Values[g] = r.Throughput.Mean
					b.Err[g] = r.Throughput.CI95()
					if r.Baseline != nil {
						switch r.TputVerdict {
						case WithinNoise:
							b.Note[g] = "≈"
						case Significant:
							b.Note[g] = fmt.Sprintf("%+.0f%%", r.TputDelta*100)
						}
					}
				}
			}
		}
		ch.Bars = append(ch.Bars, b)
	}
	return ch
}

// latencyBars: per scenario, the main series' percentiles for each run.
func (c *Comparison) latencyBars() []*BarChart {
	var out []*BarChart
	labels := c.labels()
	for _, sc := range c.Scenarios {
		var series string
		for _, r := range c.Rows {
			if r.Scenario == sc && series == "" {
				series = r.Series
			}
		}
		ch := &BarChart{ID: "compare-latency-" + sc, Title: sc + ": " + series + " latency", YLabel: "latency", Width: 590, Height: 320,
			Groups: []string{"p50", "p95", "p99", "p99.9"}, YFormat: fmtMicros}
		for i, l := range labels {
			for _, r := range c.Rows {
				if r.Scenario == sc && r.Label == l {
					b := Bar{Name: l, Color: color(i), Values: []float64{r.P50, r.P95, r.P99, r.P999}}
					if r.Baseline != nil && r.P99Verdict == WithinNoise {
						b.Note = []string{"", "", "≈", ""}
					}
					ch.Bars = append(ch.Bars, b)
				}
			}
		}
		out = append(out, ch)
	}
	return out
}

// timeCharts overlays the throughput time series of each scenario's runs.
func (c *Comparison) timeCharts() []*LineChart {
	var out []*LineChart
	labels := c.labels()
	for _, sc := range c.Scenarios {
		// A run shorter than two intervals is one point, not a line;
		// when every run of the scenario is, there is nothing to draw.
		lines := false
		for _, r := range c.Rows {
			lines = lines || (r.Scenario == sc && len(r.Run.rateIntervals()) > 1)
		}
		if !lines {
			continue
		}
		ch := &LineChart{ID: "compare-time-" + sc, Title: sc + ": throughput per interval", XLabel: "elapsed", YLabel: "ops/s", Width: 590, Height: 300, XFormat: fmtSeconds}
		for i, l := range labels {
			for _, r := range c.Rows {
				if r.Scenario != sc || r.Label != l {
					continue
				}
				s := Series{Name: l, Color: color(i)}
				for _, iv := range r.Run.rateIntervals() {
					s.X = append(s.X, r.Run.elapsed(iv))
					s.Y = append(s.Y, iv.OpsPerSec)
				}
				ch.Series = append(ch.Series, s)
			}
		}
		out = append(out, ch)
	}
	return out
}

// seriesNames lists the series present in any of the runs' intervals, in
// YCSB order, for CSV columns.
func seriesNames(runs []*Run) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range runs {
		for _, iv := range r.Intervals {
			for _, s := range iv.Series {
				if !seen[s.Series] {
					seen[s.Series] = true
					out = append(out, s.Series)
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return seriesRank(out[i]) < seriesRank(out[j]) })
	return out
}

func verdictText(r *Run) string {
	text, _ := r.Verdict()
	return text
}

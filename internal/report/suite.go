package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/version"
)

// SuiteRun is one measured step of a suite: which database, which step of
// the file, which sweep values.
type SuiteRun struct {
	Database string
	// Step is "NN-name", shared by the values of a sweep.
	Step  string
	Sweep []SweepPoint
	Run   *Run
}

// SweepPoint is one swept key's value.
type SweepPoint struct {
	Key   string
	Value string
}

// Scenario is the step with its sweep values: what the comparison groups
// databases by.
func (s SuiteRun) Scenario() string {
	if len(s.Sweep) == 0 {
		return s.Step
	}
	var parts []string
	for _, p := range s.Sweep {
		parts = append(parts, p.Key+"="+p.Value)
	}
	return s.Step + " " + strings.Join(parts, ",")
}

// SuitePage is the comparison page of a suite: the compare page's
// sections with the runs grouped per step across databases (the first
// database is each step's baseline), preceded by sweep charts,
// throughput and p99 against the swept value.
type SuitePage struct {
	Name      string
	Databases []string
	Runs      []SuiteRun
	// Notes are shown under the header (thread-scan knees, failed steps).
	Notes []string
	// Capacities are the suite's capacity steps: a section of their own.
	Capacities []SuiteCapacity
}

const suiteHeader = `
<header>
  <h1>ycsbctl suite {{.Name}}</h1>
  <div class="sub"><span>{{len .Databases}} databases: {{join .Databases ", "}}</span><span>{{.Steps}} steps</span><span>{{len .Runs}} measured runs</span><span>baseline: the first database of each step</span></div>
</header>
<main>
{{range .Notes}}<p class="muted">{{.}}</p>
{{end}}{{if .CapacityBars}}<h2>Capacity</h2>
<p class="muted">The highest target each database sustained within the objectives (intended-time latencies, coordinated omission corrected), per scenario; then each objective's percentile against the throughput each probe achieved, the databases overlaid. Each search's probes are in its capacity bundle ('ycsbctl report DIR/&lt;database&gt;/&lt;step&gt;').</p>
{{range .CapacityNotes}}<p>{{.}}</p>
{{end}}<div class="charts"><div class="chartbox">{{.CapacityBars}}</div></div>
<div class="charts">{{range .CapacityCurves}}<div class="chartbox">{{.}}</div>{{end}}</div>
{{end}}{{if .SweepCharts}}<h2>Sweeps</h2>
<div class="charts">{{range .SweepCharts}}<div class="chartbox">{{.}}</div>{{end}}</div>
{{end}}`

var suiteTmpl = template.Must(template.New("suite").Funcs(template.FuncMap{"join": strings.Join}).Parse(suiteHeader))

// WriteHTML writes the page.
func (p *SuitePage) WriteHTML(w io.Writer, now time.Time) error {
	if now.IsZero() {
		now = time.Now()
	}
	runs := make([]*Run, len(p.Runs))
	for i, r := range p.Runs {
		runs[i] = r.Run
	}
	c := newComparison(runs,
		func(i int, _ *Run) string { return p.Runs[i].Scenario() },
		func(i int, _ *Run) string { return p.Runs[i].Database })
	steps := map[string]bool{}
	for _, r := range p.Runs {
		steps[r.Step] = true
	}
	for _, c := range p.Capacities {
		steps[c.Step] = true
	}
	data := struct {
		Name        string
		Databases   []string
		Steps       int
		Runs        []SuiteRun
		Notes       []string
		SweepCharts []template.HTML
		// The capacity section, when the suite has capacity steps.
		CapacityBars   template.HTML
		CapacityCurves []template.HTML
		CapacityNotes  []string
	}{Name: p.Name, Databases: p.Databases, Steps: len(steps), Runs: p.Runs, Notes: p.Notes, CapacityNotes: p.capacityNotes()}
	if bars, curves := p.capacityCharts(); bars != nil {
		data.CapacityBars = template.HTML(bars.SVG())
		for _, ch := range curves {
			data.CapacityCurves = append(data.CapacityCurves, template.HTML(ch.SVG()))
		}
	}
	for _, ch := range p.sweepCharts() {
		data.SweepCharts = append(data.SweepCharts, template.HTML(ch.SVG()))
	}
	var body bytes.Buffer
	if err := suiteTmpl.Execute(&body, data); err != nil {
		return err
	}
	if err := compareSectionsTmpl.Execute(&body, c.data()); err != nil {
		return err
	}
	body.WriteString("</main>\n")
	return writePage(w, pageData{Title: "ycsbctl suite " + p.Name, Version: version.Version, Generated: now.UTC().Format("2006-01-02 15:04 MST"), Body: template.HTML(body.String())})
}

// sweepCharts draws, for every swept step, throughput and p99 of the
// main operation against the swept value: one line per database (and per
// value of any other swept key). The x axis is the swept values
// themselves, one tick each: numbers on a log scale when each is at least
// twice the one before (1, 2, 4, ... threads), else a linear one; other
// values (SYNC_WAL, SKIP_WAL) as categories in the order they ran.
func (p *SuitePage) sweepCharts() []*LineChart {
	type key struct{ step, sweepKey string }
	var order []key
	groups := map[key][]SuiteRun{}
	for _, r := range p.Runs {
		if len(r.Sweep) == 0 {
			continue
		}
		// The last swept key varies fastest; chart against it.
		k := key{r.Step, r.Sweep[len(r.Sweep)-1].Key}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []*LineChart
	for _, k := range order {
		rs := groups[k]
		var values []string
		for _, r := range rs {
			if v := r.Sweep[len(r.Sweep)-1].Value; !contains(values, v) {
				values = append(values, v)
			}
		}
		axis := newSweepAxis(values)
		// Lines: database plus the other sweep values.
		var lines []string
		points := map[string][][3]float64{} // x, throughput, p99
		for _, r := range rs {
			x := axis.x[r.Sweep[len(r.Sweep)-1].Value]
			name := r.Database
			for _, o := range r.Sweep[:len(r.Sweep)-1] {
				name += " " + o.Key + "=" + o.Value
			}
			if _, ok := points[name]; !ok {
				lines = append(lines, name)
			}
			p99 := 0.0
			if s, ok := seriesStat(r.Run.B.Run.Summary.Series, r.Run.MainSeries()); ok {
				p99 = float64(s.P99Us)
			}
			points[name] = append(points[name], [3]float64{x, r.Run.B.Run.Summary.Throughput, p99})
		}
		id := strings.NewReplacer(" ", "-", ".", "-", "=", "-").Replace(k.step + "-" + k.sweepKey)
		tput := &LineChart{ID: "sweep-tput-" + id, Title: fmt.Sprintf("%s: throughput vs %s", k.step, k.sweepKey), XLabel: k.sweepKey, YLabel: "ops/s",
			Width: 590, Height: 320, XTicks: axis.ticks, LogX: axis.log, XTitle: axis.title}
		lat := &LineChart{ID: "sweep-p99-" + id, Title: fmt.Sprintf("%s: p99 latency vs %s", k.step, k.sweepKey), XLabel: k.sweepKey, YLabel: "p99",
			Width: 590, Height: 320, XTicks: axis.ticks, LogX: axis.log, XTitle: axis.title, YFormat: fmtMicros}
		for i, name := range lines {
			pts := points[name]
			sort.Slice(pts, func(a, b int) bool { return pts[a][0] < pts[b][0] })
			st := Series{Name: name, Color: color(i)}
			sl := Series{Name: name, Color: color(i)}
			for _, pt := range pts {
				st.X, st.Y = append(st.X, pt[0]), append(st.Y, pt[1])
				sl.X, sl.Y = append(sl.X, pt[0]), append(sl.Y, pt[2])
			}
			tput.Series = append(tput.Series, st)
			lat.Series = append(lat.Series, sl)
		}
		out = append(out, tput, lat)
	}
	return out
}

// sweepAxis places swept values on a chart's x axis.
type sweepAxis struct {
	x     map[string]float64
	ticks []Tick
	log   bool
	title func(float64) string
}

// newSweepAxis puts numbers at their value (on a log scale when every
// value is at least double the previous, as thread and size sweeps are),
// and anything else at its position; every tick is labelled with the
// value as swept.
func newSweepAxis(values []string) sweepAxis {
	a := sweepAxis{x: map[string]float64{}}
	nums := make([]float64, len(values))
	numeric := true
	for i, v := range values {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			numeric = false
			break
		}
		nums[i] = f
	}
	if !numeric {
		labels := map[float64]string{}
		for i, v := range values {
			a.x[v] = float64(i)
			labels[float64(i)] = v
			a.ticks = append(a.ticks, Tick{Value: float64(i), Label: v})
		}
		a.title = func(x float64) string { return labels[x] }
		return a
	}
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return nums[idx[i]] < nums[idx[j]] })
	a.log = len(idx) > 1 && nums[idx[0]] > 0
	// Ticks and point titles say each value as it was swept, as the
	// bundle's directory and the workbook's Sweep column do: a unit's
	// rounding (1048576 as "1.049M") names a value nobody swept.
	labels := map[float64]string{}
	for n, i := range idx {
		a.x[values[i]] = nums[i]
		if _, ok := labels[nums[i]]; !ok {
			labels[nums[i]] = values[i]
		}
		a.ticks = append(a.ticks, Tick{Value: nums[i], Label: values[i]})
		if n > 0 && nums[i] < 2*nums[idx[n-1]] {
			a.log = false
		}
	}
	a.title = func(x float64) string {
		if l, ok := labels[x]; ok {
			return l
		}
		return fmtNumber(x)
	}
	return a
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/redact"
	ycsbrun "github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/shellquote"
	"github.com/ycsbctl/ycsbctl/internal/version"
)

// Options tune a report.
type Options struct {
	// Now stamps the footer (tests fix it).
	Now time.Time
}

const reportBody = `
<header>
  <h1>{{.Title}} <span class="badge {{.BadgeClass}}">{{.Status}}</span></h1>
  <div class="sub">{{range .Facts}}<span>{{.}}</span>{{end}}</div>
</header>
<main>
<div class="cards">
{{range .Cards}}<div class="card"><div class="k">{{.K}}</div><div class="v">{{.V}}</div><div class="n">{{.N}}</div></div>
{{end}}</div>
{{if .Reasons}}<p class="muted">Status: {{range .Reasons}}{{.}}; {{end}}</p>{{end}}

<h2>Operations</h2>
<table>
<tr><th>Series</th><th>Count</th><th>Mean</th><th>Min</th><th>P50</th><th>P95</th><th>P99</th><th>P99.9</th><th>Max</th><th class="l">Return codes</th></tr>
{{range .Ops}}<tr{{if .Bad}} class="bad"{{end}}><td>{{.Name}}</td><td>{{.Count}}</td><td>{{.Mean}}</td><td>{{.Min}}</td><td>{{.P50}}</td><td>{{.P95}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Max}}</td><td class="l">{{.Returns}}</td></tr>
{{end}}</table>

<h2>Throughput over time</h2>
<div class="charts"><div class="chartbox">{{.Throughput}}</div></div>

<h2>Latency percentiles over time</h2>
<div class="charts">{{range .LatencyOverTime}}<div class="chartbox">{{.}}</div>{{end}}</div>

{{if .Went}}
<h2>Hosts: where the time went</h2>
<ul class="went">{{range .Went}}<li{{if .Warn}} class="warnline"{{end}}>{{.Text}}</li>{{end}}</ul>
{{if .HostRows}}<table class="hosts">
<tr><th class="l">Host</th><th>CPU busy</th><th>worst</th><th>iowait</th><th>Disk write</th><th>Disk util max</th><th>Network</th><th>DB CPU</th><th>DB RSS max</th><th>DB written</th><th>Load gen. CPU</th><th>its share</th></tr>
{{range .HostRows}}<tr{{if .Hot}} class="warn"{{end}}><td class="l">{{.Name}}</td><td>{{.Busy}}</td><td>{{.BusyMax}}</td><td>{{.IOWait}}</td><td>{{.DiskW}}</td><td>{{.DiskUtil}}</td><td>{{.Net}}</td><td>{{.DBCPU}}</td><td>{{.DBRSS}}</td><td>{{.DBWritten}}</td><td>{{.Client}}</td><td>{{.Share}}</td></tr>
{{end}}</table>{{end}}
<p class="muted">Each load generator sampled its host every second (ycsbctl.telemetry); the charts show each interval's means on the throughput chart's time axis. CPU is in percent of all the host's cores.{{if .RawFile}} Raw 1 s samples: {{.RawFile}}.{{end}}</p>
{{range .HostPanels}}<h3>{{.Name}}</h3>
{{range .Notes}}<p class="muted">{{.}}</p>{{end}}
<div class="charts hostpanel">{{range .Charts}}<div class="chartbox">{{.}}</div>{{end}}</div>
{{if .Internals}}<details><summary>Database internals{{if .Product}} ({{.Product}}){{end}}</summary><table>
{{range .Internals}}<tr><th class="l">{{.K}}</th><td class="l">{{.V}}</td></tr>
{{end}}</table></details>{{end}}
{{end}}{{end}}

<h2>Latency distribution</h2>
<p class="muted">Whole-run HDR percentile distribution per series, merged exactly from the interval histograms (merged.hlog). The x axis is logarithmic in 1/(1−percentile), as in HdrHistogram's plotter.</p>
<div class="charts">{{range .Distribution}}<div class="chartbox">{{.}}</div>{{end}}</div>
{{if .DistNote}}<p class="muted">{{.DistNote}}</p>{{end}}

<h2>Agents</h2>
<table>
<tr><th>Agent</th><th class="l">Host</th><th class="l">State</th><th>Threads</th><th>Operations</th><th>Ops/s</th><th>Share</th><th>CPU s</th><th>Clock offset</th><th>RTT</th><th>Start skew</th><th>Reconnects</th>{{range .AgentSeries}}<th>{{.}} p99</th>{{end}}</tr>
{{range .Agents}}<tr{{if .Bad}} class="bad"{{else if .Warn}} class="warn"{{end}}><td>{{.Name}}</td><td class="l">{{.Host}}</td><td class="l">{{.State}}</td><td>{{.Threads}}</td><td>{{.Ops}}</td><td>{{.Rate}}</td><td>{{.Share}}</td><td>{{.CPU}}</td><td>{{.Offset}}</td><td>{{.RTT}}</td><td>{{.Skew}}</td><td>{{.Reconnects}}</td>{{range .P99}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<div class="charts">{{range .AgentCharts}}<div class="chartbox">{{.}}</div>{{end}}</div>

<h2>Configuration and environment</h2>
<table>
{{range .Config}}<tr><th class="l">{{.K}}</th><td class="l wrap">{{.V}}</td></tr>
{{end}}</table>
<h3>Properties</h3>
<div class="props">{{range .Props}}<div><b>{{.K}}</b>={{.V}}</div>{{end}}</div>
{{if .Plan}}<details><summary>Plan (work split across agents)</summary><pre>{{.Plan}}</pre></details>{{end}}

<h2>YCSB summary</h2>
<pre>{{.Summary}}</pre>
</main>
`

var reportTmpl = template.Must(template.New("report").Parse(reportBody))

type kv struct{ K, V string }

type card struct{ K, V, N string }

type opRow struct {
	Name, Count, Mean, Min, P50, P95, P99, P999, Max, Returns string
	Bad                                                       bool
}

type agentRow struct {
	Name, Host, State, Threads, Ops, Rate, Share, CPU, Offset, RTT, Skew, Reconnects string
	P99                                                                              []string
	Bad, Warn                                                                        bool
}

type reportData struct {
	Title           string
	Status          string
	BadgeClass      string
	Facts           []string
	Reasons         []string
	Cards           []card
	Ops             []opRow
	Throughput      template.HTML
	LatencyOverTime []template.HTML
	Distribution    []template.HTML
	DistNote        string
	AgentSeries     []string
	Agents          []agentRow
	AgentCharts     []template.HTML
	Went            []wentLine
	HostRows        []hostRow
	HostPanels      []hostPanel
	RawFile         string
	Config          []kv
	Props           []kv
	Plan            string
	Summary         string
}

// WriteHTML writes the run's report as one self-contained HTML page.
func WriteHTML(w io.Writer, r *Run, opts Options) error {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	run := r.B.Run
	verdict, class := r.Verdict()
	d := reportData{Title: "ycsbctl " + run.Phase + " · " + run.DB, Status: verdict, BadgeClass: class, Reasons: run.StatusReasons, Summary: r.B.Summary}
	if sc := r.Scenario(); sc != "" {
		d.Title += " · " + sc
	}
	d.Facts = []string{"run " + run.RunID}
	if run.Label != "" {
		d.Facts = append(d.Facts, "label "+run.Label)
	}
	if !run.StartedAt.IsZero() {
		d.Facts = append(d.Facts, run.StartedAt.UTC().Format("2006-01-02 15:04:05 MST"))
	}
	mode := run.Mode
	switch mode {
	case "":
		mode = "distributed, " + plural.Count(len(run.Agents), "agent")
	case "distributed":
		mode += ", " + plural.Count(len(run.Agents), "agent")
	}
	d.Facts = append(d.Facts, mode, "ycsbctl "+run.Version)

	errs, all := r.Errors()
	d.Cards = []card{
		{"Throughput", fmtNumber(math.Round(run.Summary.Throughput)) + " ops/s", ciNote(r)},
		{"Operations", group(run.Summary.Operations), plural.Count(len(r.Intervals), "interval")},
		{"Run time", fmtSeconds(float64(run.Summary.RunTimeMs) / 1000), wallNote(run)},
		{"Errors", group(errs), pct(errs, all) + " of returns"},
	}
	if main := r.MainSeries(); main != "" {
		if s, ok := seriesStat(run.Summary.Series, main); ok {
			d.Cards = append(d.Cards, card{main + " p99", fmtMicros(float64(s.P99Us)), "p50 " + fmtMicros(float64(s.P50Us)) + " · max " + fmtMicros(float64(s.MaxUs))})
		}
	}

	for _, s := range r.Series() {
		row := opRow{Name: s.Series, Count: group(s.Count), Mean: fmtMicros(s.MeanUs), Min: fmtMicros(float64(s.MinUs)), P50: fmtMicros(float64(s.P50Us)),
			P95: fmtMicros(float64(s.P95Us)), P99: fmtMicros(float64(s.P99Us)), P999: fmtMicros(float64(s.P999Us)), Max: fmtMicros(float64(s.MaxUs))}
		if ps, ok := measurement.ParseSeries(s.Series); ok {
			row.Bad = ps.Failed()
			if !ps.Failed() && ps.Kind() == measurement.Service {
				row.Returns = returnsText(run.Summary.Returns[ps.Op().String()])
			}
		}
		d.Ops = append(d.Ops, row)
	}

	d.Throughput = template.HTML(throughputChart(r).SVG())
	for _, c := range latencyCharts(r) {
		d.LatencyOverTime = append(d.LatencyOverTime, template.HTML(c.SVG()))
	}
	dist, note := distributionCharts(r)
	d.DistNote = note
	for _, c := range dist {
		d.Distribution = append(d.Distribution, template.HTML(c.SVG()))
	}
	d.Went, d.HostRows = timeWent(r)
	if d.Went != nil {
		d.HostPanels = hostPanels(r)
		d.RawFile = run.Telemetry.RawFile
	}
	d.AgentSeries, d.Agents = agentRows(r)
	for _, c := range agentCharts(r) {
		d.AgentCharts = append(d.AgentCharts, template.HTML(c.SVG()))
	}
	d.Config = configRows(run)
	keys := make([]string, 0, len(run.Config.Properties))
	for k := range run.Config.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// Bundles are redacted when written; redacting again on display
	// covers bundles written by older builds with weaker rules.
	for _, k := range keys {
		d.Props = append(d.Props, kv{k, redact.Value(k, run.Config.Properties[k])})
	}
	if run.Plan != nil {
		if b, err := json.MarshalIndent(run.Plan, "", "  "); err == nil && string(b) != "null" {
			d.Plan = string(b)
		}
	}
	var body bytes.Buffer
	if err := reportTmpl.Execute(&body, d); err != nil {
		return err
	}
	return writePage(w, pageData{Title: d.Title + " — " + run.RunID, Version: version.Version, Generated: opts.Now.UTC().Format("2006-01-02 15:04 MST"), Body: template.HTML(body.String())})
}

func ciNote(r *Run) string {
	s := r.Throughput
	if s.N < MinSamples {
		return fmt.Sprintf("%d steady intervals (too few for a CI)", s.N)
	}
	return fmt.Sprintf("interval mean %s ± %s (95%% CI)", fmtNumber(math.Round(s.Mean)), fmtNumber(math.Round(s.CI95())))
}

func wallNote(run *bundle.Run) string {
	if run.StartedAt.IsZero() || run.EndedAt.IsZero() {
		return ""
	}
	return "wall " + fmtSeconds(run.EndedAt.Sub(run.StartedAt).Round(time.Second).Seconds())
}

func group(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func pct(n, of int64) string {
	if of == 0 {
		return "0%"
	}
	return trimFloat(roundSig(100*float64(n)/float64(of), 3)) + "%"
}

func returnsText(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+" "+group(m[k]))
	}
	return strings.Join(parts, ", ")
}

func throughputChart(r *Run) *LineChart {
	c := &LineChart{ID: "throughput", Title: "Throughput (ops/s per interval)", XLabel: "elapsed", YLabel: "ops/s", Width: 1200, Height: 320, XFormat: fmtSeconds}
	total := Series{Name: "total"}
	perAgent := map[int]*Series{}
	for _, iv := range r.rateIntervals() {
		x := r.elapsed(iv)
		total.X = append(total.X, x)
		total.Y = append(total.Y, iv.OpsPerSec)
		for _, a := range iv.Agents {
			s := perAgent[a.Index]
			if s == nil {
				s = &Series{Name: fmt.Sprintf("agent %d", a.Index), Dash: true}
				perAgent[a.Index] = s
			}
			s.X = append(s.X, x)
			s.Y = append(s.Y, a.OpsPerSec)
		}
	}
	c.Series = append(c.Series, total)
	if len(perAgent) > 1 {
		idx := make([]int, 0, len(perAgent))
		for i := range perAgent {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			c.Series = append(c.Series, *perAgent[i])
		}
	}
	return c
}

// latencyCharts draws, per charted series, p50/p95/p99/p99.9 of each
// interval. A log scale is used when the tail is far above the median,
// which is the common case.
func latencyCharts(r *Run) []*LineChart {
	var out []*LineChart
	for _, s := range r.Series() {
		if !charted(s.Series) {
			continue
		}
		lines := []Series{{Name: "p50"}, {Name: "p95"}, {Name: "p99"}, {Name: "p99.9"}, {Name: "max", Dash: true, Color: "#999999"}}
		lo, hi := math.Inf(1), 0.0
		for _, iv := range r.Intervals {
			st, ok := seriesStat(iv.Series, s.Series)
			if !ok || st.Count == 0 {
				continue
			}
			x := r.elapsed(iv)
			for i, v := range []int64{st.P50Us, st.P95Us, st.P99Us, st.P999Us, st.MaxUs} {
				lines[i].X = append(lines[i].X, x)
				lines[i].Y = append(lines[i].Y, float64(v))
				if v > 0 {
					lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
				}
			}
		}
		out = append(out, &LineChart{ID: "latency-" + s.Series, Title: s.Series + " latency per interval", XLabel: "elapsed", YLabel: "latency",
			Width: 590, Height: 300, Series: lines, LogY: hi > 20*lo, XFormat: fmtSeconds, YFormat: fmtMicros})
	}
	return out
}

// percentileTicks are the HdrHistogram plotter's x positions:
// 1/(1−p) for p = 0, 90, 99, 99.9 % ...
func percentileTicks(maxX float64) []Tick {
	ticks := []Tick{{1, "0%"}, {10, "90%"}}
	labels := []string{"99%", "99.9%", "99.99%", "99.999%", "99.9999%", "99.99999%"}
	x := 100.0
	for _, l := range labels {
		ticks = append(ticks, Tick{x, l})
		if x >= maxX {
			break
		}
		x *= 10
	}
	return ticks
}

// distributionCharts plots each series' whole-run percentile spectrum
// from merged.hlog: service series on one chart, intended ones (when
// recorded) on another, failures dashed.
func distributionCharts(r *Run) ([]*LineChart, string) {
	hs, err := r.B.Histograms()
	if err != nil {
		return nil, "No merged.hlog in this bundle: " + err.Error()
	}
	var service, intended []Series
	maxX := 10.0
	names := make([]measurement.Series, 0, len(hs.All))
	for s := range hs.All {
		names = append(names, s)
	}
	sort.Slice(names, func(i, j int) bool { return seriesRank(names[i].Name()) < seriesRank(names[j].Name()) })
	for i, s := range names {
		if s.Op() == measurement.Cleanup {
			continue
		}
		sr := percentileSeries(s.Name(), hs.All[s])
		sr.Color = color(int(s.Op()))
		sr.Dash = s.Failed()
		_ = i
		for _, x := range sr.X {
			maxX = math.Max(maxX, x)
		}
		if s.Kind() == measurement.Intended {
			intended = append(intended, sr)
		} else {
			service = append(service, sr)
		}
	}
	ticks := percentileTicks(maxX)
	pf := func(x float64) string { return trimFloat(roundSig(100*(1-1/x), 6)) + "%" }
	mk := func(id, title string, ss []Series) *LineChart {
		lo, hi := math.Inf(1), 0.0
		for _, s := range ss {
			for _, y := range s.Y {
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
		}
		return &LineChart{ID: id, Title: title, XLabel: "percentile", YLabel: "latency", Width: 1200, Height: 380, Series: ss,
			LogX: true, LogY: hi > 50*lo, XTicks: ticks, YFormat: fmtMicros, XTitle: pf}
	}
	var out []*LineChart
	if len(service) > 0 {
		out = append(out, mk("distribution", "Latency by percentile (service time)", service))
	}
	if len(intended) > 0 {
		out = append(out, mk("distribution-intended", "Latency by percentile (from intended start)", intended))
	}
	if len(out) == 0 {
		return nil, "merged.hlog holds no latency series."
	}
	return out, ""
}

// percentileSeries samples a histogram's percentile spectrum the way
// HdrHistogram's percentile output does (5 ticks per half distance),
// dropping the 100th percentile, which sits at infinity on this axis.
func percentileSeries(name string, h *hdrhistogram.Histogram) Series {
	s := Series{Name: name}
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		if b.Quantile >= 100 {
			continue
		}
		x := 1 / (1 - b.Quantile/100)
		if n := len(s.X); n > 0 && x <= s.X[n-1] {
			continue
		}
		s.X = append(s.X, x)
		s.Y = append(s.Y, float64(b.ValueAt)/1000)
	}
	return s
}

func agentRows(r *Run) ([]string, []agentRow) {
	run := r.B.Run
	var series []string
	for _, s := range r.Series() {
		if ps, ok := measurement.ParseSeries(s.Series); ok && !ps.Failed() && ps.Kind() == measurement.Service && ps.Op() != measurement.Cleanup {
			series = append(series, s.Series)
		}
	}
	var totalOps int64
	for _, a := range run.Agents {
		totalOps += a.Operations
	}
	var rows []agentRow
	for _, a := range run.Agents {
		row := agentRow{Name: agentName(a), Host: a.Hostname, State: string(a.State), Threads: fmt.Sprint(a.Threads), Ops: group(a.Operations),
			CPU: trimFloat(roundSig(a.CPUSeconds, 3)), Offset: fmtNs(a.ClockOffsetNs), RTT: fmtNs(a.RTTNs), Skew: "-", Reconnects: fmt.Sprint(a.Reconnects)}
		if a.StartSkewNs != nil {
			row.Skew = fmtNs(*a.StartSkewNs)
		}
		if a.Final != nil && a.Final.RunTimeMs > 0 {
			row.Rate = fmtNumber(math.Round(float64(a.Final.Operations) / (a.Final.RunTimeMs / 1000)))
		}
		if totalOps > 0 {
			row.Share = pct(a.Operations, totalOps)
		}
		for _, s := range series {
			if st, ok := seriesStat(a.Summary, s); ok {
				row.P99 = append(row.P99, fmtMicros(float64(st.P99Us)))
			} else {
				row.P99 = append(row.P99, "-")
			}
		}
		// An unknown state (a rebuilt bundle) says what is not known,
		// not that the agent did wrong.
		row.Bad = a.State == ycsbrun.AgentLost || a.State == ycsbrun.AgentFailed || (a.Error != "" && a.State != ycsbrun.AgentUnknown)
		// An agent a fifth below its equal share was a straggler.
		row.Warn = len(run.Agents) > 1 && totalOps > 0 && float64(a.Operations) < 0.8*float64(totalOps)/float64(len(run.Agents))
		rows = append(rows, row)
	}
	return series, rows
}

func fmtNs(ns int64) string {
	if ns == 0 {
		return "0"
	}
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return sign + fmtMicros(float64(ns)/1000)
}

// agentCharts compares agents: throughput and p99 of each main series.
func agentCharts(r *Run) []*BarChart {
	run := r.B.Run
	if len(run.Agents) < 2 {
		return nil
	}
	var groups []string
	tput := Bar{Name: "ops/s"}
	for _, a := range run.Agents {
		groups = append(groups, fmt.Sprintf("agent %d", a.Index))
		v := 0.0
		if a.Final != nil && a.Final.RunTimeMs > 0 {
			v = float64(a.Final.Operations) / (a.Final.RunTimeMs / 1000)
		}
		tput.Values = append(tput.Values, v)
	}
	out := []*BarChart{{ID: "agents-throughput", Title: "Throughput per agent", YLabel: "ops/s", Width: 590, Height: 300, Groups: groups, Bars: []Bar{tput}}}
	series, _ := agentRows(r)
	lat := &BarChart{ID: "agents-p99", Title: "p99 latency per agent", YLabel: "latency", Width: 590, Height: 300, Groups: groups, YFormat: fmtMicros}
	for i, s := range series {
		b := Bar{Name: s, Color: color(i)}
		for _, a := range run.Agents {
			st, _ := seriesStat(a.Summary, s)
			b.Values = append(b.Values, float64(st.P99Us))
		}
		lat.Bars = append(lat.Bars, b)
	}
	return append(out, lat)
}

func configRows(run *bundle.Run) []kv {
	rows := []kv{{"Run id", run.RunID}, {"Database", run.DB}, {"Phase", run.Phase}}
	if run.Label != "" {
		rows = append(rows, kv{"Label", run.Label})
	}
	rows = append(rows, kv{"Status", strings.TrimSpace(string(run.Status) + " " + strings.Join(run.StatusReasons, "; "))},
		kv{"Exit", fmt.Sprintf("%d (%s)", run.ExitCode, run.ExitReason)})
	if run.Error != "" {
		rows = append(rows, kv{"Error", redact.Text(run.Error)})
	}
	if !run.StartedAt.IsZero() {
		rows = append(rows, kv{"Started", run.StartedAt.UTC().Format(time.RFC3339)}, kv{"Ended", run.EndedAt.UTC().Format(time.RFC3339)})
	}
	rows = append(rows, kv{"Interval", time.Duration(run.Config.IntervalNs).String()})
	if len(run.Config.CommandLine) > 0 {
		cl := redact.Args(run.Config.CommandLine)
		if cl[0] != "ycsbctl" {
			// Bundles record the program name; older ones did not.
			cl = append([]string{"ycsbctl"}, cl...)
		}
		rows = append(rows, kv{"Command line", shellquote.Join(cl)})
	}
	if len(run.Config.Agents) > 0 {
		rows = append(rows, kv{"Agents", strings.Join(run.Config.Agents, ", ")})
	}
	if run.Config.OnAgentLoss != "" {
		rows = append(rows, kv{"On agent loss", run.Config.OnAgentLoss})
	}
	if run.Mode != "single-host" {
		rows = append(rows, kv{"TLS / token", fmt.Sprintf("%v / %v", run.Config.TLS, run.Config.Token)},
			kv{"Max clock offset", time.Duration(run.Config.MaxClockOffsetNs).String()},
			kv{"Coordinator merge CPU", fmt.Sprintf("%.3f s (%d late records)", run.MergeSeconds, run.LateRecords)})
	}
	rows = append(rows, kv{"ycsbctl version", fmt.Sprintf("%s (protocol %d)", run.Version, run.Protocol)})
	if e := run.Environment; e != nil {
		rows = append(rows, kv{"Host", e.Hostname}, kv{"Platform", fmt.Sprintf("%s/%s, %d CPUs, %s", e.OS, e.Arch, e.CPUs, e.GoVersion)})
	}
	for _, a := range run.Agents {
		if a.Version != "" && a.Address != "local" {
			rows = append(rows, kv{"Agent " + fmt.Sprint(a.Index), fmt.Sprintf("%s on %s, ycsbctl %s", a.Address, a.Hostname, a.Version)})
		}
	}
	for _, d := range run.AgentPropertyDifferences {
		rows = append(rows, kv{"Differs between agents", d.Text()})
	}
	return rows
}

package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/shellquote"
	"github.com/ycsbctl/ycsbctl/internal/version"
)

// A capacity bundle's report: the answer, the latency-throughput curve of
// every operation (achieved throughput against intended and service-time
// percentiles, the objectives' bounds and the capacity marked) and the
// probes' table, each probe linked to its own bundle.

const capacityBody = `
<header>
  <h1>{{.Title}} <span class="badge {{.BadgeClass}}">{{.Status}}</span></h1>
  <div class="sub">{{range .Facts}}<span>{{.}}</span>{{end}}</div>
</header>
<main>
<div class="cards">
{{range .Cards}}<div class="card"><div class="k">{{.K}}</div><div class="v">{{.V}}</div><div class="n">{{.N}}</div></div>
{{end}}</div>
<p>{{.Answer}}</p>
{{range .Notes}}<p class="muted">{{.}}</p>
{{end}}
<h2>Latency against throughput</h2>
<p class="muted">One point per probe at the throughput it achieved: intended-time percentiles (solid, from each operation's scheduled start: coordinated omission corrected) and service-time percentiles (dashed). The objectives' bounds are drawn across, the capacity found is marked.</p>
<div class="charts">{{range .Curves}}<div class="chartbox">{{.}}</div>{{end}}</div>
<div class="charts"><div class="chartbox">{{.Achieved}}</div></div>

<h2>Probes</h2>
<table>
<tr><th>Probe</th><th>Target</th><th>Achieved</th>{{range .Objectives}}<th>{{.}}</th>{{end}}<th>Errors</th><th class="l">Steady</th><th class="l">Verdict</th><th class="l">Why</th><th class="l">Bundle</th></tr>
{{range .Probes}}<tr{{if .Bad}} class="bad"{{end}}><td>{{.N}}</td><td>{{.Target}}</td><td>{{.Achieved}}</td>{{range .Values}}<td>{{.}}</td>{{end}}<td>{{.Errors}}</td><td class="l">{{.Steady}}</td><td class="l">{{.Verdict}}</td><td class="l why">{{.Why}}</td><td class="l">{{if .Bundle}}<a href="{{.Bundle}}/">{{.Bundle}}</a>{{end}}</td></tr>
{{end}}</table>

<h2>Search</h2>
<table>
{{range .Config}}<tr><th class="l">{{.K}}</th><td class="l wrap">{{.V}}</td></tr>
{{end}}</table>
</main>
`

var capacityTmpl = template.Must(template.New("capacity").Parse(capacityBody))

type capacityProbeRow struct {
	N, Target, Achieved, Errors, Steady, Verdict, Why, Bundle string
	Values                                                    []string
	Bad                                                       bool
}

type capacityData struct {
	Title, Status, BadgeClass, Answer string
	Facts, Notes, Objectives          []string
	Cards                             []card
	Curves                            []template.HTML
	Achieved                          template.HTML
	Probes                            []capacityProbeRow
	Config                            []kv
}

// WriteCapacityHTML writes a capacity bundle's report as one
// self-contained page.
func WriteCapacityHTML(w io.Writer, rec *capacity.Record, opts Options) error {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	d := capacityData{Title: "ycsbctl capacity · " + rec.DB, Status: string(rec.Status), Answer: rec.AnswerText()}
	if rec.Workload != "" {
		d.Title += " · " + rec.Workload
	}
	switch rec.Status {
	case capacity.StatusComplete:
		d.BadgeClass = "complete"
	case capacity.StatusAborted:
		d.BadgeClass = "aborted"
		d.Notes = append(d.Notes, "The search's process ended without finishing it (killed or crashed): its exit code is unknown. The probes below are those it had judged.")
	case capacity.StatusRunning:
		d.BadgeClass = "partial"
		d.Notes = append(d.Notes, "The search had not ended when this record was last written: its process ended during a probe (killed?). The probes below are those it had judged.")
	default:
		d.BadgeClass = "aborted"
	}
	if rec.Error != "" {
		d.Notes = append(d.Notes, "Ended by: "+rec.Error)
	}
	if rec.Label != "" {
		d.Facts = append(d.Facts, "label "+rec.Label)
	}
	if !rec.StartedAt.IsZero() {
		d.Facts = append(d.Facts, rec.StartedAt.UTC().Format("2006-01-02 15:04:05 MST"))
	}
	mode := rec.Mode
	if len(rec.Agents) > 1 || mode == "distributed" {
		mode += ", " + plural.Count(len(rec.Agents), "agent")
	}
	d.Facts = append(d.Facts, mode, plural.Count(rec.Threads, "thread")+" per load generator", "ycsbctl "+rec.Version)

	a := rec.Answer
	capCard := card{"Capacity", "none", string(a.Ended)}
	if a.Found {
		capCard = card{"Capacity", fmtNumber(math.Round(a.Capacity)) + " ops/s", "achieved " + fmtNumber(math.Round(a.Achieved)) + " ops/s at probe " + strconv.Itoa(a.Probe)}
	}
	d.Cards = append(d.Cards, capCard)
	if at := rec.AtCapacity(); at != nil {
		for _, o := range rec.Settings.Objectives {
			if v, ok := at.Value(o); ok {
				d.Cards = append(d.Cards, card{o.Op.String() + " " + o.Key() + " at capacity", fmtMicros(v), "objective " + o.Bound.String()})
			}
		}
	}
	d.Cards = append(d.Cards, card{"Probes", strconv.Itoa(len(rec.Probes)), "budget " + strconv.Itoa(rec.Settings.MaxProbes)})

	for _, c := range CapacityCurves(rec, "curve") {
		d.Curves = append(d.Curves, template.HTML(c.SVG()))
	}
	d.Achieved = template.HTML(achievedChart(rec).SVG())
	for _, o := range rec.Settings.Objectives {
		d.Objectives = append(d.Objectives, o.Op.String()+" "+o.Key())
	}
	for _, p := range rec.Probes {
		row := capacityProbeRow{N: strconv.Itoa(p.N), Target: fmtNumber(p.Target), Achieved: fmtNumber(math.Round(p.Achieved)),
			Errors: capacity.FormatShare(p.ErrorRate()), Steady: "yes", Verdict: string(p.Verdict), Bundle: p.Bundle, Bad: p.Verdict != capacity.Pass}
		if p.Repeat {
			row.N += " (repeat)"
		}
		why := p.Reasons
		if !p.Steady {
			row.Steady = "no"
			why = append(why[:len(why):len(why)], "not steady: "+p.Unsteady)
		}
		row.Why = strings.Join(why, "; ")
		for _, o := range rec.Settings.Objectives {
			if v, ok := p.Value(o); ok {
				row.Values = append(row.Values, fmtMicros(v))
			} else {
				row.Values = append(row.Values, "—")
			}
		}
		d.Probes = append(d.Probes, row)
	}
	s := rec.Settings
	d.Config = []kv{
		{"Objectives", rec.Objectives()},
		{"Max error rate", capacity.FormatShare(s.MaxErrorRate)},
		{"Precision", capacity.FormatShare(s.Precision)},
		{"Targets", fmt.Sprintf("from %s ops/s (doubled while probes pass, halved while none has), at most %s", capacity.FormatRate(s.Start), capacity.FormatRate(s.Max))},
		{"Probes", fmt.Sprintf("at most %d, each %s measured after a %s warm-up, %s intervals", s.MaxProbes, fmtSeconds(rec.ProbeSeconds), fmtSeconds(rec.WarmupSeconds), fmtSeconds(rec.IntervalSeconds))},
		{"Load generators", strings.Join(rec.Agents, ", ")},
		{"Command line", shellquote.Join(rec.CommandLine)},
		{"Ended", string(a.Ended)},
	}
	var body bytes.Buffer
	if err := capacityTmpl.Execute(&body, d); err != nil {
		return err
	}
	return writePage(w, pageData{Title: d.Title, Version: version.Version, Generated: opts.Now.UTC().Format("2006-01-02 15:04 MST"), Body: template.HTML(body.String())})
}

// curvePercentiles are the curve's lines, each in its own colour, solid
// for intended and dashed for service time.
var curvePercentiles = []float64{50, 95, 99}

// judged returns the probes that ran to their end with every agent, by
// target: the points of a curve, drawn at the throughput each achieved,
// so that past the capacity the curve turns back as the YCSB paper's do.
// A partial probe measured the survivors' share, no point of the
// database's curve.
func judged(rec *capacity.Record) []capacity.Probe {
	var ps []capacity.Probe
	for _, p := range rec.Probes {
		if p.Verdict != capacity.Stopped && p.Verdict != capacity.Partial && p.Operations > 0 {
			ps = append(ps, p)
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Target < ps[j].Target })
	return ps
}

// CapacityCurves draws one latency-throughput chart per operation of a
// capacity record: p50, p95 and p99, intended and service time, against
// the achieved throughput of each probe, with every objective on the
// operation drawn across and the capacity marked.
func CapacityCurves(rec *capacity.Record, idPrefix string) []*LineChart {
	ps := judged(rec)
	var ops []string
	for _, p := range ps {
		for _, l := range p.Latency {
			if !contains(ops, l.Op) {
				ops = append(ops, l.Op)
			}
		}
	}
	var out []*LineChart
	for _, op := range ops {
		c := &LineChart{ID: idPrefix + "-" + op, Title: op + ": latency against throughput", XLabel: "achieved throughput (ops/s)", YLabel: "latency",
			Width: 1200, Height: 380, LogY: true, YFormat: fmtMicros}
		for i, pct := range curvePercentiles {
			key := capacity.PercentileKey(pct)
			in := Series{Name: key + " intended", Color: color(i)}
			sv := Series{Name: key + " service", Color: color(i), Dash: true}
			for _, p := range ps {
				l := p.Op(op)
				if l == nil {
					continue
				}
				if v, ok := l.Intended[key]; ok {
					in.X, in.Y = append(in.X, p.Achieved), append(in.Y, v)
				}
				if v, ok := l.Service[key]; ok {
					sv.X, sv.Y = append(sv.X, p.Achieved), append(sv.Y, v)
				}
			}
			c.Series = append(c.Series, in, sv)
		}
		for _, o := range rec.Settings.Objectives {
			if o.Op.String() == op {
				c.HLines = append(c.HLines, RefLine{Value: float64(o.Bound.Nanoseconds()) / 1e3, Label: o.String()})
			}
		}
		if rec.Answer.Found {
			c.VLines = append(c.VLines, RefLine{Value: rec.Answer.Achieved, Label: "capacity " + fmtNumber(math.Round(rec.Answer.Capacity)) + " ops/s", Color: "#2e7d32"})
		}
		out = append(out, c)
	}
	return out
}

// achievedChart shows each probe's achieved throughput against its
// target: on the diagonal while the database keeps the pace, below it
// once saturated.
func achievedChart(rec *capacity.Record) *LineChart {
	ps := judged(rec)
	got := Series{Name: "achieved"}
	pace := Series{Name: "target", Dash: true, Color: "#999999"}
	for _, p := range ps {
		got.X, got.Y = append(got.X, p.Target), append(got.Y, p.Achieved)
		pace.X, pace.Y = append(pace.X, p.Target), append(pace.Y, p.Target)
	}
	c := &LineChart{ID: "achieved", Title: "Achieved throughput against target", XLabel: "target (ops/s)", YLabel: "ops/s", Width: 590, Height: 300,
		Series: []Series{got, pace}}
	if rec.Answer.Found {
		c.VLines = append(c.VLines, RefLine{Value: rec.Answer.Capacity, Label: "capacity", Color: "#2e7d32"})
	}
	return c
}

// WriteCapacityCSV writes one row per probe and operation: the probe's
// target, achieved throughput and verdict, and the operation's intended
// and service-time percentiles in microseconds.
func WriteCapacityCSV(w io.Writer, rec *capacity.Record) error {
	cw := csv.NewWriter(w)
	head := []string{"probe", "repeat", "target_ops_per_sec", "achieved_ops_per_sec", "verdict", "steady", "error_rate", "op", "count"}
	for _, kind := range []string{"intended", "service"} {
		for _, p := range capacity.CurvePercentiles {
			head = append(head, kind+"_"+capacity.PercentileKey(p)+"_us")
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range rec.Probes {
		for _, l := range p.Latency {
			row := []string{strconv.Itoa(p.N), strconv.FormatBool(p.Repeat), f(p.Target), f(math.Round(p.Achieved*1000) / 1000), string(p.Verdict),
				strconv.FormatBool(p.Steady), f(p.ErrorRate()), l.Op, strconv.FormatInt(l.Count, 10)}
			for _, m := range []map[string]float64{l.Intended, l.Service} {
				for _, pct := range capacity.CurvePercentiles {
					if v, ok := m[capacity.PercentileKey(pct)]; ok {
						row = append(row, f(v))
					} else {
						row = append(row, "")
					}
				}
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

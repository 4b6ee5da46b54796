// Package report turns run bundles into what people read: a single-file
// HTML report of one run, a comparison of several runs (table, HTML and a
// noise verdict per difference), and CSV exports of the interval time
// series.
package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	ycsbrun "github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// Run is a bundle prepared for reporting.
type Run struct {
	B *bundle.Bundle
	// Intervals in sequence order.
	Intervals []bundle.Interval
	// StartNs is the start of the first interval (the time axis' zero).
	StartNs int64
	// Samples are the per-interval throughputs used for noise estimates
	// (see usable).
	Samples []float64
	// Throughput summarises Samples.
	Throughput Sample
}

// Load reads a bundle directory.
func Load(dir string) (*Run, error) {
	b, err := bundle.Read(dir)
	if err != nil {
		return nil, err
	}
	return FromBundle(b), nil
}

// FromBundle prepares a bundle for reporting.
func FromBundle(b *bundle.Bundle) *Run {
	r := &Run{B: b, Intervals: append([]bundle.Interval(nil), b.Run.Intervals...)}
	sort.Slice(r.Intervals, func(i, j int) bool { return r.Intervals[i].Seq < r.Intervals[j].Seq })
	if len(r.Intervals) > 0 {
		r.StartNs = r.Intervals[0].StartUnixNs
	}
	for _, iv := range r.usable() {
		r.Samples = append(r.Samples, iv.OpsPerSec)
	}
	r.Throughput = Summarize(r.Samples)
	if r.Throughput.N == 0 {
		// Too short to have a steady interval: show the run's overall
		// figure, with no noise estimate (N stays 0, so "?").
		r.Throughput.Mean = b.Run.Summary.Throughput
	}
	return r
}

// usable returns the intervals that sample steady-state throughput: the
// last interval is dropped when it is cut short (the run ended inside it,
// so it holds the drain of operations in flight), and with five or more
// intervals the first is dropped too (connection set-up, cold caches).
func (r *Run) usable() []bundle.Interval {
	ivs := r.Intervals
	if len(ivs) == 0 {
		return nil
	}
	nominal := time.Duration(r.B.Run.Config.IntervalNs)
	if nominal <= 0 && len(ivs) > 1 {
		nominal = time.Duration(ivs[0].EndUnixNs - ivs[0].StartUnixNs)
	}
	last := ivs[len(ivs)-1]
	if nominal > 0 && time.Duration(last.EndUnixNs-last.StartUnixNs) < nominal*9/10 {
		ivs = ivs[:len(ivs)-1]
	}
	if len(ivs) >= 5 {
		ivs = ivs[1:]
	}
	return ivs
}

// Name is a short display name (label or directory name).
func (r *Run) Name() string { return r.B.Name() }

// DB is the database adapter.
func (r *Run) DB() string { return r.B.Run.DB }

// Scenario names the workload: the -P names when the command line was
// recorded, else the built-in workload whose every property the run has,
// else a description of the operation mix.
func (r *Run) Scenario() string {
	if w := r.B.Workload(); w != "" {
		return w
	}
	props := r.B.Run.Config.Properties
	if len(props) == 0 {
		return "unknown"
	}
	best, bestN := "", 0
	for _, w := range workloads.List() {
		p := properties.New()
		if err := p.Load(strings.NewReader(w.Text)); err != nil {
			continue
		}
		m := p.Map()
		match := true
		for k, v := range m {
			if k == "recordcount" || k == "operationcount" {
				continue // sized per run
			}
			if props[k] != v {
				match = false
				break
			}
		}
		if match && len(m) > bestN {
			best, bestN = w.Name, len(m)
		}
	}
	if best != "" {
		return best
	}
	var mix []string
	for _, op := range []string{"read", "update", "insert", "scan", "readmodifywrite", "delete"} {
		if v := props[op+"proportion"]; v != "" && v != "0" {
			mix = append(mix, op+"="+v)
		}
	}
	if len(mix) == 0 {
		return r.B.Run.Phase
	}
	return strings.Join(mix, ",")
}

// Elapsed returns interval end times in seconds from the run's start.
func (r *Run) elapsed(iv bundle.Interval) float64 {
	return float64(iv.EndUnixNs-r.StartNs) / 1e9
}

// Series lists the latency series the run recorded, in YCSB order, with
// its whole-run statistics.
func (r *Run) Series() []bundle.SeriesStats {
	out := append([]bundle.SeriesStats(nil), r.B.Run.Summary.Series...)
	sort.SliceStable(out, func(i, j int) bool { return seriesRank(out[i].Series) < seriesRank(out[j].Series) })
	return out
}

func seriesRank(name string) int {
	s, ok := measurement.ParseSeries(name)
	if !ok {
		return 1 << 20
	}
	// Service before intended, each op before its failures.
	return int(s.Kind())*1000 + int(s.Op())*measurement.NumSlots + s.Slot()
}

// charted reports whether a series gets charts: CLEANUP is one sample
// per thread at the very end and would only squash the axes.
func charted(name string) bool {
	s, ok := measurement.ParseSeries(name)
	return ok && s.Op() != measurement.Cleanup
}

// Errors counts non-OK returns in the final summary.
func (r *Run) Errors() (errs, all int64) {
	for _, m := range r.B.Run.Summary.Returns {
		for st, n := range m {
			all += n
			if st != "OK" && st != "BATCHED_OK" {
				errs += n
			}
		}
	}
	return errs, all
}

// MainSeries is the series compare uses for latency: the service time of
// the operation the workload's mix weights most (bundle.Run.MainSeries).
func (r *Run) MainSeries() string { return r.B.Run.MainSeries() }

// seriesStat finds a series in a list.
func seriesStat(list []bundle.SeriesStats, name string) (bundle.SeriesStats, bool) {
	for _, s := range list {
		if s.Series == name {
			return s, true
		}
	}
	return bundle.SeriesStats{}, false
}

// agentName is how an agent is shown.
func agentName(a bundle.Agent) string {
	name := a.Address
	if name == "" {
		name = fmt.Sprintf("agent-%d", a.Index)
	}
	return name
}

// rateIntervals returns the intervals to draw throughput from: a trailing
// sliver (the run's last few milliseconds, see run.IsSliver) is folded into
// the interval before it, exactly as the live view does, so that a chart
// does not end in a collapse (or spike) computed over a few operations.
func (r *Run) rateIntervals() []bundle.Interval {
	n := len(r.Intervals)
	if n < 2 {
		return r.Intervals
	}
	spans := make([]ycsbrun.Span, n)
	for i, iv := range r.Intervals {
		spans[i] = ycsbrun.Span{StartNs: iv.StartUnixNs, EndNs: iv.EndUnixNs, Ops: iv.Operations}
	}
	merged, ok := ycsbrun.MergeTrailingSliver(spans, time.Duration(r.B.Run.Config.IntervalNs))
	if !ok {
		return r.Intervals
	}
	out := append([]bundle.Interval(nil), r.Intervals[:n-1]...)
	last, sliver := &out[n-2], r.Intervals[n-1]
	last.EndUnixNs, last.Operations = merged[n-2].EndNs, merged[n-2].Ops
	last.OpsPerSec = merged[n-2].Rate()
	agents := append([]bundle.AgentSlice(nil), last.Agents...)
	for i := range agents {
		for _, s := range sliver.Agents {
			if s.Index == agents[i].Index {
				agents[i].Operations += s.Operations
			}
		}
		agents[i].OpsPerSec = ycsbrun.Span{StartNs: last.StartUnixNs, EndNs: last.EndUnixNs, Ops: agents[i].Operations}.Rate()
	}
	last.Agents = agents
	return out
}

// Verdict says how the run ended, for badges and tables: its status and,
// when the process exited non-zero, the exit code and its reason (a run
// whose errors exceeded ycsbctl.maxerrorrate is "complete" but exit 5).
// class is the badge's style: complete, partial or aborted (red for any
// non-zero exit but a graceful stop's, whose measurement is whole but
// short: amber, as partial).
func (r *Run) Verdict() (text, class string) {
	run := r.B.Run
	status := string(run.Status)
	if status == "" {
		status = string(ycsbrun.StatusComplete)
	}
	text, class = status, status
	if run.ExitCode != 0 {
		text = fmt.Sprintf("%s · exit %d (%s)", status, run.ExitCode, run.ExitReason)
		class = string(ycsbrun.StatusAborted)
	}
	if run.Status == ycsbrun.StatusStopped {
		class = string(ycsbrun.StatusPartial)
	}
	return text, class
}

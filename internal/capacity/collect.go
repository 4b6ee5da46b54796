package capacity

import (
	"sort"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// CurvePercentiles are the percentiles every probe records per operation,
// intended and service time: the curve's lines. The objectives'
// percentiles are added to them.
var CurvePercentiles = []float64{50, 95, 99, 99.9}

// Collector is a run sink that keeps what the search judges of a probe:
// every measured interval's throughput and objective values, and the
// percentiles of the whole probe. It is fed by the run's session, once
// per interval, on one goroutine; Measured may be called from another.
type Collector struct {
	objectives  []Objective
	percentiles []float64
	// probe is the probe's measured length: the window's longest.
	probe time.Duration

	mu     sync.Mutex
	points []Point
	total  *measurement.Interval
}

// NewCollector returns a collector for a search with these objectives
// and probes of this measured length (0: the run's own window).
func NewCollector(objs []Objective, probe time.Duration) *Collector {
	ps := append([]float64(nil), CurvePercentiles...)
	for _, o := range objs {
		found := false
		for _, p := range ps {
			found = found || p == o.Percentile
		}
		if !found {
			ps = append(ps, o.Percentile)
		}
	}
	sort.Float64s(ps)
	return &Collector{objectives: objs, percentiles: ps, probe: probe}
}

// OnInterval implements run.Sink. Warm-up intervals are not measured.
func (c *Collector) OnInterval(u *run.Update) {
	if u.Progress.Warmup || u.Interval == nil {
		return
	}
	iv := u.Interval
	p := Point{StartUnixNs: iv.StartNs, EndUnixNs: iv.EndNs, Operations: iv.Ops,
		OpsPerSec:  run.Span{StartNs: iv.StartNs, EndNs: iv.EndNs, Ops: iv.Ops}.Rate(),
		Objectives: make([]float64, len(c.objectives))}
	for k, o := range c.objectives {
		if h := iv.Hist[measurement.SeriesOf(o.Op, measurement.Intended, false)]; h != nil && h.TotalCount() > 0 {
			p.Objectives[k] = micros(h.ValueAtPercentile(o.Percentile))
		}
	}
	c.mu.Lock()
	c.points = append(c.points, p)
	if u.Cumulative != nil {
		c.total = u.Cumulative
	}
	c.mu.Unlock()
}

// Measured returns what the probe measured so far; whole says its run
// ran to its end (its window is then the probe's length).
func (c *Collector) Measured(target float64, whole bool) *Measured {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := &Measured{Target: target, Intervals: append([]Point(nil), c.points...)}
	t := c.total
	if t == nil {
		return m
	}
	m.Operations = t.Ops
	m.Failed, m.Calls = t.Failures()
	if span := c.window(t.EndNs-t.StartNs, whole); span > 0 {
		m.RunTimeMs = float64(span) / 1e6
		m.Achieved = float64(t.Ops) / (float64(span) / 1e9)
	}
	var calls int64
	var sum float64
	for op := measurement.Op(0); op < measurement.NumOps; op++ {
		if op == measurement.Cleanup {
			// Each worker's disconnect, not a call of the workload.
			continue
		}
		in := t.Hist[measurement.SeriesOf(op, measurement.Intended, false)]
		sv := t.Hist[measurement.SeriesOf(op, measurement.Service, false)]
		if count(in) == 0 && count(sv) == 0 {
			continue
		}
		m.Latency = append(m.Latency, OpLatency{Op: op.String(), Count: max(count(in), count(sv)),
			Intended: c.quantiles(in), Service: c.quantiles(sv)})
		if n := count(sv); n > 0 {
			calls += n
			sum += sv.Mean() * float64(n)
		}
	}
	if calls > 0 {
		m.ServiceMeanUs = sum / float64(calls) / 1e3
	}
	return m
}

// window is the probe's measured window, from its calls' span (the
// measured run, first call to last completion and the final cut). A
// probe that ran to its end offered the database its schedule over the
// whole probe: a slow target ends its calls early (16 threads at 0.008
// ops/s make one call, 0.1 ms long, which read as 7,323 ops/s), and
// however long the last calls and the final cut take after it (a loaded
// host woke the last cut of a 2 s probe at 375 ops/s 220 ms late, which
// read as 338 ops/s: saturated) is no time in which it was offered
// more. A probe cut short (stopped) measured its span.
func (c *Collector) window(span int64, whole bool) int64 {
	switch {
	case c.probe <= 0:
		return span
	case whole:
		return int64(c.probe)
	}
	return min(span, int64(c.probe))
}

func (c *Collector) quantiles(h *hdrhistogram.Histogram) map[string]float64 {
	if count(h) == 0 {
		return nil
	}
	vs := h.ValueAtPercentilesSlice(c.percentiles)
	out := make(map[string]float64, len(vs))
	for i, p := range c.percentiles {
		out[PercentileKey(p)] = micros(vs[i])
	}
	return out
}

func count(h *hdrhistogram.Histogram) int64 {
	if h == nil {
		return 0
	}
	return h.TotalCount()
}

func micros(ns int64) float64 { return float64(ns) / 1e3 }

// Package ycsbtext writes what a run measured in YCSB's formats: the status
// line printed every interval and the final exporters (text, JSON, JSON
// array), plus HdrHistogram interval logs in package hlog.
package ycsbtext

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// Summary is a finished run's measurements, ready for an exporter.
type Summary struct {
	RunTime     time.Duration
	Total       *measurement.Interval
	Percentiles []float64
	// Warmup counts operations run before measuring started.
	Warmup int64
	// Notes are extra [NOTE] lines (partial results, warm-up, ...).
	Notes []string
	// Timeseries, when set, switches per-op blocks to YCSB's timeseries
	// measurement type: the per-interval average latencies.
	Timeseries []*measurement.Interval
	// Granularity is timeseries.granularity: interval Seq k (from 1) is
	// the bucket at offset (k-1)*Granularity. YCSB's default 1 s when
	// zero.
	Granularity time.Duration
	// Verbose adds every recorded bucket (measurement.histogram.verbose).
	Verbose bool
	// Format is the measurement type (hdrhistogram when zero).
	Format Format
	// Process are lines about the benchmark process itself (YCSB's
	// JVM lines; ycsbctl.trackruntime), printed after OVERALL.
	Process []Line
}

// Line is one exporter line: [Metric], Measurement, Value.
type Line struct {
	Metric      string
	Measurement string
	Value       any // int64 or float64
}

// usToNs converts; YCSB prints integer microseconds.
func nsToUs(ns int64) int64 { return ns / 1000 }

// Ordinal renders a percentile as YCSB's exporter names it: integer
// percentiles get an English ordinal suffix (50th, 1st, 99th), fractional
// ones print as Java prints the double (99.9).
func Ordinal(p float64) string {
	if p == math.Trunc(p) {
		i := int64(p)
		suf := "th"
		switch {
		case i%100 >= 11 && i%100 <= 13:
		case i%10 == 1:
			suf = "st"
		case i%10 == 2:
			suf = "nd"
		case i%10 == 3:
			suf = "rd"
		}
		return strconv.FormatInt(i, 10) + suf
	}
	return JavaDouble(p)
}

// seriesOrder lists the series in the order the exporters print them:
// operations in YCSB's mix order, their failures, then intended ones.
func seriesOrder() []measurement.Series {
	var out []measurement.Series
	for _, kind := range []measurement.Kind{measurement.Service, measurement.Intended} {
		for op := measurement.Op(0); op < measurement.NumOps; op++ {
			out = append(out, measurement.SeriesOf(op, kind, false), measurement.SeriesOf(op, kind, true))
			for st := adapters.Status(0); st < adapters.NumStatuses; st++ {
				if !st.IsOK() {
					out = append(out, measurement.SeriesOfStatus(op, kind, st))
				}
			}
		}
	}
	return out
}

// Lines builds the exporter lines of a summary.
func Lines(s *Summary) []Line {
	var out []Line
	ms := s.RunTime.Milliseconds()
	out = append(out, Line{"OVERALL", "RunTime(ms)", ms})
	thr := 0.0
	if ms > 0 {
		thr = float64(s.Total.Ops) * 1000 / float64(ms)
	} else if s.Total.Ops > 0 {
		thr = math.Inf(1)
	}
	out = append(out, Line{"OVERALL", "Throughput(ops/sec)", thr})
	out = append(out, s.Process...)
	if s.Warmup > 0 {
		out = append(out, Line{"WARMUP", "Operations(not measured)", s.Warmup})
	}
	for _, sr := range seriesOrder() {
		h := s.Total.Hist[sr]
		op := sr.Op()
		// Return codes belong to the plain (service, success) block.
		hasReturns := sr.Kind() == measurement.Service && !sr.Failed() && s.Total.ReturnTotal(op) > 0
		if (h == nil || h.TotalCount() == 0) && !hasReturns {
			continue
		}
		name := sr.Name()
		if h == nil {
			h = measurement.NewHistogram()
		}
		var returns []Line
		if hasReturns {
			for st := adapters.Status(0); st < adapters.NumStatuses; st++ {
				if n := s.Total.Returns[op][st]; n > 0 {
					returns = append(returns, Line{name, "Return=" + st.String(), n})
				}
			}
		}
		out = append(out, blockLines(name, sr, h, s, returns)...)
	}
	for _, n := range s.Notes {
		out = append(out, Line{"NOTE", n, int64(0)})
	}
	return out
}

func opLines(name string, h *hdrhistogram.Histogram, s *Summary) []Line {
	n := h.TotalCount()
	out := []Line{{name, "Operations", n}}
	if n == 0 {
		// An op with return codes but no successful call: YCSB's empty
		// HdrHistogram reports a mean of 0.0 and zero min, max and
		// percentiles.
		out = append(out,
			Line{name, "AverageLatency(us)", 0.0},
			Line{name, "MinLatency(us)", int64(0)},
			Line{name, "MaxLatency(us)", int64(0)})
		if s.Timeseries != nil {
			return out
		}
		for _, p := range s.Percentiles {
			out = append(out, Line{name, Ordinal(p) + "PercentileLatency(us)", int64(0)})
		}
		return out
	}
	var ps []float64
	if s.Timeseries == nil {
		ps = s.Percentiles
	}
	d := measurement.DigestOf(h, ps...)
	out = append(out,
		Line{name, "AverageLatency(us)", d.Mean / 1000},
		Line{name, "MinLatency(us)", nsToUs(d.Min)},
		Line{name, "MaxLatency(us)", nsToUs(d.Max)})
	for i, p := range ps {
		out = append(out, Line{name, Ordinal(p) + "PercentileLatency(us)", nsToUs(d.Values[i])})
	}
	return out
}

// verboseLines are YCSB's measurement.histogram.verbose lines: one
// "[OP], <µs value>, <count>" per recorded value, the count written as a
// double as YCSB's exporter does. Nanosecond buckets that print as the same
// microsecond value are added together so that every value appears once.
func verboseLines(name string, h *hdrhistogram.Histogram) []Line {
	var out []Line
	last := int64(-1)
	var count int64
	flush := func() {
		if count > 0 {
			out = append(out, Line{name, strconv.FormatInt(last, 10), float64(count)})
		}
	}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		us := nsToUs(b.To)
		if us != last {
			flush()
			last, count = us, 0
		}
		count += b.Count
	}
	flush()
	return out
}

// timeseriesLines are YCSB's timeseries lines: "[OP], <ms offset>, <avg us>"
// per interval. The offset is the bucket's, a multiple of the granularity
// as in YCSB, taken from the interval's number rather than its start
// time: a coordinator's merged interval starts when the earliest agent
// that delivered it started, and agents start a millisecond or so apart,
// so an interval only some agents delivered (a final sliver) would print
// at 2001 instead of 2000.
func timeseriesLines(name string, sr measurement.Series, s *Summary) []Line {
	g := s.Granularity
	if g <= 0 {
		g = time.Second
	}
	var out []Line
	for _, iv := range s.Timeseries {
		h := iv.Hist[sr]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		off := (iv.Seq - 1) * g.Milliseconds()
		out = append(out, Line{name, strconv.FormatInt(off, 10), measurement.DigestOf(h).Mean / 1000})
	}
	return out
}

// formatValue renders a value as YCSB's text exporter does.
func formatValue(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return JavaDouble(x)
	}
	return fmt.Sprint(v)
}

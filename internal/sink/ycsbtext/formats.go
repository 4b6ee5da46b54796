package ycsbtext

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// Kind is YCSB's measurementtype: which blocks the summary prints per
// measurement and what the status line shows.
type Kind uint8

// Measurement types, named as YCSB's measurementtype values.
const (
	KindHdr Kind = iota
	KindHistogram
	KindHdrHistogram
	KindHdrRaw
	KindRaw
	KindTimeseries
)

var kindNames = []string{"hdrhistogram", "histogram", "hdrhistogram+histogram", "hdrhistogram+raw", "raw", "timeseries"}

// KindNames lists the accepted measurementtype values.
func KindNames() []string { return append([]string(nil), kindNames...) }

// ParseKind maps a measurementtype value to its Kind.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return 0, false
}

func (k Kind) String() string { return kindNames[k] }

// HasHdr reports whether the type prints HdrHistogram blocks (and so
// writes hdrhistogram.fileoutput logs).
func (k Kind) HasHdr() bool { return k == KindHdr || k == KindHdrHistogram || k == KindHdrRaw }

// HasRaw reports whether the type keeps every sample.
func (k Kind) HasRaw() bool { return k == KindRaw || k == KindHdrRaw }

// RawPrefix is the prefix YCSB gives the raw measurement's names.
func (k Kind) RawPrefix() string {
	if k == KindHdrRaw {
		return "Raw"
	}
	return ""
}

// Format says how a summary and the status line present measurements.
// The zero Format is YCSB's default, hdrhistogram.
type Format struct {
	Kind Kind
	// Buckets is histogram.buckets (1 ms each; 1000 when zero).
	Buckets int
	// RawNoSummary is measurement.raw.no_summary.
	RawNoSummary bool
}

func (f Format) buckets() int {
	if f.Buckets <= 0 {
		return 1000
	}
	return f.Buckets
}

// blockLines returns one measurement's summary lines in the summary's
// format; returns are its Return=<STATUS> lines, which YCSB attaches to
// the first block of a combined type only.
func blockLines(name string, sr measurement.Series, h *hdrhistogram.Histogram, s *Summary, returns []Line) []Line {
	var out []Line
	hdr := func(n string) {
		out = append(out, opLines(n, h, s)...)
		out = append(out, retag(returns, n)...)
		if s.Timeseries != nil {
			out = append(out, timeseriesLines(n, sr, s)...)
		}
		if s.Verbose {
			out = append(out, verboseLines(n, h)...)
		}
	}
	switch s.Format.Kind {
	case KindHistogram:
		out = append(out, bucketLines(name, h, s.Format.buckets(), s.Verbose, returns)...)
	case KindRaw:
		out = append(out, rawLines(name, h, s.Format.RawNoSummary, returns)...)
	case KindHdrHistogram:
		hdr("Hdr" + name)
		out = append(out, bucketLines("Bucket"+name, h, s.Format.buckets(), s.Verbose, nil)...)
	case KindHdrRaw:
		hdr("Hdr" + name)
		out = append(out, rawLines("Raw"+name, h, s.Format.RawNoSummary, nil)...)
	default:
		hdr(name)
	}
	return out
}

func retag(lines []Line, name string) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		l.Metric = name
		out[i] = l
	}
	return out
}

// bucketLines are YCSB's histogram measurement (1 ms buckets), derived from
// the HdrHistogram of the series. Every value is placed by the highest
// value its HdrHistogram bucket stands for (what percentiles report), so a
// latency within 0.1% (HdrHistogram's 3 significant digits) below a
// millisecond boundary may count in the next bucket. The mean and variance
// use each HdrHistogram bucket's middle value in whole microseconds (YCSB
// records integer µs): each value is off by at most 1/2048 of itself
// (exact while buckets are narrower than a microsecond, below about 1 ms),
// so the mean is within 0.05% and E[x²] within 0.1% of the exact figures;
// the variance, their difference, carries that error of E[x²] in absolute
// terms.
func bucketLines(name string, h *hdrhistogram.Histogram, buckets int, verbose bool, returns []Line) []Line {
	n := int64(0)
	if h != nil {
		n = h.TotalCount()
	}
	counts := make([]int64, buckets)
	var overflow int64
	var sum, sumSq float64
	if n > 0 {
		for _, b := range h.Distribution() {
			if b.Count == 0 {
				continue
			}
			ms := b.To / 1_000_000
			if ms >= int64(buckets) {
				overflow += b.Count
			} else {
				counts[ms] += b.Count
			}
			mid := float64(usOfBar(b))
			sum += mid * float64(b.Count)
			sumSq += mid * mid * float64(b.Count)
		}
	}
	// An empty measurement prints what YCSB's does: 0/0 and the unset
	// minimum and maximum (-1).
	mean := sum / float64(n)
	variance := sumSq/float64(n) - mean*mean
	if n > 0 && variance < 0 {
		variance = 0
	}
	minUs, maxUs := int64(-1), int64(-1)
	if n > 0 {
		minUs, maxUs = nsToUs(h.Min()), nsToUs(h.Max())
	}
	out := []Line{
		{name, "Operations", n},
		{name, "AverageLatency(us)", mean},
		{name, "LatencyVariance(us)", variance},
		{name, "MinLatency(us)", minUs},
		{name, "MaxLatency(us)", maxUs},
	}
	var cum int64
	done95 := false
	for i := 0; i < buckets; i++ {
		cum += counts[i]
		frac := float64(cum) / float64(n)
		if !done95 && frac >= 0.95 {
			out = append(out, Line{name, "95thPercentileLatency(us)", int64(i) * 1000})
			done95 = true
		}
		if frac >= 0.99 {
			out = append(out, Line{name, "99thPercentileLatency(us)", int64(i) * 1000})
			break
		}
	}
	out = append(out, retag(returns, name)...)
	if verbose {
		for i := 0; i < buckets; i++ {
			out = append(out, Line{name, strconv.Itoa(i), counts[i]})
		}
		out = append(out, Line{name, ">" + strconv.Itoa(buckets), overflow})
	}
	return out
}

// rawPercentiles are the ranks YCSB's raw measurement reports, as the
// fraction of the sorted sample count whose element it prints.
var rawPercentiles = []struct {
	name string
	frac float64
}{{"p1", 0.01}, {"p5", 0.05}, {"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}, {"p99.9", 0.999}, {"p99.99", 0.9999}}

// rawLines are YCSB's raw measurement summary. YCSB sorts every sample
// and prints the element at index (int)(count × p); the same element is
// found in the HdrHistogram by its rank, so each figure is exact up to
// HdrHistogram's 3 significant digits (reported as the highest value of
// its bucket, as percentiles are).
func rawLines(name string, h *hdrhistogram.Histogram, noSummary bool, returns []Line) []Line {
	n := int64(0)
	if h != nil {
		n = h.TotalCount()
	}
	out := []Line{{name, "Total Operations", n}}
	if n > 0 && !noSummary {
		out = append(out,
			Line{name, "Below is a summary of latency in microseconds:", int64(-1)},
			Line{name, "Average", meanUs(h)},
			Line{name, "Min", nsToUs(h.Min())},
			Line{name, "Max", nsToUs(h.Max())})
		for _, p := range rawPercentiles {
			rank := int64(float64(n) * p.frac)
			out = append(out, Line{name, p.name, nsToUs(valueAtRank(h, rank))})
		}
	}
	return append(out, retag(returns, name)...)
}

// valueAtRank returns the value of the rank-th smallest recorded value
// (from 0), as the highest value of its bucket.
func valueAtRank(h *hdrhistogram.Histogram, rank int64) int64 {
	var cum int64
	last := int64(0)
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		cum += b.Count
		last = b.To
		if cum > rank {
			return min(b.To, h.Max())
		}
	}
	return last
}

// statusBlock is one measurement's part of the status line in the
// format's style.
func statusBlock(b *strings.Builder, name string, h *hdrhistogram.Histogram, f Format) {
	switch f.Kind {
	case KindHistogram:
		bucketStatus(b, name, h)
	case KindRaw:
		rawStatus(b, name, h)
	case KindHdrHistogram:
		hdrStatus(b, "Hdr"+name, h)
		b.WriteByte('\n')
		bucketStatus(b, "Bucket"+name, h)
	case KindHdrRaw:
		hdrStatus(b, "Hdr"+name, h)
		b.WriteByte('\n')
		rawStatus(b, "Raw"+name, h)
	default:
		hdrStatus(b, name, h)
	}
	b.WriteByte(' ')
}

func bucketStatus(b *strings.Builder, name string, h *hdrhistogram.Histogram) {
	b.WriteString("[")
	b.WriteString(name)
	b.WriteString(" AverageLatency(us)=")
	b.WriteString(decimalFormat2(meanUs(h)))
	b.WriteString("]")
}

func rawStatus(b *strings.Builder, name string, h *hdrhistogram.Histogram) {
	// Java's String.format("%.2f") rounds half up.
	avg := math.Floor(meanUs(h)*100+0.5) / 100
	fmt.Fprintf(b, "%s count: %d, average latency(us): %.2f", name, h.TotalCount(), avg)
}

// usOfBar is the whole-microsecond value standing for an HdrHistogram
// bucket: its middle, truncated as YCSB truncates nanoseconds.
func usOfBar(b hdrhistogram.Bar) int64 { return (b.From + b.To) / 2 / 1000 }

// meanUs is the mean in YCSB's terms: of whole microseconds.
func meanUs(h *hdrhistogram.Histogram) float64 {
	var n, sum int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		n += b.Count
		sum += usOfBar(b) * b.Count
	}
	return float64(sum) / float64(n)
}

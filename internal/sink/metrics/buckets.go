package metrics

import (
	"math"
	"sort"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
)

// Prometheus histograms are fed from the HDR histograms the engine already
// records rather than from a second Observe() on the hot path: every HDR
// bucket (0.1 % wide at 3 significant digits) is mapped once per interval
// to the classic and native bucket its midpoint falls into, and its count
// is added there. The error this adds is the HDR bucket width, far below
// the width of any Prometheus bucket, and the workers never touch
// Prometheus at all.

// ClassicBuckets are the upper bounds (seconds) of the classic buckets.
// histogram_quantile interpolates linearly inside the bucket holding the
// quantile, so its error is a fraction of that bucket's width: the old
// 1-2.5-5 ladder put a 2.72 ms p99 in (2.5 ms, 5 ms] and answered 4.15 ms.
// From 100 µs to 100 ms, where database latencies usually fall, the bounds
// follow the E12 series (12 per decade, neighbours at most 25 % apart), which
// keeps a p99 within a few percent of the exact HDR value (see
// TestClassicQuantileAccuracy); outside that range a coarse ladder suffices.
// That is 52 buckets per histogram: with a handful of operations, one or two
// kinds and outcomes, and ten agents, a few thousand series. The native
// histogram stays the exact view (one bucket per ~9 %, interpolated
// exponentially) and costs one series.
var ClassicBuckets = func() [numClassic]float64 {
	var b [numClassic]float64
	i := 0
	add := func(v float64) { b[i] = v; i++ }
	for _, v := range []float64{10e-6, 25e-6, 50e-6, 75e-6} {
		add(v)
	}
	// E12 mantissas; the bound is rounded to nanoseconds so that the
	// exposition shows 0.00012, not 0.00011999999999999999.
	e12 := []float64{1.0, 1.2, 1.5, 1.8, 2.2, 2.7, 3.3, 3.9, 4.7, 5.6, 6.8, 8.2}
	for _, decade := range []float64{1e-4, 1e-3, 1e-2} {
		for _, m := range e12 {
			add(math.Round(m*decade*1e9) / 1e9)
		}
	}
	for _, v := range []float64{0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 2.5, 5, 10, 30, 60} {
		add(v)
	}
	return b
}()

const numClassic = 52

// NativeSchema is the native histogram resolution: schema 3 has 8 buckets
// per power of two, each about 9 % wide, the resolution client_golang
// picks for its customary bucket factor 1.1. Latencies spanning 1 µs to
// 10 s populate at most ~190 buckets, within Prometheus' default limits.
const NativeSchema = 3

// Native bucket keys for values between 1 ns and 1 h at NativeSchema: the
// key of 1 ns is ceil(log2(1e-9)*8) = -239 and of 3600 s is 95. A dense
// array over that range is smaller than a map and already sorted.
const (
	nativeMinKey = -240
	nativeMaxKey = 96
	nativeLen    = nativeMaxKey - nativeMinKey + 1
)

// nativeBounds are the fractions (in [0.5, 1)) at which schema-3 buckets
// end within one power of two; see nativeKey.
var nativeBounds = func() []float64 {
	n := 1 << NativeSchema
	b := make([]float64, n)
	for i := range b {
		b[i] = math.Exp2(float64(i)/float64(n)) / 2
	}
	return b
}()

// nativeKey returns the index of the native bucket holding v > 0: bucket
// k covers (2^((k-1)/8), 2^(k/8)]. Using Frexp and a table instead of
// ceil(log2(v)*8) keeps exact powers of two on their boundary, as
// Prometheus' own client does.
func nativeKey(v float64) int {
	frac, exp := math.Frexp(v)
	return sort.SearchFloat64s(nativeBounds, frac) + (exp-1)*len(nativeBounds)
}

// classicIndex returns the index in ClassicBuckets of the first bound >= v,
// or len(ClassicBuckets) for the +Inf bucket.
func classicIndex(v float64) int {
	return sort.SearchFloat64s(ClassicBuckets[:], v)
}

// hdrLayout maps an HDR counts index to the values it holds, for one
// histogram geometry (HdrHistogram's bucket/sub-bucket layout).
type hdrLayout struct {
	unitMag    uint
	subHalfMag uint
	subHalf    int
}

func layoutOf(h *hdrhistogram.Histogram) hdrLayout {
	largestSingleUnit := 2 * math.Pow10(int(h.SignificantFigures()))
	subCountMag := int(math.Ceil(math.Log2(largestSingleUnit)))
	subHalfMag := max(subCountMag-1, 0)
	unitMag := max(int(math.Floor(math.Log2(float64(max(h.LowestTrackableValue(), 1))))), 0)
	return hdrLayout{unitMag: uint(unitMag), subHalfMag: uint(subHalfMag), subHalf: 1 << subHalfMag}
}

// span returns the lowest value of counts index idx and the number of
// values the bucket covers.
func (l hdrLayout) span(idx int) (lo, width int64) {
	bucket := idx>>l.subHalfMag - 1
	sub := idx&(l.subHalf-1) + l.subHalf
	if bucket < 0 {
		sub -= l.subHalf
		bucket = 0
	}
	shift := uint(bucket) + l.unitMag
	return int64(sub) << shift, int64(1) << shift
}

// accumulator is the cumulative Prometheus view of one latency series.
type accumulator struct {
	count   uint64
	sum     float64 // seconds
	classic [numClassic + 1]uint64
	native  [nativeLen]uint64
}

// addValue adds n observations of ns nanoseconds.
func (a *accumulator) addValue(ns int64, n uint64) {
	v := float64(ns) / 1e9
	a.count += n
	a.sum += v * float64(n)
	a.classic[classicIndex(v)] += n
	k := min(max(nativeKey(v), nativeMinKey), nativeMaxKey)
	a.native[k-nativeMinKey] += n
}

// addHDR adds every value of h (nanoseconds). It walks the dense counts
// once; the midpoint of each HDR bucket stands for its values, as
// HdrHistogram itself does for means. Which classic and native bucket an
// HDR bucket falls into is looked up in a table built once per geometry,
// so a busy interval costs array lookups, not logarithms.
func (a *accumulator) addHDR(h *hdrhistogram.Histogram) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	l := layoutOf(h)
	counts := h.Export().Counts
	t := tableFor(l, len(counts))
	seen, total := int64(0), h.TotalCount()
	for idx, c := range counts {
		if c <= 0 {
			continue
		}
		n := uint64(c)
		a.count += n
		a.sum += t.mid[idx] * float64(n)
		a.classic[t.classic[idx]] += n
		a.native[t.native[idx]] += n
		if seen += c; seen >= total {
			break
		}
	}
}

// bucketTable caches, per HDR counts index, the bucket midpoint in seconds
// and the classic and native (offset by nativeMinKey) bucket indexes.
type bucketTable struct {
	mid     []float64
	classic []uint8
	native  []uint16
}

var tables sync.Map // hdrLayout -> *bucketTable

func tableFor(l hdrLayout, n int) *bucketTable {
	if t, ok := tables.Load(l); ok && len(t.(*bucketTable).mid) >= n {
		return t.(*bucketTable)
	}
	t := &bucketTable{mid: make([]float64, n), classic: make([]uint8, n), native: make([]uint16, n)}
	for idx := range n {
		lo, w := l.span(idx)
		v := float64(lo+w/2) / 1e9
		t.mid[idx] = v
		t.classic[idx] = uint8(classicIndex(v))
		t.native[idx] = uint16(min(max(nativeKey(v), nativeMinKey), nativeMaxKey) - nativeMinKey)
	}
	tables.Store(l, t)
	return t
}

// write fills a dto histogram with both the classic buckets (cumulative,
// as the exposition wants them) and the native parts (spans and deltas).
func (a *accumulator) write(h *dto.Histogram) {
	count, sum := a.count, a.sum
	h.SampleCount = &count
	h.SampleSum = &sum
	var cum uint64
	h.Bucket = make([]*dto.Bucket, len(ClassicBuckets))
	for i, ub := range ClassicBuckets {
		cum += a.classic[i]
		h.Bucket[i] = &dto.Bucket{CumulativeCount: new(cum), UpperBound: new(ub)}
	}
	h.Schema = new(int32(NativeSchema))
	// Values are at least 1 ns, so nothing falls into the zero bucket;
	// the threshold is client_golang's default so that Prometheus sees
	// the same zero bucket from every ycsbctl process.
	h.ZeroThreshold = new(2.938735877055719e-39)
	h.ZeroCount = new(uint64(0))
	h.PositiveSpan, h.PositiveDelta = nativeSpans(a.native[:])
	if len(h.PositiveSpan) == 0 {
		// An empty native histogram needs one empty span, or readers take
		// it for a classic-only histogram.
		h.PositiveSpan = []*dto.BucketSpan{{Offset: new(int32(0)), Length: new(uint32(0))}}
	}
}

// nativeSpans encodes dense bucket counts as Prometheus' spans and deltas.
// Gaps of one or two empty buckets are written as zero deltas rather than
// a new span, which is shorter on the wire (client_golang does the same).
func nativeSpans(dense []uint64) ([]*dto.BucketSpan, []int64) {
	var spans []*dto.BucketSpan
	var deltas []int64
	var prevCount int64
	nextKey := 0 // key following the last written bucket
	started := false
	for i, c := range dense {
		if c == 0 {
			continue
		}
		key := i + nativeMinKey
		gap := key - nextKey
		switch {
		case !started:
			spans = append(spans, &dto.BucketSpan{Offset: new(int32(key)), Length: new(uint32(0))})
			started = true
		case gap > 2:
			spans = append(spans, &dto.BucketSpan{Offset: new(int32(gap)), Length: new(uint32(0))})
		default:
			for range gap {
				deltas = append(deltas, -prevCount)
				prevCount = 0
				*spans[len(spans)-1].Length++
			}
		}
		deltas = append(deltas, int64(c)-prevCount)
		prevCount = int64(c)
		*spans[len(spans)-1].Length++
		nextKey = key + 1
	}
	return spans, deltas
}

package measurement

import (
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// HdrHistogram's Max, Mean and Merge walk the histogram with an iterator
// that works out every bucket's value range, empty or not: about 40
// instructions for each of the ~10,000 buckets below a run's slowest call,
// per call. Reports, status lines and the per-interval merges of every
// worker's histograms made that a fixed cost of every run (a quarter of
// the instructions of a 20,000-operation run of the basic binding), so the
// functions here read a histogram's counts once instead, touching only the
// buckets that hold something. They give exactly what HdrHistogram's own
// methods give (digest_test.go compares them on random histograms).

// Digest is what reports show of a latency histogram.
type Digest struct {
	Count    int64
	Min, Max int64
	// Mean is HdrHistogram's: each bucket counted at its middle value, as
	// YCSB's HdrHistogram measurements report it.
	Mean float64
	// Values holds the value at each percentile asked for, in that order.
	Values []int64
}

// DigestOf reads count, min, max and mean of h in one pass over its
// non-empty buckets, and the value at each percentile (0-100) in one more
// (HdrHistogram's own block scan). An empty histogram digests to zeros.
func DigestOf(h *hdrhistogram.Histogram, percentiles ...float64) Digest {
	d := Digest{Values: make([]int64, len(percentiles))}
	if h == nil || h.TotalCount() == 0 {
		return d
	}
	d.Count = h.TotalCount()
	g := geometryOf(h)
	total := float64(d.Count)
	first := true
	eachBucket(h.Export().Counts, func(i int, c int64) {
		low, size := g.bucket(i)
		if first {
			d.Min, first = low, false
		}
		d.Max = low + size - 1
		// The same expression, in the same order, as HdrHistogram's Mean,
		// so that the float64 result is identical.
		d.Mean += float64(c) * float64(low+size>>1) / total
	})
	if len(percentiles) > 0 {
		copy(d.Values, h.ValueAtPercentilesSlice(percentiles))
	}
	return d
}

// Max returns h's largest recorded value as HdrHistogram's Max does (the
// highest value of the highest non-empty bucket; 0 when empty), by its
// block scan for the last recorded value rather than a walk of every bucket.
func Max(h *hdrhistogram.Histogram) int64 {
	if h == nil || h.TotalCount() == 0 {
		return 0
	}
	return h.ValueAtPercentile(100)
}

// Merge adds src's counts to dst, as dst.Merge(src) does (values outside
// dst's range are dropped, and their number returned), reading src's
// non-empty buckets only.
func Merge(dst, src *hdrhistogram.Histogram) (dropped int64) {
	if src == nil || src.TotalCount() == 0 {
		return 0
	}
	g := geometryOf(src)
	eachBucket(src.Export().Counts, func(i int, c int64) {
		low, _ := g.bucket(i)
		if dst.RecordValues(low, c) != nil {
			if dropped > math.MaxInt64-c {
				dropped = math.MaxInt64
			} else {
				dropped += c
			}
		}
	})
	return dropped
}

// eachBucket calls f for every non-zero count, in index order, skipping
// empty runs eight counts at a time.
func eachBucket(counts []int64, f func(i int, c int64)) {
	const block = 8
	i := 0
	for ; i+block <= len(counts); i += block {
		b := counts[i : i+block : i+block]
		if b[0]|b[1]|b[2]|b[3]|b[4]|b[5]|b[6]|b[7] == 0 {
			continue
		}
		for j, c := range b {
			if c > 0 {
				f(i+j, c)
			}
		}
	}
	for ; i < len(counts); i++ {
		if c := counts[i]; c > 0 {
			f(i, c)
		}
	}
}

// geometry is HdrHistogram's layout of a counts array: bucket 0 holds
// 2·half sub-buckets of width 2^unit, and each further bucket half of them,
// twice as wide as the one before.
type geometry struct {
	unit     uint // log2 of the lowest discernible value
	halfMag  uint // log2 of half the sub-buckets per bucket
	halfMask int  // half - 1
}

// geometryOf derives h's layout from its lowest discernible value and
// significant digits, as HdrHistogram does: single-unit resolution up to
// 2·10^digits, in a power-of-two number of sub-buckets.
func geometryOf(h *hdrhistogram.Histogram) geometry {
	largest := 2 * math.Pow10(int(h.SignificantFigures()))
	mag := int(math.Ceil(math.Log2(largest)))
	mag = max(mag, 1) - 1
	unit := int(math.Floor(math.Log2(float64(max(h.LowestTrackableValue(), 1)))))
	return geometry{unit: uint(max(unit, 0)), halfMag: uint(mag), halfMask: 1<<mag - 1}
}

// bucket returns the lowest value and the width of the bucket at counts
// index i.
func (g geometry) bucket(i int) (low, size int64) {
	b := (i >> g.halfMag) - 1
	sub := (i & g.halfMask) + g.halfMask + 1
	if b < 0 {
		sub -= g.halfMask + 1
		b = 0
	}
	shift := uint(b) + g.unit
	return int64(sub) << shift, int64(1) << shift
}

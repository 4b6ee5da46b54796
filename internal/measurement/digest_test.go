package measurement_test

import (
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// randomHistograms returns histograms of several geometries (the run's and
// others, so the derived layout is checked beyond the one in use) filled
// with latency-like values: a body, a tail, and values at the edges.
func randomHistograms(t testing.TB, seed uint64) []*hdrhistogram.Histogram {
	r := rand.New(rand.NewPCG(seed, 7))
	geoms := []struct {
		low, high int64
		sig       int
	}{
		{measurement.LowestNs, measurement.HighestNs, measurement.SigFigs},
		{1, 1_000_000, 1}, {1, 3_600_000_000, 2}, {1000, 3_600_000_000_000, 3},
		{3, 1 << 40, 4}, {1, 100_000_000, 5},
	}
	var out []*hdrhistogram.Histogram
	for _, g := range geoms {
		for _, n := range []int{1, 2, 17, 1000, 20000} {
			h := hdrhistogram.New(g.low, g.high, g.sig)
			for i := 0; i < n; i++ {
				var v int64
				switch r.IntN(10) {
				case 0:
					v = r.Int64N(g.high + 1) // anywhere
				case 1:
					v = r.Int64N(4) // the bottom buckets, 0 included
				default:
					v = 50_000 + r.Int64N(2_000_000) // the body
				}
				v = min(v, g.high)
				if err := h.RecordValues(v, 1+r.Int64N(3)); err != nil {
					t.Fatalf("record %d in %+v: %v", v, g, err)
				}
			}
			out = append(out, h)
		}
	}
	return out
}

// TestDigestIsHdrHistograms: DigestOf, Max and Merge give exactly what
// HdrHistogram's Min, Max, Mean, ValueAtPercentile and Merge give, on every
// geometry and shape, so that switching to them changed no reported figure.
func TestDigestIsHdrHistograms(t *testing.T) {
	ps := []float64{0, 50, 90, 95, 99, 99.9, 99.99, 100}
	for seed := uint64(1); seed <= 3; seed++ {
		for k, h := range randomHistograms(t, seed) {
			d := measurement.DigestOf(h, ps...)
			if d.Count != h.TotalCount() || d.Min != h.Min() || d.Max != h.Max() || d.Mean != h.Mean() {
				t.Fatalf("seed %d histogram %d (sig %d, lowest %d): digest count/min/max/mean %d/%d/%d/%v, HdrHistogram %d/%d/%d/%v",
					seed, k, h.SignificantFigures(), h.LowestTrackableValue(), d.Count, d.Min, d.Max, d.Mean, h.TotalCount(), h.Min(), h.Max(), h.Mean())
			}
			for i, p := range ps {
				if want := h.ValueAtPercentile(p); d.Values[i] != want {
					t.Fatalf("seed %d histogram %d: p%v = %d, HdrHistogram %d", seed, k, p, d.Values[i], want)
				}
			}
			if got := measurement.Max(h); got != h.Max() {
				t.Fatalf("seed %d histogram %d: Max %d, HdrHistogram %d", seed, k, got, h.Max())
			}
			// Merge into an empty and into a non-empty histogram of the
			// same geometry, and into the run's geometry (which drops
			// what it cannot hold, as HdrHistogram's Merge does).
			for _, dst := range []func() *hdrhistogram.Histogram{
				func() *hdrhistogram.Histogram {
					return hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
				},
				func() *hdrhistogram.Histogram { return h.Clone() },
				func() *hdrhistogram.Histogram { return hdrhistogram.New(1000, 1_000_000_000, 2) },
			} {
				want, got := dst(), dst()
				wantDropped := want.Merge(h)
				gotDropped := measurement.Merge(got, h)
				if !got.Equals(want) || gotDropped != wantDropped {
					t.Fatalf("seed %d histogram %d: Merge differs from HdrHistogram's (dropped %d, want %d; totals %d, %d)",
						seed, k, gotDropped, wantDropped, got.TotalCount(), want.TotalCount())
				}
			}
		}
	}
}

func TestDigestEmpty(t *testing.T) {
	for _, h := range []*hdrhistogram.Histogram{nil, measurement.NewHistogram()} {
		d := measurement.DigestOf(h, 50, 99)
		if d.Count != 0 || d.Min != 0 || d.Max != 0 || d.Mean != 0 || len(d.Values) != 2 || d.Values[0] != 0 || d.Values[1] != 0 {
			t.Fatalf("empty digest %+v", d)
		}
		if measurement.Max(h) != 0 {
			t.Fatal("Max of an empty histogram is not 0")
		}
	}
	dst := measurement.NewHistogram()
	if measurement.Merge(dst, nil) != 0 || measurement.Merge(dst, measurement.NewHistogram()) != 0 || dst.TotalCount() != 0 {
		t.Fatal("merging empty histograms changed something")
	}
}

// A run's interval: a body around 300 µs and a tail to 50 ms, as a status
// line or bundle interval digests it.
func benchHistogram() *hdrhistogram.Histogram {
	h := measurement.NewHistogram()
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		v := 100_000 + r.Int64N(400_000)
		if i%100 == 0 {
			v = r.Int64N(50_000_000)
		}
		_ = h.RecordValue(v)
	}
	return h
}

func BenchmarkDigest(b *testing.B) {
	h := benchHistogram()
	b.Run("digest", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_ = measurement.DigestOf(h, 50, 90, 99, 99.9, 99.99)
		}
	})
	b.Run("hdrhistogram", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_, _, _ = h.Min(), h.Max(), h.Mean()
			for _, p := range []float64{50, 90, 99, 99.9, 99.99} {
				_ = h.ValueAtPercentile(p)
			}
		}
	})
}

func BenchmarkMerge(b *testing.B) {
	src := benchHistogram()
	dst := measurement.NewHistogram()
	b.Run("measurement", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			measurement.Merge(dst, src)
		}
	})
	b.Run("hdrhistogram", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			dst.Merge(src)
		}
	})
}

package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// classicQuantile is PromQL's histogram_quantile over classic buckets:
// find the bucket holding rank q*count and interpolate linearly inside
// it, the first bucket starting at 0.
func classicQuantile(a *accumulator, q float64) float64 {
	rank := q * float64(a.count)
	var cum, prevCum uint64
	prevBound := 0.0
	for i, ub := range ClassicBuckets {
		cum += a.classic[i]
		if float64(cum) >= rank {
			inBucket := float64(cum - prevCum)
			return prevBound + (ub-prevBound)*(rank-float64(prevCum))/inBucket
		}
		prevCum, prevBound = cum, ub
	}
	return ClassicBuckets[len(ClassicBuckets)-1]
}

// latencyShape draws one latency in seconds.
type latencyShape struct {
	name string
	draw func(r *rand.Rand) float64
}

func lognormal(median, sigma float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return median * math.Exp(sigma*r.NormFloat64()) }
}

// realisticShapes are the latency distributions databases show: log-normal
// bodies from an in-memory store to a disk-bound one, and a cache whose
// misses (a few percent) sit an order of magnitude above its hits, so that
// p99 lands in the tail mode.
func realisticShapes() []latencyShape {
	var shapes []latencyShape
	for _, median := range []float64{120e-6, 400e-6, 1.2e-3, 2.5e-3, 8e-3, 25e-3} {
		for _, sigma := range []float64{0.25, 0.5, 0.8} {
			shapes = append(shapes, latencyShape{fmt.Sprintf("lognormal median %gs sigma %g", median, sigma), lognormal(median, sigma)})
		}
	}
	for _, miss := range []float64{0.02, 0.05} {
		hit, slow := lognormal(300e-6, 0.3), lognormal(6e-3, 0.4)
		shapes = append(shapes, latencyShape{fmt.Sprintf("cache with %g%% misses", miss*100), func(r *rand.Rand) float64 {
			if r.Float64() < miss {
				return slow(r)
			}
			return hit(r)
		}})
	}
	return shapes
}

// The classic buckets must answer histogram_quantile(0.99) within a few
// percent of the exact HDR p99 wherever a p99 falls between 100 µs and
// 100 ms (issue 11: 4.15 ms from the old buckets against an exact 2.72 ms).
func TestClassicQuantileAccuracy(t *testing.T) {
	const samples = 200_000
	worst := 0.0
	for i, sh := range realisticShapes() {
		r := rand.New(rand.NewPCG(uint64(i), 11))
		h := hdrhistogram.New(1, 3_600_000_000_000, 3)
		for range samples {
			ns := max(int64(sh.draw(r)*1e9), 1)
			if err := h.RecordValue(ns); err != nil {
				t.Fatal(err)
			}
		}
		var acc accumulator
		acc.addHDR(h)
		for _, q := range []float64{0.5, 0.95, 0.99} {
			exact := float64(h.ValueAtQuantile(q*100)) / 1e9
			if exact < 100e-6 || exact > 100e-3 {
				continue
			}
			est := classicQuantile(&acc, q)
			rel := math.Abs(est-exact) / exact
			worst = max(worst, rel)
			t.Logf("%-36s p%g exact %8.3f ms classic %8.3f ms (%+.1f%%)", sh.name, q*100, exact*1e3, est*1e3, 100*(est-exact)/exact)
			if rel > 0.05 {
				t.Errorf("%s: classic p%g %.4g s, exact %.4g s: off by %.1f%%, want within 5%%", sh.name, q*100, est, exact, rel*100)
			}
		}
	}
	t.Logf("worst classic error %.1f%%", worst*100)
}

// The bounds are sorted, distinct and at most 25 % apart between 100 µs
// and 100 ms, which is what bounds the interpolation error above.
func TestClassicBucketsLadder(t *testing.T) {
	for i := 1; i < len(ClassicBuckets); i++ {
		lo, hi := ClassicBuckets[i-1], ClassicBuckets[i]
		if hi <= lo {
			t.Fatalf("bound %d (%g) not above %g", i, hi, lo)
		}
		if lo >= 100e-6 && hi <= 100e-3 && hi/lo > 1.251 {
			t.Errorf("(%g, %g] is %.0f%% wide", lo, hi, 100*(hi/lo-1))
		}
	}
}

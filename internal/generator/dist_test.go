package generator

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConstant(t *testing.T) {
	r := NewRand(1)
	var g Long = Constant{V: 17}
	require.Equal(t, int64(17), g.Next(r))
	require.Equal(t, int64(17), CloneLong(g).Next(r))
}

func TestUniformDistribution(t *testing.T) {
	r := NewRand(2)
	g := NewUniform(10, 29)
	const n = 200000
	counts := make([]int, 20)
	for i := 0; i < n; i++ {
		v := g.Next(r)
		if !(v >= 10 && v <= 29) {
			t.Fatalf("out of range: %d", v)
		}
		counts[v-10]++
	}
	requireUniformCounts(t, counts, n)

	// Swapped bounds, a single value and the full int64 range must all work.
	sw := NewUniform(29, 10)
	for i := 0; i < 1000; i++ {
		v := sw.Next(r)
		if !(v >= 10 && v <= 29) {
			t.Fatalf("out of range: %d", v)
		}
	}
	require.Equal(t, int64(5), NewUniform(5, 5).Next(r))
	full := NewUniform(math.MinInt64, math.MaxInt64)
	neg := 0
	for i := 0; i < 1000; i++ {
		if full.Next(r) < 0 {
			neg++
		}
	}
	requireShare(t, 0.5, neg, 1000, "full-range sign")
	require.Same(t, g, g.Clone())
}

func TestZipfianDistribution(t *testing.T) {
	const items, n = 1000, 1000000
	z := NewZipfian(100, 100+items-1, ZipfianConstant)
	r := NewRand(3)
	counts := make([]int, items)
	for i := 0; i < n; i++ {
		v := z.Next(r)
		if !(v >= 100 && v < 100+items) {
			t.Fatalf("out of range: %d", v)
		}
		counts[v-100]++
	}
	zetan := Zeta(items, ZipfianConstant)
	requireShare(t, 1/zetan, counts[0], n, "rank 0")
	requireShare(t, math.Pow(0.5, ZipfianConstant)/zetan, counts[1], n, "rank 1")
	for i := 1; i < 10; i++ {
		require.Greater(t, counts[i-1], counts[i], "rank %d must be more popular than rank %d", i-1, i)
	}
	// The tail still gets draws: the last decile holds a sizeable share.
	tail := 0
	for _, c := range counts[900:] {
		tail += c
	}
	require.Greater(t, tail, n/100)
}

func TestZipfianIncrementalZeta(t *testing.T) {
	z := NewZipfian(0, 999, ZipfianConstant)
	c := z.Clone().(*Zipfian)
	r := NewRand(4)
	for i := 0; i < 10000; i++ {
		v := z.NextN(r, 2000)
		if !(v >= 0 && v < 2000) {
			t.Fatalf("out of range: %d", v)
		}
	}
	// Same summation order as a fresh loop, so equality is exact.
	require.Equal(t, Zeta(2000, ZipfianConstant), z.Zetan())
	// Upstream quirk: eta is recomputed with the ORIGINAL item count (1000).
	// theta must be a variable: constant-folding 1-0.99 would give exactly
	// 0.01, while Java (and the generator) compute it in float64.
	theta := ZipfianConstant
	wantEta := (1 - math.Pow(2.0/1000, 1-theta)) / (1 - Zeta(2, theta)/Zeta(2000, theta))
	require.Equal(t, wantEta, z.Eta())
	// A smaller count does not shrink zeta.
	z.NextN(r, 500)
	require.Equal(t, Zeta(2000, ZipfianConstant), z.Zetan())
	// The clone taken earlier is unaffected.
	require.Equal(t, Zeta(1000, ZipfianConstant), c.Zetan())
	require.Equal(t, ZetaFrom(1000, 2000, 0.5, Zeta(1000, 0.5)), Zeta(2000, 0.5))
}

func TestScrambledZipfianDistribution(t *testing.T) {
	const min, items, n = 500, 1000, 300000
	g := NewScrambledZipfian(min, min+items-1)
	r := NewRand(5)
	counts := make([]int, items)
	for i := 0; i < n; i++ {
		v := g.Next(r)
		if !(v >= min && v < min+items) {
			t.Fatalf("out of range: %d", v)
		}
		counts[v-min]++
	}
	best := 0
	for i, c := range counts {
		if c > counts[best] {
			best = i
		}
	}
	want := min + FNVHash64(0)%items
	require.Equal(t, want, int64(min+best), "most popular item")
	// Rank 0 of the internal zipfian alone carries 1/ZETAN of the draws.
	require.Greater(t, float64(counts[best])/n, 1/ScrambledZetan)
	require.Same(t, g, g.Clone())

	// A large range stays in bounds too.
	big := NewScrambledZipfian(0, 1e12)
	for i := 0; i < 10000; i++ {
		v := big.Next(r)
		if !(v >= 0 && v <= 1e12) {
			t.Fatalf("out of range: %d", v)
		}
	}
}

func TestSkewedLatest(t *testing.T) {
	ack := NewAcknowledgedCounter(1000)
	proto := NewSkewedLatest(ack)
	g := proto.Clone().(*SkewedLatest)
	r := NewRand(6)
	mostFrequent := func(n int) int64 {
		last := ack.Last()
		counts := map[int64]int{}
		for i := 0; i < n; i++ {
			v := g.Next(r)
			if !(v >= 0 && v <= last) {
				t.Fatalf("draw %d outside [0,%d]", v, last)
			}
			counts[v]++
		}
		best := int64(-1)
		for k, c := range counts {
			if best < 0 || c > counts[best] {
				best = k
			}
		}
		require.Greater(t, counts[last], counts[last-1])
		return best
	}
	require.Equal(t, int64(999), mostFrequent(100000))

	for i := 0; i < 1000; i++ {
		require.NoError(t, ack.Acknowledge(ack.Next(r)))
	}
	require.Equal(t, int64(1999), ack.Last())
	require.Equal(t, int64(1999), mostFrequent(100000))
	// The clone grew its own zeta; the prototype is untouched.
	require.Equal(t, Zeta(1999, ZipfianConstant), g.gen.Zetan())
	require.Equal(t, Zeta(999, ZipfianConstant), proto.gen.Zetan())
}

func TestHotspotDistribution(t *testing.T) {
	g := NewHotspot(1000, 1999, 0.2, 0.8)
	r := NewRand(7)
	const n = 200000
	hot := 0
	hotCounts := make([]int, 200)
	for i := 0; i < n; i++ {
		v := g.Next(r)
		if !(v >= 1000 && v <= 1999) {
			t.Fatalf("out of range: %d", v)
		}
		if v < 1200 {
			hot++
			hotCounts[v-1000]++
		}
	}
	requireShare(t, 0.8, hot, n, "hot-set share")
	requireUniformCounts(t, hotCounts, hot)
	require.Same(t, g, g.Clone())
}

func TestHotspotArgumentQuirks(t *testing.T) {
	r := NewRand(8)
	// Swapped bounds and out-of-range fractions (-> 0): everything is cold.
	g := NewHotspot(10, 0, 1.5, -1)
	require.Equal(t, int64(0), g.HotInterval())
	for i := 0; i < 1000; i++ {
		v := g.Next(r)
		if !(v >= 0 && v <= 10) {
			t.Fatalf("out of range: %d", v)
		}
	}
	// The hot set size goes through a Java (int) cast and saturates.
	require.Equal(t, int64(math.MaxInt32), NewHotspot(0, 1<<40, 0.5, 0.5).HotInterval())
	// Degenerate sets never divide by zero.
	for _, h := range []*Hotspot{NewHotspot(0, 99, 0, 0.8), NewHotspot(0, 99, 1, 0.2)} {
		for i := 0; i < 1000; i++ {
			v := h.Next(r)
			if !(v >= 0 && v <= 99) {
				t.Fatalf("out of range: %d", v)
			}
		}
	}
}

func TestExponentialPercentile(t *testing.T) {
	r := NewRand(9)
	const n = 200000
	for _, tc := range []struct{ pct, rng float64 }{{95, 1000}, {50, 100}, {95, 857142.8571}} {
		g := NewExponential(tc.pct, tc.rng)
		below := 0
		for i := 0; i < n; i++ {
			v := g.Next(r)
			if v < 0 {
				t.Fatalf("negative draw %d", v)
			}
			if float64(v) < tc.rng {
				below++
			}
		}
		requireShare(t, tc.pct/100, below, n, "exponential percentile")
		require.Same(t, g, g.Clone())
	}
}

func TestSequential(t *testing.T) {
	g := NewSequential(5, 7)
	r := NewRand(10)
	var got []int64
	for i := 0; i < 7; i++ {
		got = append(got, g.Next(r))
	}
	require.Equal(t, []int64{5, 6, 7, 5, 6, 7, 5}, got)
	require.Same(t, g, g.Clone())
	require.Equal(t, int64(5), NewSequential(7, 5).Next(nil), "swapped bounds")
	require.Equal(t, int64(math.MinInt64), NewSequential(math.MinInt64, math.MaxInt64).Next(nil))

	// Shared across goroutines: every value comes out equally often.
	s := NewSequential(0, 99)
	const workers, per = 4, 3000
	var mu sync.Mutex
	counts := make([]int, 100)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]int, 100)
			for i := 0; i < per; i++ {
				local[s.Next(nil)]++
			}
			mu.Lock()
			for i, c := range local {
				counts[i] += c
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i, c := range counts {
		require.Equal(t, workers*per/100, c, "value %d", i)
	}
}

func TestDiscreteProportions(t *testing.T) {
	d := NewDiscrete()
	d.Add(0.5, 10)
	d.Add(0, 99)  // ignored
	d.Add(-1, 98) // ignored
	d.Add(0.3, 20)
	d.Add(0.2, 30)
	require.Equal(t, 3, d.Len())
	r := NewRand(11)
	const n = 200000
	counts := map[int]int{}
	for i := 0; i < n; i++ {
		counts[d.Next(r)]++
	}
	require.Len(t, counts, 3)
	requireShare(t, 0.5, counts[10], n, "value 10")
	requireShare(t, 0.3, counts[20], n, "value 20")
	requireShare(t, 0.2, counts[30], n, "value 30")

	// Weights need not be normalised.
	d2 := NewDiscrete()
	d2.Add(3, 1)
	d2.Add(1, 2)
	ones := 0
	for i := 0; i < n; i++ {
		if d2.Next(r) == 1 {
			ones++
		}
	}
	requireShare(t, 0.75, ones, n, "unnormalised weights")
	require.Panics(t, func() { NewDiscrete().Next(r) })
}

func TestCloneLong(t *testing.T) {
	z := NewZipfian(0, 9, ZipfianConstant)
	c := CloneLong(z)
	require.NotSame(t, z, c)
	seq := NewSequential(0, 9)
	require.Same(t, seq, CloneLong(seq))
	type plain struct{ Long }
	p := plain{Constant{1}}
	require.Equal(t, p, CloneLong(p))
}

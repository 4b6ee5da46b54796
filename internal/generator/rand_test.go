package generator

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRandDeterministic(t *testing.T) {
	a, b, c := NewRand(42), NewRand(42), NewRand(43)
	same := 0
	for i := 0; i < 1000; i++ {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		require.Equal(t, x, y)
		if x == z {
			same++
		}
	}
	require.Zero(t, same, "adjacent seeds must give unrelated streams")
	a.Seed(42)
	require.Equal(t, NewRand(42).Uint64(), a.Uint64(), "Seed resets like NewRand")
}

func TestRandRanges(t *testing.T) {
	r := NewRand(7)
	const n = 200000
	var sum float64
	neg32 := 0
	var or32 uint32
	for i := 0; i < n; i++ {
		f := r.Float64()
		if !(f >= 0 && f < 1) {
			t.Fatalf("Float64 out of [0,1): %v", f)
		}
		sum += f
		if v := r.Int63(); v < 0 {
			t.Fatalf("Int63 negative: %d", v)
		}
		if r.NextInt32() < 0 {
			neg32++
		}
		or32 |= r.Uint32()
	}
	require.InDelta(t, 0.5, sum/n, 0.005)
	requireShare(t, 0.5, neg32, n, "NextInt32 sign")
	require.Equal(t, ^uint32(0), or32, "every Uint32 bit must be reachable")
}

func TestRandInt64nUniform(t *testing.T) {
	r := NewRand(8)
	for _, k := range []int64{1, 2, 7, 10, 1000} {
		const n = 200000
		counts := make([]int, k)
		for i := 0; i < n; i++ {
			v := r.Int64n(k)
			if !(v >= 0 && v < k) {
				t.Fatalf("out of range: %d", v)
			}
			counts[v]++
		}
		if k > 1 {
			requireUniformCounts(t, counts, n)
		}
	}
	// A bound above 2^62 exercises Lemire's rejection path.
	big := int64(3) << 61
	for i := 0; i < 1000; i++ {
		v := r.Int64n(big)
		if !(v >= 0 && v < big) {
			t.Fatalf("out of range: %d", v)
		}
	}
	require.Panics(t, func() { r.Int64n(0) })
	require.Panics(t, func() { r.Int64n(-3) })
}

package generator

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fast x^alpha paths stay within 1e-13 relative of math.Pow over the
// range the zipfian formula uses.
func TestZipfianPowAccuracy(t *testing.T) {
	z := NewZipfianWithZetan(0, ScrambledItemCount, ZipfianConstant, ScrambledZetan)
	require.Equal(t, uint(100), z.intAlpha, "theta 0.99 takes the integer path")
	r := NewRand(42)
	worst := 0.0
	for i := 0; i < 200000; i++ {
		x := 0.5 + 0.5*r.Float64()
		want := math.Pow(x, z.alpha)
		got := powUint(x, z.intAlpha)
		if want > 1e-300 {
			worst = math.Max(worst, math.Abs(got-want)/want)
		}
	}
	require.Less(t, worst, 1e-13)
	require.Zero(t, NewZipfian(0, 100, 0.5).intAlpha-2, "theta 0.5 gives alpha 2")
	require.Zero(t, NewZipfian(0, 100, 0.7).intAlpha, "a non-integer alpha keeps exp/log")
}

package generator

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The closed-form tail must agree with YCSB's term-by-term loop far below
// any distributional effect.
func TestZetaEulerMaclaurinMatchesLoop(t *testing.T) {
	for _, theta := range []float64{ZipfianConstant, 0.5} {
		for _, n := range []int64{zetaLoopLimit + 1, 3_456_789} {
			loop := 0.0
			for i := int64(0); i < n; i++ {
				loop += 1 / math.Pow(float64(i+1), theta)
			}
			got := Zeta(n, theta)
			require.InDelta(t, loop, got, 1e-12*loop, "theta=%g n=%d", theta, n)
		}
	}
	// Incremental extension over a long range agrees with a direct sum.
	z1 := ZetaFrom(1_000, 3_000_000, ZipfianConstant, Zeta(1_000, ZipfianConstant))
	require.InDelta(t, Zeta(3_000_000, ZipfianConstant), z1, 1e-12*z1)
}

func TestZetaOfHundredMillionIsFast(t *testing.T) {
	start := time.Now()
	z := Zeta(100_000_000, ZipfianConstant)
	// zeta(1e8, 0.99) from the closed form of the full sum's asymptotics.
	require.Greater(t, z, 20.0)
	require.Less(t, time.Since(start), 5*time.Second)
}

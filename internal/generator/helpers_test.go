package generator

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// chiSquare returns the Pearson statistic of observed counts against
// expected probabilities for n draws.
func chiSquare(counts []int, probs []float64, n int) float64 {
	var x float64
	for i, c := range counts {
		e := probs[i] * float64(n)
		d := float64(c) - e
		x += d * d / e
	}
	return x
}

// chiSquareLimit is a deliberately loose bound (df + 6 standard deviations):
// the seeds are fixed, so the test must only catch real distribution bugs,
// never flake on a new seed.
func chiSquareLimit(df int) float64 {
	return float64(df) + 6*math.Sqrt(2*float64(df))
}

func requireUniformCounts(t *testing.T, counts []int, n int) {
	t.Helper()
	probs := make([]float64, len(counts))
	for i := range probs {
		probs[i] = 1 / float64(len(counts))
	}
	x := chiSquare(counts, probs, n)
	require.Less(t, x, chiSquareLimit(len(counts)-1), "chi-square over %d buckets", len(counts))
}

// requireShare checks an observed fraction against p within 5 binomial
// standard deviations.
func requireShare(t *testing.T, p float64, hits, n int, what string) {
	t.Helper()
	got := float64(hits) / float64(n)
	tol := 5 * math.Sqrt(p*(1-p)/float64(n))
	require.InDelta(t, p, got, tol, "%s: got %.5f want %.5f±%.5f", what, got, p, tol)
}

func requireRelClose(t *testing.T, want, got float64, what string) {
	t.Helper()
	require.LessOrEqual(t, math.Abs(want-got), 1e-12*math.Abs(want), "%s: want %.17g got %.17g", what, want, got)
}

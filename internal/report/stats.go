package report

import (
	"math"
)

// Run-to-run noise.
//
// A benchmark run yields one throughput figure, but the interval stream
// gives many samples of it: ops/s in every 10 s interval. compare treats
// two runs' interval throughputs as samples of two distributions and asks
// whether their means differ by more than the samples' own spread
// explains, with Welch's t-test (unequal variances, unequal counts).
//
// Interval samples are not independent: a database that is slow in one
// interval (compaction, GC, a cold cache) tends to be slow in the next.
// Positive autocorrelation makes the plain t-test overconfident, so each
// sample's size is shrunk to an effective size n·(1−r1)/(1+r1), where r1
// is the lag-1 autocorrelation (the AR(1) approximation latte also uses).
// With n_eff the standard error and the Welch–Satterthwaite degrees of
// freedom are computed as usual. A difference with p ≥ 0.05 is reported
// as within noise ("≈"); so is any comparison with fewer than three
// usable intervals on either side, because then there is nothing to
// estimate the noise from (reported as "?").

// Sample summarises per-interval values.
type Sample struct {
	N    int
	Mean float64
	// Var is the unbiased sample variance.
	Var float64
	// R1 is the lag-1 autocorrelation, NEff the effective sample size.
	R1   float64
	NEff float64
}

// Summarize computes a Sample from values in time order.
func Summarize(xs []float64) Sample {
	s := Sample{N: len(xs)}
	if s.N == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(s.N)
	s.NEff = float64(s.N)
	if s.N < 2 {
		return s
	}
	var ss, lag float64
	for i, x := range xs {
		d := x - s.Mean
		ss += d * d
		if i > 0 {
			lag += d * (xs[i-1] - s.Mean)
		}
	}
	s.Var = ss / float64(s.N-1)
	if ss > 0 && s.N >= 3 {
		s.R1 = lag / ss
	}
	// Only positive correlation shrinks the sample; negative would
	// inflate it, which we do not trust from a short series.
	if r := math.Max(s.R1, 0); r > 0 {
		s.NEff = math.Max(2, math.Min(float64(s.N), float64(s.N)*(1-r)/(1+r)))
	}
	return s
}

// CI95 returns the half width of the 95 % confidence interval of the mean.
func (s Sample) CI95() float64 {
	if s.N < 2 || s.NEff < 2 {
		return 0
	}
	return tQuantile(0.975, s.NEff-1) * math.Sqrt(s.Var/s.NEff)
}

// Welch returns the t statistic, degrees of freedom and two-sided p-value
// of the difference of means of a and b.
func Welch(a, b Sample) (t, df, p float64) {
	if a.N < 2 || b.N < 2 {
		return 0, 0, 1
	}
	va, vb := a.Var/a.NEff, b.Var/b.NEff
	se := math.Sqrt(va + vb)
	if se == 0 {
		if a.Mean == b.Mean {
			return 0, 0, 1
		}
		return math.Inf(1), math.Inf(1), 0
	}
	t = (a.Mean - b.Mean) / se
	df = (va + vb) * (va + vb) / (va*va/(a.NEff-1) + vb*vb/(b.NEff-1))
	p = 2 * (1 - studentCDF(math.Abs(t), df))
	return t, df, math.Min(math.Max(p, 0), 1)
}

// Verdict is how a difference compares with the noise.
type Verdict int

const (
	// Unknown: too few intervals to estimate the noise.
	Unknown Verdict = iota
	// WithinNoise: not significant at the 5 % level.
	WithinNoise
	// Significant: p < 0.05.
	Significant
)

// MinSamples is the fewest usable intervals a side needs.
const MinSamples = 3

// Compare judges whether b differs from a beyond run-to-run noise.
func Compare(a, b Sample) (Verdict, float64) {
	if a.N < MinSamples || b.N < MinSamples {
		return Unknown, 1
	}
	_, _, p := Welch(a, b)
	if p < 0.05 {
		return Significant, p
	}
	return WithinNoise, p
}

// studentCDF is P(T <= t) for Student's t with df degrees of freedom,
// via the regularized incomplete beta function.
func studentCDF(t, df float64) float64 {
	if math.IsInf(df, 1) || df > 1e7 {
		return 0.5 * math.Erfc(-t/math.Sqrt2)
	}
	x := df / (df + t*t)
	tail := 0.5 * incBeta(df/2, 0.5, x)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// tQuantile inverts studentCDF by bisection (p in (0, 1)).
func tQuantile(p, df float64) float64 {
	lo, hi := -1e3, 1e3
	for range 200 {
		mid := (lo + hi) / 2
		if studentCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// incBeta is the regularized incomplete beta function I_x(a, b),
// evaluated with its continued fraction (modified Lentz), using the
// symmetry I_x(a,b) = 1 − I_{1−x}(b,a) where the fraction converges slowly.
func incBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaCF(b, a, 1-x)/b
	}
	return front * betaCF(a, b, x) / a
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		// Even step.
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		// Odd step.
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := d * c
		h *= delta
		if math.Abs(delta-1) < 1e-12 {
			break
		}
	}
	return h
}

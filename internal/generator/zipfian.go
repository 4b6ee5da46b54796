package generator

import "math"

// ZipfianConstant is YCSB's default Zipfian skew (theta).
const ZipfianConstant = 0.99

// Constants of YCSB's ScrambledZipfianGenerator: the internal Zipfian spans
// [0, ScrambledItemCount] and uses the precomputed zeta so construction does
// not sum 1e10 terms.
const (
	ScrambledItemCount = 10000000000
	ScrambledZetan     = 26.46902820178302
)

// Zeta returns sum_{i=1..n} 1/i^theta, computed by a plain loop in the same
// order as YCSB so the result is bit-identical. O(n).
func Zeta(n int64, theta float64) float64 {
	return ZetaFrom(0, n, theta, 0)
}

// ZetaFrom extends initialSum (= Zeta(st, theta)) to Zeta(n, theta) by adding
// the terms st+1..n.
//
// Up to zetaLoopLimit new terms are added one by one, exactly as YCSB does.
// Beyond that (10^8 keys would take tens of seconds per process) the first
// zetaLoopLimit terms are still summed exactly and the rest is computed in
// closed form with the Euler-Maclaurin formula, whose truncation error at
// these magnitudes (below 1e-20 relative) is far smaller than the rounding
// error YCSB's own long loop accumulates (around 1e-12).
func ZetaFrom(st, n int64, theta, initialSum float64) float64 {
	sum := initialSum
	loopEnd := n
	if n-st > zetaLoopLimit {
		loopEnd = st + zetaLoopLimit
	}
	for i := st; i < loopEnd; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	if loopEnd < n {
		sum += eulerMaclaurin(loopEnd+1, n, theta)
	}
	return sum
}

// zetaLoopLimit bounds the terms summed one by one in ZetaFrom.
const zetaLoopLimit = 2_000_000

// eulerMaclaurin returns the sum of i^-theta for i in [a, b] (a > 2e6, so
// corrections after the B6 term are negligible).
func eulerMaclaurin(a, b int64, theta float64) float64 {
	fa, fb := float64(a), float64(b)
	pow := func(x, e float64) float64 { return math.Exp(e * math.Log(x)) }
	var integral float64
	if theta == 1 {
		integral = math.Log(fb / fa)
	} else {
		// b^(1-t) - a^(1-t) without cancellation: a^(1-t) expm1((1-t) ln(b/a)).
		integral = pow(fa, 1-theta) * math.Expm1((1-theta)*math.Log(fb/fa)) / (1 - theta)
	}
	// Derivatives of x^-t: f' = -t x^(-t-1), f''' = -t(t+1)(t+2) x^(-t-3),
	// f5 = -t(t+1)(t+2)(t+3)(t+4) x^(-t-5); Bernoulli weights 1/12, 1/720, 1/30240.
	c1 := -theta
	c3 := -theta * (theta + 1) * (theta + 2)
	c5 := c3 * (theta + 3) * (theta + 4)
	d := func(c, e float64) float64 { return c * (pow(fb, e) - pow(fa, e)) }
	return integral + (pow(fa, -theta)+pow(fb, -theta))/2 +
		d(c1, -theta-1)/12 - d(c3, -theta-3)/720 + d(c5, -theta-5)/30240
}

// Zipfian is YCSB's ZipfianGenerator (Gray et al., SIGMOD'94): item base is
// the most popular, base+1 the next, and so on. It is not safe for
// concurrent use because NextN may grow zetan; give each worker a Clone.
type Zipfian struct {
	items int64 // item count at construction; upstream keeps using it for eta
	base  int64
	theta float64
	alpha float64
	// intAlpha is alpha rounded to an integer when alpha is one up to
	// float rounding (theta = 0.99 gives 99.99999999999991): x^alpha is
	// then a few multiplications instead of a log and an exp.
	intAlpha     uint
	zetan        float64
	eta          float64
	zeta2theta   float64
	halfPowTheta float64 // 0.5^theta, hoisted out of the draw
	countForZeta int64
}

// NewZipfian returns a Zipfian over [min,max] with the given theta, computing
// zeta(max-min+1) by loop (slow for very large ranges, as upstream).
func NewZipfian(min, max int64, theta float64) *Zipfian {
	return NewZipfianWithZetan(min, max, theta, Zeta(max-min+1, theta))
}

// NewZipfianWithZetan is NewZipfian with a precomputed zeta(max-min+1).
func NewZipfianWithZetan(min, max int64, theta, zetan float64) *Zipfian {
	items := max - min + 1
	z := &Zipfian{
		items:        items,
		base:         min,
		theta:        theta,
		alpha:        1 / (1 - theta),
		zetan:        zetan,
		zeta2theta:   Zeta(2, theta),
		halfPowTheta: math.Pow(0.5, theta),
		countForZeta: items,
	}
	if a := math.Round(z.alpha); math.Abs(z.alpha-a) < 1e-9 && a >= 1 && a <= 1024 {
		z.intAlpha = uint(a)
	}
	z.eta = z.computeEta()
	return z
}

// powUint returns x^n by repeated squaring.
func powUint(x float64, n uint) float64 {
	r := 1.0
	for n > 0 {
		if n&1 != 0 {
			r *= x
		}
		x *= x
		n >>= 1
	}
	return r
}

func (z *Zipfian) computeEta() float64 {
	return (1 - math.Pow(2.0/float64(z.items), 1-z.theta)) / (1 - z.zeta2theta/z.zetan)
}

// Next draws from the full constructed range.
func (z *Zipfian) Next(r *Rand) int64 { return z.NextN(r, z.items) }

// NextN is YCSB's nextLong(itemcount): a larger itemcount extends zetan
// incrementally (and recomputes eta with the ORIGINAL item count, an upstream
// quirk kept for fidelity); a smaller one is used in the final formula but
// leaves zetan alone, as upstream does by default.
func (z *Zipfian) NextN(r *Rand, itemcount int64) int64 {
	if itemcount > z.countForZeta {
		z.zetan = ZetaFrom(z.countForZeta, itemcount, z.theta, z.zetan)
		z.countForZeta = itemcount
		z.eta = z.computeEta()
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+z.halfPowTheta {
		return z.base + 1
	}
	// The float64() conversion forbids fusing into an FMA (allowed by the Go
	// spec on arm64 etc.), which would change rounding versus Java.
	x := float64(z.eta*u) - z.eta + 1
	// x^alpha by squaring when alpha is an integer up to rounding (the
	// default theta), else as exp(alpha*ln x); both are several times
	// faster than math.Pow on this hot path. Either differs from Java's
	// Math.pow by about 1e-14 relative at most (tested), far below what
	// could change the distribution; individual draws are never
	// reproducible across tools anyway.
	var p float64
	if z.intAlpha != 0 {
		p = powUint(x, z.intAlpha)
	} else {
		p = math.Exp(z.alpha * math.Log(x))
	}
	return z.base + javaLong(float64(itemcount)*p)
}

// Clone returns an independent copy (zeta state included) for another worker.
func (z *Zipfian) Clone() Long {
	c := *z
	return &c
}

// Zetan returns the current zeta(n) (grows after NextN with a larger count).
func (z *Zipfian) Zetan() float64 { return z.zetan }

// Eta returns the current eta parameter.
func (z *Zipfian) Eta() float64 { return z.eta }

// ScrambledZipfian is YCSB's ScrambledZipfianGenerator: a Zipfian over 1e10
// items whose draws are FNV-hashed into [min,max], so popular items are spread
// over the key space instead of clustering at min. Immutable, safe to share.
type ScrambledZipfian struct {
	min       int64
	itemcount int64
	gen       Zipfian
}

// NewScrambledZipfian returns a scrambled Zipfian over [min,max] (inclusive)
// with theta = 0.99.
func NewScrambledZipfian(min, max int64) *ScrambledZipfian {
	return &ScrambledZipfian{
		min:       min,
		itemcount: max - min + 1,
		gen:       *NewZipfianWithZetan(0, ScrambledItemCount, ZipfianConstant, ScrambledZetan),
	}
}

// Next returns min + FNVHash64(zipfian draw) mod itemcount.
func (s *ScrambledZipfian) Next(r *Rand) int64 {
	// NextN with the constructed count never mutates the internal Zipfian,
	// which is what makes sharing safe.
	v := s.gen.NextN(r, s.gen.items)
	return s.min + FNVHash64(v)%s.itemcount
}

// Clone returns s itself: draws do not mutate it.
func (s *ScrambledZipfian) Clone() Long { return s }

// Eta returns the internal Zipfian's eta (golden value 0.21220003380967406).
func (s *ScrambledZipfian) Eta() float64 { return s.gen.eta }

// SkewedLatest is YCSB's SkewedLatestGenerator: it favours the newest
// acknowledged key (basis.Last()) with a Zipfian over the distance from it.
// Each worker needs its own Clone because the Zipfian's zeta grows as the
// limit advances.
type SkewedLatest struct {
	basis Limit
	gen   *Zipfian
}

// NewSkewedLatest builds the Zipfian over basis.Last() items, as upstream
// (which makes key 0 unreachable; kept for fidelity).
func NewSkewedLatest(basis Limit) *SkewedLatest {
	return &SkewedLatest{basis: basis, gen: NewZipfian(0, basis.Last()-1, ZipfianConstant)}
}

// Next returns max - zipfian.NextN(max) where max is the current limit.
func (s *SkewedLatest) Next(r *Rand) int64 {
	max := s.basis.Last()
	return max - s.gen.NextN(r, max)
}

// Clone shares the basis but copies the Zipfian state.
func (s *SkewedLatest) Clone() Long {
	g := *s.gen
	return &SkewedLatest{basis: s.basis, gen: &g}
}

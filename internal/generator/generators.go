package generator

import (
	"math"
	"sync/atomic"
)

// Long is a generator of int64 values (key numbers, lengths).
type Long interface {
	Next(r *Rand) int64
}

// Cloner is implemented by generators so each worker can get its own
// instance. Generators with mutable per-instance state return a copy;
// immutable or deliberately shared ones return themselves.
type Cloner interface {
	Clone() Long
}

// CloneLong returns g.Clone() if g implements Cloner, else g itself. Workers
// call it once at start-up so they never share mutable generator state.
func CloneLong(g Long) Long {
	if c, ok := g.(Cloner); ok {
		return c.Clone()
	}
	return g
}

// Limit reports the acknowledged insert limit: the highest key number such
// that all keys <= it have been acknowledged.
type Limit interface {
	Last() int64
}

// Constant always returns V.
type Constant struct{ V int64 }

// Next returns c.V.
func (c Constant) Next(*Rand) int64 { return c.V }

// Clone returns c itself (immutable).
func (c Constant) Clone() Long { return c }

// Uniform is YCSB's UniformLongGenerator over the inclusive range [lb,ub].
// Immutable, safe to share.
type Uniform struct {
	lb int64
	n  uint64 // ub-lb+1; 0 encodes the full 2^64 range
}

// NewUniform returns a uniform generator over [lb,ub]. Swapped bounds are
// swapped back rather than producing nonsense.
func NewUniform(lb, ub int64) *Uniform {
	if lb > ub {
		lb, ub = ub, lb
	}
	return &Uniform{lb: lb, n: uint64(ub) - uint64(lb) + 1}
}

// Next returns a uniform value in [lb,ub]. Upstream uses |nextLong| mod n,
// which is slightly biased; the unbiased draw has the intended distribution.
func (u *Uniform) Next(r *Rand) int64 {
	return int64(uint64(u.lb) + r.Uint64n(u.n))
}

// Clone returns u itself (immutable).
func (u *Uniform) Clone() Long { return u }

// Hotspot is YCSB's HotspotIntegerGenerator: hotOpnFraction of the draws hit
// the lowest hotsetFraction of [lb,ub]. Immutable, safe to share.
type Hotspot struct {
	lb, ub         int64
	hotInterval    int64
	coldInterval   int64
	hotsetFraction float64
	hotOpnFraction float64
}

// NewHotspot mirrors upstream's argument handling: fractions outside [0,1]
// become 0, swapped bounds are swapped back, and the hot set size goes through
// a Java (int) cast, i.e. it saturates at 2^31-1.
func NewHotspot(lb, ub int64, hotsetFraction, hotOpnFraction float64) *Hotspot {
	if !(hotsetFraction >= 0 && hotsetFraction <= 1) {
		hotsetFraction = 0
	}
	if !(hotOpnFraction >= 0 && hotOpnFraction <= 1) {
		hotOpnFraction = 0
	}
	if lb > ub {
		lb, ub = ub, lb
	}
	interval := ub - lb + 1
	hot := javaInt(float64(interval) * hotsetFraction)
	return &Hotspot{
		lb:             lb,
		ub:             ub,
		hotInterval:    hot,
		coldInterval:   interval - hot,
		hotsetFraction: hotsetFraction,
		hotOpnFraction: hotOpnFraction,
	}
}

// Next draws from the hot set with probability hotOpnFraction, else from the
// cold set. Upstream throws (mod by zero) when the chosen set is empty; we
// fall back to the other set instead so a degenerate config cannot crash.
func (h *Hotspot) Next(r *Rand) int64 {
	hot := r.Float64() < h.hotOpnFraction
	if (hot && h.hotInterval > 0) || h.coldInterval <= 0 {
		return h.lb + r.Int64n(h.hotInterval)
	}
	return h.lb + h.hotInterval + r.Int64n(h.coldInterval)
}

// Clone returns h itself (immutable).
func (h *Hotspot) Clone() Long { return h }

// HotInterval returns the size of the hot set (after the int32 cast).
func (h *Hotspot) HotInterval() int64 { return h.hotInterval }

// Exponential is YCSB's ExponentialGenerator: percentile% of the draws fall
// below rangeV. Immutable, safe to share.
type Exponential struct {
	gamma float64
}

// NewExponential sets gamma = -ln(1-percentile/100)/rangeV, as upstream.
func NewExponential(percentile, rangeV float64) *Exponential {
	return &Exponential{gamma: -math.Log(1-percentile/100) / rangeV}
}

// NextFloat returns the untruncated draw -ln(U)/gamma (upstream's
// nextValue()); CoreWorkload truncates it with a Java (int) cast.
func (e *Exponential) NextFloat(r *Rand) float64 {
	return -math.Log(r.Float64()) / e.gamma
}

// Next returns the draw truncated like a Java (long) cast.
func (e *Exponential) Next(r *Rand) int64 { return javaLong(e.NextFloat(r)) }

// Clone returns e itself (immutable).
func (e *Exponential) Clone() Long { return e }

// Sequential is YCSB's SequentialGenerator: start, start+1, ..., end, start,
// ... It is SHARED across workers (one atomic counter), so the sequence is
// global, as upstream.
type Sequential struct {
	start    int64
	interval int64
	counter  atomic.Int64
}

// NewSequential returns a sequence over [start,end]; the first value is start.
// Swapped bounds are swapped back and a range too wide for int64 wraps at
// MaxInt64, so Next never divides by zero or goes negative.
func NewSequential(start, end int64) *Sequential {
	if end < start {
		start, end = end, start
	}
	interval := end - start + 1
	if interval <= 0 {
		interval = math.MaxInt64
	}
	return &Sequential{start: start, interval: interval}
}

// Next returns start + (counter++ mod (end-start+1)).
func (s *Sequential) Next(*Rand) int64 {
	c := s.counter.Add(1) - 1
	return s.start + c%s.interval
}

// Clone returns s itself: the counter is meant to be shared.
func (s *Sequential) Clone() Long { return s }

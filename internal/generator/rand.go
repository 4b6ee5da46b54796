package generator

import "math/bits"

// Rand is a wyrand generator: one add and one 64x64->128 multiply per draw,
// which keeps it cheap enough for the per-operation hot path. It is not safe
// for concurrent use; give every goroutine its own instance.
type Rand struct {
	state uint64
}

// NewRand returns a generator seeded with seed. The seed is passed through the
// SplitMix64 finaliser so that nearby seeds (worker 0, 1, 2, ...) start from
// unrelated states.
func NewRand(seed uint64) *Rand {
	r := &Rand{}
	r.Seed(seed)
	return r
}

// Seed resets the generator as if it had been created by NewRand(seed).
func (r *Rand) Seed(seed uint64) {
	z := seed + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	r.state = z ^ (z >> 31)
}

// Uint64 returns a uniformly distributed 64-bit value.
func (r *Rand) Uint64() uint64 {
	r.state += wyInc
	hi, lo := bits.Mul64(r.state, r.state^wyXor)
	return hi ^ lo
}

// Uint32 returns a uniformly distributed 32-bit value.
func (r *Rand) Uint32() uint32 { return uint32(r.Uint64() >> 32) }

// Int63 returns a non-negative uniformly distributed int64.
func (r *Rand) Int63() int64 { return int64(r.Uint64() >> 1) }

// NextInt32 returns a full-range signed 32-bit value, like Java's
// Random.nextInt().
func (r *Rand) NextInt32() int32 { return int32(r.Uint64() >> 32) }

// Uint64n returns a uniform value in [0,n) using Lemire's multiply-and-reject
// method (unbiased, almost never loops). n == 0 means the full 64-bit range.
func (r *Rand) Uint64n(n uint64) uint64 {
	if n == 0 {
		return r.Uint64()
	}
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// Int64n returns a uniform value in [0,n). It panics if n <= 0, like
// math/rand, because a non-positive bound is always a caller bug.
func (r *Rand) Int64n(n int64) int64 {
	if n <= 0 {
		panic("generator: Int64n called with n <= 0")
	}
	return int64(r.Uint64n(uint64(n)))
}

// Float64 returns a uniform value in [0,1) with 53 bits of precision, the
// same resolution as Java's nextDouble().
func (r *Rand) Float64() float64 {
	return float64(r.Uint64()>>11) * 0x1p-53
}

package generator

import "math"

const (
	fnvOffsetBasis64 = 0xCBF29CE484222325
	fnvPrime64       = 1099511628211
)

// FNVHash64 is YCSB's Utils.fnvhash64: FNV-1a 64 over the 8 bytes of v,
// least-significant byte first, then Java Math.abs of the signed result
// (so math.MinInt64 stays negative, exactly as upstream). Key names and the
// scrambled Zipfian depend on this being bit-identical to Java.
func FNVHash64(v int64) int64 {
	h := uint64(fnvOffsetBasis64)
	u := uint64(v)
	for i := 0; i < 8; i++ {
		h ^= u & 0xff
		h *= fnvPrime64
		u >>= 8
	}
	s := int64(h)
	if s < 0 {
		s = -s // wraps for MinInt64, like Java's Math.abs
	}
	return s
}

// javaLong converts like Java's (long) cast of a double: NaN becomes 0 and
// out-of-range values saturate. Go leaves those cases implementation-defined,
// and degenerate parameters (e.g. a Zipfian over 0 items) do reach them.
func javaLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaInt converts like Java's (int) cast of a double (NaN -> 0, saturating
// at the int32 bounds). Upstream's hotspot generator relies on it.
func javaInt(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int64(int32(f))
}

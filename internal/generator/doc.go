// Package generator provides the random number source, the key-number and
// field-length distributions, the insert counters and the value/key builders
// of ycsbctl.
//
// The algorithms follow Java YCSB's site.ycsb.generator and CoreWorkload so
// that keys, deterministic values and the Zipfian constants match upstream
// bit-for-bit, and every distribution matches upstream statistically (YCSB
// itself draws from an unseeded ThreadLocalRandom, so individual draws can
// never be reproduced; only the distributions can).
//
// Concurrency model: a *Rand belongs to one goroutine. Generators with
// mutable per-instance state (Zipfian, SkewedLatest) implement Cloner and
// every worker must use its own clone. Counter, AcknowledgedCounter and
// Sequential are meant to be shared and are safe for concurrent use; the
// remaining generators are immutable after construction and may be shared.
package generator

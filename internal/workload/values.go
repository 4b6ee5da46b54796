package workload

import (
	"github.com/ycsbctl/ycsbctl/internal/generator"
)

// Random field values.
//
// YCSB's RandomByteIterator produces bytes lazily, and its BasicDB never
// consumes them, so Java YCSB's no-op baseline pays nothing for values while
// any adapter that sends them pays per byte. Generating 1000 fresh bytes per
// operation would cost more than the whole rest of the harness, so by
// default every value is a window of a per-process pool of bytes drawn from
// exactly YCSB's byte distribution, at a random offset. Windows of a pool
// many times larger than a database's compression block rarely overlap
// within one block, so compressibility stays that of YCSB's values.
// `ycsbctl.values=fresh` generates new bytes for every value instead.

// valuePoolSize picks a pool size: at least 4 MiB and at least 64 values of
// the largest field.
func valuePoolSize(cfg *Config) int {
	n := 4 << 20
	if m := int(cfg.FieldLength) * 64; m > n {
		n = m
	}
	return n
}

func newValuePool(n int) []byte {
	b := make([]byte, n)
	// The seed only needs to differ between processes.
	generator.FillRandomValue(generator.NewRand(seedFromTime()), b)
	return b
}

func poolWindow(pool []byte, r *generator.Rand, n int) []byte {
	if n > len(pool) {
		n = len(pool)
	}
	off := int(r.Int64n(int64(len(pool) - n + 1)))
	return pool[off : off+n : off+n]
}

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

// Footprint is what a run of a configuration holds in memory for its
// records' values: Shared once per process, PerWorker for every worker
// thread. Records of megabytes times hundreds of threads reach gigabytes,
// so a run is checked against the host's memory before it starts.
type Footprint struct {
	// Record is the largest record: fieldcount × fieldlength.
	Record int64
	// Shared is the value pool (0 with ycsbctl.values=fresh or
	// dataintegrity, which have none).
	Shared int64
	// Records is how many records a worker holds at once (a batch in the
	// load phase), Copies how many copies of each: the adapter's encoding
	// of the request or a read's result, plus the worker's own value
	// buffers unless values are windows of the pool.
	Records, Copies int64
	// Holds names the copies, for messages.
	Holds string
}

// PerWorker is what one worker holds, in bytes (saturating, never
// overflowing).
func (f Footprint) PerWorker() float64 {
	return float64(f.Record) * float64(f.Records) * float64(f.Copies)
}

// Footprint models what a run of c holds; load is the load phase (where
// batchsize applies).
func (c *Config) Footprint(load bool) Footprint {
	f := Footprint{Record: int64(c.FieldCount) * c.FieldLength, Records: 1, Copies: 1, Holds: "the adapter's encoding of the record"}
	if c.FreshValues || c.DataIntegrity {
		f.Copies++
		f.Holds = "the worker's value buffers, kept with " + PropValues + "=fresh or dataintegrity, and " + f.Holds
	} else {
		f.Shared = int64(valuePoolSize(c))
	}
	if load && c.BatchSize > 1 {
		f.Records = c.BatchSize
	}
	return f
}

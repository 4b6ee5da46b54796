package adapters

import (
	"sync"
	"sync/atomic"
)

// ForEachConcurrently calls fn(i) for i in [0, n) from at most parallelism
// goroutines and returns the first error; after an error no new calls
// start. Bindings whose databases have no useful multi-record write (every
// YCSB record is its own partition or row) implement BatchInsert with it,
// through FanOut: concurrent single-record writes go straight to their
// owners and pipeline over the driver's pooled connections. It returns
// once every call has finished, so the caller's keys and values stay
// valid throughout.
func ForEachConcurrently(n, parallelism int, fn func(i int) error) error {
	if n <= 0 {
		return nil
	}
	par := min(max(parallelism, 1), n)
	var (
		next     atomic.Int64
		firstErr atomic.Pointer[error]
		wg       sync.WaitGroup
	)
	for w := 0; w < par; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return *e
	}
	return nil
}

package hbase

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// ForWorker implements adapters.Threader: every client thread gets its
// own reused calls (worker.go) and, with clientbuffering=true, its own
// write buffer, as every YCSB thread has its own BufferedMutator.
func (d *DB) ForWorker(_ context.Context, _, _ int) (adapters.DB, error) {
	w := &worker{DB: d}
	if d.rpc != nil {
		w = d.newWorker()
	}
	if !d.buffering {
		return w, nil
	}
	return &bufferedWorker{worker: w, seen: map[string]int{}}, nil
}

// bufferedWorker is one thread's handle with YCSB's BufferedMutator
// semantics: Insert, Update and Delete only add the mutation to the buffer
// and return OK; once the buffered mutations reach writebuffersize bytes
// they are sent, and the write that filled the buffer waits for that and
// reports its outcome; Close (measured as CLEANUP) sends the rest. Reads
// and scans go to the server directly and do not see buffered writes,
// as in YCSB. Used by one goroutine only.
type bufferedWorker struct {
	*worker
	pending []mutation
	bytes   int64
	// seen and wave place repeated writes of one row in later waves of a
	// flush, so that they reach the server in the order they were made.
	seen map[string]int
	wave []int
}

// mutation is a buffered put or delete. Its memory is its own: the
// caller's key and values are only valid during the call.
type mutation struct {
	table []byte
	key   []byte
	cols  map[string][]byte // nil for a delete
	size  int64
}

var (
	_ adapters.DB            = (*bufferedWorker)(nil)
	_ adapters.BatchInserter = (*bufferedWorker)(nil)
	_ adapters.Closer        = (*bufferedWorker)(nil)
)

// heapSize estimates what HBase's client counts against writebuffersize
// for a mutation (Mutation.heapSize: object overhead plus one KeyValue per
// cell holding row, family, qualifier, timestamp, type and value).
func heapSize(key []byte, family string, values []adapters.Field) int64 {
	const mutationOverhead, cellOverhead = 120, 56
	n := int64(mutationOverhead + len(key))
	for i := range values {
		n += int64(cellOverhead + len(key) + len(family) + len(values[i].Name) + len(values[i].Value))
	}
	return n
}

func (w *bufferedWorker) add(ctx context.Context, table string, key []byte, values []adapters.Field, del bool) adapters.Status {
	size := len(key)
	for i := range values {
		size += len(values[i].Value)
	}
	buf := make([]byte, 0, size)
	buf = append(buf, key...)
	m := mutation{table: w.tableName(table), key: buf[:len(key):len(key)], size: heapSize(key, w.family, values)}
	if !del {
		m.cols = make(map[string][]byte, len(values))
		for i := range values {
			start := len(buf)
			buf = append(buf, values[i].Value...)
			m.cols[values[i].Name] = buf[start:len(buf):len(buf)]
		}
	}
	w.pending = append(w.pending, m)
	w.bytes += m.size
	if w.bytes < w.writeBuffer {
		return adapters.OK
	}
	if err := w.flush(ctx); err != nil {
		w.errLog.printf("hbase: %v", err)
		return adapters.Error
	}
	return adapters.OK
}

// Insert buffers a put of the record.
func (w *bufferedWorker) Insert(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	return w.add(ctx, table, key, values, false)
}

// Update buffers a put of the changed qualifiers.
func (w *bufferedWorker) Update(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if len(values) == 0 {
		return adapters.OK
	}
	return w.add(ctx, table, key, values, false)
}

// Delete buffers a delete of the row, as YCSB's buffered client does.
func (w *bufferedWorker) Delete(ctx context.Context, table string, key []byte) adapters.Status {
	return w.add(ctx, table, key, nil, true)
}

// BatchInsert (load with batchsize > 1) buffers every record of the batch.
func (w *bufferedWorker) BatchInsert(ctx context.Context, table string, keys [][]byte, values [][]adapters.Field) adapters.Status {
	if st, done := adapters.CheckBatch(keys, values); done {
		return st
	}
	st := adapters.OK
	for i := range keys {
		if s := w.add(ctx, table, keys[i], values[i], false); !s.IsOK() {
			st = s
		}
	}
	return st
}

// flush sends every buffered mutation and empties the buffer. Mutations go
// out concurrently (hbase.batchparallelism in flight), so that gohbase's
// per-RegionServer queue merges them into MultiRequests, the way a
// BufferedMutator groups its buffer by server; gohbase re-locates moved
// regions and retries until each call's hbase.timeout. Every mutation is
// attempted even when others fail, and failures are counted (see
// FailedBufferedWrites) and returned, never dropped silently.
func (w *bufferedWorker) flush(ctx context.Context) error {
	n := len(w.pending)
	if n == 0 {
		return nil
	}
	clear(w.seen)
	w.wave = w.wave[:0]
	waves := 1
	for i := range w.pending {
		k := string(w.pending[i].table) + "\x00" + string(w.pending[i].key)
		wv := w.seen[k]
		w.seen[k] = wv + 1
		w.wave = append(w.wave, wv)
		waves = max(waves, wv+1)
	}
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	idx := make([]int, 0, n)
	for wv := 0; wv < waves; wv++ {
		idx = idx[:0]
		for i := range w.pending {
			if w.wave[i] == wv {
				idx = append(idx, i)
			}
		}
		_ = adapters.ForEachConcurrently(len(idx), w.batchPar, func(j int) error {
			if err := w.send(ctx, &w.pending[idx[j]]); err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, &err)
			}
			return nil
		})
	}
	clear(w.pending) // drop references to the sent buffers
	w.pending = w.pending[:0]
	w.bytes = 0
	if f := failed.Load(); f > 0 {
		w.failedBuffered.Add(f)
		return fmt.Errorf("%d of %d buffered writes failed (first: %v)", f, n, *firstErr.Load())
	}
	return nil
}

func (w *bufferedWorker) send(ctx context.Context, m *mutation) error {
	ctx, cancel := w.opCtx(ctx)
	defer cancel()
	if m.cols == nil {
		del, err := hrpc.NewDel(ctx, m.table, m.key, nil, hrpc.Durability(w.durability))
		if err != nil {
			return err
		}
		_, err = w.client.Delete(del)
		return err
	}
	put, err := hrpc.NewPut(ctx, m.table, m.key, map[string]map[string][]byte{w.family: m.cols},
		hrpc.Durability(w.durability))
	if err != nil {
		return err
	}
	_, err = w.client.Put(put)
	return err
}

// Close sends what is still buffered; the engine measures it as YCSB's
// CLEANUP. A failure is returned so that the run reports it.
func (w *bufferedWorker) Close() error {
	if err := w.flush(context.Background()); err != nil {
		// Not rate-limited: this is the last word on these writes.
		log.Printf("hbase: cleanup flush: %v", err)
		return fmt.Errorf("hbase: cleanup flush: %w", err)
	}
	return nil
}

// FailedBufferedWrites returns how many buffered writes could not be
// written since Open (0 without clientbuffering).
func (d *DB) FailedBufferedWrites() int64 { return d.failedBuffered.Load() }

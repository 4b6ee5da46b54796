package mongodb

import (
	"context"
	"fmt"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// ForWorker implements adapters.Threader. With batchsize > 1 each client
// thread gets its own insert buffer, as each YCSB thread has its own
// MongoDbClient with its own bulkInserts list: an Insert that only fills
// the buffer returns BATCHED_OK at once, and the Insert that completes a
// batch sends it with one unordered InsertMany and returns its status. The
// load phase's batches go through BatchInsert unchanged. With batchsize 1
// the shared DB serves every worker.
func (d *DB) ForWorker(_ context.Context, _, _ int) (adapters.DB, error) {
	if d.cfg.batchSize <= 1 {
		return d, nil
	}
	n := int(d.cfg.batchSize)
	return &batchWorker{DB: d, keys: make([][]byte, 0, n), values: make([][]adapters.Field, 0, n)}, nil
}

// batchWorker is one thread's handle; used by one goroutine only.
type batchWorker struct {
	*DB
	table  string
	keys   [][]byte
	values [][]adapters.Field
}

var (
	_ adapters.DB            = (*batchWorker)(nil)
	_ adapters.BatchInserter = (*batchWorker)(nil)
	_ adapters.Closer        = (*batchWorker)(nil)
)

// Insert buffers the record (copying key and values: the caller reuses
// them) and sends the batch once it holds batchsize records. A change of
// table sends what is buffered first, since a batch goes to one collection.
func (w *batchWorker) Insert(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if !validFields(values) {
		return adapters.BadRequest
	}
	if len(w.keys) > 0 && table != w.table {
		if st := w.flush(ctx); !st.IsOK() {
			return st
		}
	}
	w.table = table
	i := len(w.keys)
	w.keys = w.keys[:i+1]
	w.keys[i] = append(w.keys[i][:0], key...)
	w.values = w.values[:i+1]
	// Slots keep their field slices and value buffers from earlier
	// batches, so a steady run copies into memory it already has.
	vals := w.values[i]
	if cap(vals) < len(values) {
		vals = append(vals[:cap(vals)], make([]adapters.Field, len(values)-cap(vals))...)
	}
	vals = vals[:len(values)]
	for j, f := range values {
		vals[j].Name = f.Name
		vals[j].Value = append(vals[j].Value[:0], f.Value...)
	}
	w.values[i] = vals
	if len(w.keys) < int(w.cfg.batchSize) {
		return adapters.BatchedOK
	}
	return w.flush(ctx)
}

// flush sends the buffered records and empties the buffer whatever the
// outcome (a failed batch is reported by its status, as in YCSB, and not
// retried here: the workload's own retry policy applies to inserts).
func (w *batchWorker) flush(ctx context.Context) adapters.Status {
	if len(w.keys) == 0 {
		return adapters.OK
	}
	st := w.BatchInsert(ctx, w.table, w.keys, w.values)
	w.keys = w.keys[:0]
	w.values = w.values[:0]
	return st
}

// Close sends what is still buffered; the engine measures it as CLEANUP.
// A failure is returned (and was logged by the DB) so that it is not lost.
func (w *batchWorker) Close() error {
	n := len(w.keys)
	if st := w.flush(context.Background()); !st.IsOK() {
		return fmt.Errorf("mongodb: sending the last %d buffered inserts at cleanup: %s", n, st)
	}
	return nil
}

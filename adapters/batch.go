package adapters

import "context"

// CheckBatch is the guard every BatchInsert starts with, whatever the
// database: keys and values that differ in number are the caller's error
// (BadRequest), and an empty batch has nothing to write (OK). done says
// the batch is answered by st and must not be written.
func CheckBatch(keys [][]byte, values [][]Field) (st Status, done bool) {
	switch {
	case len(keys) != len(values):
		return BadRequest, true
	case len(keys) == 0:
		return OK, true
	}
	return OK, false
}

// FanOut is BatchInsert for a binding whose database has no useful
// multi-record write (every YCSB record is its own partition or row): the
// batch goes out as concurrent single-record inserts, Parallelism in
// flight (see ForEachConcurrently), and the call returns once every one
// has finished. The batch's status is OK only if every record was
// written; otherwise it is the first failure's, as Fail says it.
type FanOut struct {
	// Parallelism bounds the inserts in flight (the binding's
	// batchparallelism property).
	Parallelism int
	// Deadline gives each record's insert its own context: a large batch
	// may rightly take longer than one operation's timeout.
	Deadline func(context.Context) (context.Context, context.CancelFunc)
	// Insert writes one record.
	Insert func(ctx context.Context, table string, key []byte, values []Field) error
	// Fail turns the first failure into the batch's status, and logs it
	// as the binding logs a failed operation.
	Fail func(op string, err error) Status
}

// BatchInsert checks the batch (CheckBatch) and fans it out.
func (f FanOut) BatchInsert(ctx context.Context, table string, keys [][]byte, values [][]Field) Status {
	if st, done := CheckBatch(keys, values); done {
		return st
	}
	err := ForEachConcurrently(len(keys), f.Parallelism, func(i int) error {
		ictx, cancel := f.Deadline(ctx)
		defer cancel()
		return f.Insert(ictx, table, keys[i], values[i])
	})
	if err != nil {
		return f.Fail("batch insert", err)
	}
	return OK
}

package cassandra

import (
	"context"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// ForWorker implements adapters.Threader: each client thread gets a handle
// that reuses its gocql queries and statement arguments, as each YCSB thread
// has its own CassandraCQLClient with its prepared statements. gocql v2
// queries are immutable while they run, so rebinding one per operation is
// safe; the handle is used by one goroutine only.
func (d *DB) ForWorker(_ context.Context, _, _ int) (adapters.DB, error) {
	w := &worker{DB: d, queries: make(map[*stmt]*gocql.Query, 8)}
	w.scanArgs = []interface{}{&w.scanKey, &w.limit}
	return w, nil
}

// worker is one client thread's handle on the shared session.
type worker struct {
	*DB
	queries map[*stmt]*gocql.Query
	// vals hold the bound values of the current statement; args[i] points
	// at vals[i], so binding a value boxes no new interface.
	vals []cqlBytes
	args []interface{}
	// scanKey and limit are a scan's start key and LIMIT, bound through
	// scanArgs (made once); they stay bound while later pages are read.
	scanKey  cqlBytes
	limit    cqlInt
	scanArgs []interface{}
}

var (
	_ adapters.DB     = (*worker)(nil)
	_ adapters.Closer = (*worker)(nil)
)

// cqlBytes marshals a reused byte slice as a varchar value without
// copying or boxing it (gocql calls MarshalCQL while encoding the frame,
// before the operation returns). A nil slice would be CQL null, which YCSB
// never writes, so an empty value stays an empty string.
type cqlBytes struct{ b []byte }

var emptyValue = []byte{}

func (v *cqlBytes) MarshalCQL(gocql.TypeInfo) ([]byte, error) {
	if v.b == nil {
		return emptyValue, nil
	}
	return v.b, nil
}

// cqlInt marshals a scan's LIMIT (a CQL int) from a reused int.
type cqlInt struct{ n int }

func (v *cqlInt) MarshalCQL(info gocql.TypeInfo) ([]byte, error) {
	return gocql.Marshal(info, v.n)
}

// Close releases nothing: the session belongs to the shared DB, which the
// engine closes once after every worker.
func (w *worker) Close() error { return nil }

// query returns this worker's query for st, made on first use with the
// consistency (and tracing) of its kind.
func (w *worker) query(st *stmt, read bool) *gocql.Query {
	if q, ok := w.queries[st]; ok {
		return q
	}
	q := w.DB.query(st.cql)
	if read {
		q = q.Consistency(w.readCL).Idempotent(true)
	} else {
		q = q.Consistency(w.writeCL)
	}
	w.queries[st] = q
	return q
}

// bind sets n statement arguments and returns them for Query.Bind.
func (w *worker) bind(n int) []interface{} {
	if cap(w.vals) < n {
		w.vals = make([]cqlBytes, n)
		w.args = make([]interface{}, n)
		for i := range w.vals {
			w.args[i] = &w.vals[i]
		}
	}
	return w.args[:n]
}

// clearArgs drops the references to the caller's buffers once the
// statement has run, so that a worker does not pin them.
func (w *worker) clearArgs(n int) {
	for i := 0; i < n; i++ {
		w.vals[i].b = nil
	}
}

// Read implements adapters.DB like DB.Read, with reused query and args.
func (w *worker) Read(ctx context.Context, table string, key []byte, fields []string, into *adapters.Record) adapters.Status {
	into.Reset()
	st := lookup(&w.stmts, opRead, table, nameList(fields), w.buildRead)
	args := w.bind(1)
	w.vals[0].b = key
	iter := w.query(st, true).Bind(args...).IterContext(ctx)
	defer w.clearArgs(1)
	return w.readRow(iter, fields, into)
}

// Scan implements adapters.DB like DB.Scan, with reused query and args.
func (w *worker) Scan(ctx context.Context, table string, startKey []byte, count int, fields []string, into *adapters.Rows) adapters.Status {
	into.Reset()
	if count <= 0 {
		return adapters.OK
	}
	st := lookup(&w.stmts, opScan, table, nameList(fields), w.buildScan)
	w.scanKey.b = startKey
	w.limit.n = count
	iter := w.query(st, true).Bind(w.scanArgs...).PageSize(count).IterContext(ctx)
	defer func() { w.scanKey.b = nil }()
	return w.scanRows(iter, fields, into)
}

// Insert implements adapters.DB like DB.Insert.
func (w *worker) Insert(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	st := lookup(&w.stmts, opInsert, table, fieldList(values), w.buildInsert)
	n := 1 + len(values)
	args := w.bind(n)
	w.vals[0].b = key
	for i := range values {
		w.vals[i+1].b = values[i].Value
	}
	err := w.query(st, false).Bind(args...).ExecContext(ctx)
	w.clearArgs(n)
	if err != nil {
		return w.fail("insert", err)
	}
	return adapters.OK
}

// Update implements adapters.DB like DB.Update.
func (w *worker) Update(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if len(values) == 0 {
		return adapters.OK
	}
	st := lookup(&w.stmts, opUpdate, table, fieldList(values), w.buildUpdate)
	n := len(values) + 1
	args := w.bind(n)
	for i := range values {
		w.vals[i].b = values[i].Value
	}
	w.vals[len(values)].b = key
	err := w.query(st, false).Bind(args...).ExecContext(ctx)
	w.clearArgs(n)
	if err != nil {
		return w.fail("update", err)
	}
	return adapters.OK
}

// Delete implements adapters.DB like DB.Delete.
func (w *worker) Delete(ctx context.Context, table string, key []byte) adapters.Status {
	st := lookup(&w.stmts, opDelete, table, nameList(nil), w.buildDelete)
	args := w.bind(1)
	w.vals[0].b = key
	err := w.query(st, false).Bind(args...).ExecContext(ctx)
	w.clearArgs(1)
	if err != nil {
		return w.fail("delete", err)
	}
	return adapters.OK
}

package cassandra

import (
	"context"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// opCtx bounds a batch insert's record by the read timeout (plus slack so
// that gocql's own, more specific timeout error normally fires first) when
// the caller gave no deadline. Single operations need no such context:
// gocql bounds every request by cluster.Timeout (cassandra.readtimeoutmillis)
// and fails at once when no host is up, and a per-operation WithTimeout
// would cost a timer and a registration on the caller's context (a lock
// shared by every worker) each time.
func (d *DB) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d.opTimeout)
}

// Read implements adapters.DB: SELECT the named fields (or *) of one row.
func (d *DB) Read(ctx context.Context, table string, key []byte, fields []string, into *adapters.Record) adapters.Status {
	into.Reset()
	st := lookup(&d.stmts, opRead, table, nameList(fields), d.buildRead)
	iter := d.query(st.cql, key).Consistency(d.readCL).Idempotent(true).IterContext(ctx)
	return d.readRow(iter, fields, into)
}

// readRow copies the single row of a read's iter into into.
func (d *DB) readRow(iter *gocql.Iter, fields []string, into *adapters.Record) adapters.Status {
	cols := iter.Columns()
	rb := getRowBuf(len(cols))
	defer putRowBuf(rb)
	found := iter.Scan(rb.dest...)
	if err := iter.Close(); err != nil {
		return d.fail("read", err)
	}
	if !found {
		return adapters.NotFound
	}
	rb.emit(into, cols, fields)
	return adapters.OK
}

// Scan implements adapters.DB the way YCSB does for Cassandra: rows whose
// partition token is >= the start key's token, in token order.
func (d *DB) Scan(ctx context.Context, table string, startKey []byte, count int, fields []string, into *adapters.Rows) adapters.Status {
	into.Reset()
	if count <= 0 {
		return adapters.OK
	}
	st := lookup(&d.stmts, opScan, table, nameList(fields), d.buildScan)
	// One page holds the whole result (LIMIT), so there is no extra round
	// trip for paging state.
	iter := d.query(st.cql, startKey, count).Consistency(d.readCL).Idempotent(true).
		PageSize(count).IterContext(ctx)
	return d.scanRows(iter, fields, into)
}

// scanRows copies a scan's rows from iter into into.
func (d *DB) scanRows(iter *gocql.Iter, fields []string, into *adapters.Rows) adapters.Status {
	cols := iter.Columns()
	keyIdx := -1
	for i := range cols {
		if cols[i].Name == keyColumn {
			keyIdx = i
			break
		}
	}
	rb := getRowBuf(len(cols))
	defer putRowBuf(rb)
	for iter.Scan(rb.dest...) {
		var rec *adapters.Record
		if keyIdx >= 0 {
			rec = into.Next(rb.sinks[keyIdx].buf)
		} else {
			rec = into.Next(nil)
		}
		rb.emitSkipping(rec, cols, fields, keyIdx)
	}
	if err := iter.Close(); err != nil {
		into.Reset()
		return d.fail("scan", err)
	}
	return adapters.OK
}

// Insert implements adapters.DB with a plain INSERT, as YCSB does (an
// upsert in Cassandra; no existence check).
func (d *DB) Insert(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if err := d.insert(ctx, table, key, values); err != nil {
		return d.fail("insert", err)
	}
	return adapters.OK
}

func (d *DB) insert(ctx context.Context, table string, key []byte, values []adapters.Field) error {
	st := lookup(&d.stmts, opInsert, table, fieldList(values), d.buildInsert)
	args := make([]interface{}, 1+len(values))
	args[0] = key
	for i := range values {
		args[i+1] = values[i].Value
	}
	return d.query(st.cql, args...).Consistency(d.writeCL).ExecContext(ctx)
}

// Update implements adapters.DB with UPDATE ... SET f = ? WHERE y_id = ?.
func (d *DB) Update(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if len(values) == 0 {
		return adapters.OK
	}
	st := lookup(&d.stmts, opUpdate, table, fieldList(values), d.buildUpdate)
	args := make([]interface{}, len(values)+1)
	for i := range values {
		args[i] = values[i].Value
	}
	args[len(values)] = key
	if err := d.query(st.cql, args...).Consistency(d.writeCL).ExecContext(ctx); err != nil {
		return d.fail("update", err)
	}
	return adapters.OK
}

// Delete implements adapters.DB. Like YCSB it does not report whether the
// row existed (Cassandra deletes are blind writes).
func (d *DB) Delete(ctx context.Context, table string, key []byte) adapters.Status {
	st := lookup(&d.stmts, opDelete, table, nameList(nil), d.buildDelete)
	if err := d.query(st.cql, key).Consistency(d.writeCL).ExecContext(ctx); err != nil {
		return d.fail("delete", err)
	}
	return adapters.OK
}

// BatchInsert implements adapters.BatchInserter with concurrent single-row
// inserts rather than a CQL BATCH. Each YCSB record is its own partition, so
// an UNLOGGED batch gives no atomicity and funnels every row through one
// coordinator, which must then forward rows to their replicas; it also hits
// Cassandra's batch_size_fail_threshold (50 KiB by default) at about 50
// YCSB-sized records, failing the whole batch. Concurrent token-aware
// inserts go straight to the owning replicas, pipeline over the pooled
// connections and have no size limit. The status is OK only if every
// record was written; otherwise it is the first failure's.
func (d *DB) BatchInsert(ctx context.Context, table string, keys [][]byte, values [][]adapters.Field) adapters.Status {
	return adapters.FanOut{Parallelism: d.batchPar, Deadline: d.opCtx, Insert: d.insert, Fail: d.fail}.BatchInsert(ctx, table, keys, values)
}

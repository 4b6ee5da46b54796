package hbase

import (
	"context"
	"fmt"

	"github.com/tsuna/gohbase/pb"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/opctx"
)

// worker is one client thread's handle: its reads and writes of the
// configured table go out as its own reused calls (calls.go); scans,
// deletes and other tables take gohbase's own requests through the DB.
// Used by one goroutine only.
type worker struct {
	*DB
	get *getCall
	put *putCall
	// deadline bounds each operation by hbase.timeout without a new
	// context per operation.
	deadline *opctx.Deadline
}

var _ adapters.DB = (*worker)(nil)

func (d *DB) newWorker() *worker {
	return &worker{
		DB:       d,
		get:      newGetCall(d.tableBytes, d.familyBytes),
		put:      newPutCall(d.tableBytes, d.familyBytes, d.durability),
		deadline: opctx.New(d.timeout),
	}
}

// Read implements adapters.DB with the worker's Get: the row's cells are
// decoded from the response's cell block into the record.
func (w *worker) Read(ctx context.Context, table string, key []byte, fields []string, into *adapters.Record) adapters.Status {
	if table != w.table || w.get == nil {
		return w.DB.Read(ctx, table, key, fields, into)
	}
	into.Reset()
	g := w.get
	g.start(w.deadline.Start(ctx), key, fields)
	msg, err := w.rpc.SendRPC(g)
	w.deadline.Stop()
	if err != nil {
		// gohbase may still hold the call and its context (queued, or
		// awaiting a late response): neither is reused.
		w.deadline.Discard()
		w.get = newGetCall(w.tableBytes, w.familyBytes)
		return w.fail("read", err)
	}
	resp, ok := msg.(*pb.GetResponse)
	if !ok {
		return w.fail("read", fmt.Errorf("hbase: a Get returned a %T", msg))
	}
	if g.eachCell(resp, func(q, v []byte) { w.addCell(into, q, v, fields) }) == 0 {
		return adapters.NotFound
	}
	return adapters.OK
}

// Insert implements adapters.DB with the worker's Put.
func (w *worker) Insert(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	return w.write("insert", ctx, table, key, values)
}

// Update implements adapters.DB with the worker's Put of the changed
// qualifiers.
func (w *worker) Update(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if len(values) == 0 {
		return adapters.OK
	}
	return w.write("update", ctx, table, key, values)
}

func (w *worker) write(op string, ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if table != w.table || len(values) == 0 || w.put == nil {
		if op == "insert" {
			return w.DB.Insert(ctx, table, key, values)
		}
		return w.DB.Update(ctx, table, key, values)
	}
	p := w.put
	p.start(w.deadline.Start(ctx), key, values)
	msg, err := w.rpc.SendRPC(p)
	w.deadline.Stop()
	if err != nil {
		w.deadline.Discard()
		w.put = newPutCall(w.tableBytes, w.familyBytes, w.durability)
		return w.fail(op, err)
	}
	if _, ok := msg.(*pb.MutateResponse); !ok {
		return w.fail(op, fmt.Errorf("hbase: a Put returned a %T", msg))
	}
	return adapters.OK
}

// Close implements adapters.Closer for the worker alone: the client it
// shares is the DB's, closed with the DB (without this method the DB's
// Close would be promoted and one worker's cleanup would close it for all).
func (w *worker) Close() error { return nil }

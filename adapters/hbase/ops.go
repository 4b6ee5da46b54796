package hbase

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/ycsbctl/ycsbctl/adapters"
)

func (d *DB) tableName(table string) []byte {
	if table == d.table {
		return d.tableBytes
	}
	return []byte(table)
}

// Read implements adapters.DB with a Get of the column family, or of the
// named qualifiers. A row without cells does not exist: NOT_FOUND.
func (d *DB) Read(ctx context.Context, table string, key []byte, fields []string, into *adapters.Record) adapters.Status {
	into.Reset()
	ctx, cancel := d.opCtx(ctx)
	defer cancel()
	// The key is copied: gohbase may still hold the request in its queue
	// after a timeout returns control to us, and the caller reuses key.
	get, err := hrpc.NewGet(ctx, d.tableName(table), clone(key), hrpc.Families(d.families(fields)))
	if err != nil {
		return d.fail("read", err)
	}
	res, err := d.client.Get(get)
	if err != nil {
		return d.fail("read", err)
	}
	if len(res.Cells) == 0 {
		return adapters.NotFound
	}
	for _, c := range res.Cells {
		d.addCell(into, c.Qualifier, c.Value, fields)
	}
	return adapters.OK
}

func (d *DB) families(fields []string) map[string][]string {
	// A nil qualifier list asks for the whole family.
	if fields == nil && d.wholeFamily != nil {
		return d.wholeFamily
	}
	return map[string][]string{d.family: fields}
}

// addCell appends one cell of a row to rec, as YCSB's binding does (the
// qualifier names the field, the value is copied), naming the field with
// the caller's string when fields were given (and skipping cells not
// asked for) and with an interned copy otherwise.
func (d *DB) addCell(rec *adapters.Record, qualifier, value []byte, fields []string) {
	name := ""
	if fields != nil {
		for _, f := range fields {
			if f == string(qualifier) {
				name = f
				break
			}
		}
		if name == "" {
			return
		}
	} else {
		name = d.names.intern(qualifier)
	}
	rec.Add(name, value)
}

// Scan implements adapters.DB: up to count rows from startKey in key
// order. NumberOfRows asks the RegionServer for all of them in one reply,
// and the optional PageFilter stops each region's scan after count rows;
// the scanner is closed as soon as count rows were read.
func (d *DB) Scan(ctx context.Context, table string, startKey []byte, count int, fields []string, into *adapters.Rows) adapters.Status {
	into.Reset()
	if count <= 0 {
		return adapters.OK
	}
	ctx, cancel := d.opCtx(ctx)
	defer cancel()
	opts := []func(hrpc.Call) error{
		hrpc.Families(d.families(fields)),
		hrpc.NumberOfRows(uint32(min(count, 1<<20))),
	}
	switch {
	case d.pageFilter && d.valueFilter != nil:
		opts = append(opts, hrpc.Filters(filter.NewList(filter.MustPassAll, filter.NewPageFilter(int64(count)), d.valueFilter)))
	case d.pageFilter:
		opts = append(opts, hrpc.Filters(filter.NewPageFilter(int64(count))))
	case d.valueFilter != nil:
		opts = append(opts, hrpc.Filters(d.valueFilter))
	}
	scan, err := hrpc.NewScanRange(ctx, d.tableName(table), clone(startKey), nil, opts...)
	if err != nil {
		return d.fail("scan", err)
	}
	sc := d.client.Scan(scan)
	// Rows and their errors come from Next; Close only releases the
	// region server's scanner, and failing that does not undo a read.
	defer func() { _ = sc.Close() }()
	for into.N < count {
		res, err := sc.Next()
		if err != nil {
			if errors.Is(err, errEOF) {
				break
			}
			into.Reset()
			return d.fail("scan", err)
		}
		if len(res.Cells) == 0 {
			continue
		}
		rec := into.Next(res.Cells[0].Row)
		for _, c := range res.Cells {
			d.addCell(rec, c.Qualifier, c.Value, fields)
		}
	}
	return adapters.OK
}

// put builds and sends one Put (insert and update are the same in HBase).
func (d *DB) put(ctx context.Context, table string, key []byte, values []adapters.Field) error {
	// One buffer holds copies of key and values: gohbase may serialize the
	// request after a timed-out call has returned.
	size := len(key)
	for i := range values {
		size += len(values[i].Value)
	}
	buf := make([]byte, 0, size)
	buf = append(buf, key...)
	k := buf[:len(key):len(key)]
	cols := make(map[string][]byte, len(values))
	for i := range values {
		start := len(buf)
		buf = append(buf, values[i].Value...)
		cols[values[i].Name] = buf[start:len(buf):len(buf)]
	}
	put, err := hrpc.NewPut(ctx, d.tableName(table), k, map[string]map[string][]byte{d.family: cols},
		hrpc.Durability(d.durability))
	if err != nil {
		return err
	}
	_, err = d.client.Put(put)
	return err
}

// Insert implements adapters.DB with a Put.
func (d *DB) Insert(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	ctx, cancel := d.opCtx(ctx)
	defer cancel()
	if err := d.put(ctx, table, key, values); err != nil {
		return d.fail("insert", err)
	}
	return adapters.OK
}

// Update implements adapters.DB with a Put of the changed qualifiers.
func (d *DB) Update(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if len(values) == 0 {
		return adapters.OK
	}
	ctx, cancel := d.opCtx(ctx)
	defer cancel()
	if err := d.put(ctx, table, key, values); err != nil {
		return d.fail("update", err)
	}
	return adapters.OK
}

// Delete implements adapters.DB by deleting the whole row. Like YCSB it
// does not check that the row existed.
func (d *DB) Delete(ctx context.Context, table string, key []byte) adapters.Status {
	ctx, cancel := d.opCtx(ctx)
	defer cancel()
	del, err := hrpc.NewDel(ctx, d.tableName(table), clone(key), nil, hrpc.Durability(d.durability))
	if err != nil {
		return d.fail("delete", err)
	}
	if _, err := d.client.Delete(del); err != nil {
		return d.fail("delete", err)
	}
	return adapters.OK
}

// BatchInsert implements adapters.BatchInserter. This gohbase version has
// no explicit batch call; instead, puts issued concurrently to the same
// RegionServer are merged into MultiRequests by its RPC queue. So the batch
// is sent as concurrent puts (up to hbase.batchparallelism in flight, each
// bounded by hbase.timeout), which gohbase coalesces; the call returns when
// every put was acknowledged.
func (d *DB) BatchInsert(ctx context.Context, table string, keys [][]byte, values [][]adapters.Field) adapters.Status {
	return adapters.FanOut{Parallelism: d.batchPar, Deadline: d.opCtx, Insert: d.put, Fail: d.fail}.BatchInsert(ctx, table, keys, values)
}

// errEOF is how gohbase scanners say there are no more rows.
var errEOF = io.EOF

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// nameInterner keeps one string per qualifier seen, so that reads of all
// fields do not allocate a name string per cell. It is copy-on-write and
// bounded; past the bound names are allocated per call.
type nameInterner struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]string]
}

const maxInterned = 4096

func (n *nameInterner) intern(b []byte) string {
	if m := n.m.Load(); m != nil {
		if s, ok := (*m)[string(b)]; ok {
			return s
		}
	}
	s := string(b)
	n.mu.Lock()
	defer n.mu.Unlock()
	old := n.m.Load()
	if old != nil && len(*old) >= maxInterned {
		return s
	}
	nm := make(map[string]string, 16)
	if old != nil {
		for k, v := range *old {
			nm[k] = v
		}
	}
	nm[s] = s
	n.m.Store(&nm)
	return s
}

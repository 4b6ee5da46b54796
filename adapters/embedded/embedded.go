// Package embedded is the default binding: a real on-disk, ordered
// key-value engine (Pebble, CockroachDB's LSM store) inside the ycsbctl
// process, so that a first benchmark needs no server. Records are stored
// under "<table>\x00<key>" with their fields length-prefixed, so scans
// return keys in byte order as HBase does.
package embedded

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// Property names.
const (
	PropDir   = "embedded.dir"
	PropSync  = "embedded.sync"
	PropCache = "embedded.cachemb"
)

// DefaultDir is where data lives unless embedded.dir says otherwise; it
// persists between commands so that `load` then `run` see the same data.
// It is per user (under the user's cache directory, or a directory named
// after the user id in the temporary directory when there is no home), so
// that two users never share, or are locked out of, one store by accident.
func DefaultDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ycsbctl", "embedded")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("ycsbctl-embedded-%d", os.Getuid()))
}

// Where says where the store of properties p lives, for the first line a
// run prints.
func Where(p *properties.Properties) string {
	return fmt.Sprintf("the embedded store in %s (%s)", p.String(PropDir, DefaultDir()), PropDir)
}

func init() {
	adapters.Register(adapters.Info{
		Name:        "embedded",
		Description: "embedded on-disk ordered store (Pebble LSM); the default when no db is given",
		Properties: []properties.Known{
			{Name: PropDir, Default: DefaultDir(), Help: "data directory (kept between load and run)"},
			{Name: PropSync, Default: "false", Help: "fsync every write"},
			{Name: PropCache, Default: "256", Help: "block cache size in MiB"},
			{Name: "table", Default: "usertable", Help: "table named by init and drop (one key space per table)"},
		},
		Differences: []string{
			"Not a YCSB binding: ycsbctl's own store, so that a run works with no server; no YCSB class maps to it.",
		},
		Driver: adapters.DriverFunc(Open),
		Check:  Check,
		Where:  Where,
	})
}

// DB is an open store. Pebble is safe for concurrent use, so one DB serves
// every worker.
type DB struct {
	db    *pebble.DB
	dir   string
	wopts *pebble.WriteOptions
	cache *pebble.Cache
	pool  sync.Pool
}

// settings reads and checks the store's properties: Open's and Check's.
func settings(p *properties.Properties) (dir string, sync bool, cacheMB int64, err error) {
	dir = p.String(PropDir, DefaultDir())
	if sync, err = p.Bool(PropSync, false); err != nil {
		return "", false, 0, err
	}
	if cacheMB, err = p.PositiveInt64(PropCache, 256); err != nil {
		return "", false, 0, err
	}
	return dir, sync, cacheMB, nil
}

// Check checks the store's properties without creating or opening the
// store (adapters.Info.Check).
func Check(p *properties.Properties) error {
	_, _, _, err := settings(p)
	return err
}

// Open opens (creating if needed) the store in embedded.dir.
func Open(_ context.Context, p *properties.Properties) (adapters.DB, error) {
	dir, sync, mb, err := settings(p)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("property %q=%q: cannot create directory: %w", PropDir, dir, err)
	}
	cache := pebble.NewCache(mb << 20)
	db, err := pebble.Open(dir, &pebble.Options{Cache: cache, Logger: quietLogger{}})
	if err != nil {
		cache.Unref()
		hint := ""
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
			// Pebble locks its directory: one process per store.
			hint = " (another process has this store open; give each process, e.g. each agent on a host, its own " + PropDir + ")"
		}
		return nil, fmt.Errorf("property %q=%q: cannot open store: %w%s", PropDir, dir, err, hint)
	}
	w := pebble.NoSync
	if sync {
		w = pebble.Sync
	}
	d := &DB{db: db, dir: dir, wopts: w, cache: cache}
	d.pool.New = func() any { b := make([]byte, 0, 2048); return &b }
	return d, nil
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{})  {}
func (quietLogger) Errorf(string, ...interface{}) {}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	panic(fmt.Sprintf(format, args...))
}

// Close closes the store.
func (d *DB) Close() error {
	err := d.db.Close()
	d.cache.Unref()
	return err
}

func rowKey(dst []byte, table string, key []byte) []byte {
	dst = append(dst[:0], table...)
	dst = append(dst, 0)
	return append(dst, key...)
}

// encode appends fields as uvarint(len(name)) name uvarint(len(value)) value.
func encode(dst []byte, values []adapters.Field) []byte {
	for _, f := range values {
		dst = binary.AppendUvarint(dst, uint64(len(f.Name)))
		dst = append(dst, f.Name...)
		dst = binary.AppendUvarint(dst, uint64(len(f.Value)))
		dst = append(dst, f.Value...)
	}
	return dst
}

// decode calls fn for every stored field.
func decode(b []byte, fn func(name, value []byte)) error {
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return errors.New("corrupt record")
		}
		name := b[k : k+int(n)]
		b = b[k+int(n):]
		n, k = binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return errors.New("corrupt record")
		}
		fn(name, b[k:k+int(n)])
		b = b[k+int(n):]
	}
	return nil
}

func fill(into *adapters.Record, raw []byte, fields []string) error {
	return decode(raw, func(name, value []byte) {
		if fields == nil {
			into.Add(string(name), value)
			return
		}
		for _, f := range fields {
			if f == string(name) {
				into.Add(f, value)
				return
			}
		}
	})
}

func (d *DB) buf() *[]byte { return d.pool.Get().(*[]byte) }

// Read implements adapters.DB.
func (d *DB) Read(_ context.Context, table string, key []byte, fields []string, into *adapters.Record) adapters.Status {
	bp := d.buf()
	defer d.pool.Put(bp)
	*bp = rowKey(*bp, table, key)
	v, c, err := d.db.Get(*bp)
	if errors.Is(err, pebble.ErrNotFound) {
		return adapters.NotFound
	}
	if err != nil {
		return adapters.Error
	}
	// v is valid until c is closed, so fill copies it first.
	st := adapters.OK
	if into != nil && fill(into, v, fields) != nil {
		st = adapters.UnexpectedState
	}
	if c.Close() != nil {
		return adapters.Error
	}
	return st
}

// Scan implements adapters.DB: count rows from startKey in key order.
func (d *DB) Scan(_ context.Context, table string, startKey []byte, count int, fields []string, into *adapters.Rows) (st adapters.Status) {
	lower := rowKey(nil, table, startKey)
	upper := append([]byte(table), 1)
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return adapters.Error
	}
	// Close returns the iterator's accumulated error: a scan that ran
	// into one failed, even if its rows looked fine.
	defer func() {
		if it.Close() != nil && st == adapters.OK {
			st = adapters.Error
		}
	}()
	prefix := len(table) + 1
	n := 0
	for ok := it.First(); ok && n < count; ok = it.Next() {
		if into != nil {
			rec := into.Next(it.Key()[prefix:])
			if fill(rec, it.Value(), fields) != nil {
				return adapters.UnexpectedState
			}
		}
		n++
	}
	if it.Error() != nil {
		return adapters.Error
	}
	return adapters.OK
}

// Update implements adapters.DB: merge the given fields into the record.
func (d *DB) Update(_ context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	kp := d.buf()
	defer d.pool.Put(kp)
	*kp = rowKey(*kp, table, key)
	old, c, err := d.db.Get(*kp)
	if errors.Is(err, pebble.ErrNotFound) {
		return adapters.NotFound
	}
	if err != nil {
		return adapters.Error
	}
	vp := d.buf()
	defer d.pool.Put(vp)
	out := (*vp)[:0]
	// Keep the old fields that are not overwritten, then the new ones.
	derr := decode(old, func(name, value []byte) {
		for _, f := range values {
			if f.Name == string(name) {
				return
			}
		}
		out = binary.AppendUvarint(out, uint64(len(name)))
		out = append(out, name...)
		out = binary.AppendUvarint(out, uint64(len(value)))
		out = append(out, value...)
	})
	cerr := c.Close()
	if derr != nil {
		return adapters.UnexpectedState
	}
	if cerr != nil {
		return adapters.Error
	}
	out = encode(out, values)
	*vp = out
	if d.db.Set(*kp, out, d.wopts) != nil {
		return adapters.Error
	}
	return adapters.OK
}

// Insert implements adapters.DB.
func (d *DB) Insert(_ context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	kp, vp := d.buf(), d.buf()
	defer d.pool.Put(kp)
	defer d.pool.Put(vp)
	*kp = rowKey(*kp, table, key)
	*vp = encode((*vp)[:0], values)
	if d.db.Set(*kp, *vp, d.wopts) != nil {
		return adapters.Error
	}
	return adapters.OK
}

// Delete implements adapters.DB.
func (d *DB) Delete(_ context.Context, table string, key []byte) adapters.Status {
	kp := d.buf()
	defer d.pool.Put(kp)
	*kp = rowKey(*kp, table, key)
	if _, c, err := d.db.Get(*kp); errors.Is(err, pebble.ErrNotFound) {
		return adapters.NotFound
	} else if err == nil && c.Close() != nil {
		return adapters.Error
	}
	if d.db.Delete(*kp, d.wopts) != nil {
		return adapters.Error
	}
	return adapters.OK
}

// BatchInsert writes a batch atomically.
func (d *DB) BatchInsert(_ context.Context, table string, keys [][]byte, values [][]adapters.Field) (st adapters.Status) {
	if st, done := adapters.CheckBatch(keys, values); done {
		return st
	}
	b := d.db.NewBatch()
	defer func() {
		if b.Close() != nil && st == adapters.OK {
			st = adapters.Error
		}
	}()
	var k, v []byte
	for i := range keys {
		k = rowKey(k, table, keys[i])
		v = encode(v[:0], values[i])
		if b.Set(k, v, nil) != nil {
			return adapters.Error
		}
	}
	if b.Commit(d.wopts) != nil {
		return adapters.Error
	}
	return adapters.OK
}

// CountRecords counts the records of a table.
func (d *DB) CountRecords(_ context.Context, table string) (int64, error) {
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: append([]byte(table), 0), UpperBound: append([]byte(table), 1)})
	if err != nil {
		return 0, err
	}
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	// Close returns the iterator's accumulated error, if any.
	return n, it.Close()
}

// CreateSchema has nothing to create: tables are key prefixes.
func (d *DB) CreateSchema(_ context.Context, p *properties.Properties) (string, error) {
	return fmt.Sprintf("embedded store at %s is ready; table %q needs no schema", d.dir, p.String("table", "usertable")), nil
}

// DropSchema deletes every record of the table.
func (d *DB) DropSchema(ctx context.Context, p *properties.Properties) (string, error) {
	table := p.String("table", "usertable")
	n, err := d.CountRecords(ctx, table)
	if err != nil {
		return "", err
	}
	if err := d.db.DeleteRange(append([]byte(table), 0), append([]byte(table), 1), pebble.Sync); err != nil {
		return "", err
	}
	// Compaction only reclaims space; a failure leaves the range deleted.
	_ = d.db.Compact(append([]byte(table), 0), append([]byte(table), 1), true)
	return fmt.Sprintf("deleted %s of table %q in %s", plural.Count(n, "record"), table, d.dir), nil
}

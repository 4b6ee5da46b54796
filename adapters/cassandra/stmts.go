package cassandra

import (
	"strings"
	"sync"
	"sync/atomic"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/adapters"
)

type opKind uint8

const (
	opRead opKind = iota
	opScan
	opInsert
	opUpdate
	opDelete
)

// names abstracts over the two ways callers pass a field list ([]string for
// reads, []adapters.Field for writes) so that the cache lookup needs no
// conversion, hence no allocation, on the hot path.
type names interface {
	Len() int
	Name(i int) string
	// All reports "all fields" (a nil list for reads).
	All() bool
}

type nameList []string

func (n nameList) Len() int          { return len(n) }
func (n nameList) Name(i int) string { return n[i] }
func (n nameList) All() bool         { return n == nil }

type fieldList []adapters.Field

func (f fieldList) Len() int          { return len(f) }
func (f fieldList) Name(i int) string { return f[i].Name }
func (f fieldList) All() bool         { return false }

// stmt is the CQL text for one (operation, table, field list).
type stmt struct {
	names []string
	all   bool
	cql   string
}

type stmtKey struct {
	op    opKind
	table string
	hash  uint64
}

// stmtCache maps a field list to its CQL text. Workloads use a handful of
// distinct lists (all fields, each single field), so the map is tiny; it is
// copy-on-write behind an atomic pointer so that the read path takes no lock
// and builds no strings.
type stmtCache struct {
	mu sync.Mutex
	m  atomic.Pointer[map[stmtKey][]*stmt]
}

func hashNames[N names](n N) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	if n.All() {
		return h ^ 0x5a
	}
	for i := 0; i < n.Len(); i++ {
		s := n.Name(i)
		for j := 0; j < len(s); j++ {
			h ^= uint64(s[j])
			h *= prime
		}
		// A separator byte that cannot occur in CQL identifiers keeps
		// ["ab","c"] and ["a","bc"] apart.
		h ^= 0xff
		h *= prime
	}
	return h
}

func matches[N names](s *stmt, n N) bool {
	if n.All() || s.all {
		return n.All() == s.all
	}
	if len(s.names) != n.Len() {
		return false
	}
	for i, v := range s.names {
		if v != n.Name(i) {
			return false
		}
	}
	return true
}

// lookup returns the statement for op on table with field list n, building
// it on first use. It is generic so that n is never boxed.
func lookup[N names](c *stmtCache, op opKind, table string, n N, build func(table string, fields []string) string) *stmt {
	k := stmtKey{op: op, table: table, hash: hashNames(n)}
	if m := c.m.Load(); m != nil {
		for _, s := range (*m)[k] {
			if matches(s, n) {
				return s
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		for _, s := range (*old)[k] {
			if matches(s, n) {
				return s
			}
		}
	}
	s := &stmt{all: n.All()}
	if !s.all {
		s.names = make([]string, n.Len())
		for i := range s.names {
			s.names[i] = n.Name(i)
		}
	}
	fields := s.names
	if s.all {
		fields = nil
	}
	s.cql = build(table, fields)
	nm := make(map[stmtKey][]*stmt, 8)
	if old != nil {
		for kk, v := range *old {
			nm[kk] = v
		}
	}
	nm[k] = append(append([]*stmt(nil), nm[k]...), s)
	c.m.Store(&nm)
	return s
}

func (d *DB) qualified(table string) string { return d.keyspace + "." + table }

func (d *DB) buildRead(table string, fields []string) string {
	cols := "*"
	if fields != nil {
		cols = strings.Join(fields, ", ")
	}
	return "SELECT " + cols + " FROM " + d.qualified(table) + " WHERE " + keyColumn + " = ?"
}

func (d *DB) buildScan(table string, fields []string) string {
	cols := "*"
	if fields != nil {
		// The key comes first so that each row's key is known.
		cols = strings.Join(append([]string{keyColumn}, fields...), ", ")
	}
	return "SELECT " + cols + " FROM " + d.qualified(table) +
		" WHERE token(" + keyColumn + ") >= token(?) LIMIT ?"
}

func (d *DB) buildInsert(table string, fields []string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + d.qualified(table) + " (" + keyColumn)
	for _, f := range fields {
		b.WriteString(", " + f)
	}
	b.WriteString(") VALUES (?")
	for range fields {
		b.WriteString(", ?")
	}
	b.WriteString(")")
	return b.String()
}

func (d *DB) buildUpdate(table string, fields []string) string {
	var b strings.Builder
	b.WriteString("UPDATE " + d.qualified(table) + " SET ")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f + " = ?")
	}
	b.WriteString(" WHERE " + keyColumn + " = ?")
	return b.String()
}

func (d *DB) buildDelete(table string, _ []string) string {
	return "DELETE FROM " + d.qualified(table) + " WHERE " + keyColumn + " = ?"
}

// colSink receives one column of the current row straight from gocql's
// frame buffer (gocql calls UnmarshalCQL during Iter.Scan), copying it into
// a reused buffer; this avoids gocql's per-value allocation. data == nil
// means CQL null.
type colSink struct {
	buf  []byte
	null bool
}

func (s *colSink) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	s.null = data == nil
	s.buf = append(s.buf[:0], data...)
	return nil
}

// rowBuf is the per-call scan target: one sink per selected column.
type rowBuf struct {
	sinks []colSink
	dest  []interface{}
}

var rowBufPool = sync.Pool{New: func() any { return new(rowBuf) }}

func getRowBuf(n int) *rowBuf {
	rb := rowBufPool.Get().(*rowBuf)
	if cap(rb.sinks) < n {
		rb.sinks = make([]colSink, n)
		rb.dest = make([]interface{}, n)
	}
	rb.sinks = rb.sinks[:n]
	rb.dest = rb.dest[:n]
	for i := range rb.sinks {
		rb.dest[i] = &rb.sinks[i]
	}
	return rb
}

func putRowBuf(rb *rowBuf) {
	// Very large values would pin memory in the pool; let them go.
	for i := range rb.sinks {
		if cap(rb.sinks[i].buf) > 1<<20 {
			rb.sinks[i].buf = nil
		}
	}
	rowBufPool.Put(rb)
}

// emit adds the current row's columns to rec for a point read: caller's
// names when fields were named, column names (minus the key) for SELECT *.
// Null columns are skipped: YCSB has no null field values.
func (rb *rowBuf) emit(rec *adapters.Record, cols []gocql.ColumnInfo, fields []string) {
	for i := range rb.sinks {
		s := &rb.sinks[i]
		if s.null {
			continue
		}
		if fields != nil {
			if i < len(fields) {
				rec.Add(fields[i], s.buf)
			}
			continue
		}
		if cols[i].Name == keyColumn {
			continue
		}
		rec.Add(cols[i].Name, s.buf)
	}
}

// emitSkipping is emit for a scan row, whose key column sits at keyIdx
// (first when fields were named).
func (rb *rowBuf) emitSkipping(rec *adapters.Record, cols []gocql.ColumnInfo, fields []string, keyIdx int) {
	for i := range rb.sinks {
		s := &rb.sinks[i]
		if i == keyIdx || s.null {
			continue
		}
		if fields != nil {
			// Column i is fields[i-1]: the key is column 0.
			if i-1 < len(fields) {
				rec.Add(fields[i-1], s.buf)
			}
			continue
		}
		rec.Add(cols[i].Name, s.buf)
	}
}

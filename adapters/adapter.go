// Package adapters defines what a database binding implements and keeps the
// registry of bindings by name.
//
// The required interface, DB, has YCSB's five operations. Everything else is
// a small optional capability that the engine discovers by type assertion
// (CockroachDB workload style): a binding that can batch inserts implements
// BatchInserter, one that can create its schema implements SchemaManager,
// and so on. A binding that lacks a capability is handled by the caller
// (for example single inserts instead of batches, announced once).
package adapters

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// Field is one column of a record. Name strings are owned by the workload
// and never change; Value bytes are only valid during the call that receives
// them (the engine reuses the buffers), so a binding that keeps a value past
// the call must copy it.
type Field struct {
	Name  string
	Value []byte
}

// Record is a reusable result buffer for a read. Bindings append fields to
// it with Add, which reuses the memory of earlier reads.
type Record struct {
	Fields []Field
}

// Reset empties the record but keeps its buffers.
func (r *Record) Reset() { r.Fields = r.Fields[:0] }

// Add appends a field, copying value into a reused buffer.
func (r *Record) Add(name string, value []byte) {
	n := len(r.Fields)
	if n < cap(r.Fields) {
		r.Fields = r.Fields[:n+1]
		f := &r.Fields[n]
		f.Name = name
		f.Value = append(f.Value[:0], value...)
		return
	}
	r.Fields = append(r.Fields, Field{Name: name, Value: append([]byte(nil), value...)})
}

// Get returns the value of the named field.
func (r *Record) Get(name string) ([]byte, bool) {
	for i := range r.Fields {
		if r.Fields[i].Name == name {
			return r.Fields[i].Value, true
		}
	}
	return nil, false
}

// Rows is a reusable result buffer for a scan.
type Rows struct {
	Keys    [][]byte
	Records []Record
	N       int
}

// Reset empties the rows but keeps their buffers.
func (r *Rows) Reset() { r.N = 0 }

// Next appends a row with the given key and returns its (reset) record for
// the binding to fill.
func (r *Rows) Next(key []byte) *Record {
	if r.N == len(r.Records) {
		r.Records = append(r.Records, Record{})
		r.Keys = append(r.Keys, nil)
	}
	r.Keys[r.N] = append(r.Keys[r.N][:0], key...)
	rec := &r.Records[r.N]
	rec.Reset()
	r.N++
	return rec
}

// DB is a database binding as the engine sees it. One DB value is shared by
// all worker goroutines of a process, so it must be safe for concurrent use
// (drivers pool their connections); per-worker state belongs in a
// WorkerDB returned by the Threader capability.
//
// Keys are only valid during the call. fields == nil means "all fields".
type DB interface {
	Read(ctx context.Context, table string, key []byte, fields []string, into *Record) Status
	Scan(ctx context.Context, table string, startKey []byte, count int, fields []string, into *Rows) Status
	Update(ctx context.Context, table string, key []byte, values []Field) Status
	Insert(ctx context.Context, table string, key []byte, values []Field) Status
	Delete(ctx context.Context, table string, key []byte) Status
}

// Closer is implemented by bindings that hold connections.
type Closer interface {
	Close() error
}

// Threader gives each worker its own handle, as YCSB gives every client
// thread its own DB instance. The returned DB is used by one goroutine only.
// Its Close (if any) is measured as YCSB's CLEANUP operation.
type Threader interface {
	ForWorker(ctx context.Context, worker, workers int) (DB, error)
}

// Scheduled is a worker's handle that is told, before each call of a
// paced run (a target), when the call's schedule said it should start:
// its intended time, from which its latency is counted. The basic
// adapter's simulated server serves calls as they were scheduled, so
// that a harness the host stalls loses latency but not the server's
// throughput (adapters/basic/server.go).
type Scheduled interface {
	Intend(at time.Time)
}

// ProcsAdvisor is implemented by bindings whose operations mostly wait on
// the network, for which the Go scheduler's second and later Ps cost more
// CPU than they give: each response readies a waiting worker, and an idle
// P is woken (a futex call, then a spinning thread that sleeps again) to
// run it. Procs returns how many Ps (GOMAXPROCS) a run with the given
// number of workers needs, or 0 for no advice. The engine applies it for
// the run unless the user set GOMAXPROCS, and never raises the limit.
type ProcsAdvisor interface {
	Procs(workers int) int
}

// inflightPerProc is how many requests in flight one P serves well: at
// some 15 us of client CPU per operation one P sustains about 60k
// operations/s, what 32 workers reach at half a millisecond each.
const inflightPerProc = 32

// NetworkProcs is the advice of a binding whose workers each wait on one
// request at a time: one P per 32 workers.
func NetworkProcs(workers int) int {
	return (workers + inflightPerProc - 1) / inflightPerProc
}

// BatchInserter inserts many records in one call (YCSB's `batchsize`).
// keys[i] goes with values[i]; all slices are only valid during the call.
// The returned Status applies to every record of the batch.
type BatchInserter interface {
	BatchInsert(ctx context.Context, table string, keys [][]byte, values [][]Field) Status
}

// SchemaManager is implemented by bindings that can prepare and remove the
// benchmark's schema (`ycsbctl init` and `ycsbctl drop`). Both must be
// idempotent and return a human-readable account of what they did.
type SchemaManager interface {
	CreateSchema(ctx context.Context, p *properties.Properties) (string, error)
	DropSchema(ctx context.Context, p *properties.Properties) (string, error)
}

// RecordCounter counts the records of a table; integration tests use it to
// check a load.
type RecordCounter interface {
	CountRecords(ctx context.Context, table string) (int64, error)
}

// Driver opens a binding from properties. Open must fail (with an error that
// names the property or endpoint) when the database cannot be reached, so
// that nothing is measured against a dead server.
type Driver interface {
	Open(ctx context.Context, p *properties.Properties) (DB, error)
}

// DriverFunc adapts a function to Driver.
type DriverFunc func(ctx context.Context, p *properties.Properties) (DB, error)

// Open calls f.
func (f DriverFunc) Open(ctx context.Context, p *properties.Properties) (DB, error) {
	return f(ctx, p)
}

// Info describes a registered adapter.
type Info struct {
	Name    string
	Aliases []string
	// Classes are the Java class names of the YCSB bindings this adapter
	// stands in for (site.ycsb.db.CassandraCQLClient, ...), so that YCSB's
	// `-db CLASS` and `db=CLASS` select it.
	Classes     []string
	Description string
	// Properties declares, in display order, every property the adapter
	// reads, with its default: the single source for `ycsbctl dbs`,
	// `ycsbctl properties` and unknown-property warnings.
	Properties []properties.Known
	// Differences has one sentence per YCSB property or behaviour where
	// this adapter differs from YCSB's binding, and why.
	Differences []string
	Driver      Driver
	// Check checks the adapter's properties as Open (and init, for the
	// schema options) does before it connects, without connecting,
	// creating or opening anything (it may read files the properties
	// name, as Open would): a suite checks every step with it before
	// its first, so that a value Open refuses is refused before anything
	// ran. Errors name the property (a *properties.Error).
	Check func(p *properties.Properties) error
	// Where, for an adapter that keeps its data on this host, says where
	// (a run's first line says it, so nobody benchmarks a store they did
	// not mean); nil for adapters that reach a server.
	Where func(p *properties.Properties) string
}

var (
	regMu    sync.RWMutex
	registry = map[string]*Info{}
	canon    = map[string]string{}
	classes  = map[string]string{}
)

// Register adds an adapter under its name, aliases and YCSB class names. It
// panics on a duplicate: that is a programming error caught by any test.
func Register(info Info) {
	regMu.Lock()
	defer regMu.Unlock()
	names := append([]string{info.Name}, info.Aliases...)
	for _, n := range names {
		if _, dup := canon[n]; dup {
			panic("adapters: duplicate registration of " + n)
		}
	}
	for _, c := range info.Classes {
		if _, dup := classes[c]; dup {
			panic("adapters: duplicate registration of class " + c)
		}
	}
	i := info
	registry[info.Name] = &i
	for _, n := range names {
		canon[n] = info.Name
	}
	for _, c := range info.Classes {
		classes[c] = info.Name
	}
}

// Lookup finds an adapter by name, alias or YCSB class name. The error of
// an unknown name lists the known names and classes.
func Lookup(name string) (*Info, error) {
	regMu.RLock()
	defer regMu.RUnlock()
	if c, ok := canon[name]; ok {
		return registry[c], nil
	}
	if c, ok := classes[name]; ok {
		return registry[c], nil
	}
	if strings.Contains(name, ".") {
		return nil, fmt.Errorf("unknown YCSB database class %q; known adapters: %s; known classes: %s",
			name, strings.Join(namesLocked(), ", "), strings.Join(classesLocked(), ", "))
	}
	return nil, fmt.Errorf("unknown database %q; known: %s (or a YCSB class: %s)",
		name, strings.Join(namesLocked(), ", "), strings.Join(classesLocked(), ", "))
}

// Classes lists the registered YCSB class names, sorted.
func Classes() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	return classesLocked()
}

func classesLocked() []string {
	out := make([]string, 0, len(classes))
	for c := range classes {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Names lists registered names and aliases, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	out := make([]string, 0, len(canon))
	for n := range canon {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CheckProperties checks p as the adapter's Open would, without opening
// anything (Info.Check); nil when the adapter has no Check.
func (i *Info) CheckProperties(p *properties.Properties) error {
	if i.Check == nil {
		return nil
	}
	return i.Check(p)
}

// Undeclared returns the keys among read (as recorded by
// properties.TrackReads) that the adapter does not declare in Properties.
func (i *Info) Undeclared(read []string) []string {
	var out []string
	for _, k := range read {
		if _, ok := properties.FindKnown(i.Properties, k); !ok {
			out = append(out, k)
		}
	}
	return out
}

// Package basic is the no-op binding, like YCSB's site.ycsb.BasicDB: every
// call succeeds at once (optionally after a simulated delay) and, with
// basicdb.verbose, prints the operation. It measures the harness itself.
package basic

import (
	"bufio"
	"context"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/generator"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// Property names, as YCSB's BasicDB.
const (
	PropVerbose        = "basicdb.verbose"
	PropSimulatedDelay = "basicdb.simulatedelay"
	PropRandomizeDelay = "basicdb.randomizedelay"
	// PropSlots is ycsbctl's own: a simulated server of that many
	// parallel slots (server.go).
	PropSlots = "basicdb.slots"
)

func init() {
	adapters.Register(adapters.Info{
		Name:        "basic",
		Classes:     []string{"site.ycsb.BasicDB", "com.yahoo.ycsb.BasicDB"},
		Description: "no-op database (YCSB BasicDB): measures the harness",
		Properties: []properties.Known{
			{Name: PropVerbose, Default: "true", Help: "print every operation with its table, key and fields, as YCSB"},
			{Name: PropSimulatedDelay, Default: "0", Help: "milliseconds to sleep per operation, kept to within about 0.1 ms (the last 0.1 ms is spun)"},
			{Name: PropRandomizeDelay, Default: "true", Help: "sleep a uniform 0..simulatedelay instead of exactly it"},
			{Name: PropSlots, Default: "0", Help: "simulate a server of this many parallel slots, each call holding one for its delay from when one frees (0: every call sleeps on its own, as YCSB); with more threads than slots it serves exactly slots/simulatedelay calls per second, however loaded the host"},
		},
		Differences: []string{
			"basicdb.count (YCSB's per-key operation counting, a debugging aid) is not implemented: it would put a shared map on the hot path; the run summary already counts operations.",
		},
		Driver: adapters.DriverFunc(Open),
		Check:  Check,
	})
}

// Output is where verbose lines go; tests replace it.
var Output io.Writer = os.Stdout

// DB is the shared no-op database.
type DB struct {
	verbose   bool
	delay     time.Duration
	randomize bool
	// server is the simulated server of basicdb.slots (nil: none).
	server *server
	mu     sync.Mutex
	out    *bufio.Writer
}

// config is what the BasicDB properties say.
type config struct {
	verbose, randomize bool
	delayMs, slots     int64
}

// parseConfig reads and checks the BasicDB properties: Open's and
// Check's.
func parseConfig(p *properties.Properties) (config, error) {
	var c config
	var err error
	if c.verbose, err = p.Bool(PropVerbose, true); err != nil {
		return c, err
	}
	if c.delayMs, err = p.NonNegInt64(PropSimulatedDelay, 0); err != nil {
		return c, err
	}
	if c.randomize, err = p.Bool(PropRandomizeDelay, true); err != nil {
		return c, err
	}
	if c.slots, err = p.NonNegInt64(PropSlots, 0); err != nil {
		return c, err
	}
	switch {
	case c.slots > maxSlots:
		return c, &properties.Error{Property: PropSlots, Value: strconv.FormatInt(c.slots, 10), Expected: "at most " + strconv.Itoa(maxSlots) + " slots"}
	case c.slots > 0 && c.delayMs == 0:
		return c, &properties.Error{Property: PropSlots, Value: strconv.FormatInt(c.slots, 10),
			Expected: "0 unless " + PropSimulatedDelay + " is above 0 (a slot is held for the delay)"}
	}
	return c, nil
}

// Check checks the BasicDB properties (adapters.Info.Check).
func Check(p *properties.Properties) error {
	_, err := parseConfig(p)
	return err
}

// Open reads the BasicDB properties.
func Open(_ context.Context, p *properties.Properties) (adapters.DB, error) {
	c, err := parseConfig(p)
	if err != nil {
		return nil, err
	}
	db := &DB{verbose: c.verbose, delay: time.Duration(c.delayMs) * time.Millisecond, randomize: c.randomize}
	if c.slots > 0 {
		db.server = newServer(int(c.slots))
	}
	if c.verbose {
		db.out = bufio.NewWriterSize(Output, 64<<10)
	}
	return db, nil
}

// ForWorker gives each worker a handle with its own random source for the
// randomized delay, as YCSB gives each thread its own BasicDB.
func (db *DB) ForWorker(_ context.Context, worker, _ int) (adapters.DB, error) {
	w := &workerDB{DB: db, rnd: generator.NewRand(uint64(time.Now().UnixNano()) + uint64(worker))}
	switch {
	case db.server != nil:
		w.timer = time.NewTimer(time.Hour)
		w.timer.Stop()
	case db.delay > 0:
		w.sleeper = clock.NewSleeper()
	}
	return w, nil
}

// Close flushes verbose output.
func (db *DB) Close() error {
	if db.out != nil {
		db.mu.Lock()
		defer db.mu.Unlock()
		return db.out.Flush()
	}
	return nil
}

type workerDB struct {
	*DB
	rnd  *generator.Rand
	line []byte
	// sleeper keeps the simulated delay precise (nil: no delay, or a
	// one-call handle, which sleeps less precisely).
	sleeper *clock.Sleeper
	// timer waits for the end of a simulated server's reservation (nil:
	// no server, or a one-call handle).
	timer *time.Timer
	// intended is when the next call was scheduled (zero: unpaced).
	intended time.Time
}

var _ adapters.Scheduled = (*workerDB)(nil)

// Intend implements adapters.Scheduled: a simulated server's call
// arrives at its intended time.
func (w *workerDB) Intend(at time.Time) { w.intended = at }

// Close is the per-worker cleanup YCSB measures as CLEANUP.
func (w *workerDB) Close() error {
	_ = w.sleeper.Close()
	if w.out != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.out.Flush()
	}
	return nil
}

func (w *workerDB) sleep(ctx context.Context) {
	if w.delay <= 0 {
		return
	}
	d := w.delay
	if w.randomize {
		d = time.Duration(w.rnd.Int64n(int64(w.delay) + 1))
	}
	// Precise to a few tens of microseconds, so that a fixed delay
	// simulates a known service time: threads/delay is then the
	// capacity a capacity search must find (a plain timer would add up
	// to a millisecond to every call).
	if w.server != nil {
		at := w.intended
		w.intended = time.Time{}
		w.waitUntil(ctx, w.server.reserve(at, d))
		return
	}
	_ = w.sleeper.Sleep(ctx, d)
}

// waitUntil waits for the end of a reservation on Go's timer, without
// the Sleeper's precision: its throughput is the server's whenever the
// caller wakes, so a late wake-up only adds to the call's latency, and
// the Sleeper's spinning would take the processor a loaded host's
// harness needs to keep the server's queue fed.
func (w *workerDB) waitUntil(ctx context.Context, end time.Time) {
	d := time.Until(end)
	if d <= 0 {
		return
	}
	if w.timer == nil {
		_ = (*clock.Sleeper)(nil).SleepUntil(ctx, end)
		return
	}
	w.timer.Reset(d)
	select {
	case <-ctx.Done():
		w.timer.Stop()
	case <-w.timer.C:
	}
}

func (w *workerDB) emit() {
	w.line = append(w.line, '\n')
	w.mu.Lock()
	// Verbose output is best effort, as in YCSB's BasicDB: a closed or
	// full stdout must not turn the operation into an error. A buffered
	// out keeps the error and Close (Flush) reports it.
	_, _ = w.out.Write(w.line)
	w.mu.Unlock()
}

func (w *workerDB) head(op, table string, key []byte) {
	w.line = append(w.line[:0], op...)
	w.line = append(w.line, ' ')
	w.line = append(w.line, table...)
	w.line = append(w.line, ' ')
	w.line = append(w.line, key...)
}

// fieldNames appends " [ f1 f2 ]", or " [ <all fields>]" for all fields,
// exactly as YCSB's BasicDB prints them.
func (w *workerDB) fieldNames(fields []string) {
	w.line = append(w.line, " [ "...)
	if fields == nil {
		w.line = append(w.line, "<all fields>"...)
	}
	for _, f := range fields {
		w.line = append(w.line, f...)
		w.line = append(w.line, ' ')
	}
	w.line = append(w.line, ']')
}

func (w *workerDB) fieldValues(values []adapters.Field) {
	w.line = append(w.line, " [ "...)
	for _, f := range values {
		w.line = append(w.line, f.Name...)
		w.line = append(w.line, '=')
		w.line = append(w.line, f.Value...)
		w.line = append(w.line, ' ')
	}
	w.line = append(w.line, ']')
}

func (w *workerDB) Read(ctx context.Context, table string, key []byte, fields []string, _ *adapters.Record) adapters.Status {
	w.sleep(ctx)
	if w.verbose {
		w.head("READ", table, key)
		w.fieldNames(fields)
		w.emit()
	}
	return adapters.OK
}

func (w *workerDB) Scan(ctx context.Context, table string, key []byte, count int, fields []string, _ *adapters.Rows) adapters.Status {
	w.sleep(ctx)
	if w.verbose {
		w.head("SCAN", table, key)
		w.line = append(w.line, ' ')
		w.line = strconv.AppendInt(w.line, int64(count), 10)
		w.fieldNames(fields)
		w.emit()
	}
	return adapters.OK
}

func (w *workerDB) Update(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	w.sleep(ctx)
	if w.verbose {
		w.head("UPDATE", table, key)
		w.fieldValues(values)
		w.emit()
	}
	return adapters.OK
}

func (w *workerDB) Insert(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	w.sleep(ctx)
	if w.verbose {
		w.head("INSERT", table, key)
		w.fieldValues(values)
		w.emit()
	}
	return adapters.OK
}

func (w *workerDB) Delete(ctx context.Context, table string, key []byte) adapters.Status {
	w.sleep(ctx)
	if w.verbose {
		w.head("DELETE", table, key)
		w.emit()
	}
	return adapters.OK
}

// The shared DB value answers too (used when no per-worker handle exists,
// e.g. the interactive shell).
func (db *DB) handle() *workerDB {
	return &workerDB{DB: db, rnd: generator.NewRand(uint64(time.Now().UnixNano()))}
}

// flushVerbose writes a one-call handle's verbose output out at once; like
// emit, best effort.
func (w *workerDB) flushVerbose() { _ = w.Close() }

func (db *DB) Read(ctx context.Context, t string, k []byte, f []string, r *adapters.Record) adapters.Status {
	h := db.handle()
	defer h.flushVerbose()
	return h.Read(ctx, t, k, f, r)
}
func (db *DB) Scan(ctx context.Context, t string, k []byte, n int, f []string, r *adapters.Rows) adapters.Status {
	h := db.handle()
	defer h.flushVerbose()
	return h.Scan(ctx, t, k, n, f, r)
}
func (db *DB) Update(ctx context.Context, t string, k []byte, v []adapters.Field) adapters.Status {
	h := db.handle()
	defer h.flushVerbose()
	return h.Update(ctx, t, k, v)
}
func (db *DB) Insert(ctx context.Context, t string, k []byte, v []adapters.Field) adapters.Status {
	h := db.handle()
	defer h.flushVerbose()
	return h.Insert(ctx, t, k, v)
}
func (db *DB) Delete(ctx context.Context, t string, k []byte) adapters.Status {
	h := db.handle()
	defer h.flushVerbose()
	return h.Delete(ctx, t, k)
}

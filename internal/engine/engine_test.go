package engine_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// countDB counts calls; every call succeeds, optionally after a delay.
type countDB struct {
	calls   atomic.Int64
	inserts atomic.Int64
	delay   time.Duration
	// perWorker counts calls per worker handle.
	mu        sync.Mutex
	perWorker map[int]*atomic.Int64
	closed    atomic.Int64
	// span, when set, notes when calls begin.
	span *callSpan
}

// callSpan notes, by the test's own clock, when the first and the last
// call began.
type callSpan struct {
	mu          sync.Mutex
	first, last time.Time
}

func (s *callSpan) note() {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first.IsZero() {
		s.first = now
	}
	if now.After(s.last) {
		s.last = now
	}
}

func (s *callSpan) times() (first, last time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first, s.last
}

func (d *countDB) op() adapters.Status {
	if d.span != nil {
		d.span.note()
	}
	d.calls.Add(1)
	if d.delay > 0 {
		time.Sleep(d.delay)
	}
	return adapters.OK
}

func (d *countDB) Read(context.Context, string, []byte, []string, *adapters.Record) adapters.Status {
	return d.op()
}
func (d *countDB) Scan(context.Context, string, []byte, int, []string, *adapters.Rows) adapters.Status {
	return d.op()
}
func (d *countDB) Update(context.Context, string, []byte, []adapters.Field) adapters.Status {
	return d.op()
}
func (d *countDB) Insert(context.Context, string, []byte, []adapters.Field) adapters.Status {
	d.inserts.Add(1)
	return d.op()
}
func (d *countDB) Delete(context.Context, string, []byte) adapters.Status { return d.op() }

// workerDB is a per-worker handle that counts its own calls.
type workerDB struct {
	*countDB
	n *atomic.Int64
}

func (w *workerDB) Read(ctx context.Context, t string, k []byte, f []string, r *adapters.Record) adapters.Status {
	w.n.Add(1)
	return w.countDB.Read(ctx, t, k, f, r)
}
func (w *workerDB) Update(ctx context.Context, t string, k []byte, v []adapters.Field) adapters.Status {
	w.n.Add(1)
	return w.countDB.Update(ctx, t, k, v)
}
func (w *workerDB) Close() error { w.closed.Add(1); return nil }

// threadedDB gives each worker its own handle.
type threadedDB struct{ *countDB }

func (d threadedDB) ForWorker(_ context.Context, worker, _ int) (adapters.DB, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.perWorker == nil {
		d.perWorker = map[int]*atomic.Int64{}
	}
	n := &atomic.Int64{}
	d.perWorker[worker] = n
	return &workerDB{countDB: d.countDB, n: n}, nil
}

func newWorkload(t *testing.T, kv ...string) *workload.Workload {
	t.Helper()
	p := properties.FromMap(map[string]string{
		"recordcount": "1000", "readproportion": "0.5", "updateproportion": "0.5", "requestdistribution": "uniform",
	})
	p.SetPairs(kv...)
	w, err := workload.New(p, clock.NewReal())
	require.NoError(t, err)
	return w
}

type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(f string, a ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(f, a...))
	l.mu.Unlock()
}

// runEngine runs to completion (or fails the test after 20 s).
func runEngine(t *testing.T, o engine.Options) (*engine.Runner, *engine.Result) {
	t.Helper()
	if o.Workload == nil {
		o.Workload = newWorkload(t)
	}
	r, err := engine.Prepare(context.Background(), o)
	require.NoError(t, err)
	r.Start(time.Time{})
	select {
	case <-r.Done():
	case <-time.After(20 * time.Second):
		r.Abort("test timeout")
		t.Fatal("run did not finish within 20 s")
	}
	return r, r.Wait()
}

func TestBudgetSplit(t *testing.T) {
	tests := []struct {
		ops         int64
		threads     int
		wantThreads int
	}{
		{1000, 1, 1},
		{1000, 7, 7},
		{10, 3, 3},
		{3, 10, 3}, // threads clamped to the operation count, with a warning
		{1, 4, 1},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d ops on %d threads", tc.ops, tc.threads), func(t *testing.T) {
			db := threadedDB{&countDB{}}
			var l logs
			r, res := runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: tc.threads, OpCount: tc.ops, Logf: l.logf})
			assert.Equal(t, tc.wantThreads, r.Threads())
			assert.Equal(t, tc.ops, res.Total.Ops)
			assert.Equal(t, tc.ops, db.calls.Load())
			assert.Equal(t, tc.ops, res.Total.ReturnTotal(measurement.Read)+res.Total.ReturnTotal(measurement.Update))
			// Per-worker shares differ by at most one, first workers first.
			db.mu.Lock()
			for i := 0; i < tc.wantThreads; i++ {
				want := tc.ops / int64(tc.wantThreads)
				if int64(i) < tc.ops%int64(tc.wantThreads) {
					want++
				}
				assert.Equal(t, want, db.perWorker[i].Load(), "worker %d", i)
			}
			db.mu.Unlock()
			assert.Equal(t, int64(tc.wantThreads), db.closed.Load(), "each worker handle is closed")
			assert.Equal(t, int64(tc.wantThreads), res.Total.Count(measurement.SeriesOf(measurement.Cleanup, measurement.Service, false)), "one CLEANUP per worker")
			if tc.threads > tc.wantThreads {
				require.Len(t, l.lines, 1)
				assert.Contains(t, l.lines[0], "threads")
			} else {
				assert.Empty(t, l.lines)
			}
			assert.Empty(t, res.Stopped)
			assert.Greater(t, res.RunTime, time.Duration(0))
			assert.Equal(t, res.EndNs-res.StartNs, int64(res.RunTime))
		})
	}
}

func TestLoadPhaseInsertsBudget(t *testing.T) {
	db := &countDB{}
	w := newWorkload(t, "recordcount", "777")
	_, res := runEngine(t, engine.Options{Phase: run.Load, DB: db, Workload: w, Threads: 4, OpCount: 777})
	assert.Equal(t, int64(777), db.inserts.Load())
	assert.Equal(t, int64(777), res.Total.Ops)
	assert.Equal(t, int64(777), res.Total.Returns[measurement.Insert][adapters.OK])
}

func TestMaxExecutionTimeWithoutOpCount(t *testing.T) {
	db := &countDB{delay: 100 * time.Microsecond}
	start := time.Now()
	_, res := runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: 2, OpCount: 0, MaxExecution: 300 * time.Millisecond})
	el := time.Since(start)
	assert.GreaterOrEqual(t, res.RunTime, 300*time.Millisecond)
	assert.Less(t, el, 3*time.Second, "the time limit must stop the run")
	assert.Greater(t, res.Total.Ops, int64(10))
	assert.Equal(t, db.calls.Load(), res.Total.Ops)
}

func TestMaxExecutionTimeBeatsOpCount(t *testing.T) {
	db := &countDB{delay: time.Millisecond}
	_, res := runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: 1, OpCount: 1_000_000, MaxExecution: 200 * time.Millisecond})
	assert.Less(t, res.Total.Ops, int64(1_000_000))
	assert.Less(t, res.RunTime, 3*time.Second)
}

func TestTargetPacing(t *testing.T) {
	const target, ops = 1000.0, 400
	db := &countDB{}
	start := time.Now()
	_, res := runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: 2, OpCount: ops, Target: target, Mode: measurement.ModeBoth})
	el := time.Since(start)
	rate := float64(ops) / res.RunTime.Seconds()
	// The schedule never runs ahead; a busy machine may fall behind.
	assert.LessOrEqual(t, rate, target*1.1, "faster than the target")
	assert.Greater(t, rate, target*0.4, "far slower than the target")
	assert.GreaterOrEqual(t, el, 350*time.Millisecond)
	for _, op := range []measurement.Op{measurement.Read, measurement.Update} {
		svc := res.Total.Count(measurement.SeriesOf(op, measurement.Service, false))
		intended := res.Total.Count(measurement.SeriesOf(op, measurement.Intended, false))
		assert.Greater(t, svc, int64(0), op.String())
		assert.Equal(t, svc, intended, "mode both records Intended-%s for every %s", op, op)
		// Intended latency counts from the schedule, so it is never below
		// the service time.
		sh := res.Total.Hist[measurement.SeriesOf(op, measurement.Service, false)]
		ih := res.Total.Hist[measurement.SeriesOf(op, measurement.Intended, false)]
		assert.GreaterOrEqual(t, ih.Mean(), sh.Mean()*0.999)
		assert.GreaterOrEqual(t, ih.Max(), sh.Max())
	}
	assert.Equal(t, int64(ops), res.Total.Ops)
}

// virtualClock is a fake clock on which sleeping jumps time forward to
// the wake-up instant and database calls advance it by their scripted
// delay, so a single-worker paced run is exactly reproducible. Only one
// goroutine (the worker) may sleep on it; the reporter's timers fire as
// time advances.
type virtualClock struct{ *clock.Fake }

func (v virtualClock) SleepUntil(ctx context.Context, ns int64) error {
	if d := ns - v.Nanotime(); d > 0 {
		v.Advance(time.Duration(d))
	}
	return ctx.Err()
}

// dbCall is one call the scripted database served.
type dbCall struct {
	op         measurement.Op
	start, end int64 // clock Nanotime
	serviceNs  int64
}

// scriptDB serves every call after advancing the virtual clock by the
// next delay of its cycle, and logs the call.
type scriptDB struct {
	clk    virtualClock
	delays []time.Duration
	calls  []dbCall
}

func (d *scriptDB) op(op measurement.Op) adapters.Status {
	delay := d.delays[len(d.calls)%len(d.delays)]
	start := d.clk.Nanotime()
	d.clk.Advance(delay)
	d.calls = append(d.calls, dbCall{op: op, start: start, end: d.clk.Nanotime(), serviceNs: int64(delay)})
	return adapters.OK
}

func (d *scriptDB) Read(context.Context, string, []byte, []string, *adapters.Record) adapters.Status {
	return d.op(measurement.Read)
}
func (d *scriptDB) Scan(context.Context, string, []byte, int, []string, *adapters.Rows) adapters.Status {
	return d.op(measurement.Scan)
}
func (d *scriptDB) Update(context.Context, string, []byte, []adapters.Field) adapters.Status {
	return d.op(measurement.Update)
}
func (d *scriptDB) Insert(context.Context, string, []byte, []adapters.Field) adapters.Status {
	return d.op(measurement.Insert)
}
func (d *scriptDB) Delete(context.Context, string, []byte) adapters.Status {
	return d.op(measurement.Delete)
}

// runVirtual runs one worker against a scriptDB on a virtual clock that
// starts at 1 s (so no schedule slot is at the clock's zero).
func runVirtual(t *testing.T, delays []time.Duration, o engine.Options, kv ...string) (*scriptDB, *engine.Result, run.Progress) {
	t.Helper()
	clk := virtualClock{clock.NewFake(time.Unix(1_700_000_000, 0))}
	clk.Advance(time.Second)
	db := &scriptDB{clk: clk, delays: delays}
	p := properties.FromMap(map[string]string{
		"recordcount": "1000", "readproportion": "0.5", "updateproportion": "0.5", "requestdistribution": "uniform",
	})
	p.SetPairs(kv...)
	w, err := workload.New(p, clk)
	require.NoError(t, err)
	var last run.Progress
	o.Phase, o.DB, o.Workload, o.Threads, o.Clock, o.Seed = run.Run, db, w, 1, clk, 42
	o.StatusInterval = 10 * time.Millisecond
	o.Sink = run.SinkFunc(func(u *run.Update) { last = u.Progress })
	_, res := runEngine(t, o)
	require.Len(t, db.calls, int(o.OpCount), "one database call per transaction")
	require.Equal(t, o.OpCount, res.Total.Ops)
	return db, res, last
}

// histOf builds the histogram a recorder would hold for these values.
func histOf(values []int64) *hdrhistogram.Histogram {
	h := measurement.NewHistogram()
	for _, v := range values {
		_ = h.RecordValue(max(v, measurement.LowestNs))
	}
	return h
}

// bars lists a histogram's non-empty buckets, for readable diffs.
func bars(h *hdrhistogram.Histogram) []hdrhistogram.Bar {
	if h == nil {
		return nil
	}
	var out []hdrhistogram.Bar
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out = append(out, b)
		}
	}
	return out
}

// requireSameHist asserts two histograms hold the same values (same
// buckets, same counts).
func requireSameHist(t *testing.T, want, got *hdrhistogram.Histogram, what string) {
	t.Helper()
	require.NotNil(t, got, "%s: not recorded", what)
	require.Equal(t, want.TotalCount(), got.TotalCount(), "%s: count", what)
	require.Equal(t, bars(want), bars(got), "%s: values", what)
	require.True(t, want.Equals(got), "%s: histograms differ", what)
}

// Without -target there is no schedule: YCSB's intended start falls back
// to the actual start, so Intended-<OP> must equal <OP> value for value.
// Checked on the real clock with several workers, every operation kind
// the workload measures (READ-MODIFY-WRITE included), and on the virtual
// clock where the values are known exactly.
func TestModeBothWithoutTargetIntendedEqualsService(t *testing.T) {
	db := &countDB{delay: 50 * time.Microsecond}
	w := newWorkload(t, "readproportion", "0.4", "updateproportion", "0.3", "readmodifywriteproportion", "0.3")
	_, res := runEngine(t, engine.Options{Phase: run.Run, DB: db, Workload: w, Threads: 4, OpCount: 2000, Mode: measurement.ModeBoth})
	for _, op := range []measurement.Op{measurement.Read, measurement.Update, measurement.ReadModifyWrite} {
		svc := res.Total.Hist[measurement.SeriesOf(op, measurement.Service, false)]
		require.NotNil(t, svc, op.String())
		require.Greater(t, svc.TotalCount(), int64(100), op.String())
		requireSameHist(t, svc, res.Total.Hist[measurement.SeriesOf(op, measurement.Intended, false)], "Intended-"+op.String())
	}
	// RMW transactions call READ and UPDATE too: every call is measured.
	reads, updates := res.Total.Count(measurement.SeriesOf(measurement.Read, measurement.Service, false)),
		res.Total.Count(measurement.SeriesOf(measurement.Update, measurement.Service, false))
	assert.Equal(t, db.calls.Load(), reads+updates)

	delays := []time.Duration{700 * time.Microsecond, 3 * time.Millisecond, 40 * time.Microsecond, 1234567 * time.Nanosecond}
	sdb, res, _ := runVirtual(t, delays, engine.Options{OpCount: 200, Mode: measurement.ModeBoth})
	want := map[measurement.Op][]int64{}
	for _, c := range sdb.calls {
		want[c.op] = append(want[c.op], c.serviceNs)
	}
	for _, op := range []measurement.Op{measurement.Read, measurement.Update} {
		require.NotEmpty(t, want[op], op.String())
		requireSameHist(t, histOf(want[op]), res.Total.Hist[measurement.SeriesOf(op, measurement.Service, false)], op.String())
		requireSameHist(t, histOf(want[op]), res.Total.Hist[measurement.SeriesOf(op, measurement.Intended, false)], "Intended-"+op.String())
	}
}

// With ModeIntended and no target, the plain series holds exactly the
// service times, and no Intended-* series exists.
func TestModeIntendedWithoutTargetEqualsService(t *testing.T) {
	delays := []time.Duration{250 * time.Microsecond, 2 * time.Millisecond, 90 * time.Microsecond}
	sdb, res, _ := runVirtual(t, delays, engine.Options{OpCount: 120, Mode: measurement.ModeIntended})
	want := map[measurement.Op][]int64{}
	for _, c := range sdb.calls {
		want[c.op] = append(want[c.op], c.serviceNs)
	}
	for _, op := range []measurement.Op{measurement.Read, measurement.Update} {
		requireSameHist(t, histOf(want[op]), res.Total.Hist[measurement.SeriesOf(op, measurement.Service, false)], op.String())
	}
	for s := measurement.Series(0); s < measurement.NumSeries; s++ {
		if s.Kind() == measurement.Intended {
			assert.Zero(t, res.Total.Count(s), s.Name())
		}
	}
}

// With -target and a database slower than the schedule, intended latency
// is measured from the scheduled slot (start + k*tick), so it exceeds the
// service time by the lag accumulated so far. The virtual clock makes
// every value exact; the expected ones are computed here from the
// schedule, independently of the engine.
func TestIntendedLatencyCountsScheduleLag(t *testing.T) {
	const target, ops = 1000.0, 300 // one slot per millisecond
	tick := int64(time.Second) / int64(target)
	tests := []struct {
		name   string
		delays []time.Duration
	}{
		// Always 0.5 ms late: the lag grows by 0.5 ms per operation.
		{"constantly slow", []time.Duration{1500 * time.Microsecond}},
		// Slow and fast calls: the lag builds up, drains when the
		// database catches up, and the worker then sleeps to its slot.
		{"bursty", []time.Duration{3 * time.Millisecond, 2500 * time.Microsecond, 100 * time.Microsecond, 200 * time.Microsecond, 50 * time.Microsecond, 400 * time.Microsecond}},
	}
	for _, tc := range tests {
		for _, mode := range []measurement.Mode{measurement.ModeBoth, measurement.ModeIntended} {
			name := map[measurement.Mode]string{measurement.ModeBoth: "both", measurement.ModeIntended: "intended"}[mode]
			t.Run(tc.name+" measurement.interval="+name, func(t *testing.T) {
				sdb, res, last := runVirtual(t, tc.delays, engine.Options{OpCount: ops, Target: target, Mode: mode})
				start := sdb.calls[0].start
				svc, intended := map[measurement.Op][]int64{}, map[measurement.Op][]int64{}
				var maxLag, sumLag, prevEnd int64
				for k, c := range sdb.calls {
					due := start + int64(k)*tick
					// The worker starts at its slot or, when late, as soon
					// as the previous call returned.
					wantStart := max(due, prevEnd)
					require.Equal(t, wantStart, c.start, "call %d start", k)
					prevEnd = c.end
					lag := c.start - due
					maxLag, sumLag = max(maxLag, lag), sumLag+lag
					svc[c.op] = append(svc[c.op], c.serviceNs)
					intended[c.op] = append(intended[c.op], c.end-due)
					require.Equal(t, c.serviceNs+lag, c.end-due, "intended = service + lag")
				}
				require.Greater(t, sumLag, int64(0), "the database must fall behind the schedule")
				for _, op := range []measurement.Op{measurement.Read, measurement.Update} {
					require.NotEmpty(t, svc[op], op.String())
					plain := res.Total.Hist[measurement.SeriesOf(op, measurement.Service, false)]
					if mode == measurement.ModeBoth {
						requireSameHist(t, histOf(svc[op]), plain, op.String()+" (service)")
						requireSameHist(t, histOf(intended[op]), res.Total.Hist[measurement.SeriesOf(op, measurement.Intended, false)], "Intended-"+op.String())
					} else {
						requireSameHist(t, histOf(intended[op]), plain, op.String()+" (intended)")
					}
				}
				assert.Equal(t, time.Duration(maxLag), last.Lag, "reported schedule lag")
				if tc.name == "constantly slow" {
					// Op k starts k*0.5 ms late: the last is (ops-1)*0.5 ms behind.
					assert.Equal(t, time.Duration(ops-1)*500*time.Microsecond, last.Lag)
				}
			})
		}
	}
}

func TestWarmupOps(t *testing.T) {
	tests := []struct {
		threads int
		warmup  int64
	}{
		{1, 100},
		{3, 100},
		{4, 2}, // fewer warm-up operations than workers
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d threads %d warmup", tc.threads, tc.warmup), func(t *testing.T) {
			db := &countDB{}
			_, res := runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: tc.threads, OpCount: 500, WarmupOps: tc.warmup})
			assert.Equal(t, int64(500), res.Total.Ops, "warm-up operations are not counted")
			assert.Equal(t, int64(500), res.Total.ReturnTotal(measurement.Read)+res.Total.ReturnTotal(measurement.Update), "warm-up operations are not measured")
			assert.Equal(t, tc.warmup, res.WarmupOps)
			assert.Equal(t, 500+tc.warmup, db.calls.Load(), "warm-up operations are sent")
		})
	}
}

func TestWarmupTime(t *testing.T) {
	db := &countDB{delay: 200 * time.Microsecond}
	var mu sync.Mutex
	var warmLines, measured int
	obs := run.SinkFunc(func(u *run.Update) {
		iv, p := u.Interval, u.Progress
		mu.Lock()
		defer mu.Unlock()
		if p.Warmup {
			warmLines++
			assert.Zero(t, iv.Ops, "nothing measured during warm-up")
		} else {
			measured++
		}
	})
	_, res := runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: 2, OpCount: 300, WarmupTime: 250 * time.Millisecond,
		StatusInterval: 100 * time.Millisecond, Sink: obs})
	assert.Equal(t, int64(300), res.Total.Ops)
	assert.Greater(t, res.WarmupOps, int64(0))
	assert.Equal(t, 300+res.WarmupOps, db.calls.Load())
	assert.Equal(t, int64(300), res.Total.ReturnTotal(measurement.Read)+res.Total.ReturnTotal(measurement.Update))
	mu.Lock()
	assert.GreaterOrEqual(t, warmLines, 1, "warm-up progress is reported")
	assert.GreaterOrEqual(t, measured, 1)
	mu.Unlock()
}

func TestStopEndsEarly(t *testing.T) {
	db := &countDB{delay: 200 * time.Microsecond}
	r, err := engine.Prepare(context.Background(), engine.Options{Phase: run.Run, DB: db, Workload: newWorkload(t), Threads: 2, OpCount: 0, MaxExecution: time.Minute})
	require.NoError(t, err)
	r.Start(time.Time{})
	waitCalls(t, db, 10)
	r.Stop("stopped by test")
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not end the run")
	}
	res := r.Wait()
	require.NotNil(t, res)
	assert.Equal(t, "stopped by test", res.Stopped)
	assert.Greater(t, res.Total.Ops, int64(0))
	assert.Equal(t, db.calls.Load(), res.Total.Ops)
	assert.Less(t, res.RunTime, 5*time.Second)
}

// waitCalls waits until db has seen n calls, failing after a generous
// bound with what it saw.
func waitCalls(t *testing.T, db *countDB, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for db.calls.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the run made %d calls in 20 s, waiting for %d", db.calls.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAbortWhilePaced(t *testing.T) {
	db := &countDB{}
	// 1 op/s: workers sleep on their schedule; Abort must wake them.
	r, err := engine.Prepare(context.Background(), engine.Options{Phase: run.Run, DB: db, Workload: newWorkload(t), Threads: 2, OpCount: 100, Target: 1})
	require.NoError(t, err)
	r.Start(time.Time{})
	time.Sleep(100 * time.Millisecond)
	r.Abort("aborted by test")
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Abort did not end a paced run")
	}
	assert.Equal(t, "aborted by test", r.Wait().Stopped)
}

// stuckDB's calls ignore their context: they return only when released.
type stuckDB struct {
	countDB
	release chan struct{}
}

func (d *stuckDB) Read(context.Context, string, []byte, []string, *adapters.Record) adapters.Status {
	d.calls.Add(1)
	<-d.release
	return adapters.OK
}
func (d *stuckDB) Update(ctx context.Context, t string, k []byte, f []adapters.Field) adapters.Status {
	return d.Read(ctx, t, k, nil, nil)
}

// An abort ends the run even when database calls ignore the cancellation:
// the stuck workers are left behind, counted, and the run reports what
// it measured.
func TestAbortLeavesStuckCallsBehind(t *testing.T) {
	db := &stuckDB{release: make(chan struct{})}
	defer close(db.release)
	r, err := engine.Prepare(context.Background(), engine.Options{Phase: run.Run, DB: db, Workload: newWorkload(t), Threads: 3, OpCount: 100,
		AbandonAfter: 200 * time.Millisecond})
	require.NoError(t, err)
	r.Start(time.Time{})
	waitCalls(t, &db.countDB, 3)
	r.Abort("aborted by test")
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("an abort did not end a run whose calls ignore cancellation")
	}
	res := r.Wait()
	assert.Equal(t, 3, res.Abandoned)
	assert.Zero(t, res.Total.Ops, "the stuck calls are not counted")
}

func TestIntervals(t *testing.T) {
	db := &countDB{}
	var mu sync.Mutex
	var ivs []*measurement.Interval
	var finals []bool
	// The test's own monotonic clock brackets the final interval: the
	// last operation starts before the interval is cut, and the run ends
	// after the sink has returned from it and before Wait returns.
	db.span = &callSpan{}
	var finalIn, finalOut time.Time
	obs := run.SinkFunc(func(u *run.Update) {
		in := time.Now()
		iv, p := u.Interval, u.Progress
		mu.Lock()
		defer mu.Unlock()
		ivs = append(ivs, iv)
		finals = append(finals, p.Final)
		assert.Equal(t, int64(0), u.Cumulative.Seq, "cumulative interval has Seq 0")
		assert.Equal(t, int64(1000), p.Budget)
		if p.Final {
			finalIn, finalOut = in, time.Now()
		}
	})
	// 1000 ops at 2500 ops/s take about 0.4 s: six 60 ms intervals and a
	// final one cut between ticks, when the workers are done.
	_, res := runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: 2, OpCount: 1000, Target: 2500,
		StatusInterval: 60 * time.Millisecond, Sink: obs})
	returned := time.Now()
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(ivs), 3)
	assert.Equal(t, int64(len(ivs)), res.Intervals)
	var sum int64
	for i, iv := range ivs {
		assert.Equal(t, int64(i+1), iv.Seq, "intervals are numbered from 1")
		assert.Equal(t, i == len(ivs)-1, finals[i], "only the last interval is final")
		if i > 0 {
			assert.Equal(t, ivs[i-1].EndNs, iv.StartNs, "intervals are contiguous")
		}
		assert.LessOrEqual(t, iv.StartNs, iv.EndNs)
		if i < len(ivs)-1 {
			assert.Equal(t, int64(60*time.Millisecond), iv.EndNs-iv.StartNs, "interval %d length", i+1)
		}
		sum += iv.Ops
	}
	assert.Equal(t, res.Total.Ops, sum, "interval Ops add up to the total")
	assert.Equal(t, res.StartNs, ivs[0].StartNs)
	// The final interval is cut when the workers are done, not at a tick,
	// and the run ends once that interval has been handed over. The two
	// are separate clock reads whose distance depends on the machine's
	// load, so the test bounds it by what it saw rather than by a fixed
	// time: at least the final sink call, at most from the last
	// operation's start to Wait's return. The slack covers the engine
	// clock's calibration against the test's (the TSC ratio is refused
	// beyond 1e-4; this allows ten times that) and the reads' own cost.
	first, last := db.span.times()
	gap := time.Duration(res.EndNs - ivs[len(ivs)-1].EndNs)
	slack := returned.Sub(first)/1000 + 100*time.Microsecond
	assert.GreaterOrEqual(t, gap+slack, finalOut.Sub(finalIn),
		"the run ends after its final interval was handed to the sink")
	assert.LessOrEqual(t, gap, returned.Sub(last)+slack,
		"the final interval ends when the last operation has finished (Wait returned %v after the last operation began)",
		returned.Sub(last))
}

func TestPrepareRejects(t *testing.T) {
	db := &countDB{}
	w := newWorkload(t)
	tests := []struct {
		name string
		o    engine.Options
		want string
	}{
		{"zero threads", engine.Options{Phase: run.Run, DB: db, Workload: w, Threads: 0, OpCount: 1}, "threads"},
		{"no db", engine.Options{Phase: run.Run, Workload: w, Threads: 1, OpCount: 1}, "DB"},
		{"run forever", engine.Options{Phase: run.Run, DB: db, Workload: w, Threads: 1}, "operationcount"},
		{"negative target", engine.Options{Phase: run.Run, DB: db, Workload: w, Threads: 1, OpCount: 1, Target: -1}, "target"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.Prepare(context.Background(), tc.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Zero(t, db.calls.Load(), "nothing sent")
}

func TestStartAtFutureTime(t *testing.T) {
	db := &countDB{}
	r, err := engine.Prepare(context.Background(), engine.Options{Phase: run.Run, DB: db, Workload: newWorkload(t), Threads: 1, OpCount: 10})
	require.NoError(t, err)
	// Each call notes when it began; the first must not precede the start
	// time, however late the test itself gets to run. The slack is the
	// engine clock's calibration error over 200 ms and more.
	db.span = &callSpan{}
	at := time.Now().Add(200 * time.Millisecond)
	r.Start(at)
	res := r.Wait()
	assert.Equal(t, int64(10), res.Total.Ops)
	first, _ := db.span.times()
	assert.False(t, first.Before(at.Add(-time.Millisecond)), "first call %v before the start time", at.Sub(first))
	assert.GreaterOrEqual(t, res.StartNs, at.UnixNano()-int64(5*time.Millisecond))
}

func TestThroughput(t *testing.T) {
	r := &engine.Result{RunTime: 2 * time.Second, Total: measurement.NewInterval(0, 0, 0)}
	r.Total.Ops = 500
	assert.Equal(t, 250.0, r.Throughput())
	r.RunTime = 0
	assert.Equal(t, 0.0, r.Throughput())
	assert.True(t, strings.Contains(run.Run.String(), "run"))
	assert.Equal(t, "load", run.Load.String())
}

// failingCloseDB hands each worker a handle whose Close fails, as a
// buffering adapter's does when its last flush fails.
type failingCloseDB struct{ countDB }

type failingHandle struct{ *countDB }

func (h failingHandle) Close() error { return errors.New("flush failed: region server gone") }

func (d *failingCloseDB) ForWorker(context.Context, int, int) (adapters.DB, error) {
	return failingHandle{&d.countDB}, nil
}

// A worker handle whose Close fails is counted as a failed CLEANUP and
// said, not dropped.
func TestCleanupFailureIsCounted(t *testing.T) {
	db := &failingCloseDB{}
	var logs []string
	var mu sync.Mutex
	_, res := runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: 2, OpCount: 20,
		Logf: func(f string, a ...any) { mu.Lock(); logs = append(logs, fmt.Sprintf(f, a...)); mu.Unlock() }})
	assert.Equal(t, int64(2), res.Total.Returns[measurement.Cleanup][adapters.Error], "one failed CLEANUP per worker")
	assert.Equal(t, int64(2), res.Total.Count(measurement.SeriesOf(measurement.Cleanup, measurement.Service, true)))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, logs, 2)
	assert.Contains(t, logs[0], "cleanup failed: flush failed")
}

// procsDB advises one P per 4 workers and records GOMAXPROCS as its
// operations see it.
type procsDB struct {
	countDB
	seen atomic.Int64
}

func (d *procsDB) Procs(workers int) int { return (workers + 3) / 4 }

func (d *procsDB) Read(context.Context, string, []byte, []string, *adapters.Record) adapters.Status {
	d.seen.Store(int64(runtime.GOMAXPROCS(0)))
	return d.op()
}

func TestProcsAdviceAppliesForTheRunOnly(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
		t.Cleanup(func() { runtime.GOMAXPROCS(1) })
	}
	before := runtime.GOMAXPROCS(0)
	t.Run("advice applied and restored", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", "")
		db := &procsDB{}
		runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: 4, OpCount: 200,
			Workload: newWorkload(t, "readproportion", "1", "updateproportion", "0")})
		assert.Equal(t, int64(1), db.seen.Load(), "GOMAXPROCS during the run")
		assert.Equal(t, before, runtime.GOMAXPROCS(0), "GOMAXPROCS after the run")
	})
	t.Run("never raised", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", "")
		db := &procsDB{}
		runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: 4 * (before + 1), OpCount: 200,
			Workload: newWorkload(t, "readproportion", "1", "updateproportion", "0")})
		assert.Equal(t, int64(before), db.seen.Load())
	})
	t.Run("the user's GOMAXPROCS wins", func(t *testing.T) {
		t.Setenv("GOMAXPROCS", fmt.Sprint(before))
		db := &procsDB{}
		runEngine(t, engine.Options{Phase: run.Run, DB: db, Threads: 4, OpCount: 200,
			Workload: newWorkload(t, "readproportion", "1", "updateproportion", "0")})
		assert.Equal(t, int64(before), db.seen.Load())
	})
}

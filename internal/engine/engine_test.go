package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
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
}

func (d *countDB) op() adapters.Status {
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
			r, res := runEngine(t, engine.Options{Phase: engine.Run, DB: db, Threads: tc.threads, OpCount: tc.ops, Logf: l.logf})
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
	_, res := runEngine(t, engine.Options{Phase: engine.Load, DB: db, Workload: w, Threads: 4, OpCount: 777})
	assert.Equal(t, int64(777), db.inserts.Load())
	assert.Equal(t, int64(777), res.Total.Ops)
	assert.Equal(t, int64(777), res.Total.Returns[measurement.Insert][adapters.OK])
}

func TestMaxExecutionTimeWithoutOpCount(t *testing.T) {
	db := &countDB{delay: 100 * time.Microsecond}
	start := time.Now()
	_, res := runEngine(t, engine.Options{Phase: engine.Run, DB: db, Threads: 2, OpCount: 0, MaxExecution: 300 * time.Millisecond})
	el := time.Since(start)
	assert.GreaterOrEqual(t, res.RunTime, 300*time.Millisecond)
	assert.Less(t, el, 3*time.Second, "the time limit must stop the run")
	assert.Greater(t, res.Total.Ops, int64(10))
	assert.Equal(t, db.calls.Load(), res.Total.Ops)
}

func TestMaxExecutionTimeBeatsOpCount(t *testing.T) {
	db := &countDB{delay: time.Millisecond}
	_, res := runEngine(t, engine.Options{Phase: engine.Run, DB: db, Threads: 1, OpCount: 1_000_000, MaxExecution: 200 * time.Millisecond})
	assert.Less(t, res.Total.Ops, int64(1_000_000))
	assert.Less(t, res.RunTime, 3*time.Second)
}

func TestTargetPacing(t *testing.T) {
	const target, ops = 1000.0, 400
	db := &countDB{}
	start := time.Now()
	_, res := runEngine(t, engine.Options{Phase: engine.Run, DB: db, Threads: 2, OpCount: ops, Target: target, Mode: measurement.ModeBoth})
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

func TestModeIntendedWithoutTargetEqualsService(t *testing.T) {
	db := &countDB{}
	_, res := runEngine(t, engine.Options{Phase: engine.Run, DB: db, Threads: 1, OpCount: 200, Mode: measurement.ModeIntended})
	for s := measurement.Series(0); s < measurement.NumSeries; s++ {
		if s.Kind() == measurement.Intended {
			assert.Zero(t, res.Total.Count(s), s.Name())
		}
	}
	assert.Equal(t, int64(200), res.Total.OpCount(measurement.Read)+res.Total.OpCount(measurement.Update))
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
			_, res := runEngine(t, engine.Options{Phase: engine.Run, DB: db, Threads: tc.threads, OpCount: 500, WarmupOps: tc.warmup})
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
	obs := engine.ObserverFunc(func(iv, cum *measurement.Interval, p engine.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Warmup {
			warmLines++
			assert.Zero(t, iv.Ops, "nothing measured during warm-up")
		} else {
			measured++
		}
	})
	_, res := runEngine(t, engine.Options{Phase: engine.Run, DB: db, Threads: 2, OpCount: 300, WarmupTime: 250 * time.Millisecond,
		StatusInterval: 100 * time.Millisecond, Observers: []engine.Observer{obs}})
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
	r, err := engine.Prepare(context.Background(), engine.Options{Phase: engine.Run, DB: db, Workload: newWorkload(t), Threads: 2, OpCount: 0, MaxExecution: time.Minute})
	require.NoError(t, err)
	r.Start(time.Time{})
	time.Sleep(150 * time.Millisecond)
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

func TestAbortWhilePaced(t *testing.T) {
	db := &countDB{}
	// 1 op/s: workers sleep on their schedule; Abort must wake them.
	r, err := engine.Prepare(context.Background(), engine.Options{Phase: engine.Run, DB: db, Workload: newWorkload(t), Threads: 2, OpCount: 100, Target: 1})
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

func TestIntervals(t *testing.T) {
	db := &countDB{}
	var mu sync.Mutex
	var ivs []*measurement.Interval
	var finals []bool
	obs := engine.ObserverFunc(func(iv, cum *measurement.Interval, p engine.Progress) {
		mu.Lock()
		defer mu.Unlock()
		ivs = append(ivs, iv)
		finals = append(finals, p.Final)
		assert.Equal(t, int64(0), cum.Seq, "cumulative interval has Seq 0")
		assert.Equal(t, int64(1000), p.Budget)
	})
	// 1000 ops at 2500 ops/s take about 0.4 s: several 50 ms intervals.
	_, res := runEngine(t, engine.Options{Phase: engine.Run, DB: db, Threads: 2, OpCount: 1000, Target: 2500,
		StatusInterval: 50 * time.Millisecond, Observers: []engine.Observer{obs}})
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
			assert.Equal(t, int64(50*time.Millisecond), iv.EndNs-iv.StartNs, "interval %d length", i+1)
		}
		sum += iv.Ops
	}
	assert.Equal(t, res.Total.Ops, sum, "interval Ops add up to the total")
	assert.Equal(t, res.StartNs, ivs[0].StartNs)
	// The final interval's cut and the run's end are separate clock
	// reads: a few ms apart normally, ~15 ms under -race on a loaded
	// 2-core machine.
	assert.InDelta(t, float64(res.EndNs), float64(ivs[len(ivs)-1].EndNs), float64(50*time.Millisecond))
}

func TestPrepareRejects(t *testing.T) {
	db := &countDB{}
	w := newWorkload(t)
	tests := []struct {
		name string
		o    engine.Options
		want string
	}{
		{"zero threads", engine.Options{Phase: engine.Run, DB: db, Workload: w, Threads: 0, OpCount: 1}, "threads"},
		{"no db", engine.Options{Phase: engine.Run, Workload: w, Threads: 1, OpCount: 1}, "DB"},
		{"run forever", engine.Options{Phase: engine.Run, DB: db, Workload: w, Threads: 1}, "operationcount"},
		{"negative target", engine.Options{Phase: engine.Run, DB: db, Workload: w, Threads: 1, OpCount: 1, Target: -1}, "target"},
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
	r, err := engine.Prepare(context.Background(), engine.Options{Phase: engine.Run, DB: db, Workload: newWorkload(t), Threads: 1, OpCount: 10})
	require.NoError(t, err)
	at := time.Now().Add(200 * time.Millisecond)
	r.Start(at)
	time.Sleep(50 * time.Millisecond)
	assert.Zero(t, db.calls.Load(), "nothing before the start time")
	res := r.Wait()
	assert.Equal(t, int64(10), res.Total.Ops)
	assert.GreaterOrEqual(t, res.StartNs, at.UnixNano()-int64(5*time.Millisecond))
}

func TestThroughput(t *testing.T) {
	r := &engine.Result{RunTime: 2 * time.Second, Total: measurement.NewInterval(0, 0, 0)}
	r.Total.Ops = 500
	assert.Equal(t, 250.0, r.Throughput())
	r.RunTime = 0
	assert.Equal(t, 0.0, r.Throughput())
	assert.True(t, strings.Contains(engine.Run.String(), "run"))
	assert.Equal(t, "load", engine.Load.String())
}

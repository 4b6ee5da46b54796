// Package engine runs a CoreWorkload against a database with a number of
// worker goroutines: pacing (-target), operation budget, time limit,
// warm-up, and a reporter that cuts the measurements into numbered
// intervals aligned to the start. Single-host commands and the distributed
// agent both run this same engine.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// Options configure one engine run.
type Options struct {
	Phase    run.Phase
	DB       adapters.DB
	Workload *workload.Workload
	Threads  int
	// Target is this process' total ops/s; 0 runs unthrottled.
	Target float64
	// OpCount is this process' number of measured transactions (load:
	// records to insert); 0 means no limit (MaxExecution must be set).
	OpCount      int64
	MaxExecution time.Duration
	// WarmupOps and WarmupTime run operations before measuring starts;
	// they are neither measured nor counted.
	WarmupOps      int64
	WarmupTime     time.Duration
	StatusInterval time.Duration
	Mode           measurement.Mode
	// SetupRecorder, when set, configures each worker's recorder before
	// the run (failure naming, raw samples).
	SetupRecorder func(*measurement.Recorder)
	Clock         clock.Clock
	// Seed makes worker random streams reproducible when non-zero.
	Seed uint64
	// Sink receives every interval, from the reporter goroutine, with
	// Interval, Cumulative and Progress set (the caller adds what it knows
	// about agents). It may be nil.
	Sink run.Sink
	// Logf receives one-line notices (batching fallback, stopped threads).
	Logf func(format string, args ...any)
	// AbandonAfter is how long an aborted run waits for workers stuck
	// in calls that ignore the cancellation (AbandonAfter when 0).
	AbandonAfter time.Duration
}

// Result is what a finished run measured.
type Result struct {
	// StartNs and EndNs (Unix ns) bound the measured window.
	StartNs, EndNs int64
	RunTime        time.Duration
	Total          *measurement.Interval
	WarmupOps      int64
	Intervals      int64
	// Stopped says why the run ended before its budget, if it did.
	Stopped string
	// Abandoned counts workers still inside a database call AbandonAfter
	// after an abort cancelled it: the run ended without them.
	Abandoned int
}

// AbandonAfter bounds how long an aborted run waits for workers whose
// database call ignores the cancellation: the run then ends without them,
// so that no driver can hold it forever.
const AbandonAfter = 5 * time.Second

// Throughput returns measured transactions per second.
func (r *Result) Throughput() float64 {
	ms := r.RunTime.Milliseconds()
	if ms <= 0 {
		return 0
	}
	return float64(r.Total.Ops) * 1000 / float64(ms)
}

type worker struct {
	id      int
	db      adapters.DB
	wk      *workload.Worker
	rec     *measurement.Recorder
	budget  int64
	warmup  int64
	lagNs   atomic.Int64
	warmOps atomic.Int64
	// finished is set when the worker has returned.
	finished atomic.Bool
}

// Runner is a prepared run.
type Runner struct {
	opts    Options
	clk     clock.Clock
	workers []*worker

	ctx    context.Context
	cancel context.CancelFunc
	// sleepCtx is cancelled by Stop: paced workers waiting for their next
	// slot wake at once, while calls in flight finish normally.
	sleepCtx    context.Context
	sleepCancel context.CancelFunc
	stop        atomic.Bool
	reason      atomic.Pointer[string]
	// aborted is closed by the first Abort.
	aborted   chan struct{}
	abortOnce sync.Once

	measuring   atomic.Bool
	measureAtNs atomic.Int64 // clock Nanotime when measuring began
	measureWall atomic.Int64 // Unix ns when measuring began
	warmupDone  chan struct{}

	started     chan struct{}
	startedWall atomic.Int64
	done        chan struct{}
	result      *Result
	startMu     sync.Mutex
	startSet    bool
}

// Prepare validates options, opens a per-worker database handle for every
// worker (YCSB's per-thread DB init) and builds the workers. Nothing is
// sent to the database until Start.
func Prepare(ctx context.Context, o Options) (*Runner, error) {
	if o.Threads < 1 {
		return nil, fmt.Errorf("threads: expected at least 1, got %d", o.Threads)
	}
	if o.DB == nil || o.Workload == nil {
		return nil, errors.New("engine: DB and Workload are required")
	}
	if o.Phase == run.Run && o.OpCount == 0 && o.MaxExecution == 0 {
		return nil, errors.New("property \"operationcount\": expected a positive count, or maxexecutiontime > 0 for a timed run (operationcount=0 with no time limit would never stop)")
	}
	if o.Target < 0 {
		return nil, fmt.Errorf("target: expected a non-negative rate, got %g", o.Target)
	}
	if o.StatusInterval <= 0 {
		o.StatusInterval = 10 * time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.NewReal()
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.AbandonAfter <= 0 {
		o.AbandonAfter = AbandonAfter
	}
	threads := o.Threads
	if o.OpCount > 0 && int64(threads) > o.OpCount {
		o.Logf("Warning: threads (%d) reduced to the operation count (%d)", threads, o.OpCount)
		threads = int(o.OpCount)
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &Runner{opts: o, clk: o.Clock, ctx: rctx, cancel: cancel,
		warmupDone: make(chan struct{}), started: make(chan struct{}), done: make(chan struct{}), aborted: make(chan struct{})}
	r.sleepCtx, r.sleepCancel = context.WithCancel(rctx)
	seed := o.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	for i := 0; i < threads; i++ {
		db := o.DB
		if t, ok := o.DB.(adapters.Threader); ok {
			wdb, err := t.ForWorker(ctx, i, threads)
			if err != nil {
				r.closeWorkers()
				cancel()
				return nil, fmt.Errorf("worker %d: %w", i, err)
			}
			db = wdb
		}
		rec := measurement.NewRecorder(o.Mode)
		if o.SetupRecorder != nil {
			o.SetupRecorder(rec)
		}
		w := &worker{id: i, db: db, rec: rec}
		w.wk = o.Workload.NewWorker(i, db, rec, seed+uint64(i)*0x9E3779B97F4A7C15)
		w.budget = run.Share(o.OpCount, threads, i)
		w.warmup = run.Share(o.WarmupOps, threads, i)
		r.workers = append(r.workers, w)
		if i == 0 && w.wk.NeedsBatchWarning() {
			o.Logf("Warning: %s does not support batched inserts; batchsize=%d falls back to single inserts", dbName(o.DB), o.Workload.Cfg.BatchSize)
		}
	}
	return r, nil
}

func dbName(db adapters.DB) string { return fmt.Sprintf("%T", db) }

func (r *Runner) closeWorkers() {
	for _, w := range r.workers {
		if w.db != r.opts.DB {
			if c, ok := w.db.(adapters.Closer); ok {
				_ = c.Close()
			}
		}
	}
}

// Threads returns the number of workers actually used.
func (r *Runner) Threads() int { return len(r.workers) }

// Stop ends the run gracefully: workers finish their current operation,
// and everything measured so far is reported.
func (r *Runner) Stop(reason string) {
	r.reason.CompareAndSwap(nil, &reason)
	r.stop.Store(true)
	r.sleepCancel()
}

// Abort stops the run and cancels operations in flight.
func (r *Runner) Abort(reason string) {
	r.Stop(reason)
	r.cancel()
	r.abortOnce.Do(func() { close(r.aborted) })
}

// Done is closed when the run has finished and its result is ready.
func (r *Runner) Done() <-chan struct{} { return r.done }

// Start begins the run at wall-clock time at (now if zero). It returns at
// once; use Wait for the result.
func (r *Runner) Start(at time.Time) {
	r.startMu.Lock()
	defer r.startMu.Unlock()
	if r.startSet {
		return
	}
	r.startSet = true
	startNs := r.clk.Nanotime()
	if !at.IsZero() {
		startNs = clock.WallAt(r.clk, at)
	}
	go r.execute(startNs)
}

// Started is closed when the run has begun (at its start time).
func (r *Runner) Started() <-chan struct{} { return r.started }

// StartedAt is the wall-clock instant the run began; valid once Started
// is closed.
func (r *Runner) StartedAt() time.Time { return time.Unix(0, r.startedWall.Load()) }

// Wait blocks until the run ends and returns its result.
func (r *Runner) Wait() *Result {
	<-r.done
	return r.result
}

// SetExternalLimit forwards the cluster-wide acknowledged key limit.
func (r *Runner) SetExternalLimit(v int64) { r.opts.Workload.SetExternalLimit(v) }

func (r *Runner) execute(startNs int64) {
	defer close(r.done)
	defer r.cancel()
	o := r.opts
	if err := clock.SleepUntilPrecise(r.ctx, r.clk, startNs); err != nil {
		r.result = &Result{Total: measurement.NewInterval(0, 0, 0), Stopped: "aborted before start"}
		r.closeWorkers()
		return
	}
	// The instant the run actually began, taken before any worker runs:
	// distributed runs report it as the agent's start skew.
	r.startedWall.Store(r.clk.Now().UnixNano())
	close(r.started)
	defer r.adviseProcs()()
	hasWarmup := o.WarmupOps > 0 || o.WarmupTime > 0
	if !hasWarmup {
		r.beginMeasuring()
	}
	var wg sync.WaitGroup
	var warmWG sync.WaitGroup
	if o.WarmupOps > 0 {
		warmWG.Add(len(r.workers))
	}
	for _, w := range r.workers {
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			defer w.finished.Store(true)
			r.work(w, startNs, &warmWG)
		}(w)
	}
	if hasWarmup {
		go r.warmupController(startNs, &warmWG)
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	// The run ends when every worker has, or AbandonAfter after an abort
	// with workers still stuck in calls that ignore the cancellation.
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		select {
		case <-allDone:
		case <-r.aborted:
			select {
			case <-allDone:
			case <-r.clk.After(o.AbandonAfter):
			}
		}
	}()
	r.report(ended)
}

// adviseProcs lowers GOMAXPROCS for the run to what the binding advises
// (adapters.ProcsAdvisor), unless the user chose GOMAXPROCS, and returns
// the function that restores it.
func (r *Runner) adviseProcs() func() {
	a, ok := r.opts.DB.(adapters.ProcsAdvisor)
	if !ok || os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	n, cur := a.Procs(len(r.workers)), runtime.GOMAXPROCS(0)
	if n <= 0 || n >= cur {
		return func() {}
	}
	runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(cur) }
}

// warmupController switches from warm-up to measuring when the warm-up
// time has passed and every worker has done its share of warm-up ops.
func (r *Runner) warmupController(startNs int64, warmWG *sync.WaitGroup) {
	if r.opts.WarmupTime > 0 {
		_ = r.clk.SleepUntil(r.ctx, startNs+int64(r.opts.WarmupTime))
	}
	if r.opts.WarmupOps > 0 {
		warmWG.Wait()
	}
	r.beginMeasuring()
}

func (r *Runner) beginMeasuring() {
	if r.measuring.Load() {
		return
	}
	r.measureAtNs.Store(r.clk.Nanotime())
	r.measureWall.Store(r.clk.Now().UnixNano())
	r.measuring.Store(true)
	close(r.warmupDone)
}

func (r *Runner) work(w *worker, startNs int64, warmWG *sync.WaitGroup) {
	o := r.opts
	ctx := r.ctx
	measuring := r.measuring.Load()
	w.rec.SetEnabled(measuring)
	var tickNs float64
	if o.Target > 0 {
		tickNs = float64(len(r.workers)) * 1e9 / o.Target
	}
	// Stagger paced workers evenly over one tick so that they do not all
	// fire at once.
	base := float64(startNs) + tickNs*float64(w.id)/float64(len(r.workers))
	var k int64 // operations issued, warm-up included (schedule index)
	// A handle told each call's intended time gets it on time.Now's
	// monotonic scale: monoAt is this clock's monoNs.
	sched, _ := w.db.(adapters.Scheduled)
	monoAt, monoNs := time.Now(), r.clk.Nanotime()
	var done int64
	warmLeft := w.warmup
	// Every worker reports the end of its warm-up share exactly once, even
	// a worker whose share is 0 (warmupops < threads): the controller
	// waits for all of them.
	warmReported := o.WarmupOps == 0
	isLoad := o.Phase == run.Load
	for !r.stop.Load() {
		if !measuring {
			if warmLeft <= 0 && !warmReported {
				warmReported = true
				warmWG.Done()
				// Wait for the others so measuring starts together.
				select {
				case <-r.warmupDone:
				case <-ctx.Done():
				}
			}
			if r.measuring.Load() {
				measuring = true
				w.rec.SetEnabled(true)
			}
		}
		if measuring && w.budget > 0 && done >= w.budget {
			break
		}
		if measuring && o.MaxExecution > 0 && r.clk.Nanotime()-r.measureAtNs.Load() >= int64(o.MaxExecution) {
			break
		}
		if tickNs > 0 {
			due := int64(base + tickNs*float64(k))
			if measuring && o.MaxExecution > 0 && due-r.measureAtNs.Load() >= int64(o.MaxExecution) {
				// The next slot is past the time limit: do not sleep
				// through the end of the run.
				break
			}
			now := r.clk.Nanotime()
			if now < due {
				if err := r.clk.SleepUntil(r.sleepCtx, due); err != nil {
					break
				}
			} else if lag := now - due; lag > w.lagNs.Load() {
				w.lagNs.Store(lag)
			}
			w.wk.Intended = due
			if sched != nil {
				sched.Intend(monoAt.Add(time.Duration(due - monoNs)))
			}
			if !measuring && r.measuring.Load() {
				// Measuring began while this worker slept to its
				// slot: the call it makes now is in the measured
				// window. Left unrecorded, a slow paced run lost
				// every worker's first call of the window (a probe
				// at 11.7 ops/s over 16 threads counted a third).
				measuring = true
				w.rec.SetEnabled(true)
			}
		}
		k++
		if isLoad {
			if !w.wk.DoInsert(ctx) {
				if !r.stop.Load() {
					o.Logf("Worker %d stopped: an insert failed (set %s=true to keep going, or %s to retry)", w.id, workload.PropInsertKeepGoing, workload.PropInsertRetryLimit)
				}
				break
			}
		} else {
			w.wk.DoTransaction(ctx)
		}
		if measuring {
			done++
		} else {
			warmLeft--
			w.warmOps.Add(1)
		}
	}
	if isLoad {
		w.wk.FlushBatch(ctx)
	}
	if !warmReported {
		warmWG.Done()
	}
	// YCSB measures each thread's DB cleanup as CLEANUP.
	// Closing a worker's handle can still fail: an adapter that buffers
	// writes (HBase client buffering, MongoDB batches) sends the rest
	// then. Such a failure is counted under CLEANUP, never dropped.
	t0 := r.clk.Nanotime()
	var closeErr error
	if w.db != o.DB {
		if c, ok := w.db.(adapters.Closer); ok {
			closeErr = c.Close()
		}
	}
	w.rec.SetEnabled(true)
	d := r.clk.Nanotime() - t0
	if closeErr != nil {
		o.Logf("Worker %d: cleanup failed: %v", w.id, closeErr)
		w.rec.Measure(measurement.Cleanup, adapters.Error, d, d)
	} else {
		w.rec.MeasureLatency(measurement.Cleanup, d, d)
	}
	// CLEANUP is no transaction: hand it over on its own.
	w.rec.Flush()
}

// report cuts intervals at start + k*StatusInterval until the workers are
// done, then cuts a final one.
func (r *Runner) report(allDone <-chan struct{}) {
	o := r.opts
	cum := measurement.NewInterval(0, 0, 0)
	var seq int64
	// Until measuring begins, report warm-up progress on the same cadence.
	startWait := r.clk.Nanotime()
	warmTick := startWait + int64(o.StatusInterval)
	for !r.measuring.Load() {
		select {
		case <-allDone:
			r.beginMeasuring()
		case <-r.warmupDone:
		case <-r.clk.After(time.Duration(warmTick - r.clk.Nanotime())):
			warmTick += int64(o.StatusInterval)
			iv := measurement.NewInterval(0, 0, 0)
			for _, w := range r.workers {
				w.rec.Drain(iv) // discard anything recorded
			}
			p := r.progress(false)
			p.Warmup = true
			r.emit(iv, cum, p)
		}
	}
	mStart := r.measureAtNs.Load()
	wallStart := r.measureWall.Load()
	cum.StartNs = wallStart
	next := mStart + int64(o.StatusInterval)
	final := false
	for !final {
		select {
		case <-allDone:
			final = true
		case <-r.clk.After(time.Duration(next - r.clk.Nanotime())):
			// If the workers finished at the same moment, this is the
			// final interval; do not cut an empty one after it.
			select {
			case <-allDone:
				final = true
			default:
			}
		}
		now := r.clk.Nanotime()
		seq++
		ivStart := wallStart + (next - int64(o.StatusInterval) - mStart)
		ivEnd := wallStart + (now - mStart)
		if !final {
			ivEnd = wallStart + (next - mStart)
		}
		iv := measurement.NewInterval(seq, ivStart, ivEnd)
		for _, w := range r.workers {
			w.rec.Drain(iv)
		}
		cum.Add(iv)
		cum.Seq = 0
		p := r.progress(final)
		r.emit(iv, cum, p)
		if !final {
			next += int64(o.StatusInterval)
		}
	}
	// The run ends once its final interval has been handed to every sink,
	// as YCSB's run time ends once its threads have joined.
	end := r.clk.Nanotime()
	res := &Result{
		StartNs:   wallStart,
		EndNs:     wallStart + (end - mStart),
		RunTime:   time.Duration(end - mStart),
		Total:     cum,
		Intervals: seq,
	}
	for _, w := range r.workers {
		res.WarmupOps += w.warmOps.Load()
		if !w.finished.Load() {
			res.Abandoned++
		}
	}
	if res.Abandoned > 0 {
		r.opts.Logf("%d worker(s) still inside a database call %s after the abort: the run ends without them", res.Abandoned, r.opts.AbandonAfter)
	}
	if p := r.reason.Load(); p != nil {
		res.Stopped = *p
	}
	r.result = res
}

// emit hands one interval to the sink; the sink owns what it receives.
func (r *Runner) emit(iv, cum *measurement.Interval, p run.Progress) {
	if r.opts.Sink != nil {
		r.opts.Sink.OnInterval(&run.Update{Interval: iv, Cumulative: cum.Clone(), Progress: p})
	}
}

func (r *Runner) progress(final bool) run.Progress {
	var warm, lag int64
	for _, w := range r.workers {
		warm += w.warmOps.Load()
		if l := w.lagNs.Load(); l > lag {
			lag = l
		}
	}
	var elapsed time.Duration
	if r.measuring.Load() {
		elapsed = time.Duration(r.clk.Nanotime() - r.measureAtNs.Load())
	}
	return run.Progress{
		Phase:        r.opts.Phase,
		WarmupOps:    warm,
		Elapsed:      elapsed,
		Budget:       r.opts.OpCount,
		MaxExecution: r.opts.MaxExecution,
		Final:        final,
		Lag:          time.Duration(lag),
	}
}

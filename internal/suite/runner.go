package suite

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// Executor carries out a plan's items. The CLI hands each item's run
// specification to a run session, as `ycsbctl load|run` or `ycsbctl
// coordinator load|run` do with theirs, so a suite step is a run like any
// other; nothing goes back through the command line.
type Executor interface {
	// Schema drops and creates the benchmark schema before a load item
	// (it.Spec's adapter and properties), from this host even in a
	// distributed suite: it only talks to the database.
	Schema(ctx context.Context, it *Item) exitcode.Code
	// Run runs sp, the run of item it (a load, run or warm-up; a
	// thread-scan try's or scan-sized spec differs from it.Spec in its
	// thread count), writing its bundle with step's record in it.
	Run(ctx context.Context, it *Item, sp *spec.Spec, step *bundle.SuiteStep) exitcode.Code
	// Capacity runs the capacity search of item it over sp (the probes'
	// run but for each one's target), as `ycsbctl capacity` (or
	// `coordinator capacity`) does, writing its capacity bundle with
	// step's record in it.
	Capacity(ctx context.Context, it *Item, sp *spec.Spec, step *bundle.SuiteStep) exitcode.Code
}

// Progress is where the suite stands; the runner reports it before and
// after every item, for plain progress lines or a live view's header.
type Progress struct {
	Suite string
	// Index counts from 1; Total is the number of planned items.
	Index, Total int
	Database     string
	Step         string
	Kind         Kind
	// Event is "start", "done" or "skip".
	Event  string
	Status string
	// Elapsed since the suite started; ETA of the whole suite, 0 when
	// unknown (no item of unknown length has finished yet).
	Elapsed time.Duration
	ETA     time.Duration
}

// Line is the plain progress line.
func (p Progress) Line() string {
	eta := "suite ETA " + FormatDuration(p.ETA)
	switch {
	case p.Event != "start" && p.Index == p.Total:
		eta = "suite done in " + FormatDuration(p.Elapsed)
	case p.ETA <= 0:
		eta = "suite ETA unknown"
	}
	switch p.Event {
	case "skip":
		if p.Status == StatusSkipped {
			return fmt.Sprintf("suite %s: step %d/%d %s %s: skipped, the step it precedes is complete (%s)", p.Suite, p.Index, p.Total, p.Database, p.Step, eta)
		}
		return fmt.Sprintf("suite %s: step %d/%d %s %s: already complete, skipped (%s)", p.Suite, p.Index, p.Total, p.Database, p.Step, eta)
	case "done":
		return fmt.Sprintf("suite %s: step %d/%d %s %s: %s (%s)", p.Suite, p.Index, p.Total, p.Database, p.Step, p.Status, eta)
	}
	return fmt.Sprintf("suite %s: step %d/%d %s %s (%s)", p.Suite, p.Index, p.Total, p.Database, p.Step, eta)
}

// Runner runs a plan; its bundles go to the plan's results directory.
type Runner struct {
	Plan  *Plan
	Exec  Executor
	Clock clock.Clock
	// Resume skips items whose bundle is complete.
	Resume bool
	// KeepGoing records a failed step and runs the rest.
	KeepGoing bool
	// Progress, when set, is told where the suite stands.
	Progress func(Progress)
	// Log receives the runner's own notices.
	Log io.Writer

	mu sync.Mutex
	// phase is how far the operator has interrupted the suite.
	phase    phase
	stopCh   chan struct{}
	stopOnce sync.Once
	state    *State
	durKind  map[Kind][]time.Duration
	started  time.Time
	// failedBefore marks the bundle directories an earlier invocation
	// recorded as failed or incomplete.
	failedBefore map[string]bool
}

// complete reports whether --resume may take the bundle in dir as done:
// complete, not recorded as failed, and made by the run step describes
// (the same fingerprint).
func (r *Runner) complete(dir string, step *bundle.SuiteStep) bool {
	if r.failedBefore[dir] {
		return false
	}
	full := filepath.Join(r.Plan.ResultsDir, dir)
	if capacity.IsBundle(full) {
		rec, ok := completeSearch(full)
		return ok && rec.Suite != nil && rec.Suite.Fingerprint == step.Fingerprint
	}
	b, ok := completeBundle(full)
	return ok && b.Suite != nil && b.Suite.Fingerprint == step.Fingerprint
}

// stepRecord is the bundle's suite record of item it run as sp.
func (r *Runner) stepRecord(it *Item, sp *spec.Spec) *bundle.SuiteStep {
	if it.Step.ThreadsFromScan {
		// The planned step, whatever knee the scan found.
		sp = it.Spec
	}
	return r.Plan.suiteStep(it, sp.Props.Map())
}

// phase is where the operator's signals have taken the suite, as they
// take a single run: the first stops it gracefully (exit 6), a second
// aborts it (exit 4).
type phase int

const (
	phaseRunning phase = iota
	// phaseStopping: the step in progress ends gracefully (the signal
	// reaches it directly) and no other starts.
	phaseStopping
	// phaseAborting: the step in progress is aborted (by the same second
	// signal) and no other starts.
	phaseAborting
)

// Stop ends the suite after the current step (the step itself is stopped
// by the same Ctrl-C, which reaches it directly): the operator's first
// signal. Safe to call more than once and from any goroutine.
func (r *Runner) Stop() { r.interrupt(phaseStopping) }

// Abort is the operator's second signal: the suite ends as aborted.
func (r *Runner) Abort() { r.interrupt(phaseAborting) }

func (r *Runner) interrupt(to phase) {
	r.init()
	r.mu.Lock()
	r.phase = max(r.phase, to)
	r.mu.Unlock()
	r.stopOnce.Do(func() { close(r.stopCh) })
}

func (r *Runner) isStopped() bool { return r.currentPhase() != phaseRunning }

func (r *Runner) currentPhase() phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase
}

// operatorCode is the suite's exit when the operator ended it, the table's
// as for a single run: 4 once aborted (a second signal, or a step whose
// graceful stop had to cancel calls in flight), else 6.
func (r *Runner) operatorCode(step exitcode.Code) exitcode.Code {
	if r.currentPhase() == phaseAborting || step == exitcode.Aborted {
		return exitcode.Aborted
	}
	return exitcode.Stopped
}

func (r *Runner) init() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopCh == nil {
		r.stopCh = make(chan struct{})
	}
}

// Run runs every item and returns the suite's state and exit code, which
// the state records too: OK when every step passed; Stopped or Aborted
// when the operator ended it (operatorCode), also from a step's live view
// or a closed stdout; else the first failed step's code.
func (r *Runner) Run(ctx context.Context) (*State, exitcode.Code) {
	r.init()
	if r.Log == nil {
		r.Log = io.Discard
	}
	r.durKind = map[Kind][]time.Duration{}
	r.started = r.Clock.Now()
	p := r.Plan
	st := &State{Name: p.File.Name, Started: r.started, Agents: p.Agents}
	for _, d := range p.File.Databases {
		st.Databases = append(st.Databases, d.Name)
	}
	for _, k := range sortedKeys(p.Overrides) {
		st.Overrides = append(st.Overrides, k+"="+p.Overrides[k])
	}
	r.failedBefore = map[string]bool{}
	if r.Resume {
		if old, err := ReadState(p.ResultsDir); err == nil && !old.Started.IsZero() {
			st.Started = old.Started
		}
		r.failedBefore = failedBefore(p.ResultsDir)
	}
	r.state = st
	for _, it := range p.Items {
		ss := StepState{Seq: it.Seq, DB: it.DB.DB, Database: it.DB.Name, StepIndex: it.StepIndex, Step: it.Name, Kind: it.Kind,
			Workload: it.Workload, Sweep: it.Sweep, Status: StatusPending, Fingerprint: it.Fingerprint}
		if sp := it.Spec; sp != nil {
			ss.RecordCount = sp.Workload.RecordCount
			if ss.RecordCount == 1<<63-1 {
				ss.RecordCount = 0 // unset: YCSB's unbounded
			}
			if !it.Step.ThreadsFromScan && it.ThreadScan == nil {
				ss.Threads = sp.Threads
			}
			if sp.Target > 0 {
				t := sp.Target
				ss.Target = &t
			}
		}
		if it.Kind != KindPause && it.ThreadScan == nil {
			// A thread scan's tries get bundles of their own.
			ss.Dir = it.Dir
		}
		st.Steps = append(st.Steps, ss)
	}
	if err := os.MkdirAll(p.ResultsDir, 0o755); err != nil {
		r.logf("suite %s: cannot create %s: %v\n", p.File.Name, p.ResultsDir, err)
		return st, exitcode.Failure
	}
	if len(p.File.Source) > 0 {
		if err := outfile.Write(filepath.Join(p.ResultsDir, FileSource), p.File.Source, 0o644); err != nil {
			r.logf("suite %s: %v\n", p.File.Name, err)
			return st, exitcode.Failure
		}
	}
	st.Status = SuiteRunning
	r.save()
	code := r.runItems(ctx)
	st.setOutcome(code)
	r.save()
	return st, code
}

// runItems runs the plan's items in order and returns the suite's code.
// A signal that arrives after the last item passed ends nothing: the
// suite is complete.
func (r *Runner) runItems(ctx context.Context) exitcode.Code {
	code := exitcode.OK
	for i, it := range r.Plan.Items {
		if r.isStopped() {
			return r.operatorCode(exitcode.OK)
		}
		c := r.runItem(ctx, i, it)
		if c == exitcode.OK {
			continue
		}
		if r.isStopped() || c.ByOperator() {
			return r.operatorCode(c)
		}
		if code == exitcode.OK {
			code = c
		}
		if !r.KeepGoing {
			break
		}
	}
	return code
}

// logf writes a notice to Log; a failed write has nowhere better to go.
func (r *Runner) logf(format string, a ...any) {
	_, _ = fmt.Fprintf(r.Log, format, a...)
}

func (r *Runner) save() {
	r.state.Updated = r.Clock.Now()
	if err := WriteState(r.Plan.ResultsDir, r.state); err != nil {
		r.logf("suite %s: writing %s: %v\n", r.Plan.File.Name, FileState, err)
	}
}

// skippable reports whether --resume may skip the item: a measured item
// whose bundle is complete, a warm-up or pause whose next measured item
// is complete.
func (r *Runner) skippable(i int, it *Item) bool {
	if !r.Resume {
		return false
	}
	switch it.Kind {
	case KindLoad, KindRun, KindCapacity:
		if it.ThreadScan != nil {
			return false // each try is checked on its own
		}
		return r.complete(it.Dir, r.stepRecord(it, it.Spec))
	}
	for _, next := range r.Plan.Items[i+1:] {
		if next.Kind == KindLoad || next.Kind == KindRun || next.Kind == KindCapacity {
			return next.ThreadScan == nil && next.DB.Name == it.DB.Name && r.complete(next.Dir, r.stepRecord(next, next.Spec))
		}
	}
	return false
}

func (r *Runner) runItem(ctx context.Context, i int, it *Item) exitcode.Code {
	ss := &r.state.Steps[i]
	if r.skippable(i, it) {
		ss.Status = StatusResumed
		switch it.Kind {
		case KindLoad, KindRun:
			if b, err := bundle.Read(filepath.Join(r.Plan.ResultsDir, it.Dir)); err == nil {
				ss.Started, ss.Ended = b.Run.StartedAt, b.Run.EndedAt
				ss.setExit(b.Run.ExitCode)
			}
		case KindCapacity:
			if rec, err := capacity.Read(filepath.Join(r.Plan.ResultsDir, it.Dir)); err == nil {
				ss.Started, ss.Ended = rec.StartedAt, rec.EndedAt
				ss.setExit(rec.ExitCode)
			}
		default:
			// A pause or warm-up before a complete step: not run again,
			// and no exit code of its own to show.
			ss.Status = StatusSkipped
		}
		r.report(i, it, "skip", ss.Status)
		r.save()
		return exitcode.OK
	}
	r.report(i, it, "start", "")
	start := r.Clock.Now()
	ss.Started = start
	// On record before it runs: a suite killed during the step leaves
	// suite.json saying which step it was in (MarkEnded).
	r.save()
	var code exitcode.Code
	switch {
	case it.Kind == KindPause:
		code = r.pause(ctx, it.Pause)
	case it.ThreadScan != nil:
		code = r.threadScan(ctx, i, it)
	default:
		code = r.execute(ctx, it, ss)
	}
	// The thread scan appends its tries to Steps: take the pointer anew.
	ss = &r.state.Steps[i]
	ss.Ended = r.Clock.Now()
	ss.setExit(int(code))
	switch {
	case code == exitcode.OK:
		ss.Status = StatusPassed
		r.durKind[it.Kind] = append(r.durKind[it.Kind], ss.Ended.Sub(start))
	case code.ByOperator() || r.isStopped():
		ss.Status = StatusIncomplete
	default:
		ss.Status = StatusFailed
	}
	r.report(i, it, "done", ss.Status)
	r.save()
	return code
}

func (r *Runner) execute(ctx context.Context, it *Item, ss *StepState) exitcode.Code {
	if it.Schema {
		r.logf("suite %s: %s: drop and create the schema\n", r.Plan.File.Name, it.Label())
		if c := r.Exec.Schema(ctx, it); c != exitcode.OK {
			r.logf("suite %s: %s: recreating the schema of %s failed (exit %d)\n", r.Plan.File.Name, it.Label(), it.DB.DB, c)
			return c
		}
		if r.isStopped() {
			return r.operatorCode(exitcode.OK)
		}
	}
	sp := it.Spec
	if it.Step.ThreadsFromScan {
		threads := 0
		for _, sc := range r.state.Scans {
			if sc.Database == it.DB.Name && sc.Knee > 0 {
				threads = sc.Knee
			}
		}
		if threads == 0 {
			r.logf("suite %s: %s: threads: scan, but no thread scan found a knee for %s\n", r.Plan.File.Name, it.Label(), it.DB.Name)
			return exitcode.Failure
		}
		var err error
		if sp, err = it.Spec.With(map[string]string{PropThreads: strconv.Itoa(threads)}); err != nil {
			r.logf("suite %s: %s: %v\n", r.Plan.File.Name, it.Label(), err)
			return exitcode.InvalidConfig
		}
		ss.Threads = threads
	}
	// A bundle left by an interrupted attempt would otherwise mix with
	// this one's files.
	_ = os.RemoveAll(filepath.Join(r.Plan.ResultsDir, it.Dir))
	ss.Args = r.Plan.CommandLine(it, sp)
	if it.Kind == KindCapacity {
		return r.Exec.Capacity(ctx, it, sp, r.stepRecord(it, sp))
	}
	return r.Exec.Run(ctx, it, sp, r.stepRecord(it, sp))
}

func (r *Runner) pause(ctx context.Context, d time.Duration) exitcode.Code {
	select {
	case <-r.Clock.After(d):
		return exitcode.OK
	case <-r.stopCh:
		return r.operatorCode(exitcode.OK)
	case <-ctx.Done():
		return exitcode.Aborted
	}
}

// threadScan runs the item with 1, 2, 4, ... threads until doubling grows
// throughput by less than the minimum gain, and records the knee: the
// last thread count whose doubling still paid.
func (r *Runner) threadScan(ctx context.Context, i int, it *Item) exitcode.Code {
	ts := it.ThreadScan
	scan := ScanState{Database: it.DB.Name, Step: filepath.Base(it.Dir), MinGain: ts.MinGain}
	defer func() {
		r.state.Scans = append(r.state.Scans, scan)
		r.save()
	}()
	parent := r.state.Steps[i]
	for threads := 1; threads <= ts.Max; threads *= 2 {
		dir := it.Dir + strconv.Itoa(threads)
		try := parent
		try.Dir, try.Threads, try.ScanOf, try.Status = dir, threads, filepath.Base(it.Dir), StatusPending
		try.Sweep = append(append([]SweepValue(nil), parent.Sweep...), SweepValue{Key: "threads", Value: strconv.Itoa(threads)})
		try.Started = r.Clock.Now()
		full := filepath.Join(r.Plan.ResultsDir, dir)
		set := map[string]string{PropThreads: strconv.Itoa(threads), spec.PropResults: full}
		sp, err := it.Spec.With(set)
		if err != nil {
			scan.Reason = err.Error()
			return exitcode.InvalidConfig
		}
		rec := r.Plan.suiteStep(it, sp.Props.Map())
		try.Fingerprint = rec.Fingerprint
		if r.Resume && r.complete(dir, rec) {
			try.Status = StatusResumed
		} else {
			_ = os.RemoveAll(full)
			try.Args = r.Plan.CommandLine(it, sp)
			r.logf("suite %s: %s: thread scan, %d thread(s)\n", r.Plan.File.Name, it.DB.Name, threads)
			c := r.Exec.Run(ctx, it, sp, rec)
			try.Ended = r.Clock.Now()
			try.setExit(int(c))
			if c != exitcode.OK {
				try.Status = StatusFailed
				if c.ByOperator() || r.isStopped() {
					try.Status = StatusIncomplete
				}
				r.state.Steps = append(r.state.Steps, try)
				scan.Reason = fmt.Sprintf("stopped: the %d-thread try exited %d", threads, c)
				return c
			}
			try.Status = StatusPassed
		}
		if try.Status == StatusResumed {
			try.setExit(0)
		}
		r.state.Steps = append(r.state.Steps, try)
		b, err := bundle.Read(full)
		if err != nil {
			scan.Reason = err.Error()
			return exitcode.Failure
		}
		tput := b.Run.Summary.Throughput
		scan.Threads = append(scan.Threads, threads)
		scan.Throughput = append(scan.Throughput, tput)
		n := len(scan.Throughput)
		if n >= 2 {
			prev := scan.Throughput[n-2]
			if prev > 0 && tput/prev-1 < ts.MinGain {
				scan.Knee = scan.Threads[n-2]
				scan.Reason = fmt.Sprintf("%d → %d threads grew throughput %+.1f%% (< %s%%)", scan.Threads[n-2], threads, (tput/prev-1)*100, fmtFloat(ts.MinGain*100))
				r.logf("suite %s: %s: thread scan knee at %d thread(s): %s\n", r.Plan.File.Name, it.DB.Name, scan.Knee, scan.Reason)
				return exitcode.OK
			}
		}
		r.save()
	}
	scan.Knee = scan.Threads[len(scan.Threads)-1]
	scan.Reason = fmt.Sprintf("throughput still grew at the maximum of %s", plural.Count(ts.Max, "thread"))
	r.logf("suite %s: %s: thread scan: %s\n", r.Plan.File.Name, it.DB.Name, scan.Reason)
	return exitcode.OK
}

// eta estimates the time left: known estimates of the items not yet
// done, and for items of unknown length the median time items of their
// kind took so far in this invocation.
func (r *Runner) eta(from int) time.Duration {
	var left time.Duration
	for _, it := range r.Plan.Items[from:] {
		if it.Estimate > 0 {
			left += it.Estimate
			continue
		}
		if it.Kind == KindPause {
			continue
		}
		ds := r.durKind[it.Kind]
		if len(ds) == 0 {
			return 0
		}
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
		left += s[len(s)/2]
	}
	return left
}

func (r *Runner) report(i int, it *Item, event, status string) {
	if r.Progress == nil {
		return
	}
	from := i
	if event != "start" {
		from = i + 1
	}
	name := filepath.Base(it.Dir)
	if it.Kind == KindPause {
		name = fmt.Sprintf("%02d-%s %s", it.StepIndex, it.Name, FormatDuration(it.Pause))
	}
	r.Progress(Progress{Suite: r.Plan.File.Name, Index: i + 1, Total: len(r.Plan.Items), Database: it.DB.Name, Step: name,
		Kind: it.Kind, Event: event, Status: status, Elapsed: r.Clock.Now().Sub(r.started), ETA: r.eta(from)})
}

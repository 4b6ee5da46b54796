package session

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/procstat"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// Local is the source of a single-host run: this process' own engine,
// presented as a cluster of one agent named "local".
type Local struct {
	spec    *spec.Spec
	prep    *spec.Prepared
	clk     clock.Clock
	id      string
	started time.Time
	host    string
	fwd     *forward
	rec     *bundle.LocalRecorder

	self run.SelfView
	cpu0 float64
	res  *engine.Result
}

// forward lets the engine, whose sink is fixed when it is prepared, feed
// the sinks the session only builds when the run starts.
type forward struct {
	mu   sync.Mutex
	sink run.Sink
}

func (f *forward) OnInterval(u *run.Update) {
	f.mu.Lock()
	s := f.sink
	f.mu.Unlock()
	if s != nil {
		s.OnInterval(u)
	}
}

// NewLocal opens the database and prepares the engine; logf receives the
// engine's notices (use the session's Logf so they go under the live
// view).
func NewLocal(ctx context.Context, sp *spec.Spec, clk clock.Clock, logf func(string, ...any)) (*Local, error) {
	if clk == nil {
		clk = clock.NewReal()
	}
	l := &Local{spec: sp, clk: clk, started: clk.Now(), fwd: &forward{}}
	l.id = run.NewID(l.started)
	l.host, _ = os.Hostname()
	l.self = run.SelfView{Name: run.LocalAgent, Hostname: l.host}
	if dir := sp.Output.ResultsDir; dir != "" {
		rec, err := bundle.NewLocalRecorder(dir, l.started)
		if err != nil {
			// Nothing was sent yet: refuse before the run, not after it.
			return nil, exitcode.Wrap(exitcode.InvalidConfig, fmt.Errorf("--results %s: %w", dir, err))
		}
		l.rec = rec
	}
	prep, err := spec.Prepare(ctx, sp, clk, logf, run.SinkFunc(l.onInterval))
	if err != nil {
		return nil, err
	}
	l.prep = prep
	return l, nil
}

// Info describes the run.
func (l *Local) Info() run.Info {
	return run.Info{RunID: l.id, Mode: run.ModeSingleHost, Command: l.spec.Phase.String(), Agents: []string{run.LocalAgent},
		Threads: l.prep.Runner.Threads(), Started: l.started}
}

// onInterval adds the one agent's view to the engine's interval.
func (l *Local) onInterval(u *run.Update) {
	u.RunID = l.id
	l.self.Describe(u, procstat.CPUSeconds())
	if l.rec != nil {
		l.rec.OnInterval(u)
	}
	l.fwd.OnInterval(u)
}

// Run starts the engine now and waits for it.
func (l *Local) Run(ctx context.Context, sink run.Sink) *run.Outcome {
	l.fwd.mu.Lock()
	l.fwd.sink = sink
	l.fwd.mu.Unlock()
	l.cpu0 = procstat.CPUSeconds()
	l.self.Begin(l.cpu0)
	r := l.prep.Runner
	stopOnCancel := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			r.Stop("context cancelled")
		case <-stopOnCancel:
		}
	}()
	var at time.Time
	if d := l.spec.Output.MetricsStartDelay; d > 0 {
		// The session exposes the run's series at zero before Run; the
		// load waits so that a scraper records those zeros first.
		at = l.clk.Now().Add(d)
	}
	r.Start(at)
	res := r.Wait()
	close(stopOnCancel)
	l.res = res
	out := &run.Outcome{RunTime: res.RunTime, Total: res.Total, WarmupOps: res.WarmupOps, Status: run.StatusComplete}
	if res.Stopped != "" {
		out.Status = run.StatusAborted
		out.Reasons = []string{"Stopped early: " + res.Stopped}
	}
	if err := l.prep.Close(); err != nil {
		out.Notes = append(out.Notes, fmt.Sprintf("closing the database: %v", err))
	}
	if raw := l.prep.Raw; raw != nil {
		out.Notes = append(out.Notes, rawNotes(raw.Dropped())...)
	}
	return out
}

// Stop ends the run gracefully.
func (l *Local) Stop(reason string) { l.prep.Runner.Stop(reason) }

// Abort ends the run and cancels operations in flight.
func (l *Local) Abort(reason string) { l.prep.Runner.Abort(reason) }

// Close releases the database of a run that never ran.
func (l *Local) Close() error {
	if l.res != nil {
		return nil
	}
	return l.prep.Close()
}

// Record adds the single agent and the recorded intervals to the bundle.
func (l *Local) Record(r *bundle.Run) error {
	if l.rec == nil || l.res == nil {
		return fmt.Errorf("no results were recorded")
	}
	res := l.res
	return l.rec.Fill(r, bundle.LocalResult{StartNs: res.StartNs, EndNs: res.EndNs, RunTime: res.RunTime, Total: res.Total,
		WarmupOps: res.WarmupOps, Intervals: res.Intervals, Stopped: res.Stopped, Threads: l.prep.Runner.Threads(),
		CPUSeconds: procstat.CPUSeconds() - l.cpu0, Hostname: l.host})
}

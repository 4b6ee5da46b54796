package session

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/environ"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/procstat"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/wire"
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
	logf    func(string, ...any)
	fwd     *forward
	// rec is the run's record: the engine's intervals are encoded and
	// spooled by the reporter goroutine, never by workers.
	rec         *bundle.Recorder
	spoolFailed bool

	self run.SelfView
	// tel samples this host while the engine runs; nil when telemetry is
	// off. Cut only on the reporter goroutine.
	tel     *telemetry.Sampler
	cpu0    float64
	res     *engine.Result
	aborted atomic.Pointer[string]
	// db is the database as the adapter described it (runs that record
	// a bundle).
	db *environ.Database
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
	l := &Local{spec: sp, clk: clk, started: clk.Now(), fwd: &forward{}, logf: logf}
	l.id = run.NewID(l.started)
	l.host, _ = os.Hostname()
	l.self = run.SelfView{Name: run.LocalAgent, Hostname: l.host}
	prep, err := spec.Prepare(ctx, sp, clk, logf, run.SinkFunc(l.onInterval))
	if err != nil {
		return nil, err
	}
	l.prep = prep
	if sp.Output.ResultsDir != "" {
		// Read before the load starts, so that it never competes with it.
		d := adapters.Describe(ctx, sp.Adapter.Name, prep.DB)
		d.DescribedBy = run.LocalAgent
		l.db = &d
	}
	return l, nil
}

// Info describes the run.
func (l *Local) Info() run.Info {
	return run.Info{RunID: l.id, Mode: run.ModeSingleHost, Command: l.spec.Phase.String(), Agents: []string{run.LocalAgent},
		Threads: l.prep.Runner.Threads(), Started: l.started}
}

// onInterval adds the one agent's view to the engine's interval and
// spools it, as an agent's record is spooled by its coordinator. It runs
// on the engine's reporter goroutine.
func (l *Local) onInterval(u *run.Update) {
	u.RunID = l.id
	l.self.Describe(u, procstat.CPUSeconds())
	if l.tel != nil && u.Interval != nil {
		if iv := l.tel.Cut(u.Interval.StartNs, u.Interval.EndNs, u.Progress.Warmup); iv != nil {
			u.Telemetry = []*telemetry.Interval{iv}
		}
	}
	if l.rec != nil && !u.Progress.Warmup && !l.spoolFailed {
		if err := l.spool(u); err != nil {
			// The run goes on; the bundle fails at the end with this
			// error, and what was spooled can still be rebuilt.
			l.spoolFailed = true
			l.logf("--results: %v", err)
		}
	}
	l.fwd.OnInterval(u)
}

// spool records the interval as an agent's record of it is recorded; the
// single host's own figure is its CPU as its self view describes it.
func (l *Local) spool(u *run.Update) error {
	var own wire.OwnFigures
	if len(u.Agents) > 0 {
		own.CPUSeconds = u.Agents[0].CPUSeconds
	}
	rec, err := wire.RecordFromUpdate(0, u, own)
	if err != nil {
		return err
	}
	return l.rec.Add(rec)
}

// Run starts the engine now and waits for it.
func (l *Local) Run(ctx context.Context, sink run.Sink, rec *bundle.Recorder) *run.Outcome {
	if rec != nil {
		rec.Meta.Agents = []bundle.Agent{{Index: 0, Address: run.LocalAgent, Hostname: l.host, Version: rec.Meta.Version,
			Protocol: rec.Meta.Protocol, Threads: l.prep.Runner.Threads()}}
		rec.Meta.Config.Agents = []string{run.LocalAgent}
		if e := rec.Meta.Environment; e != nil {
			e.Hosts, e.Database = []environ.Host{environ.LocalHost()}, l.db
		}
		if err := rec.Start(); err != nil {
			return &run.Outcome{Total: measurement.NewInterval(0, 0, 0), Status: run.StatusAborted, NeverStarted: true,
				Err: exitcode.Wrap(exitcode.Failure, fmt.Errorf("--results %s: %w", rec.Dir(), err))}
		}
		l.rec = rec
	}
	l.fwd.mu.Lock()
	l.fwd.sink = sink
	l.fwd.mu.Unlock()
	l.cpu0 = procstat.CPUSeconds()
	l.self.Begin(l.cpu0)
	// A single host reads the database's internals even when its server
	// runs elsewhere: it is the only load generator.
	l.tel = l.prep.StartTelemetry(l.host, true, l.logf)
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
	if l.tel != nil {
		l.tel.Close()
	}
	l.res = res
	out := &run.Outcome{RunTime: res.RunTime, Total: res.Total, WarmupOps: res.WarmupOps, Status: run.StatusComplete}
	if res.Stopped != "" {
		out.Status = run.StatusStopped
		out.Reasons = []string{"Stopped early: " + res.Stopped}
		out.Err = exitcode.Wrap(exitcode.Stopped, fmt.Errorf("run stopped: %s", res.Stopped))
	}
	if why := l.aborted.Load(); why != nil {
		out.Status = run.StatusAborted
		out.Reasons = append(out.Reasons, "Aborted: "+*why)
		out.Err = exitcode.Wrap(exitcode.Aborted, fmt.Errorf("run aborted: %s", *why))
	}
	if res.Abandoned > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d worker(s) did not return from a database call cancelled by the abort; their calls in flight are not counted", res.Abandoned))
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
func (l *Local) Abort(reason string) {
	l.aborted.CompareAndSwap(nil, &reason)
	l.prep.Runner.Abort(reason)
}

// Close releases the database of a run that never ran.
func (l *Local) Close() error {
	if l.res != nil {
		return nil
	}
	return l.prep.Close()
}

// End adds the single agent's own account of the run.
func (l *Local) End(e *bundle.Ending) {
	res := l.res
	if res == nil {
		return
	}
	if res.StartNs > 0 {
		e.PlannedStart = time.Unix(0, res.StartNs)
	}
	var skew int64
	cpu := procstat.CPUSeconds() - l.cpu0
	e.Agents = []bundle.AgentEnding{{State: run.AgentFinished, StartSkewNs: &skew,
		Final: &bundle.Final{StartUnixNs: res.StartNs, EndUnixNs: res.EndNs, RunTimeMs: float64(res.RunTime) / 1e6, Operations: res.Total.Ops,
			WarmupOps: res.WarmupOps, Intervals: res.Intervals, Stopped: res.Stopped, CPUSeconds: cpu}}}
}

// Package session presents one benchmark run, whatever produced it: a
// source of intervals (the local engine, or a coordinator merging its
// agents) feeds a fan-out of sinks (YCSB status lines, timeseries, the
// HdrHistogram file log, Prometheus, the live view), and the session owns
// everything around them exactly once: the results directory, operator
// signals (the first Ctrl-C or SIGTERM stops gracefully within a grace
// period, the second aborts; a closed stdout stops gracefully), the final
// YCSB summary and exportfile, the verdicts that decide the exit code, and
// the run's record (package bundle), whose bundle is built last so that
// run.json records the exit code the process returns.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/resultsdir"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/shellquote"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/sink/metrics"
	"github.com/ycsbctl/ycsbctl/internal/sink/tui"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/version"
)

// Source produces a run's intervals: the local engine (Local) or a
// coordinator driving agents.
type Source interface {
	// Info describes the run before it starts.
	Info() run.Info
	// Run executes the run, handing every interval to sink, and returns
	// when it is over. When the run is recorded (rec is not nil) the
	// source completes rec.Meta with what it knows of the run (its
	// agents, plan, limits), starts rec before any load, and adds every
	// interval record to it as it is accepted, off the workers' path. A
	// source that cannot start rec returns an outcome that never started.
	Run(ctx context.Context, sink run.Sink, rec *bundle.Recorder) *run.Outcome
	// Stop ends the run gracefully: what is in flight finishes and is
	// measured. Abort also cancels operations in flight. Both may be
	// called from any goroutine, before or during Run.
	Stop(reason string)
	Abort(reason string)
	// End adds what only the source knows of how the run ended to the
	// bundle's ending (agents' states and their own accounts, the planned
	// start). It is called after Run, only when the run is recorded.
	End(e *bundle.Ending)
}

// Options is the outside world of a session.
type Options struct {
	Spec *spec.Spec
	// CommandLine is recorded in the bundle, secrets redacted.
	CommandLine []string
	Stdin       io.Reader
	Stdout      io.Writer
	Stderr      io.Writer
	Clock       clock.Clock
	// Terminal says stdout is an interactive terminal (the live view
	// needs one); Getenv reads TERM.
	Terminal bool
	Getenv   func(string) string
	// Notify and StopNotify are signal.Notify and signal.Stop.
	Notify     func(c chan<- os.Signal, sig ...os.Signal)
	StopNotify func(c chan<- os.Signal)
	// OutputClosed reports whether stdout (or stderr) is a pipe or socket
	// whose reader has gone: asked when a SIGPIPE arrives, which any
	// closed connection of the process also raises.
	OutputClosed func() bool
	// Workload names the workload for the live view and run_info (the -P
	// names as given).
	Workload string
	// Sinks are extra sinks that see every interval after the session's
	// own (tests).
	Sinks []run.Sink
	// Banner is shown above the live view (a suite's progress).
	Banner string
	// Invocation is the command as the operator typed it, recorded as the
	// environment's command: a suite's for each of its steps (whose
	// CommandLine is the step's equivalent command). Empty: CommandLine.
	Invocation []string
	// Suite places a suite step's run in its suite (nil outside suites).
	Suite *bundle.SuiteStep
	// StatusPrefix goes before the label of every status line: where a
	// command that runs several runs (a capacity search) is.
	StatusPrefix string
	// Outcome, when set, hears how the run ended as its source tells
	// it (a capacity search judges no partial probe).
	Outcome func(*run.Outcome)
}

// Session is one run being presented.
type Session struct {
	o      Options
	errOut *switchWriter

	opened bool
	// results is the results directory, made ready before any load.
	results *resultsdir.Owned
	hlog    *hlog.FileSink
	exp     *metrics.Exporter
	msrv    *metrics.Server
}

// New returns a session; its Stderr is where sources should log, because
// the live view redirects it while it owns the terminal.
func New(o Options) *Session {
	if o.Clock == nil {
		o.Clock = clock.NewReal()
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	return &Session{o: o, errOut: &switchWriter{w: o.Stderr}}
}

// Stderr is the session's notice stream.
func (s *Session) Stderr() io.Writer { return s.errOut }

// Logf writes one notice line.
func (s *Session) Logf(format string, args ...any) {
	_, _ = fmt.Fprintf(s.errOut, format+"\n", args...)
}

// Header prints what YCSB prints before a run, and the command line with
// secrets redacted.
func (s *Session) Header() {
	s.Logf("ycsbctl %s", version.Version)
	s.Logf("Command line: %s", properties.Printable(shellquote.Join(bundle.RedactArgs(s.o.CommandLine))))
	for _, w := range s.o.Spec.Warnings {
		s.Logf("%s", w)
	}
}

// Open prepares what must work before any load is sent: the HdrHistogram
// file log, the /metrics listener, the exportfile's directory and the
// results directory (refused when it holds a bundle, unless --overwrite).
// A failure is a usage error (exit 2) and nothing has run. Run calls it
// when the caller did not.
func (s *Session) Open() error {
	if s.opened {
		return nil
	}
	s.opened = true
	sp := s.o.Spec
	// First, so that nothing in the results directory is looked at or
	// written before this process owns it; --overwrite only sets the old
	// bundle aside, and puts it back if anything below is refused.
	if dir := sp.Output.ResultsDir; dir != "" {
		c, err := resultsdir.Claim(dir, sp.Output.Overwrite, s.Logf)
		if err != nil {
			return exitcode.Wrap(exitcode.InvalidConfig, fmt.Errorf("--results %s: %w", dir, err))
		}
		s.results = c
	}
	if err := s.checkOutputs(); err != nil {
		s.closeOutputs()
		return exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	if err := s.openMeasure(); err != nil {
		s.closeOutputs()
		return err
	}
	if f := sp.Output.ExportFile; f != "" {
		err := checkWritableDir(filepath.Dir(f))
		if err == nil {
			err = outfile.Check(f)
		}
		if err != nil {
			s.closeOutputs()
			return exitcode.Wrap(exitcode.InvalidConfig, fmt.Errorf("property %q=%q: %w", spec.PropExportFile, f, err))
		}
	}
	if sp.Output.HlogPath != "" {
		hl, err := hlog.CreateFile(sp.Output.HlogPath, s.o.Clock.Now())
		if err != nil {
			s.closeOutputs()
			return exitcode.Wrap(exitcode.InvalidConfig, fmt.Errorf("property %q: %w", spec.PropHdrOutputPath, err))
		}
		s.hlog = hl
	}
	if addr := sp.Output.MetricsAddr; addr != "" {
		s.exp = metrics.New()
		srv, err := metrics.Listen(addr, s.exp.Handler())
		if err != nil {
			s.closeOutputs()
			return exitcode.Wrap(exitcode.InvalidConfig, fmt.Errorf("--metrics-addr %s: %w", addr, err))
		}
		s.msrv = srv
		s.Logf("Prometheus metrics: %s", srv.URL())
	}
	return nil
}

// closeOutputs releases what Open opened, for a run that never ran: it
// leaves no file behind, and no results directory it created.
func (s *Session) closeOutputs() {
	if s.hlog != nil {
		s.hlog.Discard()
		s.hlog = nil
	}
	if s.msrv != nil {
		_ = s.msrv.Close()
		s.msrv = nil
	}
	s.releaseResults()
}

// releaseResults ends this process' ownership of the results directory.
func (s *Session) releaseResults() {
	s.results.Release()
	s.results = nil
}

// Abandon releases what Open opened when the source could not be built.
func (s *Session) Abandon() { s.closeOutputs() }

// checkWritableDir says why files cannot be created in dir, if they cannot.
func checkWritableDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".ycsbctl-write-check-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// Run presents src's run from start to verdict and returns nil or an
// error carrying the run's exit code.
func (s *Session) Run(ctx context.Context, src Source) error {
	if err := s.Open(); err != nil {
		return err
	}
	sp := s.o.Spec
	info := src.Info()
	sinks := run.Sinks{}
	mo := s.newMeasureOutputs(info)
	sinks = append(sinks, mo.sinks()...)
	status := &ycsbtext.StatusPrinter{W: s.errOut, Label: s.o.StatusPrefix + sp.Output.Label, Every: sp.StatusEvery, Now: s.o.Clock.Now,
		Format: sp.Measure.Format, Extra: mo.statusExtra()}
	if sp.Output.Status {
		sinks = append(sinks, status)
	}
	var series *ycsbtext.TimeseriesCollector
	if sp.Output.Timeseries {
		series = &ycsbtext.TimeseriesCollector{}
		sinks = append(sinks, series)
	}
	hl, msrv := s.hlog, s.msrv
	if hl != nil {
		sinks = append(sinks, hl)
	}
	if s.exp != nil {
		// The run's series appear at zero now, before the source starts
		// any load (ycsbctl.metrics.startdelay leaves time to scrape them).
		sinks = append(sinks, s.exp.NewSink(metrics.RunInfo{RunID: info.RunID, Phase: sp.Phase.String(), Workload: s.workload(), DB: sp.DB, Mode: sp.Mode,
			Start: info.Started, Agents: info.Agents, Ops: metrics.PlannedOps(sp.Phase, sp.Workload), HostMetrics: sp.Telemetry.HostMetrics}, s.o.Clock.Now))
	}
	live := s.liveView(info)
	if live != nil {
		sinks = append(sinks, live)
	}
	first := &firstInterval{}
	sinks = append(sinks, first)
	tel := newTelemetryNotes(s.Logf, info.Mode == run.ModeDistributed)
	sinks = append(sinks, tel)
	sinks = append(sinks, s.o.Sinks...)

	var rec *bundle.Recorder
	if s.results != nil {
		rec = bundle.NewRecorder(sp.Output.ResultsDir, s.meta(info))
	}
	stop := &stopper{src: src, logf: s.Logf, clk: s.o.Clock, grace: sp.Output.StopGrace, done: make(chan struct{})}
	sigs := make(chan os.Signal, 4)
	if s.o.Notify != nil {
		// SIGPIPE is received rather than left to kill the process: a
		// closed stdout ends the run gracefully, with its record.
		s.o.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
		defer s.o.StopNotify(sigs)
	}
	var sigWG sync.WaitGroup
	sigWG.Add(1)
	go func() {
		defer sigWG.Done()
		for {
			select {
			case sig := <-sigs:
				if sig != syscall.SIGPIPE {
					stop.interrupt(SignalName(sig))
				} else if s.o.OutputClosed != nil && s.o.OutputClosed() {
					stop.stop("stdout was closed (SIGPIPE)", "stdout was closed (SIGPIPE): stopping gracefully; the results go to the bundle and exportfile")
				}
			case <-stop.done:
				return
			}
		}
	}()
	ownsStderr := false
	if live != nil {
		// q and Ctrl-C inside the view count like signals.
		live.Start(func(bool) { stop.interrupt("q in the live view") })
		if tui.IsTerminal(s.o.Stderr) {
			// Notices go under the view's tables instead of across them.
			ownsStderr = true
			s.errOut.set(live.Writer())
			status.Silence()
		}
	}

	out := src.Run(ctx, sinks, rec)
	if s.o.Outcome != nil {
		s.o.Outcome(out)
	}
	status.Flush()
	close(stop.done)
	sigWG.Wait()
	if live != nil {
		// Give the terminal back before the summary prints.
		if err := live.Close(); err != nil {
			_, _ = fmt.Fprintf(s.o.Stderr, "live view: %v\n", err)
		}
		s.errOut.set(s.o.Stderr)
		if ownsStderr {
			// The alternate screen is gone with everything on it;
			// notices must stay in the scrollback.
			for _, line := range live.Logs() {
				_, _ = fmt.Fprintln(s.o.Stderr, line)
			}
		}
	}
	v := s.verdict(out, stop.get())
	if out.NeverStarted {
		if rec != nil {
			rec.Discard()
		}
		s.closeOutputs()
		if v.code == exitcode.OK {
			v.fail(errors.New("the run never started"))
		}
		return v.err()
	}

	sum := &ycsbtext.Summary{RunTime: out.RunTime, Total: out.Total, Percentiles: sp.Percentiles, Warmup: out.WarmupOps, Verbose: sp.Output.Verbose}
	if series != nil {
		sum.Timeseries, sum.Granularity = series.Intervals(), sp.Output.Granularity
	}
	mo.summarize(sum, sp, info)
	if out.Status != run.StatusComplete {
		sum.Notes = append(sum.Notes, "Results are "+string(out.Status))
	}
	sum.Notes = append(sum.Notes, out.Reasons...)
	sum.Notes = append(sum.Notes, out.Notes...)
	if note := lateSignalNote(out, stop.get()); note != "" {
		s.Logf("%s", note)
		sum.Notes = append(sum.Notes, note)
	}
	sum.Notes = append(sum.Notes, tel.lines()...)
	failures := reportFailures(out.Total, first.get())
	if failures.share() > WarnFailureShare {
		// A throughput of failures reads like a result: say it.
		s.Logf("WARNING: %s", failures)
		sum.Notes = append(sum.Notes, "WARNING: "+failures.String())
	}
	var text strings.Builder
	if err := ycsbtext.Export(&text, ycsbtext.TextExporter, sum); err != nil {
		v.fail(err)
	}
	if err := s.writeSummary(sum, text.String()); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			err = errors.New("stdout was closed: the summary could not be printed")
			if rec != nil {
				err = fmt.Errorf("%w (it is in %s)", err, filepath.Join(rec.Dir(), bundle.FileSummary))
			}
		}
		v.fail(err)
	}
	if hl != nil {
		if err := hl.Close(); err != nil {
			v.fail(fmt.Errorf("property %q: %w", spec.PropHdrFileOutput, err))
		}
	}
	if err := mo.close(); err != nil {
		v.fail(err)
	}
	v.checkErrorRate(failures, sp.Output.MaxErrorRate)
	if rec != nil {
		end := s.ending(out, v, sum, text.String())
		src.End(end)
		if _, err := rec.Finish(end); err != nil {
			v.fail(fmt.Errorf("--results %s: %w", rec.Dir(), err))
		} else {
			s.Logf("Results: %s (ycsbctl report %s)", rec.Dir(), rec.Dir())
		}
	}
	s.releaseResults()
	if v.code == exitcode.OK && out.Status == run.StatusPartial {
		s.Logf("WARNING: results are partial: %s", strings.Join(out.Reasons, "; "))
	}
	if msrv != nil {
		// A scraper polling every 15 s would otherwise miss the last
		// interval of a short run.
		if d := sp.Output.MetricsLinger; d > 0 {
			s.Logf("Keeping %s up for %s (%s; Ctrl-C or SIGTERM ends it now)", msrv.URL(), d, spec.PropMetricsLinger)
			// The run is over and recorded: a signal only ends the
			// wait, and the exit code stays the one recorded.
			timer := s.o.Clock.After(d)
		linger:
			for {
				select {
				case <-timer:
					break linger
				case sig := <-sigs:
					if sig != syscall.SIGPIPE {
						s.Logf("%s: no longer keeping %s up", SignalName(sig), msrv.URL())
						break linger
					}
				}
			}
		}
		_ = msrv.Close()
	}
	return v.err()
}

func (s *Session) invocation() []string {
	if len(s.o.Invocation) > 0 {
		return s.o.Invocation
	}
	return s.o.CommandLine
}

func (s *Session) workload() string {
	if s.o.Workload != "" {
		return s.o.Workload
	}
	return s.o.Spec.Props.String(spec.PropWorkload, "core")
}

// liveView returns the live view when the run gets one: only on a
// terminal (scripts and CI that capture stdout keep the plain status
// lines), not when switched off, and not when something else prints on
// this process' stdout while the run is on.
func (s *Session) liveView(info run.Info) *tui.View {
	sp := s.o.Spec
	if !s.o.Terminal || !sp.Output.TUI || s.o.Getenv("TERM") == "dumb" {
		return nil
	}
	if info.Mode == run.ModeSingleHost && sp.Adapter.Name == "basic" {
		// Agents print on their own stdout, so only a single host's
		// screen is affected by BasicDB's per-operation lines.
		if on, err := sp.Props.Bool("basicdb.verbose", true); err != nil || on {
			s.Logf("live view off: basicdb.verbose prints every operation on stdout (set -p basicdb.verbose=false to see it)")
			return nil
		}
	}
	return tui.New(tui.Config{
		Command: info.Command, DB: sp.DB, Workload: s.o.Workload, RunID: info.RunID, Phase: sp.Phase,
		Threads: info.Threads, Target: sp.Target, Interval: sp.StatusInterval, Budget: sp.OpCount, MaxExecution: sp.MaxExecution,
		Distributed: info.Mode == run.ModeDistributed, Banner: s.o.Banner,
	}, s.o.Stdin, s.o.Stdout)
}

// writeSummary prints the YCSB summary in the configured exporter's format
// to exportfile, or stdout. When exportfile cannot be written the text
// summary still reaches stdout, so nothing measured is lost.
func (s *Session) writeSummary(sum *ycsbtext.Summary, text string) error {
	sp := s.o.Spec
	if sp.Output.ExportFile == "" {
		return ycsbtext.Export(s.o.Stdout, sp.Output.Exporter, sum)
	}
	err := outfile.WriteWith(sp.Output.ExportFile, 0o644, func(w io.Writer) error {
		return ycsbtext.Export(w, sp.Output.Exporter, sum)
	})
	if err != nil {
		_, _ = fmt.Fprint(s.o.Stdout, text)
		return fmt.Errorf("property %q: cannot write %s: %w (the summary went to stdout instead)", spec.PropExportFile, sp.Output.ExportFile, err)
	}
	return nil
}

// meta is run.json as the session knows it when the run starts; the
// source adds its own part before starting the record.
func (s *Session) meta(info run.Info) *bundle.Run {
	sp := s.o.Spec
	host, _ := os.Hostname()
	return &bundle.Run{
		RunID: info.RunID, Tool: "ycsbctl", Version: version.Version, Protocol: version.Protocol,
		DB: sp.DB, Phase: sp.Phase.String(), Label: sp.Output.Label, Mode: info.Mode,
		StartedAt: info.Started,
		Config: bundle.Config{Properties: bundle.Redact(sp.Props.Map()), Agents: info.Agents, IntervalNs: int64(sp.CutInterval),
			Exporter: sp.Output.Exporter, CommandLine: bundle.RedactArgs(s.o.CommandLine), Percentiles: sp.Percentiles},
		Environment: &bundle.Environment{Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
			Version: version.Version, Command: bundle.RedactArgs(s.invocation())},
		Suite: s.o.Suite,
	}
}

// ending is how the run ended as the session decided it: status, exit
// code and summary.
func (s *Session) ending(out *run.Outcome, v *verdict, sum *ycsbtext.Summary, text string) *bundle.Ending {
	e := &bundle.Ending{EndedAt: s.o.Clock.Now(), Status: out.Status, Summary: sum, SummaryText: text,
		Reasons:  append(append([]string(nil), out.Reasons...), out.Notes...),
		ExitCode: int(v.code), ExitReason: v.code.String()}
	if v.code == exitcode.DBErrors {
		e.Reasons = append(e.Reasons, v.cause.Error())
	}
	if v.cause != nil {
		e.Error = v.cause.Error()
	}
	return e
}

// verdict is the exit code being decided, with its cause.
type verdict struct {
	code  exitcode.Code
	cause error
}

// verdict starts from how the source says the run ended; a source that
// did not say why it ended early gets the code of what the session asked.
func (s *Session) verdict(out *run.Outcome, st stopState) *verdict {
	v := &verdict{}
	switch {
	case out.Err != nil:
		v.code, v.cause = exitcode.Of(out.Err), out.Err
	case out.Status == run.StatusComplete:
		// The operator's signal came as the run reached its end: it
		// shortened nothing, and the exit code is the status's (Run
		// notes the signal).
	case st == aborting:
		v.code, v.cause = exitcode.Aborted, errors.New("run aborted by operator")
	case st == stopping:
		v.code, v.cause = exitcode.Stopped, errors.New("run stopped by operator")
	}
	return v
}

// lateSignalNote says that the operator asked a run to end as it reached
// its end anyway; "" when nobody asked, or the run was cut short.
func lateSignalNote(out *run.Outcome, st stopState) string {
	if st == running || out.Status != run.StatusComplete || out.Err != nil {
		return ""
	}
	return "The operator's stop arrived as the run ended: it had measured its whole length, and is complete"
}

// fail records a failure of the session's own work (summary, logs,
// bundle); it never hides an exit code already decided.
func (v *verdict) fail(err error) {
	if v.code == exitcode.OK {
		v.code, v.cause = exitcode.Failure, err
	}
}

// checkErrorRate applies ycsbctl.maxerrorrate; when it is not set, a run
// in which every operation failed still fails (exit 5): it measured
// nothing but failures.
func (v *verdict) checkErrorRate(f failureReport, limit float64) {
	if v.code != exitcode.OK || f.all == 0 {
		return
	}
	switch {
	case limit >= 0 && f.share() > limit:
		v.code = exitcode.DBErrors
		v.cause = fmt.Errorf("%d of %d operations failed (%.4f > %s=%g)", f.failed, f.all, f.share(), spec.PropMaxErrorRate, limit)
	case limit < 0 && f.failed == f.all:
		v.code = exitcode.DBErrors
		v.cause = fmt.Errorf("every operation failed (%s; set %s to choose the threshold)", f, spec.PropMaxErrorRate)
	}
}

func (v *verdict) err() error {
	if v.code == exitcode.OK {
		return nil
	}
	return exitcode.Wrap(v.code, v.cause)
}

// switchWriter is a writer whose destination can change while others
// write to it: the live view takes stderr over and gives it back.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

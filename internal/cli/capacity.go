package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/coordinator"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/resultsdir"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/session"
	"github.com/ycsbctl/ycsbctl/internal/shellquote"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/version"
)

// capacitySettingFlags are the setting flags of `capacity`: those of
// `run` but -target, which the search sets itself.
var capacitySettingFlags = []string{"threads", "s", "l", "no-tui", "metrics-addr", "results", "overwrite", "interval"}

// capacityFlags are the search's own flags, one definition for
// `capacity` and `coordinator capacity`.
type capacityFlags struct{ in capacity.Input }

func (c *capacityFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	d := capacity.DefaultInput()
	fl.StringArrayVar(&c.in.SLOs, "slo", nil, "latency objective OPERATION.PERCENTILE<=DURATION on intended-time latency, e.g. 'READ.p99<=10ms' (repeatable; every one must hold)")
	fl.StringVar(&c.in.MaxErrorRate, "max-error-rate", d.MaxErrorRate, "largest share of failed calls a passing probe may have (0.001 or 0.1%)")
	fl.StringVar(&c.in.Precision, "precision", d.Precision, "end the bisection when the answer is within this share below the lowest failing target (5% or 0.05)")
	fl.DurationVar(&c.in.Probe, "probe", d.Probe, "measured time of each probe (whole seconds)")
	fl.DurationVar(&c.in.Warmup, "warmup", d.Warmup, "warm-up of each probe, at its target, before it is measured")
	fl.Float64Var(&c.in.Start, "start", d.Start, "first target, in operations per second (the ramp doubles it, or halves it while nothing passes)")
	fl.Float64Var(&c.in.Max, "max", d.Max, "largest target tried, in operations per second")
	fl.IntVar(&c.in.MaxProbes, "max-probes", d.MaxProbes, "most probes the search runs, repeats and retries included")
}

func newCapacityCmd(gs *GlobalState, distributed bool) *cobra.Command {
	f := &ycsbFlags{}
	cf := &capacityFlags{}
	var dist distributedFlags
	use := "capacity [db] --slo OP.pNN<=DURATION... [-P workload]... [-p k=v]... [-threads N] [--results DIR]"
	short := "Find the highest throughput the database sustains within latency objectives"
	if distributed {
		use = "capacity [db] --agents HOST:PORT,... --slo OP.pNN<=DURATION... [-P workload]... [-p k=v]... [-threads N] [--results DIR]"
		short = "Find the capacity at latency objectives with the load of many agents (the target split across them)"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

Each probe is a run of the workload paced at one target (-target) for
--probe after a --warmup, with measurement.interval=both: objectives are
judged on the intended-time latencies (Intended-<OP>, corrected for
coordinated omission). A probe passes when it achieved at least 97% of its
target, every --slo holds, at most --max-error-rate of the calls failed,
its last intervals' throughput and objective latencies do not trend (an
unsteady probe is repeated once), and it is long enough to judge (at least
100 calls due, and a pass that does not rest on the calls in flight at its
end; else it is undecided). A probe that lost an agent is partial, no
verdict: it is tried again, up to twice. The search doubles the target from
--start until a probe fails (halving it while none passes), then bisects
between the highest passing and the lowest failing target until they are
within --precision, within --max-probes probes.

Progress goes to stderr, one line per probe; the probes' table and the
capacity go to stdout. With --results DIR, DIR holds capacity.json and each
probe's run bundle (probe-01, ...); 'ycsbctl report DIR' draws the
latency-throughput curve. See docs/capacity.md.`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg *coordinator.Config
			if distributed {
				var err error
				if cfg, err = dist.config(gs, nil, true); err != nil {
					return err
				}
			}
			return runCapacity(gs, cmd, f, cf, args, cfg)
		},
	}
	f.register(cmd, capacitySettingFlags...)
	cf.register(cmd)
	if distributed {
		dist.register(cmd)
	}
	return cmd
}

// capacitySearch is one capacity search under way (the `capacity`
// command's, or a suite's capacity step's): its record, the prober that
// runs each probe through a run session, and the operator's signals
// between probes.
type capacitySearch struct {
	gs *GlobalState
	// base is the probes' run (capacity.ProbeProperties applied); each
	// probe sets its target and its bundle directory on it.
	base *spec.Spec
	dist *coordinator.Config
	// dir is the capacity bundle ("" when none is written), owned by
	// the search while it runs.
	dir      string
	owned    *resultsdir.Owned
	settings capacity.Settings
	rec      *capacity.Record
	// x places the probes' runs (a suite step's command line).
	x sessionExtras

	mu sync.Mutex
	// stop says why the operator stopped the search ("" while not) and
	// first is the signal that did; listeners are the probe sessions'.
	stop      string
	first     os.Signal
	listeners []chan<- os.Signal
}

func runCapacity(gs *GlobalState, cmd *cobra.Command, f *ycsbFlags, cf *capacityFlags, args []string, dist *coordinator.Config) error {
	db := DefaultDB
	if len(args) == 1 {
		db = args[0]
	}
	settings, err := cf.in.Settings(nil)
	if err != nil {
		return invalid(err)
	}
	p, notes, err := f.resolve(gs, cmd)
	if err != nil {
		return err
	}
	notes = append(notes, capacity.ProbeProperties(p, &settings)...)
	sp, err := spec.Parse(db, p, run.Run)
	if err == nil {
		err = capacity.CheckSpec(sp, settings.Objectives)
	}
	if err != nil {
		return invalid(err)
	}
	if len(args) == 1 && sp.Adapter.Where != nil {
		fmt.Fprintf(gs.Stderr, "Using %s\n", sp.Adapter.Where(sp.Props))
	}
	c := newCapacitySearch(gs, sp, settings, dist, sessionExtras{})
	fmt.Fprintf(gs.Stderr, "ycsbctl %s\n", version.Version)
	fmt.Fprintf(gs.Stderr, "Command line: %s\n", properties.Printable(shellquote.Join(bundle.RedactArgs(c.rec.CommandLine))))
	for _, n := range append(notes, sp.Warnings...) {
		fmt.Fprintln(gs.Stderr, n)
	}
	return c.run()
}

// newCapacitySearch prepares the search of settings over base, the
// probes' run (its results directory is the capacity bundle's).
func newCapacitySearch(gs *GlobalState, base *spec.Spec, settings capacity.Settings, dist *coordinator.Config, x sessionExtras) *capacitySearch {
	c := &capacitySearch{gs: gs, base: base, dist: dist, dir: base.Output.ResultsDir, settings: settings, x: x}
	cmdline, wl := append([]string{"ycsbctl"}, gs.Args...), workloadName(gs.Args)
	if len(x.commandLine) > 0 {
		cmdline, wl = append([]string{"ycsbctl"}, x.commandLine...), x.workload
	}
	c.rec = &capacity.Record{Kind: capacity.RecordKind, Tool: "ycsbctl", Version: version.Version, DB: base.DB, Workload: wl,
		Label: base.Output.Label, Mode: run.ModeSingleHost, Agents: []string{run.LocalAgent}, Threads: base.Threads,
		CommandLine: cmdline, StartedAt: gs.Clock.Now(), Settings: settings, Suite: x.suite,
		ProbeSeconds: settings.Probe.Seconds(), WarmupSeconds: settings.Warmup.Seconds(), IntervalSeconds: base.StatusInterval.Seconds(),
		Status: capacity.StatusRunning, Answer: capacity.Answer{Ended: capacity.EndRunning}}
	if dist != nil {
		c.rec.Mode, c.rec.Agents = run.ModeDistributed, dist.Agents
	}
	return c
}

// run claims the capacity bundle, runs the search and writes its record
// and the probes' table (to stdout).
func (c *capacitySearch) run() error {
	gs, settings := c.gs, c.settings
	if c.dir != "" {
		// Owned for the whole search: each probe's session owns its
		// probe directory inside it.
		claimed, err := resultsdir.Claim(c.dir, c.base.Output.Overwrite, func(format string, a ...any) { fmt.Fprintf(gs.Stderr, format+"\n", a...) })
		if err != nil {
			return invalid(fmt.Errorf("--results %s: %w", c.dir, err))
		}
		c.owned = claimed
		defer claimed.Release()
		if err := c.rec.Write(c.dir); err != nil {
			return fmt.Errorf("--results %s: %w", c.dir, err)
		}
	}
	fmt.Fprintf(gs.Stderr, "Capacity search at %s, errors <= %s: from %s ops/s, at most %d probes of %s after a %s warm-up, to within %s\n",
		c.rec.Objectives(), capacity.FormatShare(settings.MaxErrorRate), capacity.FormatRate(settings.Start), settings.MaxProbes,
		settings.Probe, settings.Warmup, capacity.FormatShare(settings.Precision))
	endSignals := c.watchSignals()
	probes, answer, searchErr := (&capacity.Search{Settings: settings, Prober: capacity.ProberFunc(c.probe),
		Logf: func(format string, a ...any) { fmt.Fprintf(gs.Stderr, format+"\n", a...) },
		Progress: func(ps []capacity.Probe, a capacity.Answer) {
			c.rec.Probes, c.rec.Answer = ps, a
			if err := c.writeRecord(); err != nil {
				fmt.Fprintf(gs.Stderr, "--results %s: %v\n", c.dir, err)
			}
		}}).Run(gs.Ctx)
	endSignals()

	c.rec.Probes, c.rec.Answer = probes, answer
	c.rec.EndedAt = gs.Clock.Now()
	code := exitcode.Of(searchErr)
	c.rec.ExitCode = int(code)
	switch {
	case searchErr == nil:
		c.rec.Status = capacity.StatusComplete
	case code.ByOperator():
		c.rec.Status, c.rec.Error = capacity.StatusStopped, searchErr.Error()
	default:
		c.rec.Status, c.rec.Error = capacity.StatusFailed, searchErr.Error()
	}
	var werr error
	if err := c.rec.WriteTable(gs.Stdout); err != nil {
		werr = fmt.Errorf("writing the probes' table: %w", err)
	}
	if err := c.writeRecord(); err != nil {
		werr = fmt.Errorf("--results %s: %w", c.dir, err)
	} else if c.dir != "" && !c.owned.Release() {
		// (Released here, so that a search that never probed and put
		// back the bundle it was to replace does not claim the directory.)
		fmt.Fprintf(gs.Stderr, "Results: %s (ycsbctl report %s)\n", c.dir, c.dir)
	}
	if searchErr != nil {
		return exitcode.WithCodeIfNone(exitcode.Failure, fmt.Errorf("capacity search: %w", searchErr))
	}
	if werr != nil {
		return exitcode.Wrap(exitcode.Failure, werr)
	}
	return nil
}

// probe runs one probe as a run of its own, through the session every run
// goes through, and collects what the search judges.
func (c *capacitySearch) probe(ctx context.Context, plan capacity.Plan) (*capacity.Measured, error) {
	if why := c.stopped(); why != "" {
		return nil, exitcode.Wrap(exitcode.Stopped, fmt.Errorf("stopped by operator (%s) before probe %d", why, plan.N))
	}
	set := map[string]string{spec.PropTarget: strconv.FormatFloat(plan.Target, 'g', -1, 64)}
	if c.dir != "" {
		set[spec.PropResults] = filepath.Join(c.dir, bundle.ProbeDir(plan.N))
	}
	sp, err := c.base.With(set)
	if err != nil {
		return nil, invalid(err)
	}
	col := capacity.NewCollector(c.settings.Objectives, c.settings.Probe)
	what := fmt.Sprintf("probe %d of at most %d at %s ops/s", plan.N, plan.MaxProbes, capacity.FormatRate(plan.Target))
	if plan.Repeat {
		what += " (repeat)"
	}
	if plan.Retry > 0 {
		what += fmt.Sprintf(" (retry %d of %d: the last one was partial)", plan.Retry, capacity.MaxPartialRetries)
	}
	fmt.Fprintf(c.gs.Stderr, "Capacity %s; %s\n", what, plan.Bracket)

	child := *c.gs
	child.SignalNotify, child.SignalStop = c.listen, c.unlisten
	if !child.IsTerminal {
		// Stdout holds the probes' table alone: each probe's YCSB
		// summary goes to stderr (and its bundle).
		child.Stdout = c.gs.Stderr
	}
	// A probe's run carries the search's command line; the suite's
	// record of the step is the capacity bundle's, not each probe's.
	x := c.x
	x.suite = nil
	o := sessionOptions(&child, sp, x)
	o.Sinks = []run.Sink{col}
	o.Banner = fmt.Sprintf("Capacity %s — %s", what, plan.Bracket)
	if c.gs.Banner != "" {
		// A suite's progress heads the probe's.
		o.Banner = c.gs.Banner + " · " + o.Banner
	}
	o.StatusPrefix = fmt.Sprintf("[probe %d, %s ops/s] ", plan.N, capacity.FormatRate(plan.Target))
	var partial []string
	o.Outcome = func(out *run.Outcome) {
		if out.Status == run.StatusPartial {
			partial = append([]string{}, out.Reasons...)
			if len(partial) == 0 {
				partial = []string{"the run was partial"}
			}
		}
	}
	s := session.New(o)
	err = runSession(&child, s, sp, c.dist)
	m := col.Measured(plan.Target, err == nil || exitcode.Of(err) == exitcode.DBErrors)
	m.Partial = partial
	if c.dir != "" {
		m.Bundle = bundle.ProbeDir(plan.N)
	}
	if exitcode.Of(err) == exitcode.DBErrors {
		if m.Calls > 0 && m.Failed == m.Calls && plan.Bracket.Pass == 0 {
			return m, fmt.Errorf("every call of probe %d failed, and no target has passed: is the database serving, and the data loaded? (%w)", plan.N, err)
		}
		// Errors above a run's own threshold: the search judges them
		// against --max-error-rate.
		err = nil
	}
	return m, err
}

func (c *capacitySearch) writeRecord() error {
	if c.dir == "" {
		return nil
	}
	return c.rec.Write(c.dir)
}

func (c *capacitySearch) stopped() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop
}

// watchSignals holds the operator's signals for the whole search and
// relays them to the probe under way, whose session stops or aborts as
// any run's does; a signal also keeps any further probe from starting.
// Between probes a signal would otherwise kill the process before
// capacity.json says how the search ended, and a signal just before a
// probe's session listens would be lost: a session that starts listening
// after one arrived hears it at once. It returns the state for the probes'
// sessions (child.SignalNotify and SignalStop) and a function that stops
// watching.
func (c *capacitySearch) watchSignals() func() {
	if c.gs.SignalNotify == nil {
		return func() {}
	}
	sigs := make(chan os.Signal, 4)
	c.gs.SignalNotify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case sig := <-sigs:
				why := session.SignalName(sig)
				if sig == syscall.SIGPIPE {
					if c.gs.OutputClosed == nil || !c.gs.OutputClosed() {
						continue
					}
					why = "stdout was closed (SIGPIPE)"
				}
				c.mu.Lock()
				if c.stop == "" {
					c.stop, c.first = why, sig
				}
				for _, l := range c.listeners {
					select {
					case l <- sig:
					default:
					}
				}
				c.mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	return func() {
		if c.gs.SignalStop != nil {
			c.gs.SignalStop(sigs)
		}
		close(done)
		wg.Wait()
	}
}

// listen is a probe session's signal.Notify: it hears the signals the
// search relays, and at once the one that stopped the search if it came
// before.
func (c *capacitySearch) listen(l chan<- os.Signal, _ ...os.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listeners = append(c.listeners, l)
	if c.first != nil {
		select {
		case l <- c.first:
		default:
		}
	}
}

// unlisten is a probe session's signal.Stop.
func (c *capacitySearch) unlisten(l chan<- os.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.listeners {
		if x == l {
			c.listeners = append(c.listeners[:i], c.listeners[i+1:]...)
			return
		}
	}
}

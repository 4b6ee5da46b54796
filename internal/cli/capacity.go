package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/coordinator"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/session"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/version"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// capacitySettingFlags are the setting flags of `capacity`: those of
// `run` but -target, which the search sets itself.
var capacitySettingFlags = []string{"threads", "s", "l", "no-tui", "metrics-addr", "results", "overwrite", "interval"}

// capacityFlags are the search's own flags, one definition for
// `capacity` and `coordinator capacity`.
type capacityFlags struct {
	slos         []string
	maxErrorRate string
	precision    string
	probe        time.Duration
	warmup       time.Duration
	start, max   float64
	maxProbes    int
}

func (c *capacityFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&c.slos, "slo", nil, "latency objective OPERATION.PERCENTILE<=DURATION on intended-time latency, e.g. 'READ.p99<=10ms' (repeatable; every one must hold)")
	fl.StringVar(&c.maxErrorRate, "max-error-rate", strconv.FormatFloat(capacity.DefaultMaxErrorRate, 'g', -1, 64), "largest share of failed calls a passing probe may have (0.001 or 0.1%)")
	fl.StringVar(&c.precision, "precision", "5%", "end the bisection when the answer is within this share below the lowest failing target (5% or 0.05)")
	fl.DurationVar(&c.probe, "probe", capacity.DefaultProbe, "measured time of each probe (whole seconds)")
	fl.DurationVar(&c.warmup, "warmup", capacity.DefaultWarmup, "warm-up of each probe, at its target, before it is measured")
	fl.Float64Var(&c.start, "start", capacity.DefaultStart, "first target, in operations per second (the ramp doubles it, or halves it while nothing passes)")
	fl.Float64Var(&c.max, "max", capacity.DefaultMax, "largest target tried, in operations per second")
	fl.IntVar(&c.maxProbes, "max-probes", capacity.DefaultMaxProbes, "most probes the search runs, repeats included")
}

// settings validates the flags; errors name the flag (exit 2).
func (c *capacityFlags) settings() (capacity.Settings, error) {
	s := capacity.Settings{Start: c.start, Max: c.max, MaxProbes: c.maxProbes, Probe: c.probe, Warmup: c.warmup}
	if len(c.slos) == 0 {
		return s, errors.New("flag --slo: expected at least one objective, e.g. --slo 'READ.p99<=10ms'")
	}
	for _, v := range c.slos {
		o, err := capacity.ParseObjective(v)
		if err != nil {
			return s, fmt.Errorf("flag --slo %w", err)
		}
		s.Objectives = append(s.Objectives, o)
	}
	var err error
	if s.MaxErrorRate, err = parseShare(c.maxErrorRate); err != nil {
		return s, fmt.Errorf("flag --max-error-rate %q: %w", c.maxErrorRate, err)
	}
	if s.Precision, err = parseShare(c.precision); err != nil {
		return s, fmt.Errorf("flag --precision %q: %w", c.precision, err)
	}
	if c.probe < time.Second || c.probe%time.Second != 0 {
		return s, fmt.Errorf("flag --probe %s: expected whole seconds, at least 1s (it is each probe's %s)", c.probe, spec.PropMaxExecution)
	}
	if c.max > spec.MaxTarget {
		return s, fmt.Errorf("flag --max %g: expected at most %g operations per second", c.max, spec.MaxTarget)
	}
	if c.start < spec.MinTarget {
		return s, fmt.Errorf("flag --start %g: expected at least %g operations per second", c.start, spec.MinTarget)
	}
	return s, s.Check()
}

// parseShare reads a share written 0.05 or 5%.
func parseShare(v string) (float64, error) {
	t := strings.TrimSpace(v)
	pct := strings.HasSuffix(t, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("expected a share such as 0.05 or 5%")
	}
	if pct {
		f /= 100
	}
	return f, nil
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
and its last intervals' throughput and objective latencies do not trend
(an unsteady probe is repeated once). The search doubles the target from
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

// capacitySearch is one `capacity` command under way: its record, the
// prober that runs each probe through a run session, and the operator's
// signals between probes.
type capacitySearch struct {
	gs   *GlobalState
	base *properties.Properties
	db   string
	dist *coordinator.Config
	// dir is the capacity bundle ("" when none is written).
	dir      string
	settings capacity.Settings
	rec      *capacity.Record

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
	settings, err := cf.settings()
	if err != nil {
		return invalid(err)
	}
	p, notes, err := f.resolve(gs, cmd)
	if err != nil {
		return err
	}
	notes = append(notes, probeProperties(p, &settings)...)
	sp, err := spec.Parse(db, p, run.Run)
	if err == nil {
		err = checkCapacitySpec(sp, settings.Objectives)
	}
	if err != nil {
		return invalid(err)
	}
	if len(args) == 1 && sp.Adapter.Where != nil {
		fmt.Fprintf(gs.Stderr, "Using %s\n", sp.Adapter.Where(sp.Props))
	}
	c := &capacitySearch{gs: gs, base: p, db: db, dist: dist, dir: sp.Output.ResultsDir, settings: settings}
	c.rec = &capacity.Record{Kind: capacity.RecordKind, Tool: "ycsbctl", Version: version.Version, DB: db, Workload: workloadName(gs.Args),
		Label: sp.Output.Label, Mode: run.ModeSingleHost, Agents: []string{run.LocalAgent}, Threads: sp.Threads,
		CommandLine: append([]string{"ycsbctl"}, gs.Args...), StartedAt: gs.Clock.Now(), Settings: settings,
		ProbeSeconds: settings.Probe.Seconds(), WarmupSeconds: settings.Warmup.Seconds(), IntervalSeconds: sp.StatusInterval.Seconds(),
		Status: capacity.StatusRunning, Answer: capacity.Answer{Ended: capacity.EndRunning}}
	if dist != nil {
		c.rec.Mode, c.rec.Agents = run.ModeDistributed, dist.Agents
	}
	fmt.Fprintf(gs.Stderr, "ycsbctl %s\n", version.Version)
	fmt.Fprintf(gs.Stderr, "Command line: %s\n", properties.Printable(strings.Join(bundle.RedactArgs(c.rec.CommandLine), " ")))
	for _, n := range append(notes, sp.Warnings...) {
		fmt.Fprintln(gs.Stderr, n)
	}
	if c.dir != "" {
		claimed, err := bundle.Claim(c.dir, sp.Output.Overwrite)
		if err != nil {
			return invalid(fmt.Errorf("--results %s: %w", c.dir, err))
		}
		if err := c.rec.Write(c.dir); err != nil {
			claimed.Release()
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
	} else if c.dir != "" {
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

// probeProperties makes p the properties of every probe (the target is
// each probe's own) and returns what the operator should know of it.
func probeProperties(p *properties.Properties, s *capacity.Settings) []string {
	var notes []string
	if v, ok := p.Lookup(spec.PropMeasurementMode); ok && v != "both" {
		notes = append(notes, fmt.Sprintf("%s=%s replaced by both: objectives are judged on intended-time latencies (coordinated omission corrected), and both are recorded", spec.PropMeasurementMode, v))
	}
	p.Set(spec.PropMeasurementMode, "both")
	for _, k := range []string{spec.PropMaxExecution, spec.PropWarmupTime, spec.PropWarmupOps} {
		if v, ok := p.Lookup(k); ok {
			notes = append(notes, fmt.Sprintf("%s=%s replaced: every probe runs --probe %s after --warmup %s", k, v, s.Probe, s.Warmup))
		}
	}
	p.Set(workload.PropOperationCount, "0")
	p.Set(spec.PropMaxExecution, strconv.FormatInt(int64(s.Probe/time.Second), 10))
	p.Set(spec.PropWarmupTime, strconv.FormatFloat(s.Warmup.Seconds(), 'g', -1, 64))
	p.Delete(spec.PropWarmupOps)
	if !p.Has(spec.PropStatusInterval) {
		// At least six intervals per probe for the steadiness check,
		// and no longer than YCSB's default.
		iv := min(10, s.Probe.Seconds()/6)
		p.Set(spec.PropStatusInterval, strconv.FormatFloat(iv, 'g', 4, 64))
	}
	return notes
}

// checkCapacitySpec refuses what a capacity search cannot honour, before
// any load.
func checkCapacitySpec(sp *spec.Spec, objs []capacity.Objective) error {
	if v, ok := sp.Props.Lookup(spec.PropTarget); ok {
		return &properties.Error{Property: spec.PropTarget, Value: v, Expected: "no target: the search sets each probe's target, from --start up to --max (flag -target is not taken)"}
	}
	if f := sp.Output.ExportFile; f != "" {
		return &properties.Error{Property: spec.PropExportFile, Value: f, Expected: "none: each probe's summary is in its bundle under --results (summary.txt)"}
	}
	if sp.Output.HlogPath != "" {
		return &properties.Error{Property: spec.PropHdrFileOutput, Value: "true", Expected: "false: each probe's HdrHistogram log is merged.hlog in its bundle under --results"}
	}
	probe := time.Duration(sp.MaxExecution)
	if n := probe / sp.StatusInterval; n < 3 {
		return &properties.Error{Property: spec.PropStatusInterval, Value: sp.Props.String(spec.PropStatusInterval, ""),
			Expected: fmt.Sprintf("at most a third of --probe %s (flag --interval): the steadiness check needs at least 3 intervals per probe", probe)}
	}
	return capacity.CheckMix(objs, sp.Workload)
}

// probe runs one probe as a run of its own, through the session every run
// goes through, and collects what the search judges.
func (c *capacitySearch) probe(ctx context.Context, plan capacity.Plan) (*capacity.Measured, error) {
	if why := c.stopped(); why != "" {
		return nil, exitcode.Wrap(exitcode.Stopped, fmt.Errorf("stopped by operator (%s) before probe %d", why, plan.N))
	}
	p := c.base.Clone()
	p.Set(spec.PropTarget, strconv.FormatFloat(plan.Target, 'g', -1, 64))
	if c.dir != "" {
		p.Set(spec.PropResults, filepath.Join(c.dir, bundle.ProbeDir(plan.N)))
	}
	sp, err := spec.Parse(c.db, p, run.Run)
	if err != nil {
		return nil, invalid(err)
	}
	col := capacity.NewCollector(c.settings.Objectives)
	what := fmt.Sprintf("probe %d of at most %d at %s ops/s", plan.N, plan.MaxProbes, capacity.FormatRate(plan.Target))
	if plan.Repeat {
		what += " (repeat)"
	}
	fmt.Fprintf(c.gs.Stderr, "Capacity %s; %s\n", what, plan.Bracket)

	child := *c.gs
	child.SignalNotify, child.SignalStop = c.listen, c.unlisten
	if !child.IsTerminal {
		// Stdout holds the probes' table alone: each probe's YCSB
		// summary goes to stderr (and its bundle).
		child.Stdout = c.gs.Stderr
	}
	o := sessionOptions(&child, sp, sessionExtras{})
	o.Sinks = []run.Sink{col}
	o.Banner = fmt.Sprintf("Capacity %s — %s", what, plan.Bracket)
	o.StatusPrefix = fmt.Sprintf("[probe %d, %s ops/s] ", plan.N, capacity.FormatRate(plan.Target))
	s := session.New(o)
	err = runSession(&child, s, sp, c.dist)
	m := col.Measured(plan.Target)
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

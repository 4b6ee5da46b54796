package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/version"
)

// Output-related properties (YCSB's names where YCSB has them).
const (
	PropExporter         = "exporter"
	PropExportFile       = "exportfile"
	PropHdrFileOutput    = "hdrhistogram.fileoutput"
	PropHdrOutputPath    = "hdrhistogram.output.path"
	PropHistogramVerbose = "measurement.histogram.verbose"
	PropTimeseriesGran   = "timeseries.granularity"
	PropMaxErrorRate     = "ycsbctl.maxerrorrate"
)

func newBenchCmd(gs *GlobalState, phase string) *cobra.Command {
	f := &ycsbFlags{}
	short := "Load the database: insert the records of [insertstart, insertstart+insertcount)"
	if phase == "run" {
		short = "Run the transaction phase of a workload"
	}
	cmd := &cobra.Command{
		Use:   phase + " [db] [-P workload]... [-p key=value]... [-threads N] [-target OPS] [-s] [-l label]",
		Short: short,
		Long: short + `.

The db defaults to the embedded store. -P takes a property file or the name
of a built-in workload (see 'ycsbctl workloads'); -p overrides beat every
file. Output follows YCSB: status lines on stderr with -s, the final
[OVERALL]/[OP] summary on stdout (or exportfile).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db := DefaultDB
			if len(args) == 1 {
				db = args[0]
			}
			p, err := f.resolve(gs, cmd)
			if err != nil {
				return err
			}
			ph := engine.Load
			if phase == "run" {
				ph = engine.Run
			}
			return runLocal(gs, db, p, ph, gs.Args)
		},
	}
	f.register(cmd, true)
	addPropertyFlags(cmd)
	return cmd
}

// localOptions are output settings shared by single-host and coordinator
// runs.
type localOptions struct {
	exporter    string
	exportFile  string
	hlogPath    string
	verbose     bool
	timeseries  bool
	granularity time.Duration
	maxErrRate  float64
	status      bool
	label       string
}

func parseLocalOptions(p *properties.Properties) (*localOptions, error) {
	o := &localOptions{}
	o.exporter = p.String(PropExporter, ycsbtext.TextExporter)
	if err := ycsbtext.CheckExporter(o.exporter); err != nil {
		return nil, invalid(err)
	}
	o.exportFile = p.String(PropExportFile, "")
	fo, err := p.Bool(PropHdrFileOutput, false)
	if err != nil {
		return nil, invalid(err)
	}
	if fo {
		path := p.String(PropHdrOutputPath, "")
		if strings.HasSuffix(path, ".hlog") {
			o.hlogPath = path
		} else {
			o.hlogPath = path + "ycsbctl.hlog"
		}
	}
	if o.verbose, err = p.Bool(PropHistogramVerbose, false); err != nil {
		return nil, invalid(err)
	}
	o.timeseries = p.String(spec.PropMeasurementType, "hdrhistogram") == "timeseries"
	g, err := p.PositiveInt64(PropTimeseriesGran, 1000)
	if err != nil {
		return nil, invalid(err)
	}
	o.granularity = time.Duration(g) * time.Millisecond
	if o.maxErrRate, err = p.Float64(PropMaxErrorRate, -1); err != nil {
		return nil, invalid(err)
	}
	if p.Has(PropMaxErrorRate) && (o.maxErrRate < 0 || o.maxErrRate > 1) {
		return nil, invalid(&properties.Error{Property: PropMaxErrorRate, Value: p.String(PropMaxErrorRate, ""), Expected: "a fraction between 0 and 1"})
	}
	if o.status, err = p.Bool("status", false); err != nil {
		return nil, invalid(err)
	}
	// YCSB prints the label exactly as given (no trimming): "-l 'run1 '".
	o.label, _ = p.Lookup(spec.PropLabel)
	return o, nil
}

// statusPrinter prints YCSB status lines. In timeseries mode the engine
// cuts intervals at the timeseries granularity, so it accumulates them
// and prints once per status interval.
type statusPrinter struct {
	w        io.Writer
	label    string
	now      func() time.Time
	every    int64 // engine intervals per status line
	pending  *measurement.Interval
	count    int64
	mu       sync.Mutex
	disabled bool
}

func (s *statusPrinter) OnInterval(iv, cum *measurement.Interval, p engine.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.disabled {
		return
	}
	if p.Warmup {
		fmt.Fprintln(s.w, ycsbtext.StatusLine(s.label, s.now(), p, iv, cum))
		return
	}
	if s.pending == nil {
		s.pending = measurement.NewInterval(0, 0, 0)
	}
	s.pending.Add(iv)
	s.count++
	if s.count%s.every != 0 && !p.Final {
		return
	}
	fmt.Fprintln(s.w, ycsbtext.StatusLine(s.label, s.now(), p, s.pending, cum))
	s.pending = nil
}

// hlogObserver writes every interval's histograms, tagged by series name.
type hlogObserver struct {
	w   *hlog.Writer
	err error
}

func (h *hlogObserver) OnInterval(iv, _ *measurement.Interval, p engine.Progress) {
	if p.Warmup || h.err != nil {
		return
	}
	for s, hist := range iv.Hist {
		if hist == nil || hist.TotalCount() == 0 {
			continue
		}
		if err := h.w.WriteInterval(measurement.Series(s).Name(), iv.StartNs, iv.EndNs, hist); err != nil {
			h.err = err
		}
	}
}

// seriesCollector keeps every interval for timeseries output.
type seriesCollector struct{ ivs []*measurement.Interval }

func (c *seriesCollector) OnInterval(iv, _ *measurement.Interval, p engine.Progress) {
	if !p.Warmup {
		c.ivs = append(c.ivs, iv)
	}
}

// runLocal runs one single-host phase.
func runLocal(gs *GlobalState, db string, p *properties.Properties, ph engine.Phase, cmdline []string) error {
	lo, err := parseLocalOptions(p)
	if err != nil {
		return err
	}
	settings, err := spec.Validate(db, p, ph)
	if err != nil {
		return invalid(err)
	}
	if lo.timeseries {
		// The engine cuts intervals at the timeseries granularity; the
		// status printer groups them back into status intervals.
		p = p.Clone()
		p.Set(spec.PropStatusInterval, fmt.Sprintf("%g", lo.granularity.Seconds()))
	}
	// Notices go through errOut, which the live view redirects while it
	// owns the terminal (written from several goroutines, hence the lock).
	errOut := &switchWriter{w: gs.Stderr}
	stderr := io.Writer(errOut)
	fmt.Fprintf(stderr, "ycsbctl %s\n", version.Version)
	fmt.Fprintf(stderr, "Command line: %s\n", strings.Join(bundle.RedactArgs(cmdline), " "))
	fmt.Fprintln(stderr, "Loading workload...")

	var observers []engine.Observer
	sp := &statusPrinter{w: stderr, label: lo.label, now: gs.Clock.Now, every: 1, disabled: !lo.status}
	if lo.timeseries {
		n := int64(settings.StatusInterval / lo.granularity)
		if n < 1 {
			n = 1
		}
		sp.every = n
	}
	observers = append(observers, sp)
	var ho *hlogObserver
	var hlogFile *os.File
	if lo.hlogPath != "" {
		if dir := filepath.Dir(lo.hlogPath); dir != "" {
			_ = os.MkdirAll(dir, 0o755)
		}
		hlogFile, err = os.Create(lo.hlogPath)
		if err != nil {
			return invalid(fmt.Errorf("property %q: cannot create %s: %w", PropHdrOutputPath, lo.hlogPath, err))
		}
		defer hlogFile.Close()
		ho = &hlogObserver{w: hlog.NewWriter(hlogFile, gs.Clock.Now())}
		observers = append(observers, ho)
	}
	var sc *seriesCollector
	if lo.timeseries {
		sc = &seriesCollector{}
		observers = append(observers, sc)
	}
	run := &localRun{RunID: newRunID(), DB: db, Phase: ph, Props: p, Settings: settings, Cmdline: cmdline, Started: gs.Clock.Now()}
	observers = append(observers, localObservers(gs, run)...)
	// The live view takes over the terminal while the run is on; it is
	// an observer too, so it must be registered before Prepare.
	var live liveView
	if liveViewHook != nil {
		live = liveViewHook(gs, run)
	}
	if live != nil {
		observers = append(observers, live)
		defer live.Close()
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	prep, err := spec.Prepare(gs.Ctx, db, p, ph, gs.Clock, logf, observers...)
	if err != nil {
		var pe *properties.Error
		if asProps(err, &pe) {
			return invalid(err)
		}
		return fmt.Errorf("cannot start: %w", err)
	}
	defer prep.Close()
	if settings.WarmupOps > 0 || settings.WarmupTime > 0 {
		fmt.Fprintf(stderr, "Warm-up: %s; warm-up operations are run but neither measured nor counted.\n", describeWarmup(settings))
	}
	fmt.Fprintln(stderr, "Starting test.")

	sigs := make(chan os.Signal, 2)
	gs.SignalNotify(sigs, os.Interrupt, syscall.SIGTERM)
	defer gs.SignalStop(sigs)
	var interrupted atomic.Bool
	var interrupts atomic.Int32
	interrupt := func() {
		interrupted.Store(true)
		if interrupts.Add(1) == 1 {
			fmt.Fprintln(stderr, "Interrupted: stopping gracefully (press Ctrl-C again to abort)")
			prep.Runner.Stop("interrupted by operator")
		} else {
			prep.Runner.Abort("aborted by operator")
		}
	}
	go func() {
		for {
			select {
			case <-sigs:
				interrupt()
			case <-prep.Runner.Done():
				return
			}
		}
	}()
	if live != nil {
		// Notices go under the view's tables instead of across them.
		if w := live.Start(interrupt); w != nil {
			errOut.set(w)
			sp.mu.Lock()
			sp.disabled = true
			sp.mu.Unlock()
		}
	}
	prep.Runner.Start(time.Time{})
	res := prep.Runner.Wait()
	if live != nil {
		// Give the terminal back before the summary prints.
		live.Close()
		errOut.set(gs.Stderr)
	}
	sum := &ycsbtext.Summary{RunTime: res.RunTime, Total: res.Total, Percentiles: settings.Percentiles, Warmup: res.WarmupOps, Verbose: lo.verbose}
	if sc != nil {
		sum.Timeseries = sc.ivs
	}
	if res.Stopped != "" {
		sum.Notes = append(sum.Notes, "Stopped early: "+res.Stopped)
	}
	if err := writeSummary(gs, lo, sum); err != nil {
		return err
	}
	if ho != nil && ho.err != nil {
		return fmt.Errorf("writing %s: %w", lo.hlogPath, ho.err)
	}
	run.Summary = sum
	finishLocal(gs, run, res)
	if interrupted.Load() {
		return exitcode.Wrap(exitcode.Aborted, fmt.Errorf("run %s", res.Stopped))
	}
	return checkErrorRate(lo, res.Total)
}

func asProps(err error, target **properties.Error) bool {
	for e := err; e != nil; {
		if pe, ok := e.(*properties.Error); ok {
			*target = pe
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

func describeWarmup(s *spec.Settings) string {
	var parts []string
	if s.WarmupTime > 0 {
		parts = append(parts, fmt.Sprintf("%s (warmuptime)", s.WarmupTime))
	}
	if s.WarmupOps > 0 {
		parts = append(parts, fmt.Sprintf("%d operations (warmupops)", s.WarmupOps))
	}
	return strings.Join(parts, " and ")
}

func writeSummary(gs *GlobalState, lo *localOptions, sum *ycsbtext.Summary) error {
	w := gs.Stdout
	if lo.exportFile != "" {
		f, err := os.Create(lo.exportFile)
		if err != nil {
			return fmt.Errorf("property %q: cannot create %s: %w", PropExportFile, lo.exportFile, err)
		}
		defer f.Close()
		w = f
	}
	return ycsbtext.Export(w, lo.exporter, sum)
}

func checkErrorRate(lo *localOptions, total *measurement.Interval) error {
	if lo.maxErrRate < 0 {
		return nil
	}
	var all int64
	for op := range total.Returns {
		all += total.ReturnTotal(measurement.Op(op))
	}
	if all == 0 {
		return nil
	}
	rate := float64(total.Errors()) / float64(all)
	if rate > lo.maxErrRate {
		return exitcode.Wrap(exitcode.DBErrors, fmt.Errorf("%d of %d operations failed (%.4f > %s=%g)", total.Errors(), all, rate, PropMaxErrorRate, lo.maxErrRate))
	}
	return nil
}

// localRun describes a single-host run to the extension points below.
type localRun struct {
	RunID    string
	DB       string
	Phase    engine.Phase
	Props    *properties.Properties
	Settings *spec.Settings
	Cmdline  []string
	Started  time.Time
	// Summary is set before the finish hooks run.
	Summary *ycsbtext.Summary
}

// localObservers, finishLocal and liveViewHook are extension points for
// the live view, metrics and results bundle.
var (
	localObserverHooks []func(gs *GlobalState, run *localRun) engine.Observer
	finishHooks        []func(gs *GlobalState, run *localRun, res *engine.Result)
	liveViewHook       func(gs *GlobalState, run *localRun) liveView
)

// liveView is a full-screen view of a running benchmark.
type liveView interface {
	engine.Observer
	// Start takes over the terminal; interrupt does what Ctrl-C does. It
	// returns where notices should go while the view is up, or nil to
	// keep stderr (and status lines) as they are.
	Start(interrupt func()) io.Writer
	// Close gives the terminal back; safe to call more than once.
	Close()
}

func localObservers(gs *GlobalState, run *localRun) []engine.Observer {
	var out []engine.Observer
	for _, h := range localObserverHooks {
		if o := h(gs, run); o != nil {
			out = append(out, o)
		}
	}
	return out
}

func finishLocal(gs *GlobalState, run *localRun, res *engine.Result) {
	for _, h := range finishHooks {
		h(gs, run, res)
	}
}

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/report"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
	"github.com/ycsbctl/ycsbctl/internal/workload"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// Files a suite writes next to its step bundles.
const (
	SuiteWorkbook = "summary.xlsx"
	SuiteCSV      = "summary.csv"
	SuiteCompare  = "compare.html"
)

type suiteFlags struct {
	results   string
	overrides []string
	agents    []string
	dbs       []string
	resume    bool
	keepGoing bool
	dryRun    bool
}

func newSuiteCmd(gs *GlobalState) *cobra.Command {
	f := &suiteFlags{}
	cmd := &cobra.Command{
		Use:   "suite FILE|BUILTIN [--results DIR] [-p k=v]... [--db NAME,...] [--agents A,B,...] [--resume] [--keep-going] [--dry-run]",
		Short: "Run a whole comparison study from a suite file and write its workbook and comparison page",
		Long: `Runs a campaign: for each database of the suite file, in order, each step
(load, run, pause) with every value of its sweeps. Each load and run is an
ordinary ycsbctl run, in-process, with its bundle in
DIR/<database>/<NN>-<step>[-<sweep>]/; a load step drops and creates the
schema first. At the end DIR gets summary.xlsx (sheets Overall,
Operations, Periods, a throughput chart), summary.csv (the Overall rows)
and compare.html (per step across databases, with sweep charts).

FILE is a YAML suite file or the name of a built-in suite (see 'ycsbctl
suites'). -p beats every property of the file; --db replaces its
databases; --agents runs every step distributed. Ctrl-C ends the current
step gracefully and stops the suite; --resume with the same --results
skips the steps whose bundle is complete. A failed step stops the suite
unless --keep-going. The exit code is 0 only when every step passed.

  ycsbctl suite comparison2014 --db cassandra,mongodb -p recordcount=100000 --dry-run
  ycsbctl suite my-study.yaml --results results/study1
  ycsbctl suite report results/study1`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSuite(gs, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.results, "results", "", "results directory (default results/<name>-<timestamp>)")
	fl.StringArrayVarP(&f.overrides, "p", "p", nil, "property override key=value for every step (repeatable; beats the file)")
	fl.StringSliceVar(&f.agents, "agents", nil, "run every step distributed over these agents (host:port, comma separated)")
	fl.StringSliceVar(&f.dbs, "db", nil, "databases to run, replacing the file's list (adapter names, comma separated)")
	fl.BoolVar(&f.resume, "resume", false, "continue an interrupted suite in --results DIR: skip steps whose bundle is complete")
	fl.BoolVar(&f.keepGoing, "keep-going", false, "record a failed step and run the rest")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the expanded plan (database × step × sweep value) with properties and estimates, run nothing")
	cmd.AddCommand(newSuiteReportCmd(gs))
	return cmd
}

func newSuitesCmd(gs *GlobalState) *cobra.Command {
	return &cobra.Command{
		Use:   "suites",
		Short: "List the built-in suites usable with 'ycsbctl suite NAME'",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, s := range workloads.Suites() {
				fmt.Fprintf(gs.Stdout, "%-16s %s\n", s.Name, s.Description)
			}
			return nil
		},
	}
}

func newSuiteReportCmd(gs *GlobalState) *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Write summary.xlsx, summary.csv and compare.html for a suite's results directory",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := writeSuiteReports(gs, args[0]); err != nil {
				return invalid(err)
			}
			return nil
		},
	}
}

// loadSuite reads FILE (a path, else a built-in suite), or with --resume
// and no FILE the copy kept in the results directory.
func loadSuite(gs *GlobalState, f *suiteFlags, args []string) (*suite.File, error) {
	var name string
	var src []byte
	switch {
	case len(args) == 1:
		name = args[0]
		b, err := gs.ReadFile(name)
		if err != nil {
			s, ok := workloads.LookupSuite(name)
			if !ok {
				var names []string
				for _, s := range workloads.Suites() {
					names = append(names, s.Name)
				}
				return nil, invalid(fmt.Errorf("suite %q: %v, and no built-in suite of that name (built-in: %s)", name, errNoFile(err), strings.Join(names, ", ")))
			}
			name, b = "builtin:"+s.Name, []byte(s.Text)
		}
		src = b
	case f.resume && f.results != "":
		name = filepath.Join(f.results, suite.FileSource)
		b, err := gs.ReadFile(name)
		if err != nil {
			return nil, invalid(fmt.Errorf("--resume without FILE: %w", err))
		}
		src = b
	default:
		return nil, invalid(errors.New("expected a suite file or built-in suite name (see 'ycsbctl suites')"))
	}
	exists := func(w string) bool {
		if _, ok := workloads.Lookup(w); ok {
			return true
		}
		_, err := gs.ReadFile(w)
		return err == nil
	}
	file, err := suite.Parse(name, src, exists)
	if err != nil {
		return nil, invalid(err)
	}
	if len(f.dbs) > 0 {
		file.Databases = nil
		for _, d := range splitAgents(f.dbs) {
			file.Databases = append(file.Databases, suite.Database{DB: d, Name: d})
		}
	}
	for _, d := range file.Databases {
		if _, err := adapters.Lookup(d.DB); err != nil {
			where := "flag --db"
			if d.Line > 0 {
				where = fmt.Sprintf("%s: line %d: key \"db\"", name, d.Line)
			}
			return nil, invalid(fmt.Errorf("%s: %w", where, err))
		}
	}
	return file, nil
}

func errNoFile(err error) string {
	if os.IsNotExist(err) {
		return "no such file"
	}
	return err.Error()
}

// checkPlan validates every measured item's effective properties the way
// its run will, so a bad value stops the suite before anything runs.
func checkPlan(gs *GlobalState, p *suite.Plan) error {
	seen := map[string]bool{}
	for _, it := range p.Items {
		if it.Kind == suite.KindPause {
			continue
		}
		props := properties.New()
		text, _, err := readWorkload(gs, it.Workload)
		if err != nil {
			return invalid(fmt.Errorf("line %d: %w", it.Step.Line, err))
		}
		if err := props.Load(bytes.NewReader(text)); err != nil {
			return invalid(fmt.Errorf("line %d: workload %s: %w", it.Step.Line, it.Workload, err))
		}
		for k, v := range it.Props {
			props.Set(k, v)
		}
		ph := run.Run
		if it.Kind == suite.KindLoad {
			ph = run.Load
		}
		key := fmt.Sprintf("%s\x00%v", it.DB.DB, props.Map())
		if seen[key] {
			continue
		}
		seen[key] = true
		if _, err := spec.Parse(it.DB.DB, props, ph); err != nil {
			return invalid(fmt.Errorf("step on line %d (%s, %s): %w", it.Step.Line, it.DB.Name, it.Name, err))
		}
	}
	return nil
}

// adapterApplies reports whether a property meant for every database
// applies to adapter: anything but a property that another adapter
// declares and this one does not.
func adapterApplies(adapter, key string) bool {
	info, err := adapters.Lookup(adapter)
	if err != nil {
		return true
	}
	// The client's and the workload's properties apply everywhere, even
	// when an adapter declares them too (fieldcount, batchsize).
	common := append(append(spec.Known(), workload.Known()...), info.Properties...)
	if _, ok := properties.FindKnown(common, key); ok {
		return true
	}
	for _, n := range adapters.Names() {
		other, err := adapters.Lookup(n)
		if err != nil || other.Name == info.Name {
			continue
		}
		if _, ok := properties.FindKnown(other.Properties, key); ok {
			return false
		}
	}
	return true
}

func runSuite(gs *GlobalState, f *suiteFlags, args []string) error {
	if f.resume && f.results == "" {
		return invalid(errors.New("flag --resume: expected --results DIR, the directory of the suite to continue"))
	}
	file, err := loadSuite(gs, f, args)
	if err != nil {
		return err
	}
	overrides := map[string]string{}
	for _, o := range f.overrides {
		k, v, err := properties.ParseOverride(o)
		if err != nil {
			return invalid(err)
		}
		overrides[k] = v
	}
	plan := suite.Expand(file, overrides, splitAgents(f.agents), suite.Hooks{
		WorkloadProps: func(w string) map[string]string {
			text, _, err := readWorkload(gs, w)
			if err != nil {
				return nil
			}
			p := properties.New()
			if p.Load(bytes.NewReader(text)) != nil {
				return nil
			}
			return p.Map()
		},
		Applies: adapterApplies,
	})
	if err := checkPlan(gs, plan); err != nil {
		return err
	}
	dir := f.results
	if dir == "" {
		dir = filepath.Join("results", file.Name+"-"+gs.Clock.Now().UTC().Format("20060102T150405Z"))
	}
	if f.dryRun {
		return plan.Print(gs.Stdout, dir)
	}
	if !f.resume {
		if _, err := os.Stat(filepath.Join(dir, suite.FileState)); err == nil {
			return invalid(fmt.Errorf("flag --results %s: holds an earlier suite; use --resume to continue it or choose another directory", dir))
		}
	}
	stderr := &lockedWriter{w: gs.Stderr}
	r := &suite.Runner{Plan: plan, Dir: dir, Clock: gs.Clock, Resume: f.resume, KeepGoing: f.keepGoing, Log: stderr}
	r.Exec = &inProcessExecutor{gs: gs, out: stderr, dir: dir}
	if entries, err := os.ReadDir(filepath.Join(dir, "logs")); err == nil {
		// A resumed suite numbers its logs after the earlier ones.
		r.Exec.(*inProcessExecutor).n = len(entries)
	}
	// Progress is printed as a line before each step, and on a terminal
	// it heads each step's live view.
	exec := r.Exec.(*inProcessExecutor)
	r.Progress = func(p suite.Progress) {
		_, _ = fmt.Fprintln(stderr, p.Line())
		// On a terminal the step's live view shows it above its own.
		exec.banner = p.Line()
	}
	// The first Ctrl-C reaches the running step too (it stops
	// gracefully); the suite stops after it. A second one aborts the
	// step, as in a single run.
	sigs := make(chan os.Signal, 2)
	gs.SignalNotify(sigs, os.Interrupt, syscall.SIGTERM)
	defer gs.SignalStop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		first := true
		for {
			select {
			case <-sigs:
				if first {
					first = false
					fmt.Fprintf(stderr, "suite %s: interrupted: ending the current step, then stopping (continue later with --resume --results %s)\n", file.Name, dir)
				}
				r.Stop()
			case <-done:
				return
			}
		}
	}()
	fmt.Fprintf(stderr, "suite %s: %s, results in %s\n", file.Name, plural.Count(len(plan.Items), "item"), dir)
	st, code := r.Run(gs.Ctx)
	printSuiteSummary(gs.Stdout, st)
	if err := writeSuiteReports(gs, dir); err != nil {
		fmt.Fprintf(stderr, "suite %s: no summary: %v\n", file.Name, err)
	}
	if code != exitcode.OK {
		failed := 0
		for _, s := range st.Steps {
			if s.Status == suite.StatusFailed || s.Status == suite.StatusIncomplete {
				failed++
			}
		}
		if code == exitcode.Aborted {
			return exitcode.Wrap(code, fmt.Errorf("suite %s interrupted; continue with: ycsbctl suite %s --resume --results %s", file.Name, strings.Join(args, " "), dir))
		}
		return exitcode.Wrap(code, fmt.Errorf("suite %s: %d step(s) did not pass", file.Name, failed))
	}
	return nil
}

func printSuiteSummary(w io.Writer, st *suite.State) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DATABASE\tSTEP\tKIND\tSTATUS\tEXIT\n")
	for _, s := range st.Steps {
		name := fmt.Sprintf("%02d-%s", s.StepIndex, s.Step)
		if s.Dir != "" {
			name = filepath.Base(s.Dir)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", s.Database, name, s.Kind, s.Status, s.ExitCode)
	}
	_ = tw.Flush()
	for _, sc := range st.Scans {
		fmt.Fprintf(w, "Thread scan %s %s: knee at %d thread(s) (%s)\n", sc.Database, sc.Step, sc.Knee, sc.Reason)
	}
}

// writeSuiteReports writes the workbook, the CSV and the comparison page
// of a suite's results directory.
func writeSuiteReports(gs *GlobalState, dir string) error {
	d, err := workbook.Collect(dir)
	if err != nil {
		return err
	}
	if err := d.WriteXLSX(filepath.Join(dir, SuiteWorkbook)); err != nil {
		return fmt.Errorf("%s: %w", SuiteWorkbook, err)
	}
	if err := d.WriteCSVFile(filepath.Join(dir, SuiteCSV)); err != nil {
		return fmt.Errorf("%s: %w", SuiteCSV, err)
	}
	page := &report.SuitePage{Name: d.State.Name, Databases: d.State.Databases}
	for _, s := range d.Steps {
		sr := report.SuiteRun{Database: s.State.Database, Step: s.StepName(), Run: report.FromBundle(s.Bundle)}
		for _, v := range s.State.Sweep {
			sr.Sweep = append(sr.Sweep, report.SweepPoint{Key: v.Key, Value: v.Value})
		}
		page.Runs = append(page.Runs, sr)
	}
	for _, sc := range d.State.Scans {
		page.Notes = append(page.Notes, fmt.Sprintf("Thread scan %s %s: knee at %d thread(s): %s.", sc.Database, sc.Step, sc.Knee, sc.Reason))
	}
	for _, m := range d.Missing {
		page.Notes = append(page.Notes, fmt.Sprintf("%s %s: no results (%s).", m.Database, filepath.Base(m.Dir), m.Status))
	}
	if err := writeOutput(gs, filepath.Join(dir, SuiteCompare), func(w io.Writer) error { return page.WriteHTML(w, gs.Clock.Now()) }); err != nil {
		return err
	}
	fmt.Fprintf(gs.Stderr, "Suite summary: %s, %s, %s\n", filepath.Join(dir, SuiteWorkbook), filepath.Join(dir, SuiteCSV), filepath.Join(dir, SuiteCompare))
	return nil
}

// inProcessExecutor runs a step's command line through Execute, with the
// suite's context, clock and signals, its output teed to the suite's
// stderr and to a log file next to the step's bundle.
type inProcessExecutor struct {
	gs  *GlobalState
	out io.Writer
	dir string
	n   int
	// banner is the suite's progress line for the next step.
	banner string
}

func (e *inProcessExecutor) Execute(ctx context.Context, args []string) int {
	e.n++
	logPath := filepath.Join(e.dir, "logs", fmt.Sprintf("%03d-%s.log", e.n, logName(args)))
	out := e.out
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err == nil {
		if lf, err := os.Create(logPath); err == nil {
			// The log is a convenience copy of what went to stderr.
			defer func() { _ = lf.Close() }()
			out = &lockedWriter{w: io.MultiWriter(e.out, lf)}
		}
	}
	child := *e.gs
	child.Ctx = ctx
	child.Args = args
	child.Banner = e.banner
	if e.gs.IsTerminal {
		// On a terminal each step gets the live view, headed by the
		// suite's progress: it owns the terminal's streams while it
		// runs (q stops the step), and its notices are replayed there.
		// The step's log then holds its command line; its results are
		// in its bundle.
		child.Args = withoutArg(args, "--no-tui")
		_, _ = fmt.Fprintf(out, "ycsbctl %s (live view on the terminal; results in the step's bundle)\n", strings.Join(child.Args, " "))
		return Execute(&child)
	}
	child.Stdout = out
	child.Stderr = out
	child.Stdin = strings.NewReader("")
	child.IsTerminal = false
	return Execute(&child)
}

func withoutArg(args []string, drop string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if a != drop {
			out = append(out, a)
		}
	}
	return out
}

// logName is "run-embedded-01-load" style: verb, database and step.
func logName(args []string) string {
	parts := []string{}
	i := 0
	if len(args) > 0 && args[0] == "coordinator" {
		i = 1
	}
	if len(args) > i+1 {
		parts = append(parts, args[i], args[i+1])
	}
	for j := 0; j+1 < len(args); j++ {
		if args[j] == "--results" {
			parts = append(parts, filepath.Base(args[j+1]))
		}
	}
	return strings.NewReplacer("/", "_", " ", "_").Replace(strings.Join(parts, "-"))
}

// lockedWriter serialises writes from a step's goroutines and the
// suite's own lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

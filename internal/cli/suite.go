package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/report"
	"github.com/ycsbctl/ycsbctl/internal/resultsdir"
	"github.com/ycsbctl/ycsbctl/internal/shellquote"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
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
	dbs       []string
	resume    bool
	keepGoing bool
	dryRun    bool
	// dist reaches the agents of a distributed suite: the same flags as
	// `coordinator load|run`.
	dist distributedFlags
}

func newSuiteCmd(gs *GlobalState) *cobra.Command {
	f := &suiteFlags{}
	cmd := &cobra.Command{
		Use:   "suite FILE|BUILTIN [--results DIR] [-p k=v]... [--db NAME,...] [--agents A,B,... [--tls-cert F --tls-key F --tls-ca F] [--token-file F]] [--resume] [--keep-going] [--dry-run]",
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
databases; --agents runs every step distributed, over mutual TLS with
--tls-cert/--tls-key/--tls-ca and a token (--token-file or YCSBCTL_TOKEN)
as 'coordinator load|run' take them. Ctrl-C ends the current step
gracefully and stops the suite (exit 6; a second Ctrl-C aborts it, exit
4); --resume with the same --results skips the steps whose bundle is
complete and was made with the same configuration, and refuses (exit 2)
a directory without a suite, another suite's, or a completed step made
with another configuration (naming what differs). A failed step stops the
suite unless --keep-going. The exit code is 0 only when every step
passed; suite.json records it.

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
	fl.StringSliceVar(&f.dbs, "db", nil, "databases to run, replacing the file's list (adapter names, comma separated)")
	fl.BoolVar(&f.resume, "resume", false, "continue an interrupted suite in --results DIR: skip steps whose bundle is complete and of the same configuration")
	fl.BoolVar(&f.keepGoing, "keep-going", false, "record a failed step and run the rest")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the expanded plan (database × step × sweep value) with properties and estimates, run nothing")
	f.dist.register(cmd)
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
			owned, err := ownSuiteDir(gs, args[0], false)
			if err != nil {
				return err
			}
			defer owned.Release()
			if err := writeSuiteReports(gs, args[0]); err != nil {
				return invalid(err)
			}
			return nil
		},
	}
}

// ownSuiteDir takes a suite's results directory for this process,
// creating it when create.
func ownSuiteDir(gs *GlobalState, dir string, create bool) (*resultsdir.Owned, error) {
	owned, err := resultsdir.Open(dir, resultsdir.Options{Create: create, Logf: func(format string, a ...any) { fmt.Fprintf(gs.Stderr, format+"\n", a...) }})
	switch {
	case resultsdir.IsHeld(err):
		return nil, invalid(fmt.Errorf("--results %w", err))
	case errors.Is(err, fs.ErrNotExist):
		return nil, invalid(fmt.Errorf("--results %s: no such directory: there is no suite to continue or report there", dir))
	case err != nil:
		return nil, fmt.Errorf("--results %s: %w", dir, err)
	}
	// Owning the directory proves no live suite runs there: a suite.json
	// still saying running is a dead suite's, and says so from now on.
	marked, err := suite.MarkEnded(dir)
	if err != nil {
		owned.Release()
		return nil, fmt.Errorf("--results %s: %w", dir, err)
	}
	if marked {
		fmt.Fprintf(gs.Stderr, "%s: %s said the suite was running, but its process ended without finishing it: marked %s, exit code unknown\n", dir, suite.FileState, suite.SuiteAborted)
	}
	return owned, nil
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

func runSuite(gs *GlobalState, f *suiteFlags, args []string) error {
	if f.resume && f.results == "" {
		return invalid(errors.New("flag --resume: expected --results DIR, the directory of the suite to continue"))
	}
	var owned *resultsdir.Owned
	if f.resume {
		// The suite owns the directory it continues before it looks at
		// it: another live process's results are refused as in use, not
		// read as a suite that is not there.
		var err error
		if _, serr := os.Stat(f.results); errors.Is(serr, fs.ErrNotExist) {
			// Nothing to own: say that there is nothing to resume.
			if err := suite.Resumable(f.results); err != nil {
				return invalid(err)
			}
		}
		if owned, err = ownSuiteDir(gs, f.results, false); err != nil {
			return err
		}
		defer owned.Release()
		// Before the file: without FILE the suite is the one kept there.
		if err := suite.Resumable(f.results); err != nil {
			return invalid(err)
		}
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
	dist, err := f.dist.config(gs, file.Agents, false)
	if err != nil {
		return err
	}
	dir := f.results
	if dir == "" {
		dir = filepath.Join("results", file.Name+"-"+gs.Clock.Now().UTC().Format("20060102T150405Z"))
	}
	opts := suite.Options{Overrides: overrides, ResultsDir: dir, ReadWorkload: func(w string) ([]byte, error) {
		text, _, err := readWorkload(gs, w)
		return text, err
	}}
	if dist != nil {
		opts.Agents = dist.Agents
	}
	plan, err := suite.Expand(file, opts)
	if err != nil {
		return invalid(err)
	}
	if err := checkDistributed(plan, dist); err != nil {
		return err
	}
	if f.dryRun {
		return plan.Print(gs.Stdout)
	}
	// The suite owns its directory, step bundles included, from before
	// it looks at it until its workbook is written.
	if owned == nil {
		if owned, err = ownSuiteDir(gs, dir, true); err != nil {
			return err
		}
		defer owned.Release()
	}
	if !f.resume {
		if _, err := os.Stat(filepath.Join(dir, suite.FileState)); err == nil {
			return invalid(fmt.Errorf("flag --results %s: holds an earlier suite; use --resume to continue it or choose another directory", dir))
		}
	} else if err := plan.CheckResume(); err != nil {
		return invalid(err)
	}
	stderr := &lockedWriter{w: gs.Stderr}
	exec := &suiteExecutor{gs: gs, plan: plan, dist: dist, out: stderr}
	if entries, err := os.ReadDir(filepath.Join(dir, "logs")); err == nil {
		// A resumed suite numbers its logs after the earlier ones.
		exec.n = len(entries)
	}
	r := &suite.Runner{Plan: plan, Exec: exec, Clock: gs.Clock, Resume: f.resume, KeepGoing: f.keepGoing, Log: stderr}
	// Progress is printed as a line before each step, and on a terminal
	// it heads each step's live view.
	r.Progress = func(p suite.Progress) {
		_, _ = fmt.Fprintln(stderr, p.Line())
		exec.banner = p.Line()
	}
	// The first Ctrl-C reaches the running step too (it stops
	// gracefully); the suite stops after it (exit 6). A second one aborts
	// the step, as in a single run, and the suite (exit 4).
	sigs := make(chan os.Signal, 2)
	gs.SignalNotify(sigs, os.Interrupt, syscall.SIGTERM)
	defer gs.SignalStop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for n := 1; ; n++ {
			select {
			case <-sigs:
				if n == 1 {
					fmt.Fprintf(stderr, "suite %s: interrupted: ending the current step, then stopping (continue later with --resume --results %s)\n", file.Name, dir)
					r.Stop()
				} else {
					r.Abort()
				}
			case <-done:
				return
			}
		}
	}()
	where := "on this host"
	if dist != nil {
		where = "over " + plural.Count(len(dist.Agents), "agent")
	}
	fmt.Fprintf(stderr, "suite %s: %s %s, results in %s\n", file.Name, plural.Count(len(plan.Items), "item"), where, dir)
	for _, w := range plan.Warnings() {
		fmt.Fprintf(stderr, "suite %s: %s\n", file.Name, w)
	}
	st, code := r.Run(gs.Ctx)
	printSuiteSummary(gs.Stdout, st)
	printCapacities(gs.Stdout, dir, st)
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
		if code.ByOperator() {
			return exitcode.Wrap(code, fmt.Errorf("suite %s %s; continue with: ycsbctl suite %s --resume --results %s", file.Name, st.Status, shellquote.Join(args), shellquote.Quote(dir)))
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
		exit := "-"
		if c, ok := s.Exit(); ok {
			exit = strconv.Itoa(c)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Database, name, s.Kind, s.Status, exit)
	}
	_ = tw.Flush()
	for _, sc := range st.Scans {
		fmt.Fprintf(w, "Thread scan %s %s: knee at %d thread(s) (%s)\n", sc.Database, sc.Step, sc.Knee, sc.Reason)
	}
}

// printCapacities says each capacity step's answer, from its record.
func printCapacities(w io.Writer, dir string, st *suite.State) {
	for _, s := range st.Steps {
		if !s.Searched() || s.Dir == "" {
			continue
		}
		if rec, err := capacity.Read(filepath.Join(dir, s.Dir)); err == nil {
			fmt.Fprintf(w, "%s %s: %s\n", s.Database, filepath.Base(s.Dir), rec.AnswerText())
		}
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
	for _, s := range d.Searches {
		sc := report.SuiteCapacity{Database: s.State.Database, Step: s.StepName(), Record: s.Record}
		for _, v := range s.State.Sweep {
			sc.Sweep = append(sc.Sweep, report.SweepPoint{Key: v.Key, Value: v.Value})
		}
		page.Capacities = append(page.Capacities, sc)
	}
	for _, sc := range d.State.Scans {
		page.Notes = append(page.Notes, fmt.Sprintf("Thread scan %s %s: knee at %d thread(s): %s.", sc.Database, sc.Step, sc.Knee, sc.Reason))
	}
	for _, m := range d.Missing {
		page.Notes = append(page.Notes, fmt.Sprintf("%s %s: no results (%s).", m.Database, filepath.Base(m.Dir), m.Status))
	}
	if code := d.State.ExitCode; code != nil && *code != 0 {
		page.Notes = append(page.Notes, fmt.Sprintf("The suite %s: exit %d (%s).", d.State.Status, *code, d.State.ExitReason))
	}
	if err := writeOutput(gs, filepath.Join(dir, SuiteCompare), func(w io.Writer) error { return page.WriteHTML(w, gs.Clock.Now()) }); err != nil {
		return err
	}
	fmt.Fprintf(gs.Stderr, "Suite summary: %s, %s, %s\n", filepath.Join(dir, SuiteWorkbook), filepath.Join(dir, SuiteCSV), filepath.Join(dir, SuiteCompare))
	return nil
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

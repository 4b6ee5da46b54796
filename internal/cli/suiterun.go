package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/coordinator"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/redact"
	"github.com/ycsbctl/ycsbctl/internal/shellquote"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/suite"
)

// suiteExecutor carries out a suite's items in this process: each item's
// run specification goes to a run session exactly as `ycsbctl load|run`
// (or, with agents, `coordinator load|run`) sends its own (runSpec), with
// the suite's context, clock and signals; its output goes to the suite's
// stderr and to a log file per item under DIR/logs.
type suiteExecutor struct {
	gs   *GlobalState
	plan *suite.Plan
	// dist is the coordinator configuration of a distributed suite.
	dist *coordinator.Config
	out  io.Writer
	n    int
	// banner is the suite's progress line for the next step.
	banner string
}

var _ suite.Executor = (*suiteExecutor)(nil)

// Schema drops and creates the schema from this host.
func (e *suiteExecutor) Schema(ctx context.Context, it *suite.Item) exitcode.Code {
	out, closeLog := e.log("schema-" + logName(it))
	defer closeLog()
	for _, verb := range []string{"drop", "init"} {
		msg, err := applySchema(ctx, it.Spec.Adapter, it.Spec.Props, verb)
		if err != nil {
			fmt.Fprintf(out, "ycsbctl %s %s: Error: %s\n", verb, it.DB.DB, redact.Text(err.Error()))
			return exitcode.Of(err)
		}
		fmt.Fprintf(out, "ycsbctl %s %s: %s\n", verb, it.DB.DB, msg)
	}
	return exitcode.OK
}

// Run runs one load, run or warm-up.
func (e *suiteExecutor) Run(ctx context.Context, it *suite.Item, sp *spec.Spec, step *bundle.SuiteStep) exitcode.Code {
	return e.step(ctx, it, sp, step, func(child *GlobalState, x sessionExtras) error {
		return runSpec(child, sp, e.dist, x)
	})
}

// Capacity runs one capacity step's search, as `ycsbctl capacity` runs
// its own.
func (e *suiteExecutor) Capacity(ctx context.Context, it *suite.Item, sp *spec.Spec, step *bundle.SuiteStep) exitcode.Code {
	return e.step(ctx, it, sp, step, func(child *GlobalState, x sessionExtras) error {
		return newCapacitySearch(child, sp, *it.Step.Capacity, e.dist, x).run()
	})
}

// step runs one item through do, with the suite's context, banner and
// streams (or the item's log), and the item's equivalent command line.
func (e *suiteExecutor) step(ctx context.Context, it *suite.Item, sp *spec.Spec, step *bundle.SuiteStep, do func(*GlobalState, sessionExtras) error) exitcode.Code {
	name := logName(it)
	if dir := sp.Output.ResultsDir; dir != filepath.Join(e.plan.ResultsDir, it.Dir) {
		name += "-" + filepath.Base(dir) // a thread-scan try
	}
	out, closeLog := e.log(name)
	defer closeLog()
	child := *e.gs
	child.Ctx = ctx
	child.Banner = e.banner
	cmdline := e.plan.CommandLine(it, sp)
	if e.gs.IsTerminal {
		// On a terminal each step gets the live view, headed by the
		// suite's progress: it owns the terminal's streams while it
		// runs (q stops the step), and its notices are replayed there.
		// The step's log then holds its command; its results are in
		// its bundle.
		_, _ = fmt.Fprintf(out, "ycsbctl %s (live view on the terminal; results in the step's bundle)\n", shellquote.Join(bundle.RedactArgs(cmdline)))
	} else {
		_, _ = fmt.Fprintf(out, "ycsbctl %s\n", shellquote.Join(bundle.RedactArgs(cmdline)))
		child.Stdout, child.Stderr = out, out
		child.Stdin = strings.NewReader("")
	}
	err := do(&child, sessionExtras{commandLine: cmdline, workload: filepath.Base(it.Workload), suite: step})
	if err != nil && !errors.Is(err, errSilent) {
		fmt.Fprintf(child.Stderr, "Error: %s\n", redact.Text(err.Error()))
	}
	return exitcode.Of(err)
}

// log opens the next log file under DIR/logs; the writer tees to the
// suite's stderr. The log is a convenience copy: without it the output
// still reaches stderr. A resumed suite numbers its logs from 1 again, so
// a log that exists is appended to under a line naming the new attempt:
// the interrupted attempt's output is part of the record.
func (e *suiteExecutor) log(name string) (io.Writer, func()) {
	e.n++
	path := filepath.Join(e.plan.ResultsDir, "logs", fmt.Sprintf("%03d-%s.log", e.n, name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		if lf, err := outfile.Append(path, 0o644); err == nil {
			if st, err := lf.Stat(); err == nil && st.Size() > 0 {
				fmt.Fprintf(lf, "\n--- resumed %s ---\n", time.Now().UTC().Format(time.RFC3339))
			}
			return &lockedWriter{w: io.MultiWriter(e.out, lf)}, func() { _ = lf.Close() }
		}
	}
	return e.out, func() {}
}

// checkDistributed checks every step's distributed run as `coordinator
// load|run` checks its own (coordinator.New: the agents, duplicates
// among them, the split of the work, the TLS files), contacting nobody:
// a suite refuses before its first step what a later step would.
func checkDistributed(plan *suite.Plan, dist *coordinator.Config) error {
	if dist == nil {
		return nil
	}
	for _, it := range plan.Items {
		if it.Spec == nil {
			continue // a pause
		}
		cfg := *dist
		cfg.Spec = it.Spec
		if _, err := coordinator.New(cfg); err != nil {
			return exitcode.WithCodeIfNone(exitcode.InvalidConfig, fmt.Errorf("suite %s: step %s of %s: %w", plan.File.Name, filepath.Base(it.Dir), it.DB.Name, err))
		}
	}
	return nil
}

// logName is "run-embedded-03-run-workloadc-threads2" style: phase,
// database and the step's directory.
func logName(it *suite.Item) string {
	phase := string(it.Kind)
	if it.Kind == suite.KindWarmup {
		phase = "run"
	}
	return strings.NewReplacer("/", "_", " ", "_").Replace(phase + "-" + it.DB.DB + "-" + filepath.Base(it.Dir))
}

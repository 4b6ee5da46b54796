package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/coordinator"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/session"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// newPhaseCmd is `ycsbctl load` or `ycsbctl run`: one phase on this host.
func newPhaseCmd(gs *GlobalState, phase run.Phase) *cobra.Command {
	f := &ycsbFlags{}
	short := "Load the database: insert the records of [insertstart, insertstart+insertcount)"
	if phase == run.Run {
		short = "Run the transaction phase of a workload"
	}
	cmd := &cobra.Command{
		Use:   phase.String() + " [db] [-P workload]... [-p key=value]... [-threads N] [-target OPS] [-s] [-l label]",
		Short: short,
		Long: short + `.

The db defaults to the embedded store. -P takes a property file or the name
of a built-in workload (see 'ycsbctl workloads'); -p overrides beat every
file. Output follows YCSB: status lines on stderr with -s, the final
[OVERALL]/[OP] summary on stdout (or exportfile).`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			sp, err := parseSpec(gs, cmd, f, args, phase)
			if err != nil {
				return err
			}
			if len(args) == 1 && sp.Adapter.Where != nil {
				// First, as the default database's notice is.
				fmt.Fprintf(gs.Stderr, "Using %s\n", sp.Adapter.Where(sp.Props))
			}
			return f.asTyped(sp.Props, runSpec(gs, sp, nil, sessionExtras{}))
		},
	}
	f.register(cmd, runSettingFlags...)
	return cmd
}

// parseSpec turns a load or run command line into the run's
// specification: the adapter argument (the embedded store by default) and
// the merged properties, parsed once. What resolving the command line
// decided comes first among the warnings.
func parseSpec(gs *GlobalState, cmd *cobra.Command, f *ycsbFlags, args []string, phase run.Phase) (*spec.Spec, error) {
	db := DefaultDB
	if len(args) == 1 {
		db = args[0]
	}
	p, notes, err := f.resolve(gs, cmd)
	if err != nil {
		return nil, err
	}
	sp, err := spec.Parse(db, p, phase)
	if err != nil {
		return nil, invalid(f.asTyped(p, err))
	}
	sp.Warnings = append(notes, sp.Warnings...)
	return sp, nil
}

// sessionExtras are what a run started by another command (a suite
// step) records beyond its own command line; the zero value is a run
// started by its own command.
type sessionExtras struct {
	// commandLine is the run's equivalent command, without "ycsbctl";
	// empty: the process' own arguments.
	commandLine []string
	workload    string
	suite       *bundle.SuiteStep
}

// newSession builds the session that presents a run of sp.
func newSession(gs *GlobalState, sp *spec.Spec, x sessionExtras) *session.Session {
	return session.New(sessionOptions(gs, sp, x))
}

// sessionOptions are the options of a session presenting a run of sp:
// gs's outside world, and the command line x records. A command that runs
// several runs (a capacity search) adds its sinks and where it is.
func sessionOptions(gs *GlobalState, sp *spec.Spec, x sessionExtras) session.Options {
	invocation := append([]string{"ycsbctl"}, gs.Args...)
	cmd, wl := invocation, workloadName(gs.Args)
	if len(x.commandLine) > 0 {
		cmd, wl = append([]string{"ycsbctl"}, x.commandLine...), x.workload
	}
	return session.Options{
		Spec: sp, CommandLine: cmd, Invocation: invocation, Suite: x.suite,
		Stdin: gs.Stdin, Stdout: gs.Stdout, Stderr: gs.Stderr, Clock: gs.Clock,
		Terminal: gs.IsTerminal, Getenv: gs.Getenv, Notify: gs.SignalNotify, StopNotify: gs.SignalStop, OutputClosed: gs.OutputClosed,
		Workload: wl, Banner: gs.Banner,
	}
}

// runSpec runs sp, a load or run phase: on this host, or over agents when
// dist is set. `ycsbctl load|run`, `ycsbctl coordinator load|run` and
// every suite step run through it.
func runSpec(gs *GlobalState, sp *spec.Spec, dist *coordinator.Config, x sessionExtras) error {
	s := newSession(gs, sp, x)
	if dist == nil {
		s.Header()
	} else {
		for _, w := range sp.Warnings {
			s.Logf("%s", w)
		}
	}
	return runSession(gs, s, sp, dist)
}

// runSession runs sp presented by s: on this host, or over the agents of
// dist when it is set (its Spec and Logf are filled here).
func runSession(gs *GlobalState, s *session.Session, sp *spec.Spec, dist *coordinator.Config) error {
	if dist == nil {
		return runLocal(gs, s, sp)
	}
	cfg := *dist
	cfg.Spec, cfg.Logf, cfg.Clock = sp, s.Logf, gs.Clock
	c, err := coordinator.New(cfg)
	if err != nil {
		return err
	}
	if err := s.Open(); err != nil {
		return err
	}
	return s.Run(gs.Ctx, c)
}

// runLocal runs one phase on this host, presented by s.
func runLocal(gs *GlobalState, s *session.Session, sp *spec.Spec) error {
	if err := s.Open(); err != nil {
		return err
	}
	s.Logf("Loading workload...")
	src, err := session.NewLocal(gs.Ctx, sp, gs.Clock, s.Logf)
	if err != nil {
		s.Abandon()
		var pe *properties.Error
		if errors.As(err, &pe) {
			return invalid(err)
		}
		return exitcode.WithCodeIfNone(exitcode.Failure, fmt.Errorf("cannot start: %w", err))
	}
	if w := sp.WarmupDescription(); w != "" {
		s.Logf("Warm-up: %s; warm-up operations are run but neither measured nor counted.", w)
	}
	s.Logf("Starting test.")
	return s.Run(gs.Ctx, src)
}

// workloadName names the workload from the -P arguments of the command
// line ("workloada", "my.properties"); empty when none was given.
func workloadName(args []string) string {
	var names []string
	for i := 0; i < len(args)-1; i++ {
		if args[i] == "-P" || args[i] == "--P" {
			names = append(names, filepath.Base(args[i+1]))
		}
	}
	return strings.Join(names, "+")
}

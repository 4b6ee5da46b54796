package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/editdist"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/redact"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/version"

	// Every adapter registers itself.
	_ "github.com/ycsbctl/ycsbctl/adapters/all"
)

// DefaultDB is the adapter used when a command names none.
const DefaultDB = "embedded"

// Execute runs the command line in gs and returns the process exit code.
// Every error carries its code (exitcode.Of): usage errors are typed where
// cobra reports them (flags, arguments, unknown commands), never
// recognised by their message.
func Execute(gs *GlobalState) int {
	args, err := javaPhaseArgs(normalizeArgs(gs.Args))
	notice := ""
	if err == nil {
		args, notice, err = selectDB(gs, args)
	}
	if err != nil {
		fmt.Fprintf(gs.Stderr, "Error: %v\n", err)
		return int(exitcode.InvalidConfig)
	}
	if notice != "" {
		// The first line of output, so that nobody mistakes the run for
		// one against the database they meant.
		fmt.Fprintln(gs.Stderr, notice)
	}
	gs, endBackstop := withSignalBackstop(gs)
	defer endBackstop()
	root := newRootCmd(gs)
	root.SetArgs(args)
	root.SetIn(gs.Stdin)
	root.SetOut(gs.Stdout)
	root.SetErr(gs.Stderr)
	err = root.ExecuteContext(gs.Ctx)
	if err == nil {
		return int(exitcode.OK)
	}
	if !errors.Is(err, errSilent) {
		// Errors can quote URLs and values from adapters and drivers;
		// never print a secret in them.
		fmt.Fprintf(gs.Stderr, "Error: %s\n", redact.Text(err.Error()))
	}
	return int(exitcode.Of(err))
}

// errSilent marks an error whose message was already printed.
var errSilent = errors.New("already reported")

func invalid(err error) error { return exitcode.Wrap(exitcode.InvalidConfig, err) }

// groupCommand makes a command that only holds subcommands refuse an
// unknown subcommand as a usage error (cobra's own error is untyped), and
// print its help when called bare.
func groupCommand(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return invalid(fmt.Errorf("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath()))
		}
		return cmd.Help()
	}
}

// usageArgs makes a positional-argument check's error a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return invalid(err)
		}
		return nil
	}
}

// normalizeArgs accepts YCSB's single-dash long flags (-threads 4,
// -target 1000, -db CLASS) by rewriting them to the double-dash form cobra
// expects. Java's phase switches (-load, -t) are left for javaPhaseArgs.
func normalizeArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		for _, long := range []string{"threads", "target", "db"} {
			if a == "-"+long || strings.HasPrefix(a, "-"+long+"=") {
				out[i] = "-" + a
			}
		}
	}
	return out
}

func newRootCmd(gs *GlobalState) *cobra.Command {
	root := &cobra.Command{
		Use:   "ycsbctl",
		Short: "Distributed, YCSB-compatible benchmark for NoSQL databases",
		Long: `ycsbctl runs YCSB workloads against MongoDB, Cassandra, HBase, a no-op DB
and an embedded store, on one host (load, run, shell) or on many hosts at
once (agent, coordinator), with exactly merged HDR latency histograms.

` + exitCodesText(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Version,
		// Every subcommand's flags, before it runs.
		PersistentPreRunE: refuseEmptyFlags,
	}
	groupCommand(root)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return invalid(err) })
	root.AddCommand(
		newPhaseCmd(gs, run.Load),
		newPhaseCmd(gs, run.Run),
		newCapacityCmd(gs, false),
		newShellCmd(gs),
		newWorkloadsCmd(gs),
		newSchemaCmd(gs, "init"),
		newSchemaCmd(gs, "drop"),
		newDBsCmd(gs),
		newPropertiesCmd(gs),
		newAgentCmd(gs),
		newCoordinatorCmd(gs),
		newReportCmd(gs),
		newCompareCmd(gs),
		newSuiteCmd(gs), newSuitesCmd(gs),
		newCertsCmd(gs),
		newExitCodesTopic(),
	)
	strictHelp(root)
	return root
}

// strictHelp makes `ycsbctl help TOPIC` refuse a topic that names no
// command or help topic (exit 2, with the nearest names), where cobra's
// help command printed the root's help and exited 0: `help exit-code`
// looked like an answer. The help command stays cobra's own (its
// completion, its place in the listing); only what it runs changes.
func strictHelp(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, h := range root.Commands() {
		if h.Name() != "help" {
			continue
		}
		h.Run = nil
		h.RunE = func(h *cobra.Command, args []string) error {
			cmd, rest, err := h.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return unknownTopic(h.Root(), cmd, args, rest)
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		}
	}
}

// unknownTopic is the error for `help ARGS` where found (nil: nothing)
// is the deepest command the arguments name and rest what is left.
func unknownTopic(root, found *cobra.Command, args, rest []string) error {
	if found == nil {
		found = root
	}
	typed := strings.Join(args, " ")
	if len(rest) == 0 {
		return invalid(fmt.Errorf("unknown help topic %q (see %s --help)", typed, root.Name()))
	}
	var near []string
	for _, c := range found.Commands() {
		if c.Hidden || c.Name() == "help" || !(c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand()) {
			continue
		}
		if strings.HasPrefix(c.Name(), rest[0]) || editdist.Distance(c.Name(), rest[0]) <= 2 {
			near = append(near, strconv.Quote(strings.TrimPrefix(c.CommandPath(), root.Name()+" ")))
		}
	}
	msg := fmt.Sprintf("unknown help topic %q for %q", typed, found.CommandPath())
	if len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return invalid(fmt.Errorf("%s (see %s --help)", msg, found.CommandPath()))
}

package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/version"

	// Every binding registers itself.
	_ "github.com/ycsbctl/ycsbctl/adapters/all"
)

// DefaultDB is the binding used when a command names none.
const DefaultDB = "embedded"

// Execute runs the command line in gs and returns the process exit code.
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
	root := newRootCmd(gs)
	root.SetArgs(args)
	root.SetIn(gs.Stdin)
	root.SetOut(gs.Stdout)
	root.SetErr(gs.Stderr)
	err = root.ExecuteContext(gs.Ctx)
	if err == nil {
		return int(exitcode.OK)
	}
	var ce *exitcode.Error
	code := exitcode.Failure
	if errors.As(err, &ce) {
		code = ce.Code
	} else if isUsageError(err) {
		code = exitcode.InvalidConfig
	}
	var pe *properties.Error
	if errors.As(err, &pe) {
		code = exitcode.InvalidConfig
	}
	if code != exitcode.OK || err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintf(gs.Stderr, "Error: %v\n", err)
		}
	}
	return int(code)
}

// errSilent marks an error whose message was already printed.
var errSilent = errors.New("already reported")

func isUsageError(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "unknown command", "accepts ", "requires "} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func invalid(err error) error { return exitcode.Wrap(exitcode.InvalidConfig, err) }

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
once (agent, coordinator), with exactly merged HDR latency histograms.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Version,
	}
	root.AddCommand(
		newBenchCmd(gs, "load"),
		newBenchCmd(gs, "run"),
		newShellCmd(gs),
		newWorkloadsCmd(gs),
		newSchemaCmd(gs, "init"),
		newSchemaCmd(gs, "drop"),
		newDBsCmd(gs),
	)
	for _, extra := range extraCommands {
		root.AddCommand(extra(gs))
	}
	return root
}

// extraCommands lets other files (distributed commands, reports) add
// their commands without touching the root.
var extraCommands []func(gs *GlobalState) *cobra.Command

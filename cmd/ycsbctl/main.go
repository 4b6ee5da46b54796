// Command ycsbctl is a distributed, YCSB-compatible benchmark for NoSQL
// databases. See `ycsbctl --help`.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/ycsbctl/ycsbctl/internal/cli"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
)

func main() {
	os.Exit(runMain())
}

// runMain runs the CLI with the optional diagnostics of the environment
// (YCSBCTL_CPUPROFILE, YCSBCTL_RUNTIMESTATS) around it and returns the
// exit code.
func runMain() int {
	// A closed stdout is an error the commands handle (a run stops
	// gracefully and keeps its record), never a silent death by SIGPIPE:
	// with SIGPIPE received, writes to a closed pipe fail with EPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	if path := os.Getenv("YCSBCTL_RUNTIMESTATS"); path != "" {
		defer func() {
			if err := writeRuntimeStats(path); err != nil {
				fmt.Fprintf(os.Stderr, "YCSBCTL_RUNTIMESTATS: %v\n", err)
			}
		}()
	}
	// YCSBCTL_CPUPROFILE=file profiles the whole process, for finding
	// where the harness spends its time.
	if path := os.Getenv("YCSBCTL_CPUPROFILE"); path != "" {
		f, err := outfile.Create(path, 0o644)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			code := cli.Execute(cli.NewGlobalState())
			pprof.StopCPUProfile()
			if err := f.Commit(); err != nil {
				fmt.Fprintf(os.Stderr, "YCSBCTL_CPUPROFILE: %s is incomplete: %v\n", path, err)
			}
			return code
		}
		fmt.Fprintf(os.Stderr, "YCSBCTL_CPUPROFILE: cannot profile to %s: %v\n", path, err)
	}
	return cli.Execute(cli.NewGlobalState())
}

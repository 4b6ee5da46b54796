// Command ycsbctl is a distributed, YCSB-compatible benchmark for NoSQL
// databases. See `ycsbctl --help`.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/ycsbctl/ycsbctl/internal/cli"
)

func main() {
	// YCSBCTL_CPUPROFILE=file profiles the whole process, for finding
	// where the harness spends its time.
	if path := os.Getenv("YCSBCTL_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			code := cli.Execute(cli.NewGlobalState())
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "YCSBCTL_CPUPROFILE: %s is incomplete: %v\n", path, err)
			}
			os.Exit(code)
		}
		fmt.Fprintf(os.Stderr, "YCSBCTL_CPUPROFILE: cannot profile to %s: %v\n", path, err)
	}
	os.Exit(cli.Execute(cli.NewGlobalState()))
}

package main

import (
	"fmt"
	"runtime/metrics"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/outfile"
)

// runtimeStatNames are the runtime/metrics counters that explain client CPU
// per operation against a real database: heap allocations (GC work),
// goroutines created and scheduling events (goroutine hand-offs between a
// worker and a driver's connection goroutines), and the GC's own CPU.
var runtimeStatNames = []string{
	"/gc/heap/allocs:objects",
	"/gc/heap/tiny/allocs:objects",
	"/gc/heap/allocs:bytes",
	"/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/user:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/sched/goroutines-created:goroutines",
	"/sched/latencies:seconds",
	"/sched/threads/total:threads",
	"/sched/gomaxprocs:threads",
}

// writeRuntimeStats writes the counters above as "name value" lines to
// path (YCSBCTL_RUNTIMESTATS). For /sched/latencies the value is the number
// of samples: the runtime records one in every 8 transitions of a goroutine
// to running, so 8x that count approximates the scheduling events.
// scripts/bench-dbs.sh divides these totals by the operations of the run.
func writeRuntimeStats(path string) error {
	samples := make([]metrics.Sample, len(runtimeStatNames))
	for i, n := range runtimeStatNames {
		samples[i].Name = n
	}
	metrics.Read(samples)
	var b strings.Builder
	for _, s := range samples {
		switch s.Value.Kind() {
		case metrics.KindUint64:
			fmt.Fprintf(&b, "%s %d\n", s.Name, s.Value.Uint64())
		case metrics.KindFloat64:
			fmt.Fprintf(&b, "%s %g\n", s.Name, s.Value.Float64())
		case metrics.KindFloat64Histogram:
			var n uint64
			for _, c := range s.Value.Float64Histogram().Counts {
				n += c
			}
			fmt.Fprintf(&b, "%s %d\n", s.Name, n)
		}
	}
	return outfile.Write(path, []byte(b.String()), 0o644)
}

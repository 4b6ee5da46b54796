//go:build robustness

package robustness

// Every figure of a bundle agrees with every other (docs/results.md):
// each interval's operations with its agents' and its series' calls,
// their sum with the summary's, the agents' own counts, summary.txt's
// per-operation counts and merged.hlog's histograms. The same checks as
// cmd/ycsbctl's checkBundleCounts and TestCountsAgreeEverywhere, applied
// to whatever a history left, recovered bundles included.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// callCount sums the series that are a transaction's one call: every
// operation's, failures included, but not CLEANUP nor the intended-time
// copies.
func callCount(series []bundle.SeriesStats) int64 {
	var n int64
	for _, s := range series {
		if strings.HasPrefix(s.Series, "CLEANUP") || strings.HasPrefix(s.Series, "Intended-") {
			continue
		}
		n += s.Count
	}
	return n
}

var summaryOps = regexp.MustCompile(`(?m)^\[([A-Za-z-]+)\], Operations, (\d+)$`)

// textOperations sums summary.txt's per-operation counts.
func textOperations(text string) int64 {
	var n int64
	for _, m := range summaryOps.FindAllStringSubmatch(text, -1) {
		if m[1] == "CLEANUP" || m[1] == "OVERALL" || strings.HasPrefix(m[1], "Intended-") {
			continue
		}
		v, _ := strconv.ParseInt(m[2], 10, 64)
		n += v
	}
	return n
}

// bundleCounts lists every disagreement among a bundle's figures.
func bundleCounts(dir string) []string {
	b, err := bundle.Read(dir)
	if err != nil {
		return []string{err.Error()}
	}
	run := b.Run
	var out []string
	if _, err := os.Stat(filepath.Join(dir, bundle.FileSummary)); err != nil {
		out = append(out, "summary.txt: "+err.Error())
	}
	differ := func(what string, got, want int64) {
		if got != want {
			out = append(out, fmt.Sprintf("%s: %d, the summary's operations %d", what, got, want))
		}
	}
	ops := run.Summary.Operations
	var sum int64
	for _, iv := range run.Intervals {
		sum += iv.Operations
		var agents int64
		for _, a := range iv.Agents {
			agents += a.Operations
		}
		if agents != iv.Operations || callCount(iv.Series) != iv.Operations {
			out = append(out, fmt.Sprintf("interval %d: %d operations, its agents' %d, its series' calls %d", iv.Seq, iv.Operations, agents, callCount(iv.Series)))
		}
	}
	differ("sum of the intervals", sum, ops)
	differ("calls of the summary's series", callCount(run.Summary.Series), ops)
	var agents int64
	for _, a := range run.Agents {
		agents += a.Operations
	}
	differ("agents' operations", agents, ops)
	differ("summary.txt's per-operation counts", textOperations(b.Summary), ops)
	hs, err := b.Histograms()
	if err != nil {
		return append(out, "merged.hlog: "+err.Error())
	}
	var calls int64
	for sr, h := range hs.All {
		if sr.Op() != measurement.Cleanup && sr.Kind() == measurement.Service {
			calls += h.TotalCount()
		}
	}
	differ("merged.hlog's calls", calls, ops)
	return out
}

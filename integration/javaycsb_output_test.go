//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The golden files of internal/sink/ycsbtext are written by ycsbctl itself;
// this test holds ycsbctl's output to the real thing instead: Java YCSB's
// own client (site.ycsb:core:0.17.0, BasicDB) and `ycsbctl run basic` run
// the same workload with the same properties, and their summaries and
// status lines are compared line by line. Latencies differ between any two
// runs, so they are compared by form and internal consistency; everything
// else (metric names, line order within a block, counts, number formats)
// must match, and each intended difference is asserted explicitly.

// javaYCSBClasspath fetches Java YCSB's core from Maven Central (cached in
// .servers/javaycsb) with the interoperability test's script.
func javaYCSBClasspath(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(interopRoot(t), "integration", "scripts", "javaycsb.sh")).Output()
	require.NoError(t, err, "fetching Java YCSB core from Maven Central")
	return strings.TrimSpace(string(out))
}

// javaBinary prefers $JAVA_HOME (JDK 17 here; JDK 25 is also installed).
func javaBinary() string {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		return filepath.Join(h, "bin", "java")
	}
	return "java"
}

// summaryLine is one exporter record: [metric], measurement, value. raw
// keeps the value exactly as printed.
type summaryLine struct {
	Metric, Measurement, Raw string
}

var textLineRe = regexp.MustCompile(`^\[([^\]]+)\], ([^,]+), (.+)$`)

func parseTextExport(t *testing.T, who, out string) []summaryLine {
	t.Helper()
	var lines []summaryLine
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		m := textLineRe.FindStringSubmatch(l)
		require.NotNil(t, m, "%s: stdout line is not an exporter line: %q", who, l)
		lines = append(lines, summaryLine{m[1], m[2], m[3]})
	}
	return lines
}

// parseJSONArrayExport reads JSONArrayMeasurementsExporter output, keeping
// each value's JSON token as printed.
func parseJSONArrayExport(t *testing.T, who, out string) []summaryLine {
	t.Helper()
	var objs []struct {
		Metric      string          `json:"metric"`
		Measurement string          `json:"measurement"`
		Value       json.RawMessage `json:"value"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &objs), "%s: JSON array exporter output is one JSON document", who)
	var lines []summaryLine
	for _, o := range objs {
		lines = append(lines, summaryLine{o.Metric, o.Measurement, string(o.Value)})
	}
	return lines
}

// Number formats. Java prints longs plainly and doubles with
// Double.toString: at least one fractional digit, E notation outside
// [1e-3, 1e7).
var (
	javaLongRe   = regexp.MustCompile(`^-?\d+$`)
	javaDoubleRe = regexp.MustCompile(`^(-?\d+\.\d+(E-?\d+)?|NaN|Infinity)$`)
)

// jvmMetric reports the JVM's garbage-collector lines, which only Java has.
func jvmMetric(metric string) bool {
	return strings.HasPrefix(metric, "TOTAL_GC")
}

// block is one measurement's lines in order.
type block struct {
	name  string
	lines []summaryLine
}

func (b block) measurements() []string {
	var out []string
	for _, l := range b.lines {
		out = append(out, l.Measurement)
	}
	return out
}

func (b block) long(t *testing.T, who, meas string) int64 {
	t.Helper()
	for _, l := range b.lines {
		if l.Measurement == meas {
			require.Regexp(t, javaLongRe, l.Raw, "%s [%s] %s", who, b.name, meas)
			n, err := strconv.ParseInt(l.Raw, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("%s: [%s] has no %s", who, b.name, meas)
	return 0
}

// splitBlocks groups lines by metric, in first-appearance order, and
// checks that each metric's lines are contiguous.
func splitBlocks(t *testing.T, who string, lines []summaryLine) []block {
	t.Helper()
	var out []block
	for _, l := range lines {
		if n := len(out); n > 0 && out[n-1].name == l.Metric {
			out[n-1].lines = append(out[n-1].lines, l)
			continue
		}
		for _, b := range out {
			require.NotEqual(t, b.name, l.Metric, "%s: [%s] lines are not contiguous", who, l.Metric)
		}
		out = append(out, block{name: l.Metric, lines: []summaryLine{l}})
	}
	return out
}

// percentileNames are the summary lines hdrhistogram.percentiles asks for,
// named as YCSB names them (ordinal for integers, raw otherwise).
func percentileNames(percentiles []string) []string {
	var out []string
	for _, p := range percentiles {
		if _, err := strconv.Atoi(p); err == nil {
			out = append(out, p+ordinal(p)+"PercentileLatency(us)")
		} else {
			out = append(out, p+"PercentileLatency(us)")
		}
	}
	return out
}

func ordinal(p string) string {
	n, _ := strconv.Atoi(p)
	if n%100 >= 11 && n%100 <= 13 {
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

// checkOpBlock checks one measurement block by itself: its line sequence
// is YCSB's, every value is in Java's format, and the latencies are
// consistent (min <= percentiles ascending <= max, min <= avg <= max).
func checkOpBlock(t *testing.T, who string, b block, pnames []string) {
	t.Helper()
	want := append([]string{"Operations", "AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)"}, pnames...)
	meas := b.measurements()
	require.GreaterOrEqual(t, len(meas), len(want), "%s [%s]: %v", who, b.name, meas)
	require.Equal(t, want, meas[:len(want)], "%s [%s]: line sequence", who, b.name)
	for _, m := range meas[len(want):] {
		require.True(t, strings.HasPrefix(m, "Return="), "%s [%s]: unexpected line %s", who, b.name, m)
	}
	ops := b.long(t, who, "Operations")
	require.Greater(t, ops, int64(0), "%s [%s] Operations", who, b.name)
	avgRaw := b.lines[1].Raw
	require.Regexp(t, javaDoubleRe, avgRaw, "%s [%s] AverageLatency(us) is a Java double", who, b.name)
	avg, err := strconv.ParseFloat(avgRaw, 64)
	require.NoError(t, err)
	lo, hi := b.long(t, who, "MinLatency(us)"), b.long(t, who, "MaxLatency(us)")
	require.LessOrEqual(t, lo, hi, "%s [%s] min <= max", who, b.name)
	require.True(t, float64(lo) <= avg+1 && avg <= float64(hi)+1, "%s [%s] min %d <= avg %v <= max %d (within the 1 µs truncation)", who, b.name, lo, avg, hi)
	prev := lo
	for _, p := range pnames {
		v := b.long(t, who, p)
		require.True(t, prev <= v && v <= hi, "%s [%s] %s = %d out of order (previous %d, max %d)", who, b.name, p, v, prev, hi)
		prev = v
	}
	var returns int64
	for _, l := range b.lines[len(want):] {
		returns += b.long(t, who, l.Measurement)
	}
	if b.name == "CLEANUP" {
		assert.Zero(t, returns, "%s: CLEANUP has no Return= lines", who)
	} else {
		assert.Equal(t, ops, returns, "%s [%s]: Return= counts add up to Operations", who, b.name)
	}
}

// compareSummaries compares Java's and ycsbctl's exporter records.
func compareSummaries(t *testing.T, java, ours []summaryLine, percentiles []string, threads, opCount int64, sameCounts bool) {
	t.Helper()
	pnames := percentileNames(percentiles)
	jb, gb := splitBlocks(t, "java", java), splitBlocks(t, "ycsbctl", ours)

	// [OVERALL] comes first in both: RunTime(ms) a long, Throughput a
	// Java double.
	for who, bs := range map[string][]block{"java": jb, "ycsbctl": gb} {
		require.Equal(t, "OVERALL", bs[0].name, who)
		require.Equal(t, []string{"RunTime(ms)", "Throughput(ops/sec)"}, bs[0].measurements(), who)
		require.Regexp(t, javaLongRe, bs[0].lines[0].Raw, "%s RunTime(ms)", who)
		require.Regexp(t, javaDoubleRe, bs[0].lines[1].Raw, "%s Throughput(ops/sec) is a Java double", who)
	}

	// Intended difference: the JVM's garbage-collector blocks
	// ([TOTAL_GCS_<collector>], [TOTAL_GC_TIME...]) come right after
	// [OVERALL] in Java's output; ycsbctl has no JVM and prints none.
	var jOps []block
	sawGC := false
	for _, b := range jb[1:] {
		if jvmMetric(b.name) {
			require.False(t, len(jOps) > 0, "java: GC block [%s] after the operation blocks", b.name)
			sawGC = true
			continue
		}
		jOps = append(jOps, b)
	}
	require.True(t, sawGC, "java prints its JVM's GC blocks")
	for _, b := range gb {
		require.False(t, jvmMetric(b.name), "ycsbctl prints no JVM block, got [%s]", b.name)
	}
	gOps := gb[1:]

	// The same operation blocks. Java orders them by ConcurrentHashMap
	// iteration (arbitrary); ycsbctl uses a fixed order, operations as
	// YCSB enumerates them and CLEANUP last.
	names := func(bs []block) []string {
		var out []string
		for _, b := range bs {
			out = append(out, b.name)
		}
		return out
	}
	jn, gn := names(jOps), names(gOps)
	require.ElementsMatch(t, jn, gn, "same measurement blocks")
	order := []string{"READ", "UPDATE", "INSERT", "SCAN", "DELETE", "READ-MODIFY-WRITE", "VERIFY", "CLEANUP"}
	require.True(t, slices.IsSortedFunc(gn, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) }), "ycsbctl block order %v", gn)
	require.Equal(t, "CLEANUP", gn[len(gn)-1])

	jByName := map[string]block{}
	for _, b := range jOps {
		jByName[b.name] = b
	}
	var jTotal, gTotal int64
	for _, g := range gOps {
		j := jByName[g.name]
		checkOpBlock(t, "java", j, pnames)
		checkOpBlock(t, "ycsbctl", g, pnames)
		// Same lines in the same order within the block, Return= lines
		// included.
		require.Equal(t, j.measurements(), g.measurements(), "[%s] lines", g.name)
		jo, gop := j.long(t, "java", "Operations"), g.long(t, "ycsbctl", "Operations")
		if g.name == "CLEANUP" {
			// One per client thread.
			assert.Equal(t, threads, jo, "java CLEANUP operations")
			assert.Equal(t, threads, gop, "ycsbctl CLEANUP operations")
			continue
		}
		jTotal += jo
		gTotal += gop
		if sameCounts {
			assert.Equal(t, jo, gop, "[%s] Operations", g.name)
			for _, l := range g.lines[4+len(pnames):] {
				assert.Equal(t, j.long(t, "java", l.Measurement), g.long(t, "ycsbctl", l.Measurement), "[%s] %s", g.name, l.Measurement)
			}
		}
	}
	assert.Equal(t, opCount, jTotal, "java: operations over all blocks")
	assert.Equal(t, opCount, gTotal, "ycsbctl: operations over all blocks")
}

// statusLineRe is derived from Java YCSB 0.17.0's status line, e.g.
//
//	2026-11-23 00:04:28:147 0 sec: 3223 operations; ∞ current ops/sec; est completion in 0 second [READ: Count=1573, Max=1868, Min=0, Avg=1.51, 90=0, 99=0, 99.9=23, 99.99=1868] [UPDATE: ...]
//
// with ", 50=<n>" optional in the brackets, and Java's rendering of a
// series without operations in the interval (Count=0, Min=Long.MAX_VALUE,
// Avg=NaN; see below).
var (
	statusLineRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}:\d{3} (\d+) sec: (\d+) operations; ` +
		`(?:(?:\d+(?:\.\d{1,2})?|∞) current ops/sec; )?` +
		`(?:est completion in ((?:\d+ (?:days?|hours?|minutes?|seconds?) )+))?` +
		`((?:\[[A-Z][A-Z-]*: Count=\d+, Max=\d+, Min=\d+, Avg=(?:\d+(?:\.\d{1,2})?|NaN), (?:50=\d+, )?90=\d+, 99=\d+, 99\.9=\d+, 99\.99=\d+\] )*)$`)
	remainingSecondsRe = regexp.MustCompile(`^(\d+) (seconds?) $`)
)

// checkStatusLines checks every status line on stderr against Java's
// format.
func checkStatusLines(t *testing.T, who, stderr string, opCount int64, with50 bool) {
	t.Helper()
	var last []string
	n, withRate, withEstimate, withBrackets := 0, 0, 0, 0
	for _, l := range strings.Split(stderr, "\n") {
		if !regexp.MustCompile(`^\d{4}-\d{2}-\d{2} `).MatchString(l) {
			continue
		}
		n++
		m := statusLineRe.FindStringSubmatch(l)
		require.NotNil(t, m, "%s status line does not have Java YCSB's format:\n%s", who, l)
		last = m
		if strings.Contains(l, " current ops/sec; ") {
			withRate++
		}
		if m[3] != "" {
			withEstimate++
		}
		if m[4] != "" {
			withBrackets++
		}
		// Intended difference: YCSB 0.17.0 prints 90/99/99.9/99.99 in the
		// brackets; ycsbctl also prints 50=, as YCSB's master branch does.
		if m[4] != "" {
			assert.Equal(t, with50, strings.Contains(m[4], ", 50="), "%s brackets with 50=: %s", who, l)
		}
		// Intended difference: Java prints a bracket for every series it
		// has seen, even with no operation in the interval ("Count=0,
		// Max=0, Min=9223372036854775807, Avg=NaN"); ycsbctl leaves such
		// series out.
		if with50 {
			assert.NotContains(t, m[4], "Count=0,", "%s prints no empty series: %s", who, l)
		} else if strings.Contains(m[4], "Count=0,") {
			assert.Contains(t, m[4], "Count=0, Max=0, Min=9223372036854775807, Avg=NaN,", "java's empty series: %s", l)
		}
		// Java's RemainingFormatter says "second" after a one-digit
		// count and "seconds" after more digits.
		if sm := remainingSecondsRe.FindStringSubmatch(m[3]); sm != nil {
			want := "seconds"
			if len(sm[1]) == 1 {
				want = "second"
			}
			assert.Equal(t, want, sm[2], "%s: est completion in %q", who, m[3])
		}
	}
	require.GreaterOrEqual(t, n, 3, "%s printed too few status lines:\n%s", who, stderr)
	assert.GreaterOrEqual(t, withRate, 2, "%s: status lines with a current rate", who)
	assert.GreaterOrEqual(t, withEstimate, 1, "%s: status lines with a completion estimate", who)
	assert.GreaterOrEqual(t, withBrackets, 2, "%s: status lines with per-operation brackets", who)
	assert.Equal(t, strconv.FormatInt(opCount, 10), last[2], "%s: the last status line counts every operation", who)
}

type toolRun struct {
	stdout, stderr string
}

func runTool(t *testing.T, name string, args ...string) toolRun {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "%s %s\n%s", name, strings.Join(args, " "), errb.String())
	return toolRun{out.String(), errb.String()}
}

func TestJavaYCSBOutputFormat(t *testing.T) {
	if os.Getenv("YCSBCTL_SKIP_JAVAYCSB") == "1" {
		t.Skip("YCSBCTL_SKIP_JAVAYCSB=1")
	}
	root := interopRoot(t)
	cp := javaYCSBClasspath(t)
	bin := interopBinary(t)
	// -target stretches each run over about three seconds, so that both
	// tools print several status lines with a rate and a completion
	// estimate.
	const threads, records, ops, target = 2, 1000, 6000, 2000
	cases := []struct {
		name        string
		workload    string
		percentiles []string
		exporter    string
		// sameCounts: a single-operation mix gives both tools the same
		// per-operation counts.
		sameCounts bool
	}{
		{"workloada", "workloada", []string{"50", "90", "99", "99.9"}, "", false},
		{"workloadc", "workloadc", []string{"50", "95", "99"}, "", true},
		{"workloade", "workloade", []string{"50", "99", "99.9", "99.99"}, "", false},
		{"workloada-jsonarray", "workloada", []string{"50", "99", "99.9"}, "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter", false},
		{"workloadc-jsonarray", "workloadc", []string{"1", "2", "3", "11", "99.9"}, "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			common := []string{"-P", filepath.Join(root, "workloads", tc.workload),
				"-p", "basicdb.verbose=false", "-p", "recordcount=" + strconv.Itoa(records), "-p", "operationcount=" + strconv.Itoa(ops),
				"-p", "hdrhistogram.percentiles=" + strings.Join(tc.percentiles, ","), "-threads", strconv.Itoa(threads), "-target", strconv.Itoa(target), "-s", "-p", "status.interval=1"}
			if tc.exporter != "" {
				common = append(common, "-p", "exporter="+tc.exporter)
			}
			java := runTool(t, javaBinary(), append([]string{"-cp", cp, "site.ycsb.Client", "-t", "-db", "site.ycsb.BasicDB"}, common...)...)
			ours := runTool(t, bin, append([]string{"run", "basic"}, common...)...)

			var jl, gl []summaryLine
			if tc.exporter == "" {
				jl, gl = parseTextExport(t, "java", java.stdout), parseTextExport(t, "ycsbctl", ours.stdout)
			} else {
				jl, gl = parseJSONArrayExport(t, "java", java.stdout), parseJSONArrayExport(t, "ycsbctl", ours.stdout)
			}
			compareSummaries(t, jl, gl, tc.percentiles, threads, ops, tc.sameCounts)
			checkStatusLines(t, "java", java.stderr, ops, false)
			checkStatusLines(t, "ycsbctl", ours.stderr, ops, true)

			// Both echo the command line on stderr; the banner differs
			// by design (ycsbctl names itself and its version).
			assert.Contains(t, java.stderr, "YCSB Client 0.17.0")
			assert.Regexp(t, `(?m)^ycsbctl \S+$`, ours.stderr)
			for who, s := range map[string]string{"java": java.stderr, "ycsbctl": ours.stderr} {
				assert.Regexp(t, `(?m)^Command line: .*-threads 2`, s, who)
				assert.Contains(t, s, "Loading workload...", who)
				assert.Contains(t, s, "Starting test.", who)
			}
			t.Logf("java blocks %v; ycsbctl blocks %v", blockNames(jl), blockNames(gl))
		})
	}
}

func blockNames(lines []summaryLine) []string {
	var out []string
	for _, l := range lines {
		if len(out) == 0 || out[len(out)-1] != l.Metric {
			out = append(out, l.Metric)
		}
	}
	return out
}

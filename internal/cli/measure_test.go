package cli_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
)

// summaryValues maps "[METRIC], Measurement" to its value text.
func summaryValues(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "[") {
			continue
		}
		i := strings.LastIndex(line, ", ")
		if i < 0 {
			continue
		}
		m[line[:i]] = line[i+2:]
	}
	return m
}

func intValue(t *testing.T, vals map[string]string, key string) int64 {
	t.Helper()
	v, ok := vals[key]
	require.True(t, ok, "summary line %q missing", key)
	n, err := strconv.ParseInt(v, 10, 64)
	require.NoError(t, err, key)
	return n
}

// TestMeasurementHistogram: measurementtype=histogram prints YCSB's
// OneMeasurementHistogram block, with every bucket under verbose, and
// its status lines.
func TestMeasurementHistogram(t *testing.T) {
	r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=3000", "-p", "basicdb.simulatedelay=2",
		"-threads", "8", "-p", "measurementtype=histogram", "-p", "histogram.buckets=2", "-p", "measurement.histogram.verbose=true",
		"-s", "-p", "status.interval=0.2")...)
	require.Equal(t, 0, r.code, r.stderr)
	vals := summaryValues(r.stdout)
	for _, op := range []string{"READ", "UPDATE"} {
		n := intValue(t, vals, "["+op+"], Operations")
		assert.Equal(t, n, intValue(t, vals, "["+op+"], Return=OK"))
		for _, k := range []string{"AverageLatency(us)", "LatencyVariance(us)"} {
			_, err := strconv.ParseFloat(vals["["+op+"], "+k], 64)
			assert.NoError(t, err, k)
		}
		// Delays of 0..2 ms: two 1 ms buckets and the overflow hold
		// every operation.
		sum := intValue(t, vals, "["+op+"], 0") + intValue(t, vals, "["+op+"], 1") + intValue(t, vals, "["+op+"], >2")
		assert.Equal(t, n, sum, op+" buckets")
		assert.Positive(t, intValue(t, vals, "["+op+"], >2"), "2 ms sleeps overflow two buckets")
		assert.NotContains(t, vals, "["+op+"], 50thPercentileLatency(us)")
		assert.NotContains(t, vals, "["+op+"], 2")
		assert.GreaterOrEqual(t, intValue(t, vals, "["+op+"], MaxLatency(us)"), intValue(t, vals, "["+op+"], MinLatency(us)"))
	}
	assert.Equal(t, int64(3000), intValue(t, vals, "[READ], Operations")+intValue(t, vals, "[UPDATE], Operations"))
	assert.Regexp(t, `\[READ AverageLatency\(us\)=[0-9.]+\]`, r.stderr, "status line in the histogram's style")
	assert.NotContains(t, r.stderr, "[READ: Count=")
}

// TestMeasurementRaw: measurementtype=raw writes every sample to
// measurement.raw.output_file (appending, as YCSB) and prints the raw
// summary with the count of samples it could not write.
func TestMeasurementRaw(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "raw.csv")
	require.NoError(t, os.WriteFile(file, []byte("kept\n"), 0o644))
	r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=20000", "-threads", "3",
		"-p", "measurementtype=raw", "-p", "measurement.raw.output_file="+file, "-s")...)
	require.Equal(t, 0, r.code, r.stderr)
	vals := summaryValues(r.stdout)
	reads := intValue(t, vals, "[READ], Total Operations")
	updates := intValue(t, vals, "[UPDATE], Total Operations")
	assert.Equal(t, int64(20000), reads+updates)
	assert.Equal(t, "-1", vals["[READ], Below is a summary of latency in microseconds:"])
	for _, k := range []string{"Min", "Max", "p1", "p5", "p50", "p90", "p95", "p99", "p99.9", "p99.99"} {
		intValue(t, vals, "[READ], "+k)
	}
	assert.Equal(t, reads, intValue(t, vals, "[READ], Return=OK"))
	dropped := regexp.MustCompile(`(?m)^\[NOTE\], measurementtype: (\d+) raw samples dropped`).FindStringSubmatch(r.stdout)
	require.NotNil(t, dropped, "the dropped count is always reported:\n%s", r.stdout)
	assert.Contains(t, r.stderr, "Raw data measurement: will output to result file: "+file)
	assert.Regexp(t, `READ count: \d+, average latency\(us\): \d+\.\d\d`, r.stderr, "status line in the raw style")

	f, err := os.Open(file)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	require.True(t, sc.Scan())
	assert.Equal(t, "kept", sc.Text(), "the file is appended to")
	sample := regexp.MustCompile(`^(READ|UPDATE|CLEANUP),(\d{13}),(\d+)$`)
	counts := map[string]int64{}
	headers := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, " latency raw data: op, timestamp(ms), latency(us)") {
			headers++
			continue
		}
		g := sample.FindStringSubmatch(line)
		require.NotNil(t, g, "raw line %q", line)
		counts[g[1]]++
	}
	assert.Equal(t, 3, headers, "one header per measurement")
	n, _ := strconv.ParseInt(dropped[1], 10, 64)
	assert.Equal(t, reads+updates+3, counts["READ"]+counts["UPDATE"]+counts["CLEANUP"]+n, "every sample written or counted as dropped")
	assert.Equal(t, int64(3), counts["CLEANUP"], "one CLEANUP per thread")

	// measurement.raw.no_summary keeps only the count and return codes.
	r = execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=100",
		"-p", "measurementtype=raw", "-p", "measurement.raw.output_file="+file, "-p", "measurement.raw.no_summary=true")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "[READ], Total Operations, ")
	assert.Contains(t, r.stdout, "[READ], Return=OK, ")
	assert.NotContains(t, r.stdout, "p99")
	assert.NotContains(t, r.stdout, "Below is a summary")
}

// TestMeasurementCombined: hdrhistogram+histogram and hdrhistogram+raw
// print both halves under YCSB's Hdr/Bucket/Raw names; return codes go
// with the HdrHistogram half only, as YCSB's TwoInOneMeasurement does.
func TestMeasurementCombined(t *testing.T) {
	dir := t.TempDir()
	r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=1000", "-p", "measurementtype=hdrhistogram+histogram",
		"-p", "hdrhistogram.percentiles=90,99.9", "-s")...)
	require.Equal(t, 0, r.code, r.stderr)
	vals := summaryValues(r.stdout)
	n := intValue(t, vals, "[HdrREAD], Operations")
	assert.Equal(t, n, intValue(t, vals, "[BucketREAD], Operations"))
	assert.Equal(t, n, intValue(t, vals, "[HdrREAD], Return=OK"))
	intValue(t, vals, "[HdrREAD], 90thPercentileLatency(us)")
	intValue(t, vals, "[HdrREAD], 99.9PercentileLatency(us)")
	assert.NotContains(t, vals, "[HdrREAD], 50thPercentileLatency(us)")
	assert.Contains(t, vals, "[BucketREAD], LatencyVariance(us)")
	assert.NotContains(t, vals, "[BucketREAD], Return=OK")
	assert.NotContains(t, vals, "[READ], Operations")
	assert.Contains(t, r.stderr, "[HdrREAD: Count=")
	assert.Contains(t, r.stderr, "\n[BucketREAD AverageLatency(us)=", "YCSB joins the two halves with a line break")

	raw := filepath.Join(dir, "raw.csv")
	r = execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=1000", "-p", "measurementtype=hdrhistogram+raw",
		"-p", "measurement.raw.output_file="+raw)...)
	require.Equal(t, 0, r.code, r.stderr)
	vals = summaryValues(r.stdout)
	n = intValue(t, vals, "[HdrUPDATE], Operations")
	assert.Equal(t, n, intValue(t, vals, "[RawUPDATE], Total Operations"))
	assert.Equal(t, n, intValue(t, vals, "[HdrUPDATE], Return=OK"))
	assert.NotContains(t, vals, "[RawUPDATE], Return=OK")
	b, err := os.ReadFile(raw)
	require.NoError(t, err)
	assert.Contains(t, string(b), "RawUPDATE latency raw data: op, timestamp(ms), latency(us)\n")
	assert.Equal(t, int(n), strings.Count(string(b), "\nRawUPDATE,"))
}

// TestErrorNaming: failed calls go to <OP>-FAILED, or to <OP>-<STATUS>
// with reportlatencyforeacherror or latencytrackederrors, as YCSB's
// DBWrapper names them. Reads of an empty embedded store fail NOT_FOUND.
func TestErrorNaming(t *testing.T) {
	run := func(extra ...string) map[string]string {
		args := append([]string{"run", "embedded", "-P", "workloadc", "-p", "embedded.dir=" + t.TempDir(), "-p", "recordcount=100",
			"-p", "operationcount=300"}, extra...)
		r := execute(t, "", args...)
		// Every read fails, which exits 5 by default: this test is about
		// the names the failures are recorded under.
		require.Equal(t, int(exitcode.DBErrors), r.code, r.stderr)
		return summaryValues(r.stdout)
	}
	vals := run()
	assert.Equal(t, int64(300), intValue(t, vals, "[READ-FAILED], Operations"))
	assert.Equal(t, int64(300), intValue(t, vals, "[READ], Return=NOT_FOUND"))
	assert.Equal(t, int64(0), intValue(t, vals, "[READ], Operations"), "no successful read")

	vals = run("-p", "reportlatencyforeacherror=true", "-p", "measurement.interval=both")
	assert.Equal(t, int64(300), intValue(t, vals, "[READ-NOT_FOUND], Operations"))
	assert.Equal(t, int64(300), intValue(t, vals, "[Intended-READ-NOT_FOUND], Operations"))
	assert.NotContains(t, vals, "[READ-FAILED], Operations")

	vals = run("-p", "latencytrackederrors=ERROR,NOT_FOUND", "-p", "measurementtype=histogram")
	assert.Equal(t, int64(300), intValue(t, vals, "[READ-NOT_FOUND], Operations"))
	assert.Contains(t, vals, "[READ-NOT_FOUND], LatencyVariance(us)")
	assert.Equal(t, "NaN", vals["[READ], AverageLatency(us)"], "YCSB's empty histogram block")
	assert.Equal(t, "-1", vals["[READ], MinLatency(us)"])

	vals = run("-p", "latencytrackederrors=ERROR")
	assert.Equal(t, int64(300), intValue(t, vals, "[READ-FAILED], Operations"), "untracked statuses stay under -FAILED")
}

// TestHdrPerMeasurementLogs: hdrhistogram.fileoutput writes YCSB's
// <path><OP>.hdr per measurement (values in µs), besides ycsbctl's
// tagged combined log.
func TestHdrPerMeasurementLogs(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "run-")
	r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=3000", "-p", "target=6000",
		"-p", "status.interval=0.1", "-p", "hdrhistogram.fileoutput=true", "-p", "hdrhistogram.output.path="+prefix,
		"-p", "basicdb.simulatedelay=1")...)
	require.Equal(t, 0, r.code, r.stderr)
	ops := operations(r.stdout)
	require.FileExists(t, prefix+"ycsbctl.hlog")
	for _, op := range []string{"READ", "UPDATE", "CLEANUP"} {
		text, err := os.ReadFile(prefix + op + ".hdr")
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(text), "#[Logging for: "+op+"]\n#[Histogram log format version 1.3]\n#[StartTime: "), op)
		// Interval timestamps are relative to StartTime, as YCSB's are.
		assert.Regexp(t, `(?m)^\d{1,3}\.\d{3},\d+\.\d{3},\d+\.\d{3},HISTF`, string(text))
		assert.NotRegexp(t, `(?m)^\d{10}\.\d{3},`, string(text))
		f, err := os.Open(prefix + op + ".hdr")
		require.NoError(t, err)
		reader := hdrhistogram.NewHistogramLogReader(f)
		var total int64
		var maxUs, maxMedianUs int64
		intervals := 0
		for {
			h, err := reader.NextIntervalHistogram()
			require.NoError(t, err)
			if h == nil {
				break
			}
			intervals++
			total += h.TotalCount()
			maxUs = max(maxUs, h.Max())
			maxMedianUs = max(maxMedianUs, h.ValueAtQuantile(50))
			assert.Greater(t, h.StartTimeMs(), int64(1_600_000_000_000), "readers add the StartTime")
		}
		_ = f.Close()
		assert.Equal(t, ops[op], total, op)
		if op != "CLEANUP" {
			assert.Greater(t, intervals, 2)
			// Microseconds: the logs' largest value is the summary's
			// MaxLatency(us) (YCSB's unit) to HDR's precision, whatever
			// a loaded machine does to the sleeps; nanoseconds would be
			// a thousand times it.
			sumMax := intValue(t, summaryValues(r.stdout), "["+op+"], MaxLatency(us)")
			assert.InDelta(t, float64(sumMax), float64(maxUs), float64(sumMax)/100+1, "%s: values are microseconds", op)
			assert.Greater(t, maxMedianUs, int64(0), op)
		}
	}
}

// TestTrackRuntime: ycsbctl.trackruntime (and its alias
// measurement.trackjvm) adds the process series to the status line and
// YCSB-style totals and extremes to the summary.
func TestTrackRuntime(t *testing.T) {
	for _, prop := range []string{"ycsbctl.trackruntime=true", "measurement.trackjvm=true"} {
		r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=2000", "-p", "target=4000",
			"-p", "status.interval=0.1", "-s", "-p", prop)...)
		require.Equal(t, 0, r.code, r.stderr)
		for _, series := range []string{"GOROUTINES", "HEAP_IN_USE_MB", "GCS", "GCS_TIME"} {
			assert.Regexp(t, `\[`+series+`: Count=1, Max=\d+, Min=\d+`, r.stderr, prop)
		}
		vals := summaryValues(r.stdout)
		assert.Positive(t, intValue(t, vals, "[MAX_GOROUTINES], Count"))
		assert.LessOrEqual(t, intValue(t, vals, "[MIN_GOROUTINES], Count"), intValue(t, vals, "[MAX_GOROUTINES], Count"))
		assert.LessOrEqual(t, intValue(t, vals, "[MIN_HEAP_IN_USE_MB], MBs"), intValue(t, vals, "[MAX_HEAP_IN_USE_MB], MBs"))
		intValue(t, vals, "[TOTAL_GCs], Count")
		intValue(t, vals, "[TOTAL_GC_TIME], Time(ms)")
		assert.Contains(t, vals, "[TOTAL_GC_TIME_%], Time(%)")
		assert.Less(t, strings.Index(r.stdout, "[TOTAL_GCs]"), strings.Index(r.stdout, "[READ]"), "process lines come before the measurements")
	}
	r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=100")...)
	assert.NotContains(t, r.stdout, "GOROUTINES")
}

// TestCoordinatorMeasurementTypes runs the measurement types through a
// coordinator with two agents: everything computed from histograms merges
// across them; raw samples are written by each agent on its host.
func TestCoordinatorMeasurementTypes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agents := startAgent(t, ctx) + "," + startAgent(t, ctx)
	dir := t.TempDir()
	common := []string{"-P", "workloada", "-p", "recordcount=1000", "-p", "operationcount=4000", "-p", "basicdb.verbose=false", "-threads", "2"}

	r := execute(t, "", append([]string{"coordinator", "run", "basic", "--agents", agents, "-p", "measurementtype=hdrhistogram+histogram",
		"-p", "histogram.buckets=3", "-p", "measurement.histogram.verbose=true", "-p", "ycsbctl.trackruntime=true"}, common...)...)
	require.Equal(t, 0, r.code, r.stderr)
	vals := summaryValues(r.stdout)
	n := intValue(t, vals, "[BucketREAD], Operations")
	assert.Equal(t, n, intValue(t, vals, "[HdrREAD], Operations"))
	assert.Equal(t, int64(4000), n+intValue(t, vals, "[BucketUPDATE], Operations"), "both agents' operations")
	assert.Equal(t, n, intValue(t, vals, "[BucketREAD], 0")+intValue(t, vals, "[BucketREAD], 1")+intValue(t, vals, "[BucketREAD], 2")+intValue(t, vals, "[BucketREAD], >3"))
	assert.Contains(t, r.stdout, "[NOTE], ycsbctl.trackruntime: the runtime figures are the agents' own processes (2 reporting)")
	assert.Equal(t, int64(2), intValue(t, vals, "[RUNTIME_AGENTS], Count"))

	raw := filepath.Join(dir, "raw.csv")
	r = execute(t, "", append([]string{"coordinator", "run", "basic", "--agents", agents, "-p", "measurementtype=raw",
		"-p", "measurement.raw.output_file=" + raw}, common...)...)
	require.Equal(t, 0, r.code, r.stderr)
	vals = summaryValues(r.stdout)
	total := intValue(t, vals, "[READ], Total Operations") + intValue(t, vals, "[UPDATE], Total Operations")
	assert.Equal(t, int64(4000), total)
	intValue(t, vals, "[READ], p99.99")
	assert.Contains(t, r.stdout, "every agent wrote its raw samples on its own host")
	// Both in-process agents share this host, so both appended to the
	// one file: every sample (plus CLEANUP per thread) is there, lines
	// intact.
	b, err := os.ReadFile(raw)
	require.NoError(t, err)
	lines := regexp.MustCompile(`(?m)^(READ|UPDATE),\d{13},\d+$`).FindAllString(string(b), -1)
	assert.Equal(t, int(total), len(lines))

	// One agent: in-process agents would share the embedded store.
	one := strings.Split(agents, ",")[0]
	r = execute(t, "", "coordinator", "run", "embedded", "--agents", one, "-p", "embedded.dir="+t.TempDir(),
		"-P", "workloadc", "-p", "recordcount=100", "-p", "operationcount=200", "-p", "reportlatencyforeacherror=true",
		"-p", "ycsbctl.maxerrorrate=1")
	require.Equal(t, 0, r.code, r.stderr)
	vals = summaryValues(r.stdout)
	assert.Equal(t, int64(200), intValue(t, vals, "[READ-NOT_FOUND], Operations"), "per-status series cross the wire")
}

//go:build integration

package integration

import (
	"bytes"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
)

// Capacity searches against databases whose capacity is known: the basic
// adapter sleeping a fixed 2 ms per call with a fixed number of threads
// serves threads/2 ms and no more (each thread paces its own schedule, so
// below that every call takes 2 ms and above it the backlog grows without
// bound). Every search runs bin/ycsbctl as a real process, distributed
// ones with real agent processes.
//
// The machine is shared and loaded: probes are short but hold eight
// intervals each, the objective is far above the service time (a load
// spike on the host must not fail a probe below the knee; above the knee
// the backlog fails it within seconds anyway), and the precision asked for
// is 10%: the answer must land within it of the knee.

const (
	knownDelayMs = 2
	// knownPrecision is the search's --precision and the tolerance of the
	// answer around the knee.
	knownPrecision = 0.10
)

// knownKneeArgs are the flags of a search over basic with a fixed delay.
func knownKneeArgs(threads int, start float64, slo string, extra ...string) []string {
	return append([]string{"-P", "workloadc", "-threads", strconv.Itoa(threads),
		"-p", "basicdb.verbose=false", "-p", "basicdb.simulatedelay=" + strconv.Itoa(knownDelayMs), "-p", "basicdb.randomizedelay=false",
		"-s", "--slo", slo, "--probe", "4s", "--warmup", "1s", "--interval", "500ms",
		"--start", strconv.FormatFloat(start, 'f', -1, 64), "--precision", "10%", "--max-probes", "16"}, extra...)
}

// readCapacity reads the search's record and logs its table.
func readCapacity(t *testing.T, dir string) *capacity.Record {
	t.Helper()
	rec, err := capacity.Read(dir)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, rec.WriteTable(&b))
	t.Logf("%s", b.String())
	return rec
}

// requireNearKnee checks the answer: found, a passing probe at it, and
// within the precision of the knee.
func requireNearKnee(t *testing.T, rec *capacity.Record, knee float64) {
	t.Helper()
	require.Equal(t, capacity.StatusComplete, rec.Status)
	require.True(t, rec.Answer.Found, "no target passed")
	at := rec.AtCapacity()
	require.NotNil(t, at)
	assert.Equal(t, capacity.Pass, at.Verdict)
	assert.Equal(t, rec.Answer.Capacity, at.Target)
	assert.LessOrEqual(t, math.Abs(rec.Answer.Capacity-knee)/knee, knownPrecision,
		"capacity %.0f ops/s is not within %.0f%% of the knee %.0f ops/s", rec.Answer.Capacity, 100*knownPrecision, knee)
	assert.LessOrEqual(t, len(rec.Probes), rec.Settings.MaxProbes)
}

// TestCapacityKnownKnee: 4 threads × 2 ms on one host saturate at 2000
// ops/s; the search must find that within its precision, and its bundle
// must hold every probe's run.
func TestCapacityKnownKnee(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cap")
	r := runCLI(t, 10*time.Minute, "", append([]string{"capacity", "basic", "--results", dir}, knownKneeArgs(4, 700, "READ.p99<=200ms")...)...)
	requireExit(t, r, 0)
	rec := readCapacity(t, dir)
	requireNearKnee(t, rec, 4*1000/knownDelayMs)
	assert.Contains(t, r.stdout, "Capacity: "+capacity.FormatRate(rec.Answer.Capacity)+" ops/s")
	assert.Contains(t, r.stderr, "[probe 1, 700 ops/s] ", "status lines name the probe")
	for _, p := range rec.Probes {
		b, err := bundle.Read(filepath.Join(dir, p.Bundle))
		require.NoError(t, err)
		assert.Equal(t, strconv.FormatFloat(p.Target, 'g', -1, 64), b.Run.Config.Properties["target"], "probe %d", p.N)
		assert.Equal(t, p.Operations, b.Run.Summary.Operations, "probe %d: the search judged what its bundle recorded", p.N)
	}
	// The report draws the curve.
	r = runCLI(t, time.Minute, "", "report", dir)
	requireExit(t, r, 0)
	assert.FileExists(t, filepath.Join(dir, bundle.FileReport))
}

// TestCapacityTighterObjective: with a delay drawn uniformly from 0 to
// 2 ms each thread is a queue whose latency grows with the load well
// before saturation (4 threads × 1 ms mean: 4000 ops/s), so a tighter
// objective must give a lower capacity.
func TestCapacityTighterObjective(t *testing.T) {
	var caps []float64
	for _, slo := range []string{"READ.p99<=200ms", "READ.p99<=3ms"} {
		dir := filepath.Join(t.TempDir(), "cap")
		args := append([]string{"capacity", "basic", "--results", dir}, knownKneeArgs(4, 2000, slo, "-p", "basicdb.randomizedelay=true", "--probe", "3s")...)
		r := runCLI(t, 10*time.Minute, "", args...)
		requireExit(t, r, 0)
		rec := readCapacity(t, dir)
		caps = append(caps, rec.Answer.Capacity)
	}
	require.Greater(t, caps[0], 0.0, "the loose objective found a capacity")
	assert.Less(t, caps[1], caps[0], "READ.p99<=3ms gave %.0f ops/s, READ.p99<=200ms %.0f ops/s", caps[1], caps[0])
}

// TestCapacityDistributed: three agent processes of 2 threads × 2 ms
// each: 1000 ops/s per agent, 3000 together. The coordinator splits each
// probe's target across the agents, so the capacity adds up.
func TestCapacityDistributed(t *testing.T) {
	ports := freePorts(t, 3)
	var addrs []string
	var agents []*cliProc
	for _, p := range ports {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		agents = append(agents, startCLI(t, 20*time.Minute, "", "agent", "--listen", addr))
		addrs = append(addrs, addr)
	}
	for i, a := range agents {
		waitListening(t, addrs[i], a, time.Minute)
	}
	dir := filepath.Join(t.TempDir(), "cap")
	args := append([]string{"coordinator", "capacity", "basic", "--agents", strings.Join(addrs, ","), "--results", dir}, knownKneeArgs(2, 1000, "READ.p99<=200ms")...)
	r := runCLI(t, 10*time.Minute, "", args...)
	requireExit(t, r, 0)
	rec := readCapacity(t, dir)
	assert.Equal(t, "distributed", rec.Mode)
	assert.Equal(t, addrs, rec.Agents)
	requireNearKnee(t, rec, 3*2*1000/knownDelayMs)
	for _, p := range rec.Probes {
		b, err := bundle.Read(filepath.Join(dir, p.Bundle))
		require.NoError(t, err)
		require.Len(t, b.Run.Agents, 3, "probe %d ran on every agent", p.N)
	}
}

// TestCapacityCassandra searches a real Cassandra for its capacity at
// READ.p99<=10ms with workload C: the search must end within its probe
// budget and report a capacity with a passing probe at it.
func TestCapacityCassandra(t *testing.T) {
	endpoint := startServer(t, "cassandra")
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err)
	conn := []string{"-p", "hosts=" + host, "-p", "port=" + port, "-p", "table=ycsbctl_capacity", "-p", "recordcount=10000"}
	for _, verb := range []string{"drop", "init"} {
		requireExit(t, runCLI(t, cmdTimeout, "", append([]string{verb, "cassandra"}, conn...)...), 0)
	}
	requireExit(t, runCLI(t, cmdTimeout, "", append([]string{"load", "cassandra", "-P", "workloadc", "-threads", "8"}, conn...)...), 0)
	dir := filepath.Join(t.TempDir(), "cap")
	const budget = 8
	args := append([]string{"capacity", "cassandra", "-P", "workloadc", "-threads", "16", "--results", dir,
		"--slo", "READ.p99<=10ms", "--probe", "5s", "--warmup", "2s", "--start", "500", "--precision", "10%",
		"--max-probes", strconv.Itoa(budget)}, conn...)
	r := runCLI(t, 15*time.Minute, "", args...)
	requireExit(t, r, 0)
	rec := readCapacity(t, dir)
	require.Equal(t, capacity.StatusComplete, rec.Status)
	assert.LessOrEqual(t, len(rec.Probes), budget)
	require.True(t, rec.Answer.Found, "no target passed")
	at := rec.AtCapacity()
	require.NotNil(t, at)
	assert.Equal(t, capacity.Pass, at.Verdict)
	v, ok := at.Value(rec.Settings.Objectives[0])
	require.True(t, ok)
	assert.LessOrEqual(t, v, 10000.0, "READ p99 at the capacity")
	t.Logf("cassandra capacity at READ.p99<=10ms (workload C, 16 threads): %s ops/s, %s", capacity.FormatRate(rec.Answer.Capacity), rec.Answer.Ended)
}

// TestCapacitySuiteStepOverAgents: a suite's capacity step over two agent
// processes (2 threads × 2 ms each: 2000 ops/s together) finds the knee
// as `coordinator capacity` does, records the search in suite.json and
// capacity.json, and the workbook's Capacity sheet says it.
func TestCapacitySuiteStepOverAgents(t *testing.T) {
	ports := freePorts(t, 2)
	var addrs []string
	var agents []*cliProc
	for _, p := range ports {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		agents = append(agents, startCLI(t, 20*time.Minute, "", "agent", "--listen", addr))
		addrs = append(addrs, addr)
	}
	for i, a := range agents {
		waitListening(t, addrs[i], a, time.Minute)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "cap.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`name: cap
properties: {basicdb.verbose: false, basicdb.simulatedelay: `+strconv.Itoa(knownDelayMs)+`, basicdb.randomizedelay: false, status.interval: 0.5}
databases: [basic]
steps:
  - capacity: workloadc
    threads: 2
    slo: 'READ.p99<=200ms'
    probe: 3s
    warmup: 1s
    start: 1000
    precision: 10%
    max_probes: 16
`), 0o644))
	res := filepath.Join(dir, "results")
	r := runCLI(t, 10*time.Minute, "", "suite", file, "--agents", strings.Join(addrs, ","), "--results", res)
	requireExit(t, r, 0)
	rec := readCapacity(t, filepath.Join(res, "basic", "01-capacity-workloadc"))
	assert.Equal(t, "distributed", rec.Mode)
	require.NotNil(t, rec.Suite)
	requireNearKnee(t, rec, 2*2*1000/knownDelayMs)
	assert.Contains(t, r.stdout, "basic 01-capacity-workloadc: "+rec.AnswerText())
	x, err := excelize.OpenFile(filepath.Join(res, "summary.xlsx"))
	require.NoError(t, err)
	defer func() { _ = x.Close() }()
	rows, err := x.GetRows(workbook.SheetCapacity, excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Contains(t, rows[1], workbook.FormatCell(rec.Answer.Capacity))
}

package coordinator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

type runResult struct {
	code   exitcode.Code
	err    error
	stdout string
	stderr string
	dir    string
}

func runCoord(t testing.TB, cfg runConfig) runResult {
	t.Helper()
	var out, errb bytes.Buffer
	cfg.Stdout, cfg.Stderr = &out, &errb
	if cfg.ResultsDir == "" {
		cfg.ResultsDir = t.TempDir()
	}
	code, err := runSession(context.Background(), cfg)
	r := runResult{code: code, err: err, stdout: out.String(), stderr: errb.String(), dir: cfg.ResultsDir}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("coordinator stderr:\n%s\nstdout:\n%s", r.stderr, r.stdout)
		}
	})
	return r
}

// summaryValue finds "[metric], measurement, value" in YCSB text output.
func summaryValue(t testing.TB, text, metric, meas string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ", ", 3)
		if len(parts) == 3 && parts[0] == "["+metric+"]" && parts[1] == meas {
			v, err := strconv.ParseFloat(parts[2], 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return v
		}
	}
	t.Fatalf("no [%s], %s in:\n%s", metric, meas, text)
	return 0
}

func TestInProcessLoadAndRun(t *testing.T) {
	agents := []string{testAgent(t, agent.Config{}), testAgent(t, agent.Config{}), testAgent(t, agent.Config{})}

	load := runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: agents, Props: properties.FromMap(baseProps(nil))})
	if load.code != exitcode.OK {
		t.Fatalf("load: %v %v", load.code, load.err)
	}
	if got := summaryValue(t, load.stdout, "INSERT", "Operations"); got != 3000 {
		t.Fatalf("load inserted %v, want 3000", got)
	}
	rep := readReport(t, load.dir)
	if rep.Status != run.StatusComplete || rep.Summary.Operations != 3000 {
		t.Fatalf("load report: %s %d", rep.Status, rep.Summary.Operations)
	}
	// Each agent loaded its own contiguous third.
	for i, a := range readPlan(t, load.dir).Agents {
		if a.InsertStart != int64(i*1000) || a.InsertCount != 1000 || rep.Agents[i].Operations != 1000 {
			t.Errorf("agent %d: [%d,+%d) ops %d", i, a.InsertStart, a.InsertCount, rep.Agents[i].Operations)
		}
	}

	// Paced so the run spans several 0.2 s intervals.
	run := runCoord(t, runConfig{DB: "basic", Phase: run.Run, Agents: agents, Status: true, Label: "T ",
		Props: properties.FromMap(baseProps(map[string]string{"target": "3000", "readproportion": "0.5", "updateproportion": "0.3", "insertproportion": "0.2"}))})
	if run.code != exitcode.OK {
		t.Fatalf("run: %v %v", run.code, run.err)
	}
	rep = readReport(t, run.dir)
	var sumAgents, sumFinal int64
	for _, a := range rep.Agents {
		sumAgents += a.Operations
		sumFinal += a.Final.Operations
		if a.StartSkewNs == nil {
			t.Errorf("agent %d: no start skew", a.Index)
		} else if sk := time.Duration(*a.StartSkewNs); sk < -50*time.Millisecond || sk > 100*time.Millisecond {
			t.Errorf("agent %d: start skew %s", a.Index, sk)
		}
	}
	total := int64(summaryValue(t, run.stdout, "OVERALL", "Throughput(ops/sec)") * summaryValue(t, run.stdout, "OVERALL", "RunTime(ms)") / 1000)
	if rep.Summary.Operations != 3000 || sumAgents != 3000 || sumFinal != 3000 {
		t.Fatalf("operations: merged %d, agents %d, finals %d; want 3000", rep.Summary.Operations, sumAgents, sumFinal)
	}
	if total < 2900 || total > 3100 {
		t.Errorf("throughput x runtime = %d", total)
	}
	// At least two, to merge more than one: a saturated machine delays
	// the reporters' 0.2 s ticks (a ticker drops ticks a late reader
	// missed), so a 1 s run may have 3 intervals instead of 5.
	if len(rep.Intervals) < 2 {
		t.Fatalf("only %d intervals", len(rep.Intervals))
	}
	var ivOps int64
	for _, iv := range rep.Intervals {
		var agentOps int64
		for _, s := range iv.Agents {
			agentOps += s.Operations
		}
		if agentOps != iv.Operations {
			t.Fatalf("interval %d: merged %d != agents %d", iv.Seq, iv.Operations, agentOps)
		}
		ivOps += iv.Operations
	}
	if ivOps != 3000 {
		t.Fatalf("intervals sum to %d", ivOps)
	}
	if n := strings.Count(run.stderr, "current ops/sec"); n < 2 {
		t.Errorf("%d status lines:\n%s", n, run.stderr)
	}
	if !strings.Contains(run.stderr, "T 20") {
		t.Errorf("label missing from status lines")
	}
	checkHlog(t, filepath.Join(run.dir, FileHlog), rep)
	if _, err := os.Stat(filepath.Join(run.dir, FileSummary)); err != nil {
		t.Fatal(err)
	}
}

// checkHlog reads merged.hlog back with the HdrHistogram library: every
// interval has a merged line per series that equals the sum of the
// per-agent lines, with absolute timestamps.
func checkHlog(t testing.TB, path string, rep *bundle.Run) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFile(t, f)
	r := hdrhistogram.NewHistogramLogReader(f)
	all := map[string]int64{}
	agents := map[string]int64{}
	lines := 0
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		lines++
		tag := h.Tag()
		dot := strings.LastIndex(tag, ".")
		if dot < 0 {
			t.Fatalf("tag %q", tag)
		}
		series, who := tag[:dot], tag[dot+1:]
		if who == "all" {
			all[series] += h.TotalCount()
		} else if strings.HasPrefix(who, "agent-") {
			agents[series] += h.TotalCount()
		} else {
			t.Fatalf("tag %q", tag)
		}
		// Absolute: within the run, not seconds since start.
		if sec := float64(h.StartTimeMs()) / 1000; sec < float64(rep.StartedAt.Unix()-5) {
			t.Fatalf("timestamp %v is not absolute", sec)
		}
	}
	if lines == 0 || len(all) == 0 {
		t.Fatal("empty hlog")
	}
	for s, n := range all {
		if agents[s] != n {
			t.Errorf("%s: merged %d, agents %d", s, n, agents[s])
		}
	}
	for _, ss := range rep.Summary.Series {
		if all[ss.Series] != ss.Count {
			t.Errorf("%s: hlog %d, summary %d", ss.Series, all[ss.Series], ss.Count)
		}
	}
	// And with another implementation: Python's hdrh (installed by
	// scripts/ci-setup.sh into .venv) must read the same counts per tag.
	python := tools.Python(t, "hdrh")
	py := `
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
r = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600000000000, 3))
tot = {}
while True:
    h = r.get_next_interval_histogram()
    if h is None:
        break
    tot[h.get_tag()] = tot.get(h.get_tag(), 0) + h.get_total_count()
print(json.dumps(tot))
`
	cmd := exec.Command(python, "-c", py, path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python hdrh: %v\n%s", err, stderr.String())
	}
	var tags map[string]int64
	if err := json.Unmarshal(out, &tags); err != nil {
		t.Fatal(err)
	}
	pyAll := map[string]int64{}
	for tag, n := range tags {
		if strings.HasSuffix(tag, ".all") {
			pyAll[strings.TrimSuffix(tag, ".all")] += n
		}
	}
	for s, n := range all {
		if pyAll[s] != n {
			t.Errorf("python hdrh reads %d for %s.all, Go %d", pyAll[s], s, n)
		}
	}
}

func TestInProcessTokenAndTLS(t *testing.T) {
	c := newCerts(t)
	good := &transport.TLSFiles{Cert: c.server, Key: c.serverKey, CA: c.ca}
	secured := testAgent(t, agent.Config{TLS: good, Token: "s3cret-token-0123456789"})
	props := properties.FromMap(baseProps(map[string]string{"recordcount": "300", "operationcount": "300"}))
	client := &transport.TLSFiles{Cert: c.client, Key: c.clientKey, CA: c.ca}

	r := runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: []string{secured}, Props: props, TLS: client, Token: "s3cret-token-0123456789"})
	if r.code != exitcode.OK {
		t.Fatalf("mTLS + token run: %v %v", r.code, r.err)
	}
	cases := []struct {
		name  string
		tls   *transport.TLSFiles
		token string
		want  string
	}{
		{"wrong token", client, "guess", "rejected the token"},
		{"no token", client, "", "requires a token"},
		{"no TLS", nil, "s3cret-token-0123456789", "TLS mismatch"},
		{"client cert from another CA", &transport.TLSFiles{Cert: c.rogue, Key: c.rogueKey, CA: c.ca}, "s3cret-token-0123456789", "TLS"},
		{"agent cert not trusted", &transport.TLSFiles{Cert: c.client, Key: c.clientKey, CA: c.otherCA}, "s3cret-token-0123456789", "TLS handshake failed"},
	}
	for _, tc := range cases {
		r := runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: []string{secured}, Props: props, TLS: tc.tls, Token: tc.token})
		if r.code != exitcode.Failure || r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("%s: code %v err %v, want failure mentioning %q", tc.name, r.code, r.err, tc.want)
		}
	}
	// An agent presenting a certificate from another CA is refused by
	// the coordinator.
	rogueAgent := testAgent(t, agent.Config{TLS: &transport.TLSFiles{Cert: c.rogueSrv, Key: c.rogueSrK, CA: c.ca}})
	r = runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: []string{rogueAgent}, Props: props, TLS: client})
	if r.code != exitcode.Failure || !strings.Contains(r.err.Error(), "TLS handshake failed") {
		t.Errorf("rogue agent: %v %v", r.code, r.err)
	}
}

func TestInProcessVersionMismatch(t *testing.T) {
	addr := testAgent(t, agent.Config{Version: "v9.9.9"})
	r := runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: []string{addr}, Props: properties.FromMap(baseProps(nil))})
	proto := fmt.Sprintf("(protocol %d)", version.Protocol)
	want := "version mismatch: coordinator runs ycsbctl " + version.Version + " " + proto + ", agent runs ycsbctl v9.9.9 " + proto
	if r.code != exitcode.Failure || r.err == nil || !strings.Contains(r.err.Error(), want) {
		t.Fatalf("got %v %v, want %q", r.code, r.err, want)
	}
}

func TestInvalidConfigRefusedBeforeContact(t *testing.T) {
	// Nothing listens here: an invalid config must fail without dialing.
	nobody := "127.0.0.1:1"
	props := properties.FromMap(baseProps(nil))
	cases := []struct {
		cfg  runConfig
		want string
	}{
		{runConfig{DB: "basic", Props: props}, "--agents"},
		{runConfig{DB: "basic", Props: props, Agents: []string{nobody, "127.0.0.1:1"}}, "--agents: duplicate"},
		{runConfig{DB: "basic", Props: props, Agents: []string{"127.0.0.1"}, OnAgentLoss: "retry"}, "--on-agent-loss"},
		{runConfig{DB: "nosuchdb", Props: props, Agents: []string{nobody}}, "unknown database"},
		{runConfig{DB: "basic", Props: properties.FromMap(baseProps(map[string]string{"threadcount": "0"})), Agents: []string{nobody}}, "threadcount"},
		{runConfig{DB: "basic", Props: properties.FromMap(baseProps(map[string]string{"operationcount": "2"})), Agents: []string{nobody, "127.0.0.1:2", "127.0.0.1:3"}, Phase: run.Run}, "operationcount"},
		{runConfig{DB: "basic", Props: props, Agents: []string{nobody}, TLS: &transport.TLSFiles{Cert: "x"}}, "--tls-cert, --tls-key and --tls-ca"},
	}
	for _, tc := range cases {
		r := runCoord(t, tc.cfg)
		if r.code != exitcode.InvalidConfig || r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("%+v: got %v %v, want invalid config mentioning %q", tc.cfg.Agents, r.code, r.err, tc.want)
		}
		if strings.Contains(r.stderr, "clock offset") {
			t.Errorf("agents were contacted: %s", r.stderr)
		}
	}
}

// offsetClock is the real clock shifted, as on a host whose NTP is off.
type offsetClock struct {
	*clock.Real
	off time.Duration
}

func (o offsetClock) Now() time.Time { return o.Real.Now().Add(o.off) }

func TestInProcessClockOffset(t *testing.T) {
	far := testAgent(t, agent.Config{Clock: offsetClock{clock.NewReal(), 2 * time.Second}})
	r := runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: []string{far}, Props: properties.FromMap(baseProps(nil))})
	if r.code != exitcode.Failure || !strings.Contains(r.err.Error(), "clock is 2") || !strings.Contains(r.err.Error(), "ahead of the coordinator's (limit 1s)") {
		t.Fatalf("got %v %v", r.code, r.err)
	}
	// 300 ms off is within the limit: the start instant is converted to
	// the agent's clock, so it still starts in lockstep.
	near := testAgent(t, agent.Config{Clock: offsetClock{clock.NewReal(), 300 * time.Millisecond}})
	plain := testAgent(t, agent.Config{})
	r = runCoord(t, runConfig{DB: "basic", Phase: run.Run, Agents: []string{near, plain},
		Props: properties.FromMap(baseProps(map[string]string{"target": "3000", "operationcount": "1500"}))})
	if r.code != exitcode.OK {
		t.Fatalf("%v %v", r.code, r.err)
	}
	rep := readReport(t, r.dir)
	if off := time.Duration(rep.Agents[0].ClockOffsetNs); off < 295*time.Millisecond || off > 305*time.Millisecond {
		t.Fatalf("estimated offset %s, want 300ms", off)
	}
	// Interval boundaries line up across agents on the coordinator clock
	// (had the 300 ms not been converted, agent 0's would be 300 ms early).
	// The bound is half the offset: it tells a converted start from an
	// unconverted one, and leaves room for an agent that a loaded machine
	// wakes late at the start instant (44 ms, the same in every interval,
	// with a scale run and a database benchmark beside the unit tests).
	checkAligned(t, r.dir, 150*time.Millisecond)
}

// occupy holds a run on the agent at addr with a raw session, as another
// coordinator would; the session lasts until the test ends.
func occupy(t *testing.T, addr, runID, coordinator string) pb.Agent_SessionClient {
	t.Helper()
	cc, err := transport.Dial(addr, nil, "", transport.Identity{Version: version.Version, Protocol: version.Protocol})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		closeConn(t, cc)
	})
	st, err := pb.NewAgentClient(cc).Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Hello{Hello: &pb.Hello{Version: version.Version, Protocol: version.Protocol, RunId: runID, Coordinator: coordinator}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestInProcessBusyAgent(t *testing.T) {
	addr := testAgent(t, agent.Config{})
	occupy(t, addr, "run-1", "other coordinator")
	r := runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: []string{addr}, Props: properties.FromMap(baseProps(nil))})
	if r.code != exitcode.Failure || !strings.Contains(r.err.Error(), "busy: running run run-1 for other coordinator") {
		t.Fatalf("got %v %v", r.code, r.err)
	}
}

func TestInProcessWarmupAndInterrupt(t *testing.T) {
	agents := []string{testAgent(t, agent.Config{}), testAgent(t, agent.Config{})}
	r := runCoord(t, runConfig{DB: "basic", Phase: run.Run, Agents: agents,
		Props: properties.FromMap(baseProps(map[string]string{"target": "2000", "operationcount": "1000", "warmupops": "200", "warmuptime": "0.3"}))})
	if r.code != exitcode.OK {
		t.Fatalf("%v %v", r.code, r.err)
	}
	rep := readReport(t, r.dir)
	var warm int64
	for _, a := range rep.Agents {
		warm += a.Final.WarmupOps
	}
	if rep.Summary.Operations != 1000 || warm < 200 || rep.Summary.WarmupOps != warm {
		t.Fatalf("ops %d warm-up %d/%d", rep.Summary.Operations, warm, rep.Summary.WarmupOps)
	}
	// Both agents switch to measuring at start + warmuptime, so their
	// intervals start together. An agent that ended its warm-up by its own
	// 100 operations instead would switch about 0.2 s early; the bound
	// tells the two apart and leaves room for an agent that a loaded
	// machine wakes late at the start instant (see TestInProcessClockOffset).
	checkAligned(t, r.dir, 100*time.Millisecond)

	// The operator's Ctrl-C (ctx canceled) stops every agent gracefully;
	// the summary and bundle are still written and the exit code says so.
	// The Ctrl-C comes 1 s after the coordinator announced the start
	// (the agents begin about 0.5 s after that): a fixed delay from here
	// could land in the prepare, which the race detector stretches past a
	// second, and test an abort before the start instead.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	var errb syncBuffer
	dir := t.TempDir()
	go func() {
		for !strings.Contains(errb.String(), "Starting test") && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		cancel()
	}()
	code, err := runSession(ctx, runConfig{DB: "basic", Phase: run.Run, Agents: agents, Stdout: &out, Stderr: &errb, ResultsDir: dir,
		Props: properties.FromMap(baseProps(map[string]string{"target": "500", "operationcount": "0", "maxexecutiontime": "30"}))})
	if code != exitcode.Stopped || err == nil {
		t.Fatalf("interrupted run: %v %v\n%s", code, err, errb.String())
	}
	rep = readReport(t, dir)
	if rep.Status != run.StatusStopped || rep.ExitCode != int(exitcode.Stopped) || rep.Summary.Operations == 0 || rep.Summary.RunTimeMs > 5000 {
		t.Fatalf("status %s ops %d runtime %d", rep.Status, rep.Summary.Operations, rep.Summary.RunTimeMs)
	}
	for _, a := range rep.Agents {
		if a.Final == nil || a.Final.Stopped != "interrupted by operator" || a.Operations != a.Final.Operations {
			t.Errorf("agent %d final %+v received %d", a.Index, a.Final, a.Operations)
		}
	}
	if !strings.Contains(out.String(), "[OVERALL], RunTime(ms)") {
		t.Error("no summary after interrupt")
	}
}

func TestInProcessPrepareFailure(t *testing.T) {
	good := testAgent(t, agent.Config{Properties: map[string]string{"embedded.dir": t.TempDir()}})
	bad := testAgent(t, agent.Config{Properties: map[string]string{"embedded.dir": "/dev/null/cannot-exist"}})
	r := runCoord(t, runConfig{DB: "embedded", Phase: run.Load, Agents: []string{good, bad}, Props: properties.FromMap(baseProps(nil))})
	if r.code != exitcode.Failure || r.err == nil || !strings.Contains(r.err.Error(), "agent 1 ("+bad+"): failed to prepare: ") || !strings.Contains(r.err.Error(), "embedded.dir") {
		t.Fatalf("got %v %v", r.code, r.err)
	}
	// Nothing started, and the healthy agent was released.
	if _, err := os.Stat(filepath.Join(r.dir, FileRunJSON)); err == nil {
		t.Error("a bundle was written for a run that never started")
	}
	deadline := time.Now().Add(2 * time.Second)
	for busyRunInProc(t, good) != "" {
		if time.Now().After(deadline) {
			t.Fatal("healthy agent still busy after the failed prepare")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func busyRunInProc(t *testing.T, addr string) string {
	cc, err := transport.Dial(addr, nil, "", transport.Identity{Version: version.Version, Protocol: version.Protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn(t, cc)
	r, err := pb.NewAgentClient(cc).Ping(context.Background(), &pb.PingRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return r.BusyRun
}

// checkAligned reads the per-agent lines of merged.hlog: for every
// interval, every agent's start (converted to the coordinator's clock)
// must be within tol of the others'.
func checkAligned(t testing.TB, dir string, tol time.Duration) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, FileHlog))
	if err != nil {
		t.Fatal(err)
	}
	defer closeFile(t, f)
	// Lines come interval by interval; per interval, the READ lines of
	// each agent.
	var starts []int64
	check := func() {
		for _, s := range starts[1:] {
			if d := time.Duration(s - starts[0]); d > tol || d < -tol {
				t.Errorf("agents' interval starts differ by %s", d)
			}
		}
		starts = starts[:0]
	}
	n := 0
	err = bundle.ScanHlog(f, func(l *bundle.HlogLine) error {
		if l.Series.Name() != "READ" {
			return nil
		}
		if l.Agent == "all" {
			check()
			n++
			return nil
		}
		starts = append(starts, l.StartNs)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Fatalf("only %d merged intervals", n)
	}
}

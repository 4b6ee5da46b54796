//go:build cluster

package cluster

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
)

// Faults during coordinator runs against the Cassandra cluster: single-
// record operations (workload A), an interval every 2 s, timed runs.
const faultRunSeconds = 24

func (e *env) faultRun(name string, extraProps []string, flags ...string) coordinatorRun {
	return coordinatorRun{phase: "run", db: "cassandra", results: filepath.Join(e.tmp, "fault-"+name),
		props: e.cassProps(append([]string{"operationcount=0", fmt.Sprintf("maxexecutiontime=%d", faultRunSeconds)}, extraProps...)...),
		flags: append([]string{"-P", "workloada", "--agent-timeout", agentTimeout.String()}, flags...)}
}

// liveRun is a coordinator started in the background, its output kept.
type liveRun struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	out   bytes.Buffer
	done  chan struct{}
	err   error
	start time.Time
}

func (l *liveRun) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.Write(p)
}

func (l *liveRun) output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.String()
}

func (e *env) startCoordinator(t testing.TB, r coordinatorRun) *liveRun {
	t.Helper()
	l := &liveRun{done: make(chan struct{})}
	l.cmd = e.coordinatorCmd(t.Context(), r)
	l.cmd.Stdout, l.cmd.Stderr = l, l
	l.start = time.Now()
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { l.err = l.cmd.Wait(); close(l.done) }()
	t.Cleanup(func() {
		select {
		case <-l.done:
		default:
			_ = l.cmd.Process.Kill()
			<-l.done
		}
	})
	return l
}

// waitStarted waits until the agents are running the load (the
// coordinator printed its start line) and then for d more.
func (l *liveRun) waitStarted(t testing.TB, d time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(l.output(), "Starting test on") {
		select {
		case <-l.done:
			t.Fatalf("coordinator ended before starting: %v\n%s", l.err, l.output())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("coordinator did not start the test:\n%s", l.output())
		}
	}
	time.Sleep(d)
	return time.Now()
}

func (l *liveRun) wait(t testing.TB, r coordinatorRun) coordinatorResult {
	t.Helper()
	select {
	case <-l.done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("coordinator still running after 5 min:\n%s", l.output())
	}
	res := coordinatorResult{out: l.output(), results: r.results, elapsed: time.Since(l.start)}
	if l.err != nil {
		ee, ok := l.err.(*exec.ExitError)
		if !ok {
			t.Fatalf("coordinator: %v", l.err)
		}
		res.code = ee.ExitCode()
	}
	return res
}

// agentLeaseAbort waits for hN's agent to log that it aborted its load for
// the lease, and returns when the journal says it did.
func (e *env) agentLeaseAbort(t testing.TB, n int, since time.Time, limit time.Duration) (time.Time, bool) {
	t.Helper()
	at, _, ok := e.agentJournalLine(t, n, "aborting load: no word from coordinator", since, limit)
	return at, ok
}

// agentJournalLine waits for a line of hN's agent journal after since that
// holds text, and returns when it was logged and the line.
func (e *env) agentJournalLine(t testing.TB, n int, text string, since time.Time, limit time.Duration) (time.Time, string, bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		out, _ := e.clusterErr("exec", fmt.Sprintf("h%d", n), "journalctl", "-u", "ycsbctl-agent", "-o", "short-unix", "--no-pager",
			"--since", fmt.Sprintf("@%d", since.Unix()-1))
		for _, line := range strings.Split(out, "\n") {
			if !strings.Contains(line, text) {
				continue
			}
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			sec, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				continue
			}
			at := time.Unix(0, int64(sec*1e9))
			if at.After(since) {
				return at, line, true
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, "", false
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitAgentsFree waits until every agent's journal says run id is over
// on it (released, or its aborted load stopped). An agent whose
// coordinator went away without releasing it holds the run until its
// lease runs out; once it is ending, the next coordinator waits for it.
func (e *env) waitAgentsFree(t testing.TB, runID string, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(limit)
	for n := 1; n <= hosts; n++ {
		for {
			out, _ := e.clusterErr("exec", fmt.Sprintf("h%d", n), "journalctl", "-u", "ycsbctl-agent", "-o", "cat", "--no-pager",
				"--since", fmt.Sprintf("@%d", since.Unix()-1))
			if strings.Contains(out, "run "+runID+": released") || strings.Contains(out, "run "+runID+": load stopped") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("h%d's agent still holds run %s %s after the run ended:\n%s", n, runID, limit, out)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	return time.Since(start)
}

// startRun starts a fault run and waits until its load runs, then for d
// more. Every run before it was released (its coordinator waits for the
// agents to confirm) or is ending (the coordinator waits for that), so no
// agent may refuse it as busy.
func (e *env) startRun(t testing.TB, r coordinatorRun, d time.Duration) (*liveRun, time.Time) {
	t.Helper()
	l := e.startCoordinator(t, r)
	at := l.waitStarted(t, d)
	for _, m := range endingLine.FindAllString(l.output(), -1) {
		figure(t, "%s: the next coordinator waited for it", m)
	}
	return l, at
}

var endingLine = regexp.MustCompile(`agent \d+ \(\S+\) is still ending run \S+`)

func testFaults(t *testing.T, e *env) {
	t.Run("latency", func(t *testing.T) { testLatency(t, e) })
	t.Run("partition-short", func(t *testing.T) { testPartitionShort(t, e) })
	t.Run("partition-long-continue", func(t *testing.T) { testPartitionLong(t, e, "continue") })
	t.Run("partition-long-abort", func(t *testing.T) { testPartitionLong(t, e, "abort") })
	t.Run("coordinator-killed", func(t *testing.T) { testCoordinatorKilled(t, e) })
	t.Run("cassandra-nodes-stopped", func(t *testing.T) { testNodesStopped(t, e) })
}

// testLatency: the kernel here has no sch_netem (CONFIG_NET_SCH_NETEM is
// not set), so the delay comes from a relay inside h2's namespace, on the
// agent's own address, that holds every byte between the coordinator and
// h2's agent for a fixed time: 60 ms towards the agent, 20 ms back. The
// coordinator dials h2 through it (the certificate names the address, not
// the port). The round trip grows by 80 ms and, the delay being
// asymmetric, h2's clock offset estimate moves by about 20 ms.
func testLatency(t *testing.T, e *env) {
	const toAgent, fromAgent = 60 * time.Millisecond, 20 * time.Millisecond
	relayAddr := addr(2) + ":7421"
	stop := e.startRelay(t, 2, relayAddr, e.agents[1], toAgent, fromAgent)
	defer stop()
	agents := append([]string(nil), e.agents...)
	agents[1] = relayAddr
	r := e.faultRun("latency", nil)
	r.agents = agents
	res := e.coordinator(t, r)
	if res.code != 0 {
		t.Fatalf("run with a delayed agent: exit %d\n%s", res.code, res.out)
	}
	rj := res.bundle(t)
	checkExact(t, rj, -1)
	logClock(t, "latency", rj)
	h2 := rj.Agents[1]
	want := toAgent + fromAgent
	if h2.RTTNs < int64(want) || h2.RTTNs > int64(want+200*time.Millisecond) {
		t.Fatalf("h2's round trip %.3f ms, want about %s", ms(h2.RTTNs), want)
	}
	skewed := (toAgent - fromAgent) / 2
	if d := h2.ClockOffsetNs - int64(skewed); abs(d) > int64(10*time.Millisecond) {
		t.Fatalf("h2's clock offset %.3f ms, want about %s from the asymmetric delay", ms(h2.ClockOffsetNs), skewed)
	}
	for i, a := range rj.Agents {
		if i != 1 && (a.RTTNs > int64(20*time.Millisecond) || abs(a.ClockOffsetNs) > int64(5*time.Millisecond)) {
			t.Fatalf("%s (not delayed): rtt %.3f ms, offset %.3f ms", a.Hostname, ms(a.RTTNs), ms(a.ClockOffsetNs))
		}
	}
	var lag int64
	for _, iv := range rj.Intervals {
		for _, s := range iv.Agents {
			if s.Index == 1 {
				lag = max(lag, s.LagNs)
			}
		}
	}
	figure(t, "latency: h2 behind a %s/%s relay: rtt %.3f ms, clock offset %.3f ms, max interval lag %.3f ms; %d intervals, %d ops, exit %d",
		toAgent, fromAgent, ms(h2.RTTNs), ms(h2.ClockOffsetNs), ms(lag), len(rj.Intervals), rj.Summary.Operations, res.code)
}

// partition cuts hN off the bridge (its veth down): no packet in or out,
// as when a host's switch port dies.
func (e *env) partition(t testing.TB, n int, down bool) {
	t.Helper()
	state := "up"
	if down {
		state = "down"
	}
	if out, err := exec.Command("ip", "link", "set", fmt.Sprintf("ycsbctl-v%d", n), state).CombinedOutput(); err != nil {
		t.Fatalf("ip link set ycsbctl-v%d %s: %v\n%s", n, state, err, out)
	}
}

// testPartitionShort: h3 is cut off for less than the coordinator's
// agent timeout and the agent's lease; TCP carries the stream on
// afterwards, and every interval is counted exactly once.
func testPartitionShort(t *testing.T, e *env) {
	const cut = 2 * time.Second
	r := e.faultRun("partition-short", nil)
	l, at := e.startRun(t, r, 6*time.Second)
	e.partition(t, 3, true)
	time.Sleep(cut)
	e.partition(t, 3, false)
	res := l.wait(t, r)
	rj := res.bundle(t)
	if res.code != 0 || rj.Status != "complete" {
		t.Fatalf("short partition: exit %d, status %q %v\n%s", res.code, rj.Status, rj.StatusReasons, res.out)
	}
	checkExact(t, rj, -1)
	a := rj.Agents[2]
	if a.State != "finished" || a.MissingIntervals != "" {
		t.Fatalf("h3 after a %s partition: state %s, missing intervals %q", cut, a.State, a.MissingIntervals)
	}
	_, failed, by := returns(rj)
	figure(t, "partition-short: h3 cut off %s at +%s; run complete, %d intervals, %d ops, %d failed %v, h3 reconnects %d",
		cut, at.Sub(l.start).Round(time.Millisecond), len(rj.Intervals), rj.Summary.Operations, failed, by, a.Reconnects)
}

// testPartitionLong: h3 is cut off for longer than the lease. The
// coordinator declares it lost after --agent-timeout and applies
// --on-agent-loss; h3's agent stops its load by itself when its lease runs
// out; run.json says what happened.
func testPartitionLong(t *testing.T, e *env, policy string) {
	cut := agentLease + 4*time.Second
	r := e.faultRun("partition-long-"+policy, nil, "--on-agent-loss", policy)
	l, at := e.startRun(t, r, 6*time.Second)
	e.partition(t, 3, true)
	healed := false
	defer func() {
		if !healed {
			e.partition(t, 3, false)
		}
	}()
	// The agent's journal is read through its namespace, not the network,
	// so it can be watched while the host is cut off.
	abortAt, ok := e.agentLeaseAbort(t, 3, at, cut)
	lostLine := regexp.MustCompile(`agent 2 \(` + strings.ReplaceAll(e.agents[2], ".", `\.`) + `\) lost`)
	lostSeen := time.Now()
	for !lostLine.MatchString(l.output()) && time.Since(lostSeen) < 5*time.Second {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Until(at.Add(cut)))
	e.partition(t, 3, false)
	healed = true
	if !ok {
		t.Fatalf("h3's agent did not abort its load within %s of being cut off (lease %s)", cut, agentLease)
	}
	res := l.wait(t, r)
	rj := res.bundle(t)
	free := e.waitAgentsFree(t, rj.RunID, l.start, agentLease+cassReadTimeout+10*time.Second)
	checkIntervals(t, rj)
	a := rj.Agents[2]
	if a.State != "lost" || !strings.HasPrefix(a.Error, "lost") {
		t.Fatalf("run.json: h3 state %q error %q, want lost", a.State, a.Error)
	}
	switch policy {
	case "continue":
		if res.code != 0 || rj.Status != "partial" || a.MissingIntervals == "" {
			t.Fatalf("continue: exit %d status %q (%v), h3 missing intervals %q\n%s", res.code, rj.Status, rj.StatusReasons, a.MissingIntervals, res.out)
		}
		for i, o := range rj.Agents {
			if i != 2 && (o.State != "finished" || o.Final == nil) {
				t.Fatalf("continue: %s state %s", o.Hostname, o.State)
			}
		}
	case "abort":
		if res.code != 3 || rj.ExitCode != 3 || rj.Status == "complete" {
			t.Fatalf("abort: exit %d (run.json %d), status %q (%v)\n%s", res.code, rj.ExitCode, rj.Status, rj.StatusReasons, res.out)
		}
		if res.elapsed > time.Duration(faultRunSeconds)*time.Second+20*time.Second {
			t.Fatalf("abort took %s", res.elapsed)
		}
	}
	detected := "not logged"
	if m := lostLine.FindStringIndex(res.out); m != nil {
		detected = fmt.Sprintf("by +%s", lostSeen.Sub(at).Round(100*time.Millisecond))
	}
	figure(t, "partition-long (%s): h3 cut off %s; coordinator's lost line seen %s (agent timeout %s); h3's agent aborted its load after %s (lease %s); exit %d, status %s %v, h3 missing intervals %q, error %q; every agent free %s after the coordinator ended",
		policy, cut, detected, agentTimeout, abortAt.Sub(at).Round(10*time.Millisecond), agentLease, res.code, rj.Status, rj.StatusReasons, a.MissingIntervals, a.Error, free.Round(100*time.Millisecond))
}

// testCoordinatorKilled: kill -9 the coordinator mid-run; every agent
// aborts its load within the lease (their journals say so), and the next
// coordinator run starts cleanly with exact counts.
func testCoordinatorKilled(t *testing.T, e *env) {
	r := e.faultRun("coordinator-killed", nil)
	l, _ := e.startRun(t, r, 6*time.Second)
	killed := time.Now()
	if err := l.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-l.done
	var worst time.Duration
	for n := 1; n <= hosts; n++ {
		at, ok := e.agentLeaseAbort(t, n, killed, agentLease+5*time.Second)
		if !ok {
			t.Fatalf("h%d's agent did not abort its load within %s of the coordinator's death", n, agentLease+5*time.Second)
		}
		d := at.Sub(killed)
		if d > agentLease+2*time.Second {
			t.Fatalf("h%d's agent stopped %s after the coordinator died, beyond its lease %s", n, d, agentLease)
		}
		worst = max(worst, d)
		figure(t, "coordinator-killed: h%d's agent idle %s after kill -9", n, d.Round(10*time.Millisecond))
	}
	// The run id is in the coordinator's first line.
	var runID string
	if m := regexp.MustCompile(`, run (\S+)`).FindStringSubmatch(l.output()); m != nil {
		runID = m[1]
	} else {
		t.Fatalf("no run id in the coordinator's output:\n%s", l.output())
	}
	e.waitAgentsFree(t, runID, killed, agentLease+cassReadTimeout+10*time.Second)
	figure(t, "coordinator-killed: every agent's load stopped and run released %s after kill -9", time.Since(killed).Round(100*time.Millisecond))
	next := e.faultRun("after-kill", []string{fmt.Sprintf("operationcount=%d", cassRunOps/2), "maxexecutiontime=0"})
	start := time.Now()
	res := e.coordinator(t, next)
	if res.code != 0 {
		t.Fatalf("the run after the killed coordinator: exit %d\n%s", res.code, res.out)
	}
	rj := res.bundle(t)
	checkExact(t, rj, cassRunOps/2)
	if _, failed, by := returns(rj); failed != 0 {
		t.Fatalf("run after the kill: %d failed %v", failed, by)
	}
	figure(t, "coordinator-killed: every agent idle within %s (lease %s); next run exact (%d ops) in %s",
		worst.Round(10*time.Millisecond), agentLease, cassRunOps/2, time.Since(start).Round(100*time.Millisecond))
}

// lastEnd is when the run's last interval ended.
func lastEnd(rj *bundle.Run) time.Time {
	var end int64
	for _, iv := range rj.Intervals {
		end = max(end, iv.EndUnixNs)
	}
	return time.Unix(0, end)
}

// testNodesStopped: stop h3's Cassandra node mid-run (QUORUM with RF 3
// still holds: the run completes without errors); then, in a second run,
// h2's too (QUORUM cannot be met): the errors are counted under their
// return codes and the error-rate verdict sets the exit code. Both nodes
// come back afterwards with every row.
func testNodesStopped(t *testing.T, e *env) {
	stopNode := func(n int) time.Duration {
		start := time.Now()
		if out, err := e.clusterErr("exec", fmt.Sprintf("h%d", n), "systemctl", "stop", "cassandra"); err != nil {
			t.Fatalf("stop h%d's node: %v\n%s", n, err, out)
		}
		return time.Since(start)
	}
	// Long enough to see the cluster serve on two nodes after the stop.
	r := e.faultRun("one-node-stopped", []string{"maxexecutiontime=40"})
	l, at := e.startRun(t, r, 6*time.Second)
	took := stopNode(3)
	stopped := time.Now()
	res := l.wait(t, r)
	rj := res.bundle(t)
	ok, failed, by := returns(rj)
	if res.code != 0 || rj.Status != "complete" {
		t.Fatalf("one node stopped: exit %d status %q\n%s", res.code, rj.Status, res.out)
	}
	checkExact(t, rj, -1)
	// Requests in flight on the stopping node's connections when it closes
	// them fail (the adapter, like YCSB's, does not retry), and so may
	// those that were waiting on it as a replica, up to the client's read
	// timeout; from then on QUORUM holds and nothing fails.
	settle := stopped.Add(cassReadTimeout)
	var transition, after, afterOK int64
	var lastErr time.Time
	for _, iv := range rj.Intervals {
		var bad, good int64
		for _, m := range iv.Returns {
			for code, n := range m {
				if code == "OK" {
					good += n
				} else {
					bad += n
				}
			}
		}
		if bad > 0 {
			lastErr = time.Unix(0, iv.EndUnixNs)
		}
		if time.Unix(0, iv.StartUnixNs).Before(settle) {
			transition += bad
			continue
		}
		after += bad
		afterOK += good
	}
	errWindow := "none"
	if !lastErr.IsZero() {
		errWindow = fmt.Sprintf("errors end by +%s", lastErr.Sub(at).Round(100*time.Millisecond))
	}
	figure(t, "cassandra-nodes: h3's node stopped at +%s (systemctl stop took %s): %d OK, %d failed %v (%d while it stopped, %s), %d OK and %d failed after +%s; exit %d",
		at.Sub(l.start).Round(100*time.Millisecond), took.Round(100*time.Millisecond), ok, failed, by, transition, errWindow, afterOK, after,
		settle.Sub(l.start).Round(100*time.Millisecond), res.code)
	// On a loaded machine the node's orderly stop can take half a minute
	// (its shutdown hooks), and the run may end before the stop settles:
	// then a short run with h3 still down shows QUORUM holding instead of
	// the tail of this one (the run's length cannot follow the stop).
	if end := lastEnd(rj); afterOK == 0 && after == 0 && end.Before(settle.Add(5*time.Second)) {
		figure(t, "cassandra-nodes: the run ended %s after the stop settled: a run with h3 down follows",
			end.Sub(settle).Round(100*time.Millisecond))
		r := e.faultRun("one-node-down", []string{"maxexecutiontime=10"})
		l, _ := e.startRun(t, r, 6*time.Second)
		res := l.wait(t, r)
		rj := res.bundle(t)
		if res.code != 0 || rj.Status != "complete" {
			t.Fatalf("one node down: exit %d status %q\n%s", res.code, rj.Status, res.out)
		}
		checkExact(t, rj, -1)
		afterOK, after, by = returns(rj)
		figure(t, "cassandra-nodes: with h3 down: %d OK, %d failed %v", afterOK, after, by)
	}
	if after != 0 || afterOK == 0 {
		t.Fatalf("with one node of three stopped, QUORUM holds, yet %d operations failed (and %d succeeded) once the stop had settled: %v", after, afterOK, by)
	}
	if float64(failed) > 0.01*float64(ok) {
		t.Fatalf("stopping one node failed %d of %d operations: %v", failed, ok+failed, by)
	}

	r = e.faultRun("two-nodes-stopped", []string{"ycsbctl.maxerrorrate=0.01"})
	l, at = e.startRun(t, r, 6*time.Second)
	took = stopNode(2)
	res = l.wait(t, r)
	rj = res.bundle(t)
	checkIntervals(t, rj)
	ok, failed, by = returns(rj)
	figure(t, "cassandra-nodes: h2's node stopped too at +%s (took %s): %d OK, %d failed %v, exit %d (%s)",
		at.Sub(l.start).Round(100*time.Millisecond), took.Round(100*time.Millisecond), ok, failed, by, res.code, rj.ExitReason)
	if failed == 0 || res.code != 5 || rj.ExitCode != 5 {
		t.Fatalf("two nodes stopped: %d failed %v, exit %d (run.json %d %s), want errors and exit 5 (ycsbctl.maxerrorrate)\n%s",
			failed, by, res.code, rj.ExitCode, rj.ExitReason, res.out)
	}
	for code := range by {
		if strings.HasSuffix(code, "=OK") {
			continue
		}
		if !strings.Contains(res.out, "Return="+strings.SplitN(code, "=", 2)[1]) {
			t.Fatalf("return code %s not in the summary:\n%s", code, res.out)
		}
	}

	start := time.Now()
	for _, n := range []int{2, 3} {
		if out, err := e.clusterErr("exec", fmt.Sprintf("h%d", n), "systemctl", "start", "cassandra"); err != nil {
			t.Fatalf("start h%d's node: %v\n%s", n, err, out)
		}
	}
	for _, n := range []int{2, 3} {
		if err := e.waitNode(t, n, nodeStartMax); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.waitUN(); err != nil {
		t.Fatal(err)
	}
	figure(t, "cassandra-nodes: h2 and h3 serving again, 3 nodes UN, %s after restart", time.Since(start).Round(100*time.Millisecond))
	if n := e.countRows(t); n != cassRecords {
		t.Fatalf("after the restarts the table holds %d rows, want %d", n, cassRecords)
	}
}

//go:build integration

package integration

// The fault matrix: one table of faults, each injected into a real
// coordinator run of real agent processes (ycsbctl built from this
// checkout) at a chosen phase, and the same invariants checked after
// every one (etcd's robustness tests are the model):
//
//   - the coordinator exits within a bound after the fault, derived from
//     the row (exitBound);
//   - its exit code and run.json agree and say what happened (status,
//     agent states, the reason in the coordinator's words);
//   - every interval an agent measured and reported is counted once: what
//     arrived from an agent equals its own final account, and the merged
//     total is the sum of what arrived;
//   - every live agent is idle within its lease;
//   - a next run on the same agents (dead ones restarted on their port) is
//     exact: complete, exit 0, every operation counted.
//
// The faults, by whom and when (this is every row; docs/testing.md has
// the same list):
//
//	agent SIGKILL        prepare, before start, mid-run (abort, continue), mid-run and restarted
//	agent SIGSTOP        mid-run within the lease, mid-run past the lease
//	agent SIGTERM        prepare, before start (Start arrived; Start held in the bridge),
//	                     mid-run (continue, abort, twice, while cut off), at the end
//	coordinator SIGKILL  prepare, before start, mid-run, at the end
//	coordinator SIGSTOP  before start, mid-run within the lease, mid-run past the lease
//	coordinator SIGTERM  before start, mid-run
//	coordinator SIGINT   prepare, mid-run (once, twice, twice with a dead agent), during the
//	                     release wait (a second SIGINT; none) with an agent frozen
//	network (bridge)     cut during prepare; mid-run: cut past the lease, dropped packets past
//	                     the lease, a short cut, a 400 ms delay
//	who may run          a wrong token, a certificate of another CA, another version, agent
//	                     properties that rewrite the plan, a rival coordinator; and the
//	                     warnings of a distributed run
//
// Not covered: an agent killed or paused at the end or paused before the
// start; the coordinator paused or stopped by SIGTERM while preparing or
// at the end; network faults at the start other than a held Start.
// No database is needed (the basic adapter's simulated delay stands in
// for one; a silent listener posing as MongoDB makes a prepare last), so
// what is tested is the harness itself. Each row prints the time its
// fault took to be detected and handled, and its bound (grep
// FAULT-MATRIX).

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/testutil/bridge"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Sizes of the matrix: short leases and timeouts, status lines every
// half second, so that each row takes seconds.
const (
	mxLease        = 3 * time.Second
	mxAgentTimeout = 2 * time.Second
	mxAgents       = 3
)

// mxMongoConnect is the connect timeout of the silent "MongoDB": longer
// than the lease, so that a prepare outlives its coordinator.
const mxMongoConnect = 5 * time.Second

// What bounds a row's exit (see exitBound). mxEndGrace is the longest the
// coordinator may add once its run's end is decided: a graceful stop
// waits ycsbctl.stopgrace (10 s) for calls in flight, then aborts them and
// waits 1 s for the last intervals and 1 s for the release; a run that
// ended by itself waits up to 10 s for its agents to confirm the release.
// mxMargin is for a loaded 2-core machine (processes starting, GC,
// scheduling): the bound catches hangs, it does not time anything.
const (
	mxEndGrace          = 12 * time.Second
	mxMargin            = 15 * time.Second
	mxAgentTimeoutOwn   = 3 * time.Second // the coordinator's default --agent-timeout
	mxReleaseWait       = 10 * time.Second
	mxCoordinatorStderr = 30000 // how much of the coordinator's stderr a failing row prints
	// An agent stopped on its host (SIGTERM) waits mxAgentStopGrace for
	// its calls in flight, then up to mxHandOverWait for the coordinator
	// to acknowledge its last intervals and Final.
	mxAgentStopGrace = time.Second
	mxHandOverWait   = 5 * time.Second
)

// killed is the exit code a test sees for a process it SIGKILLed.
const killed = -1

// faultRow is one fault and what must be true after it.
type faultRow struct {
	name string
	// agents (mxAgents when 0), their lease (mxLease when 0) and extra
	// flags for agent i; bridged puts a bridge in front of every agent.
	agents    int
	lease     time.Duration
	agentArgs func(e *faultEnv, i int) []string
	bridged   bool
	// run is the coordinator's command (mxTimedRun(6) when nil); extra is
	// added to it.
	run   func(e *faultEnv) []string
	extra []string
	// when waits for the phase the fault is injected in (mid-run when
	// nil); fault injects it.
	when  func(e *faultEnv)
	fault func(e *faultEnv)
	// exit is the coordinator's exit code (killed for a coordinator the
	// row SIGKILLs); status is run.json's ("" when the run never started
	// and no bundle may exist).
	exit   int
	status string
	// stderr and notStderr are what the coordinator must and must not say.
	stderr    []string
	notStderr []string
	// states are run.json's agent states by index.
	states map[int]string
	// detect marks the fault's detection: a line of the coordinator's
	// (or, with detectAgent, of any agent's) stderr.
	detect      string
	detectAgent bool
	// dead are the agents the row leaves dead; they are restarted for the
	// next run.
	dead []int
	// coordVersion runs the coordinator from a build announcing this
	// version.
	coordVersion string
	// check is the row's own assertion, after the common ones.
	check func(e *faultEnv, res *cliResult, run *faultRun)
	// idleSlack is how much longer than the lease a live agent may take to
	// be idle (its database closing).
	idleSlack time.Duration
	// stops: the fault ends the run (the operator stops or aborts it), so
	// what was left of the planned run does not count in the exit bound.
	stops bool
}

// faultEnv is one row's world: its agents, its coordinator, its bundle.
type faultEnv struct {
	t       *testing.T
	row     *faultRow
	agents  []*mxAgent
	coord   *cliProc
	dir     string
	faultAt time.Time
	// token and tls are what the coordinator of the next run presents.
	token string
	tls   []string
	// aux holds what a row prepares for itself (a listener, certificates).
	aux map[string]string
	// runFor is how long the row's run lasts when nothing stops it (its
	// time budget, or how long its prepare may last); set by the run's
	// builder (mxTimedRun, mxLoad, mxSilentMongo).
	runFor time.Duration
	// frozen are processes the fault left SIGSTOPped; they are let go
	// (SIGCONT) as soon as the coordinator has exited.
	frozen []*cliProc
}

// freeze SIGSTOPs p until the coordinator has exited.
func (e *faultEnv) freeze(p *cliProc) {
	e.t.Helper()
	sig(e, p, syscall.SIGSTOP)
	e.frozen = append(e.frozen, p)
}

func (e *faultEnv) thaw() {
	for _, p := range e.frozen {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
	}
	e.frozen = nil
}

// exitBound is how long after its fault a row's coordinator may take to
// exit before the row fails as a hang: what is left of its run (all of
// it, at most; nothing when the fault stops the run), its --agent-timeout
// (finding a silent agent), mxEndGrace (ending) and mxMargin. The issue
// that asked for the matrix saw an 8 s run still going at 43 s after an
// agent was killed: that row's bound is 37 s.
func (e *faultEnv) exitBound(args []string) time.Duration {
	timeout := mxAgentTimeoutOwn
	for i, a := range args {
		if a == "--agent-timeout" && i+1 < len(args) {
			d, err := time.ParseDuration(args[i+1])
			require.NoError(e.t, err, "--agent-timeout %s", args[i+1])
			timeout = d
		}
	}
	run := e.runFor
	if e.row.stops {
		run, timeout = 0, 0
	}
	return run + timeout + mxEndGrace + mxMargin
}

// hang fails a row whose coordinator did not exit within its bound: it
// asks the coordinator for its goroutines (SIGQUIT makes a Go program
// print them and exit) and prints those running ycsbctl's own code, after
// every process' last words.
func (e *faultEnv) hang(bound time.Duration, args []string) {
	e.t.Helper()
	e.thaw()
	before := e.coord.stderr.String()
	_ = e.coord.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-e.coord.done:
	case <-time.After(5 * time.Second):
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the coordinator did not exit within %s of the fault (run %s, end grace %s, margin %s, plus its agent timeout)\n",
		bound, e.runFor, mxEndGrace, mxMargin)
	fmt.Fprintf(&b, "--- coordinator %s ---\n%s\n", strings.Join(args, " "), tail(before, 4000))
	for i, a := range e.agents {
		if a.proc != nil {
			fmt.Fprintf(&b, "--- agent %d (%s) ---\n%s\n", i, a.addr, tail(a.proc.stderr.String(), 3000))
		}
	}
	var own []string
	for _, g := range strings.Split(strings.TrimPrefix(e.coord.stderr.String(), before), "\n\n") {
		if strings.Contains(g, "github.com/ycsbctl/ycsbctl/") {
			own = append(own, g)
		}
	}
	fmt.Fprintf(&b, "--- the coordinator's goroutines in ycsbctl code ---\n%s\n", tail(strings.Join(own, "\n\n"), mxCoordinatorStderr))
	e.t.Fatal(b.String())
}

type mxAgent struct {
	addr string // where it listens
	dial string // what the coordinator dials (a bridge, or addr)
	args []string
	proc *cliProc
	br   *bridge.Bridge
}

func (e *faultEnv) startAgent(i int) {
	a := e.agents[i]
	a.proc = startCLI(e.t, 10*time.Minute, "", append([]string{"agent", "--listen", a.addr}, a.args...)...)
	waitListening(e.t, a.addr, a.proc, 30*time.Second)
}

func (e *faultEnv) dials() string {
	var d []string
	for _, a := range e.agents {
		d = append(d, a.dial)
	}
	return strings.Join(d, ",")
}

// mxTimedRun is a timed, paced run of workload A on the basic adapter.
func mxTimedRun(seconds int) func(e *faultEnv) []string {
	return func(e *faultEnv) []string {
		e.runFor = time.Duration(seconds) * time.Second
		return []string{"coordinator", "run", "basic", "--agents", e.dials(), "-P", "workloada",
			"-p", "recordcount=3000", "-p", "operationcount=0", "-p", "maxexecutiontime=" + strconv.Itoa(seconds), "-target", "600",
			"-p", "basicdb.verbose=false", "-p", "basicdb.simulatedelay=1", "-p", "status.interval=0.5", "-s",
			"--results", e.dir, "--agent-timeout", mxAgentTimeout.String()}
	}
}

// mxLoad is a load of a fixed number of records: every agent finishes its
// share by itself.
func mxLoad(records int) func(e *faultEnv) []string {
	return func(e *faultEnv) []string {
		e.runFor = time.Duration(records) * time.Second / 1500
		return []string{"coordinator", "load", "basic", "--agents", e.dials(), "-p", "recordcount=" + strconv.Itoa(records),
			"-target", "1500", "-p", "basicdb.verbose=false", "-p", "status.interval=0.5", "-s",
			"--results", e.dir, "--agent-timeout", mxAgentTimeout.String()}
	}
}

// mxLastSlow makes agent 2 slower than the others at a load (exactly
// 3 ms a call, where the others take none, so ~3 s for its third of
// mxLoad(3000) against ~2 s): "at the end" rows fault when the first
// agents have finished their shares, and the coordinator must still be
// there. Without it a quiet machine ended the whole load within the
// 20 ms the test takes to see an agent's "finished:" line, and the
// coordinator was gone before its SIGKILL ("os: process already
// finished").
func mxLastSlow(e *faultEnv, i int) []string {
	if i != 2 {
		return nil
	}
	return []string{"-p", "basicdb.simulatedelay=3", "-p", "basicdb.randomizedelay=false"}
}

// mxSilentMongo is a run against a "MongoDB" that accepts connections and
// never answers: every agent's prepare lasts until the fault (or
// mxMongoConnect). Closing a driver that is still connecting can take as
// long again, so its rows allow that much more for the agents to be idle.
func mxSilentMongo(e *faultEnv) []string {
	e.runFor = mxMongoConnect
	return []string{"coordinator", "run", "mongodb", "--agents", e.dials(), "-P", "workloada",
		"-p", "mongodb.url=mongodb://" + e.aux["silent"] + "/ycsb", "-p", "mongodb.connecttimeout=" + strconv.FormatInt(mxMongoConnect.Milliseconds(), 10),
		"-p", "recordcount=1000", "-p", "operationcount=1000", "-p", "status.interval=0.5", "-s",
		"--results", e.dir, "--agent-timeout", mxAgentTimeout.String()}
}

// silentListener accepts connections and never answers.
func silentListener(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// waitLine waits for a line of p's stderr containing s, printed after
// since, and returns when it came.
func waitLine(t *testing.T, p *cliProc, s string, since time.Time, within time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if at, ok := lineAt(p, s, since); ok {
			return at
		}
		select {
		case <-p.done:
			if at, ok := lineAt(p, s, since); ok {
				return at
			}
			t.Fatalf("process ended before printing %q:\n%s", s, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %s:\n%s", s, within, tail(p.stderr.String(), 4000))
		}
	}
}

func lineAt(p *cliProc, s string, since time.Time) (time.Time, bool) {
	for _, l := range p.stderr.Lines() {
		if !l.at.Before(since) && strings.Contains(l.text, s) {
			return l.at, true
		}
	}
	return time.Time{}, false
}

// startInstant is the instant the coordinator announced for the start
// ("Starting test on 3 agents at 15:04:05.000."), on this machine's clock.
func startInstant(e *faultEnv) time.Time {
	e.t.Helper()
	at := waitLine(e.t, e.coord, "Starting test on", e.coord.start, time.Minute)
	for _, l := range e.coord.stderr.Lines() {
		i := strings.Index(l.text, "Starting test on")
		if i < 0 || l.at.Before(at) {
			continue
		}
		f := strings.Fields(strings.TrimSuffix(l.text[i:], "."))
		clock, err := time.ParseInLocation("15:04:05.000", f[len(f)-1], time.Local)
		require.NoError(e.t, err, "%q", l.text)
		y, m, d := at.Date()
		start := time.Date(y, m, d, clock.Hour(), clock.Minute(), clock.Second(), clock.Nanosecond(), time.Local)
		if start.Before(at.Add(-time.Hour)) {
			start = start.AddDate(0, 0, 1) // announced just before midnight
		}
		return start
	}
	e.t.Fatalf("no start instant in %q", at)
	return time.Time{}
}

// beforeStart waits until d before the announced start instant.
func beforeStart(d time.Duration) func(e *faultEnv) {
	return func(e *faultEnv) {
		at := startInstant(e).Add(-d)
		require.True(e.t, time.Now().Before(at), "the start instant was announced less than %s ahead:\n%s", d, e.coord.stderr.String())
		time.Sleep(time.Until(at))
	}
}

// intoRelease brings the coordinator, stopped gracefully by one SIGINT,
// into its wait for the agents to confirm their release, with agent 2
// frozen after it handed over its account: it is finished, so the
// coordinator waits for its confirmation, which cannot come. Agent 0 is
// paused meanwhile (shorter than the row's agent timeout and lease) so
// that the run cannot end before agent 2 is frozen; once it goes on, the
// run ends and the coordinator releases everyone. It returns when agent 0
// has confirmed its release: the coordinator's loop has ended.
func intoRelease(e *faultEnv) {
	a0, a2 := e.agents[0].proc, e.agents[2].proc
	sig(e, a0, syscall.SIGSTOP)
	sig(e, e.coord, syscall.SIGINT)
	waitLine(e.t, a2, "finished:", e.faultAt, 30*time.Second)
	// Its final account is on the wire; the coordinator, running, reads
	// it at once. A second is plenty, even on a loaded machine (were it
	// not read, agent 2 would be lost after the agent timeout, and the row
	// would fail naming its state).
	time.Sleep(time.Second)
	e.freeze(a2)
	sig(e, a0, syscall.SIGCONT)
	waitLine(e.t, a0, "released (coordinator released the run)", e.faultAt, 30*time.Second)
}

// midRun waits until the coordinator has printed two status lines.
func midRun(e *faultEnv) {
	at := waitLine(e.t, e.coord, "Starting test on", e.coord.start, time.Minute)
	waitLine(e.t, e.coord, "current ops/sec", at, 30*time.Second)
	waitLine(e.t, e.coord, "current ops/sec", time.Now(), 30*time.Second)
}

func atLine(s string) func(e *faultEnv) {
	return func(e *faultEnv) { waitLine(e.t, e.coord, s, e.coord.start, time.Minute) }
}

func atAgentLine(i int, s string) func(e *faultEnv) {
	return func(e *faultEnv) { waitLine(e.t, e.agents[i].proc, s, e.coord.start, time.Minute) }
}

// fromStart is the fault of a row whose coordinator is wrong from its
// start (token, certificate, version).
func fromStart(e *faultEnv) { e.faultAt = e.coord.start }

func sig(e *faultEnv, p *cliProc, s syscall.Signal) {
	e.t.Helper()
	require.NoError(e.t, p.cmd.Process.Signal(s))
}

func signalAgent(i int, s syscall.Signal) func(e *faultEnv) {
	return func(e *faultEnv) { sig(e, e.agents[i].proc, s) }
}

// pause stops p for d, then lets it go on.
func pause(e *faultEnv, p *cliProc, d time.Duration) {
	sig(e, p, syscall.SIGSTOP)
	time.Sleep(d)
	sig(e, p, syscall.SIGCONT)
}

// idle waits until the agent at addr holds no run.
func (e *faultEnv) idle(addr string, within time.Duration) time.Duration {
	e.t.Helper()
	var files *transport.TLSFiles
	if len(e.tls) == 6 {
		files = &transport.TLSFiles{Cert: e.tls[1], Key: e.tls[3], CA: e.tls[5]}
	}
	cc, err := transport.Dial(addr, files, e.token, transport.Identity{Version: version.Version, Protocol: version.Protocol})
	require.NoError(e.t, err)
	defer func() { _ = cc.Close() }()
	start := time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		r, err := pb.NewAgentClient(cc).Ping(ctx, &pb.PingRequest{})
		cancel()
		if err == nil && r.BusyRun == "" {
			return time.Since(start)
		}
		if time.Since(start) > within {
			e.t.Fatalf("agent %s still busy (%v, %v) %s after the row", addr, r, err, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// matrix rows' own checks.
func agentFinal(run *faultRun, i int) *struct {
	Operations int64  `json:"operations"`
	Stopped    string `json:"stopped"`
} {
	return run.Agents[i].Final
}

func faultRows() []faultRow {
	token := func(tok string) func(e *faultEnv, i int) []string {
		return func(e *faultEnv, i int) []string {
			f := filepath.Join(e.t.TempDir(), "token")
			require.NoError(e.t, os.WriteFile(f, []byte(tok), 0o600))
			return []string{"--token-file", f}
		}
	}
	return []faultRow{
		// --- an agent killed (SIGKILL) -----------------------------------
		{name: "agent-kill-prepare", run: mxSilentMongo, idleSlack: mxMongoConnect, when: atAgentLine(1, "preparing"), fault: signalAgent(1, syscall.SIGKILL),
			exit: 1, stderr: []string{"agent 1 ("}, detect: "agent 1 (", dead: []int{1}},
		// Killed once the start is announced, before the start instant:
		// lost by its silence, the others run their shares.
		{name: "agent-kill-before-start", extra: []string{"--on-agent-loss", "continue", "-p", "ycsbctl.metrics.startdelay=2"},
			when: atLine("Starting test on"), fault: signalAgent(2, syscall.SIGKILL),
			exit: 0, status: "partial", states: map[int]string{0: "finished", 1: "finished", 2: "lost"}, detect: " lost: ", dead: []int{2},
			stderr: []string{"WARNING: results are partial"},
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				assert.Equal(e.t, int64(0), run.Agents[2].Operations)
				assert.Greater(e.t, run.Agents[0].Operations+run.Agents[1].Operations, int64(0), "the survivors ran their shares")
			}},
		{name: "agent-kill-midrun-abort", fault: signalAgent(2, syscall.SIGKILL), exit: 3, status: "aborted",
			states: map[int]string{2: "lost"}, detect: " lost: ", dead: []int{2},
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				for i := 0; i < 2; i++ {
					f := agentFinal(run, i)
					require.NotNil(e.t, f, "survivor %d", i)
					assert.Contains(e.t, f.Stopped, "lost", "survivor %d was stopped for the loss", i)
				}
			}},
		{name: "agent-kill-midrun-continue", extra: []string{"--on-agent-loss", "continue"}, fault: signalAgent(2, syscall.SIGKILL),
			exit: 0, status: "partial", states: map[int]string{0: "finished", 1: "finished", 2: "lost"}, detect: " lost: ", dead: []int{2},
			stderr: []string{"WARNING: results are partial"}},

		// --- an agent paused (SIGSTOP) -----------------------------------
		{name: "agent-stop-within-lease", lease: 8 * time.Second, extra: []string{"--on-agent-loss", "continue"},
			fault: func(e *faultEnv) { pause(e, e.agents[2].proc, 3*time.Second) },
			exit:  0, status: "complete", detect: " lost: ",
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				assert.Contains(e.t, strings.Join(run.StatusReasons, ";"), "came back")
			}},

		// Paused longer than its lease: lost after the agent timeout; once
		// let go, the agent finds its lease run out and stops its load (it
		// must not carry on because the coordinator's heartbeats, queued
		// on its stream meanwhile, are read first), and what it measured
		// until then arrives and counts.
		{name: "agent-stop-past-lease", extra: []string{"--on-agent-loss", "continue"}, run: mxTimedRun(8),
			fault: func(e *faultEnv) { pause(e, e.agents[2].proc, mxLease+2*time.Second) },
			exit:  0, status: "partial", states: map[int]string{0: "finished", 1: "finished", 2: "lost"}, detect: " lost: ",
			stderr: []string{"WARNING: results are partial"},
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				p := e.agents[2].proc
				at, stopped := lineAt(p, "aborting load: no word from", e.faultAt)
				assert.True(e.t, stopped, "the agent stopped its load by its lease once let go:\n%s", p.stderr.String())
				_, again := lineAt(p, "load stopped", at)
				assert.True(e.t, again, "its load ended")
				f := agentFinal(run, 2)
				require.NotNil(e.t, f, "the paused agent's account arrived")
				assert.Contains(e.t, f.Stopped, "(lease)")
				assert.Contains(e.t, strings.Join(run.StatusReasons, ";"), "agent 2")
			}},

		// --- an agent stopped on its host (SIGTERM) ----------------------
		{name: "agent-term-prepare", run: mxSilentMongo, idleSlack: mxMongoConnect, when: atAgentLine(1, "preparing"), fault: signalAgent(1, syscall.SIGTERM),
			exit: 1, stderr: []string{"agent 1 (", "failed to prepare: agent stopped by SIGTERM on its host"}, detect: "failed to prepare", dead: []int{1}},
		{name: "agent-term-before-start", extra: []string{"--on-agent-loss", "continue", "-p", "ycsbctl.metrics.startdelay=2"},
			when: atLine("Starting test on"), fault: signalAgent(2, syscall.SIGTERM),
			exit: 0, status: "partial", states: map[int]string{0: "finished", 1: "finished", 2: "stopped"}, detect: "agent 2 (", dead: []int{2},
			stderr: []string{"agent stopped by SIGTERM on its host"}, notStderr: []string{" lost: "}},
		// The same with the Start still on its way to the agent (held by
		// its bridge): whether the Start arrived before the signal must
		// not change the verdict (it once turned a departure into a
		// failed run, exit 1, on a loaded machine).
		{name: "agent-term-start-in-flight", bridged: true, extra: []string{"--on-agent-loss", "continue"},
			when: func(e *faultEnv) {
				waitLine(e.t, e.agents[2].proc, "preparing", e.coord.start, time.Minute)
				e.agents[2].br.Delay(1500 * time.Millisecond)
				waitLine(e.t, e.coord, "Starting test on", e.coord.start, time.Minute)
			},
			fault: signalAgent(2, syscall.SIGTERM),
			exit:  0, status: "partial", states: map[int]string{0: "finished", 1: "finished", 2: "stopped"}, detect: "agent 2 (", dead: []int{2},
			stderr: []string{"agent stopped by SIGTERM on its host"}, notStderr: []string{" lost: ", "failed"}},
		{name: "agent-term-midrun-continue", extra: []string{"--on-agent-loss", "continue"}, fault: signalAgent(2, syscall.SIGTERM),
			exit: 0, status: "partial", states: map[int]string{0: "finished", 1: "finished", 2: "stopped"}, detect: "agent 2 (", dead: []int{2},
			stderr: []string{"agent stopped by SIGTERM on its host"}, notStderr: []string{" lost: ", "silent for"},
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				f := agentFinal(run, 2)
				require.NotNil(e.t, f, "the stopped agent's final account arrived")
				assert.Greater(e.t, f.Operations, int64(0))
				assert.Contains(e.t, f.Stopped, "SIGTERM")
			}},
		{name: "agent-term-midrun-abort", fault: signalAgent(2, syscall.SIGTERM),
			exit: 3, status: "aborted", states: map[int]string{2: "stopped"}, detect: "agent 2 (", dead: []int{2},
			stderr: []string{"agent stopped by SIGTERM on its host"}, notStderr: []string{" lost: "}},
		// A second signal ends the agent at once, without waiting for its
		// hand-over to be acknowledged.
		// SIGTERM while the bridge cuts the agent off: its hand-over cannot
		// be acknowledged, and the agent exits once its bounded wait is
		// over; the coordinator, which never got its account, has it lost.
		{name: "agent-term-while-partitioned", bridged: true, extra: []string{"--on-agent-loss", "continue"}, run: mxTimedRun(8),
			fault: func(e *faultEnv) {
				a := e.agents[1]
				a.br.Cut()
				sig(e, a.proc, syscall.SIGTERM)
				bound := mxAgentStopGrace + mxHandOverWait + 5*time.Second
				select {
				case <-a.proc.done:
				case <-time.After(bound):
					e.t.Fatalf("the agent did not exit within %s of its SIGTERM (cut off):\n%s", bound, a.proc.stderr.String())
				}
				e.aux["agent-exit"] = time.Since(e.faultAt).Round(10 * time.Millisecond).String()
				a.br.Restore()
			},
			exit: 0, status: "partial", states: map[int]string{0: "finished", 1: "lost", 2: "finished"}, detect: " lost: ", dead: []int{1},
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				p := e.agents[1].proc
				assert.Contains(e.t, p.res.stderr, "stopping the load: agent stopped by SIGTERM on its host")
				assert.Contains(e.t, p.res.stderr, "the coordinator did not acknowledge everything within "+mxHandOverWait.String())
				e.t.Logf("the cut-off agent exited %s after its SIGTERM", e.aux["agent-exit"])
			}},
		{name: "agent-term-twice", extra: []string{"--on-agent-loss", "continue"},
			fault: func(e *faultEnv) {
				p := e.agents[2].proc
				sig(e, p, syscall.SIGTERM)
				sig(e, p, syscall.SIGTERM)
				select {
				case <-p.done:
				case <-time.After(3 * time.Second):
					e.t.Fatalf("the agent did not end within 3s of its second SIGTERM:\n%s", p.stderr.String())
				}
			},
			exit: 0, status: "partial", states: map[int]string{0: "finished", 1: "finished"}, detect: "agent 2 (", dead: []int{2}},
		{name: "agent-term-at-end", run: mxLoad(3000), agentArgs: mxLastSlow, when: atAgentLine(1, "finished:"), fault: signalAgent(1, syscall.SIGTERM),
			exit: 0, status: "complete", dead: []int{1}, states: map[int]string{0: "finished", 1: "finished", 2: "finished"},
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				assert.True(e.t, e.coord.start.Add(res.took).After(e.faultAt), "the run was still going (agent 2 loading) when agent 1 was stopped")
			}},

		// --- the coordinator killed (SIGKILL) ----------------------------
		{name: "coordinator-kill-prepare", run: mxSilentMongo, idleSlack: mxMongoConnect, when: atAgentLine(2, "preparing"),
			fault: func(e *faultEnv) { sig(e, e.coord, syscall.SIGKILL) }, exit: killed, detect: "released (no word from coordinator", detectAgent: true},
		{name: "coordinator-kill-before-start", extra: []string{"-p", "ycsbctl.metrics.startdelay=2"}, when: atLine("Starting test on"),
			fault: func(e *faultEnv) { sig(e, e.coord, syscall.SIGKILL) }, exit: killed,
			detect: "not starting the load", detectAgent: true,
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				for i, a := range e.agents {
					waitLine(e.t, a.proc, "finished: 0 operations", e.faultAt, 10*time.Second)
					_, started := lineAt(a.proc, "load stopped", e.faultAt)
					assert.False(e.t, started, "agent %d ran a load without its coordinator", i)
				}
			}},
		{name: "coordinator-kill-midrun", run: mxTimedRun(30), fault: func(e *faultEnv) { sig(e, e.coord, syscall.SIGKILL) }, exit: killed,
			detect: "aborting load: no word from coordinator", detectAgent: true,
			check: func(e *faultEnv, _ *cliResult, _ *faultRun) {
				// What was merged before the kill is not lost.
				r := runCLI(e.t, time.Minute, "", "report", e.dir)
				requireExit(e.t, r, 0)
				assert.Contains(e.t, r.stderr, "Recovered the bundle of an unfinished run")
				recovered := readFaultRun(e.t, e.dir)
				assert.Equal(e.t, "aborted", recovered.Status)
				assert.Greater(e.t, recovered.Summary.Operations, int64(0))
			}},
		{name: "coordinator-kill-at-end", run: mxLoad(3000), agentArgs: mxLastSlow, when: atAgentLine(0, "finished:"),
			fault: func(e *faultEnv) { sig(e, e.coord, syscall.SIGKILL) }, exit: killed},

		// --- the coordinator stopped (SIGTERM) ---------------------------
		// Stopped gracefully after announcing the start, before the start
		// instant: no agent runs a load, and the run is a stopped one of
		// nothing.
		{name: "coordinator-term-before-start", stops: true, extra: []string{"-p", "ycsbctl.metrics.startdelay=2"}, when: atLine("Starting test on"),
			fault: func(e *faultEnv) { sig(e, e.coord, syscall.SIGTERM) },
			exit:  6, status: "stopped", states: map[int]string{0: "finished", 1: "finished", 2: "finished"}, detect: "Stopping all agents gracefully",
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				for i, a := range e.agents {
					f := agentFinal(run, i)
					require.NotNil(e.t, f, "agent %d's account arrived", i)
					assert.Equal(e.t, int64(0), f.Operations, "agent %d ran no load:\n%s", i, a.proc.stderr.String())
				}
				assert.Equal(e.t, int64(0), run.Summary.Operations)
			}},

		// --- the coordinator paused (SIGSTOP) ----------------------------
		// Frozen 1.5 s before the start instant (its last heartbeat is
		// older still when the agents check, 100 ms before it), past the
		// agents' lease: no agent starts its load, each ends the run by its
		// lease, and the coordinator, once it runs again, says it stalled.
		// The agents used to accept up to 2 s of silence, and so ran their
		// load until their lease.
		{name: "coordinator-stop-before-start", extra: []string{"-p", "ycsbctl.metrics.startdelay=2"}, when: beforeStart(1500 * time.Millisecond),
			fault: func(e *faultEnv) { pause(e, e.coord, mxLease+1500*time.Millisecond) },
			exit:  1, status: "coordinator-stalled", states: map[int]string{0: "stopped", 1: "stopped", 2: "stopped"},
			detect: "not starting the load", detectAgent: true, stderr: []string{"the coordinator was stalled for"}, notStderr: []string{" lost: "},
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				for i, a := range e.agents {
					_, refused := lineAt(a.proc, "not starting the load", e.faultAt)
					assert.True(e.t, refused, "agent %d refused to start without its coordinator:\n%s", i, a.proc.stderr.String())
					_, started := lineAt(a.proc, "load stopped", e.faultAt)
					assert.False(e.t, started, "agent %d ran a load without its coordinator:\n%s", i, a.proc.stderr.String())
					_, released := lineAt(a.proc, "(lease))", e.faultAt)
					assert.True(e.t, released, "agent %d ended the run by its lease", i)
					f := agentFinal(run, i)
					require.NotNil(e.t, f, "agent %d's account arrived", i)
					assert.Equal(e.t, int64(0), f.Operations)
					assert.Contains(e.t, f.Stopped, "did not start")
				}
			}},
		{name: "coordinator-stop-within-lease", lease: 8 * time.Second, run: mxTimedRun(8),
			fault: func(e *faultEnv) { pause(e, e.coord, 3*time.Second) },
			exit:  0, status: "complete", detect: "coordinator stalled for",
			stderr: []string{"coordinator stalled for"}, notStderr: []string{" lost: "}},
		{name: "coordinator-stop-past-lease", run: mxTimedRun(10),
			fault: func(e *faultEnv) { pause(e, e.coord, mxLease+2*time.Second) },
			exit:  1, status: "coordinator-stalled", detect: "coordinator stalled for",
			states: map[int]string{0: "stopped", 1: "stopped", 2: "stopped"},
			stderr: []string{"the coordinator was stalled for", "stopped their load on their lease"}, notStderr: []string{" lost: "},
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				for i := range e.agents {
					f := agentFinal(run, i)
					require.NotNil(e.t, f, "agent %d handed over its account after the stall", i)
					assert.Contains(e.t, f.Stopped, "(lease)")
				}
			}},

		// --- the operator interrupts (SIGINT) ----------------------------
		// A second Ctrl-C after the run's end, while the coordinator waits
		// for an agent that cannot confirm its release (it used to wait the
		// whole 10 s release wait), ends the coordinator at once; the
		// results stay those of the graceful stop.
		{name: "coordinator-int-during-release", stops: true, lease: 5 * time.Second, run: mxTimedRun(60), extra: []string{"--agent-timeout", "4s"},
			fault: func(e *faultEnv) {
				intoRelease(e)
				e.faultAt = time.Now()
				sig(e, e.coord, syscall.SIGINT)
			},
			exit: 6, status: "stopped", states: map[int]string{0: "finished", 1: "finished", 2: "finished"}, detect: "not waiting",
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				ended := e.coord.start.Add(res.took)
				assert.Less(e.t, ended.Sub(e.faultAt), 3*time.Second, "the second Ctrl-C during the release wait ends the coordinator within a couple of seconds")
				assert.Contains(e.t, res.stderr, "agent 2 ("+e.agents[2].dial+") did not confirm the end of run")
			}},
		// Without it, the wait is bounded and names the agent that did not
		// confirm. ycsbctl.stopgrace is longer than the wait, so that the
		// wait alone ends it.
		{name: "coordinator-release-unconfirmed", stops: true, lease: 5 * time.Second, run: mxTimedRun(60), extra: []string{"--agent-timeout", "4s", "-p", "ycsbctl.stopgrace=60"},
			fault: func(e *faultEnv) {
				intoRelease(e)
				e.faultAt = time.Now()
			},
			exit: 6, status: "stopped", states: map[int]string{0: "finished", 1: "finished", 2: "finished"}, detect: "did not confirm the end of run",
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				ended := e.coord.start.Add(res.took)
				assert.Less(e.t, ended.Sub(e.faultAt), mxReleaseWait+5*time.Second, "the release wait is bounded")
				assert.Contains(e.t, res.stderr, "agent 2 ("+e.agents[2].dial+") did not confirm the end of run")
			}},
		{name: "coordinator-int-prepare", stops: true, run: mxSilentMongo, idleSlack: mxMongoConnect, when: atAgentLine(2, "preparing"),
			fault: func(e *faultEnv) { sig(e, e.coord, syscall.SIGINT) }, exit: 4, stderr: []string{"while agents were preparing"}, detect: "Interrupted"},
		// One Ctrl-C (or SIGTERM) stops the run gracefully: every call in
		// flight ends and is measured, the results are a whole measurement
		// of a shorter run.
		{name: "coordinator-int-once", stops: true, run: mxTimedRun(60), fault: func(e *faultEnv) { sig(e, e.coord, syscall.SIGINT) },
			exit: 6, status: "stopped", states: map[int]string{0: "finished", 1: "finished", 2: "finished"}, detect: "Stopping all agents gracefully",
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				assert.Contains(e.t, strings.Join(run.StatusReasons, ";"), "Stopped early")
			}},
		{name: "coordinator-term-once", stops: true, run: mxTimedRun(60), fault: func(e *faultEnv) { sig(e, e.coord, syscall.SIGTERM) },
			exit: 6, status: "stopped", states: map[int]string{0: "finished", 1: "finished", 2: "finished"}, detect: "Stopping all agents gracefully"},
		// Calls of 2 s: the first SIGINT's graceful stop cannot have ended
		// the run when the second, an abort, arrives.
		{name: "coordinator-int-twice", stops: true, run: mxTimedRun(60), extra: []string{"-p", "basicdb.simulatedelay=2000", "-p", "basicdb.randomizedelay=false"},
			fault: func(e *faultEnv) {
				sig(e, e.coord, syscall.SIGINT)
				time.Sleep(20 * time.Millisecond)
				_ = e.coord.cmd.Process.Signal(syscall.SIGINT)
			},
			exit: 4, status: "aborted", detect: "Stopping all agents gracefully"},
		// Two Ctrl-C end the coordinator within a couple of seconds,
		// whatever the timeouts, even with a dead agent it would wait for.
		{name: "coordinator-int-twice-dead-agent", stops: true, run: mxTimedRun(60), extra: []string{"--agent-timeout", "1m"},
			fault: func(e *faultEnv) {
				sig(e, e.agents[2].proc, syscall.SIGKILL)
				time.Sleep(time.Second)
				sig(e, e.coord, syscall.SIGINT)
				time.Sleep(200 * time.Millisecond)
				e.faultAt = time.Now()
				sig(e, e.coord, syscall.SIGINT)
			},
			exit: 4, status: "aborted", dead: []int{2}, detect: "Aborted: agents cancel",
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				ended := e.coord.start.Add(res.took)
				assert.Less(e.t, ended.Sub(e.faultAt), 3*time.Second, "the second Ctrl-C ends the coordinator within a couple of seconds")
			}},

		// --- the network ------------------------------------------------
		{name: "agent-partition-past-lease", bridged: true, extra: []string{"--on-agent-loss", "continue"}, run: mxTimedRun(10),
			fault: func(e *faultEnv) {
				e.agents[1].br.Cut()
				time.Sleep(mxLease + 2*time.Second)
				e.agents[1].br.Restore()
			},
			exit: 0, status: "partial", detect: " lost: ", stderr: []string{"WARNING: results are partial"},
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				assert.Contains(e.t, strings.Join(run.StatusReasons, ";"), "agent 1")
				assert.NotEmpty(e.t, run.Agents[1].MissingIntervals, "run.json names the intervals the agent missed")
				assert.Empty(e.t, run.Agents[0].MissingIntervals)
			}},
		// Cut off while its database is being opened, longer than the
		// agent timeout: preparing is all or nothing, so the run fails
		// naming the agent, and the cut-off agent frees itself by its
		// lease. The coordinator does not wait for the release of an agent
		// it has found silent (it used to wait the whole 10 s for it).
		{name: "agent-partition-prepare", bridged: true, run: mxSilentMongo, idleSlack: mxMongoConnect, when: atAgentLine(1, "preparing"),
			fault: func(e *faultEnv) { e.agents[1].br.Cut() },
			exit:  1, stderr: []string{"agent 1 (", "silent for", "while preparing"}, notStderr: []string{"did not confirm"}, detect: "while preparing",
			check: func(e *faultEnv, res *cliResult, run *faultRun) { e.agents[1].br.Restore() }},
		// A link that drops and comes back (no reset, as when a cable is
		// pulled): both sides lose each other, the agent stops on its
		// lease, and what it measured until then arrives once the link
		// is back.
		{name: "agent-blackhole-past-lease", bridged: true, extra: []string{"--on-agent-loss", "continue"}, run: mxTimedRun(10),
			fault: func(e *faultEnv) {
				e.agents[1].br.Delay(mxLease + 2*time.Second)
				time.Sleep(mxLease + 2*time.Second)
				e.agents[1].br.Delay(0)
			},
			exit: 0, status: "partial", states: map[int]string{0: "finished", 1: "lost", 2: "finished"}, detect: " lost: ",
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				f := agentFinal(run, 1)
				require.NotNil(e.t, f, "the cut-off agent's account arrived once the link was back")
				assert.Contains(e.t, f.Stopped, "(lease)")
				assert.Contains(e.t, strings.Join(run.StatusReasons, ";"), "cut off from the coordinator")
			}},
		{name: "agent-partition-within-timeout", bridged: true, run: mxTimedRun(6),
			fault: func(e *faultEnv) {
				e.agents[1].br.Cut()
				time.Sleep(800 * time.Millisecond)
				e.agents[1].br.Restore()
			},
			exit: 0, status: "complete", detect: "stream re-established"},
		{name: "agent-delay", bridged: true, run: mxTimedRun(6),
			fault: func(e *faultEnv) {
				e.agents[1].br.Delay(400 * time.Millisecond)
				time.Sleep(2 * time.Second)
				e.agents[1].br.Delay(0)
			},
			exit: 0, status: "complete", notStderr: []string{" lost: "}},

		// --- who may run -------------------------------------------------
		{name: "wrong-token", agentArgs: func(e *faultEnv, i int) []string { return token("right-token-0123456789")(e, i) },
			run: func(e *faultEnv) []string {
				e.token = "right-token-0123456789"
				return append(mxTimedRun(3)(e), "--token", "wrong-token-0123456789")
			},
			when: func(*faultEnv) {}, fault: fromStart, exit: 1, stderr: []string{"rejected the token"}, detect: "rejected the token"},
		{name: "wrong-cert", agents: 1,
			agentArgs: func(e *faultEnv, i int) []string {
				dir := e.t.TempDir()
				runCLI(e.t, time.Minute, "", "certs", "--dir", dir, "--hosts", "127.0.0.1")
				other := e.t.TempDir()
				runCLI(e.t, time.Minute, "", "certs", "--dir", other, "--hosts", "127.0.0.1")
				e.tls = []string{"--tls-cert", filepath.Join(dir, "coordinator.pem"), "--tls-key", filepath.Join(dir, "coordinator-key.pem"), "--tls-ca", filepath.Join(dir, "ca.pem")}
				e.aux["rogue"] = other
				return []string{"--tls-cert", filepath.Join(dir, "127.0.0.1", "agent.pem"), "--tls-key", filepath.Join(dir, "127.0.0.1", "agent-key.pem"), "--tls-ca", filepath.Join(dir, "ca.pem")}
			},
			run: func(e *faultEnv) []string {
				o := e.aux["rogue"]
				return append(mxTimedRun(3)(e), "--tls-cert", filepath.Join(o, "coordinator.pem"), "--tls-key", filepath.Join(o, "coordinator-key.pem"), "--tls-ca", filepath.Join(o, "ca.pem"))
			},
			when: func(*faultEnv) {}, fault: fromStart, exit: 1, stderr: []string{"TLS"}, detect: "TLS"},
		{name: "wrong-version", coordVersion: "v0.0.0-other", run: mxTimedRun(3),
			when: func(*faultEnv) {}, fault: fromStart, exit: 1, stderr: []string{"version mismatch", "v0.0.0-other"}, detect: "version mismatch"},
		// An agent whose own properties rewrite the plan refuses to start,
		// naming them; per-host properties are allowed and recorded.
		{name: "plan-rewriting-agent", agentArgs: func(e *faultEnv, i int) []string { return []string{"-p", "basicdb.simulatedelay=2"} },
			fault: func(e *faultEnv) {
				r := runCLI(e.t, time.Minute, "", "agent", "--listen", "127.0.0.1:0", "-p", "operationcount=50", "-p", "insertstart=0", "-p", "target=50", "-p", "hosts=db1")
				requireExit(e.t, r, 2)
				for _, want := range []string{"operationcount (the run's operation budget is split among the agents)", "insertstart", "target", "Ansible role's ycsbctl_agent_properties"} {
					assert.Contains(e.t, r.stderr, want)
				}
				assert.NotContains(e.t, r.stderr, "hosts (")
			},
			exit: 0, status: "complete",
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				for _, a := range run.Agents {
					assert.Equal(e.t, map[string]string{"basicdb.simulatedelay": "2"}, a.Properties, "run.json records what agent %s added", a.Address)
				}
			}},
		// A distributed run warns like a single host, once and before any
		// load: the coordinator's own parse (a typo with its suggestion,
		// proportions normalised, no recordcount), and what the agents'
		// own properties add, said once for all of them.
		{name: "warnings", agentArgs: func(e *faultEnv, i int) []string { return []string{"-p", "basicdb.simulatedelai=1"} },
			run: func(e *faultEnv) []string {
				return []string{"coordinator", "run", "basic", "--agents", e.dials(), "-p", "recordcout=3000", "-p", "readproportion=0.6",
					"-p", "operationcount=300", "-target", "1000", "-p", "basicdb.verbose=false", "-p", "status.interval=0.5", "--results", e.dir}
			},
			when: atLine("Starting test on"), fault: func(*faultEnv) {}, exit: 0, status: "complete",
			check: func(e *faultEnv, res *cliResult, run *faultRun) {
				start := strings.Index(res.stderr, "Starting test on")
				for _, w := range []string{"recordcout (did you mean recordcount?)", "the operation proportions add up to 0.65", "recordcount is unset",
					"agent 0 (" + e.agents[0].dial + "), agent 1 (" + e.agents[1].dial + "), agent 2 (" + e.agents[2].dial + "): Warning: properties that nothing reads (ignored): basicdb.simulatedelai (did you mean basicdb.simulatedelay?)"} {
					assert.Equal(e.t, 1, strings.Count(res.stderr, w), "said once: %q", w)
					assert.Less(e.t, strings.Index(res.stderr, w), start, "said before the start: %q", w)
				}
			}},
		{name: "rival-coordinator", run: mxTimedRun(5),
			fault: func(e *faultEnv) {
				r := runCLI(e.t, time.Minute, "", mxTimedRun(2)(&faultEnv{agents: e.agents, dir: e.t.TempDir()})...)
				requireExit(e.t, r, 1)
				assert.Contains(e.t, r.stderr, "busy: running run")
			},
			exit: 0, status: "complete"},
		{name: "agent-restart-midrun", extra: []string{"--on-agent-loss", "continue"},
			fault: func(e *faultEnv) {
				sig(e, e.agents[2].proc, syscall.SIGKILL)
				<-e.agents[2].proc.done
				e.startAgent(2)
			},
			exit: 0, status: "partial", states: map[int]string{2: "lost"}, detect: " lost: ",
			stderr: []string{"no run"}},
	}
}

// TestFaultMatrix runs every row of faultRows, each on agents of its own.
func TestFaultMatrix(t *testing.T) {
	var table []string
	for _, row := range faultRows() {
		row := row
		t.Run(row.name, func(t *testing.T) {
			detected, handled, bound := runFaultRow(t, &row)
			line := fmt.Sprintf("FAULT-MATRIX %-34s detected %-8s handled %-8s (bound %-4s) exit %d %s", row.name, fmtSince(detected), fmtSince(handled), bound, row.exit, row.status)
			table = append(table, line)
			t.Log(line)
		})
	}
	fmt.Fprintln(os.Stderr, strings.Join(table, "\n"))
}

func fmtSince(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return d.Round(10 * time.Millisecond).String()
}

// runFaultRow runs one row and checks the invariants; it returns how long
// after the fault it was detected and handled (-1 when not measured), and
// the bound its coordinator's exit was held to.
func runFaultRow(t *testing.T, row *faultRow) (detected, handled, bound time.Duration) {
	e := &faultEnv{t: t, row: row, dir: t.TempDir(), aux: map[string]string{"silent": silentListener(t)}}
	n := row.agents
	if n == 0 {
		n = mxAgents
	}
	lease := row.lease
	if lease == 0 {
		lease = mxLease
	}
	for i, port := range freePorts(t, n) {
		a := &mxAgent{addr: "127.0.0.1:" + strconv.Itoa(port), args: []string{"--lease", lease.String()}}
		a.dial = a.addr
		e.agents = append(e.agents, a)
		if row.agentArgs != nil {
			a.args = append(a.args, row.agentArgs(e, i)...)
		}
		e.startAgent(i)
		if row.bridged {
			br, err := bridge.New(a.addr)
			require.NoError(t, err)
			t.Cleanup(func() { _ = br.Close() })
			a.br, a.dial = br, br.Addr()
		}
	}
	cmd := mxTimedRun(6)
	if row.run != nil {
		cmd = row.run
	}
	args := append(cmd(e), row.extra...)
	coordBin := ""
	if row.coordVersion != "" {
		coordBin = otherVersionBinary(t, row.coordVersion)
	}
	e.coord = startCoordinator(t, coordBin, args)
	when := row.when
	if when == nil {
		when = midRun
	}
	when(e)
	e.faultAt = time.Now()
	row.fault(e)

	// The coordinator exits within the row's bound.
	bound = e.exitBound(args)
	select {
	case <-e.coord.done:
	case <-time.After(time.Until(e.faultAt.Add(bound))):
		e.hang(bound, args)
	}
	e.thaw()
	res := e.coord.res
	ended := e.coord.start.Add(res.took)
	detected, handled = -1, ended.Sub(e.faultAt)
	require.Equal(t, row.exit, res.exit, "coordinator exit code\n%s", res)
	for _, s := range row.stderr {
		assert.Contains(t, res.stderr, s)
	}
	for _, s := range row.notStderr {
		assert.NotContains(t, res.stderr, s)
	}

	// run.json agrees with the exit code and says what happened; every
	// interval that arrived is counted once.
	var run *faultRun
	_, statErr := os.Stat(filepath.Join(e.dir, "run.json"))
	switch {
	case row.status != "":
		run = readFaultRun(t, e.dir)
		assert.Equal(t, res.exit, run.ExitCode, "run.json records the exit code the process returned")
		assert.Equal(t, row.status, run.Status, "%v", run.StatusReasons)
		checkCounts(t, run)
		for i, st := range row.states {
			assert.Equal(t, st, run.Agents[i].State, "agent %d state (%s)", i, run.Agents[i].Error)
		}
	case row.exit != killed:
		assert.True(t, os.IsNotExist(statErr), "a bundle was written for a run that never started")
	}
	if row.check != nil {
		row.check(e, res, run)
	}

	// Every live agent is idle within its lease (counted from the
	// coordinator's end: its own end, or the fault that killed it).
	dead := map[int]bool{}
	for _, i := range row.dead {
		dead[i] = true
	}
	for i, a := range e.agents {
		if !dead[i] {
			e.idle(a.addr, lease+3*time.Second+row.idleSlack)
		}
	}
	if row.exit == killed {
		// Handled once every agent is idle again.
		handled = time.Since(e.faultAt)
	}
	if row.detect != "" {
		procs := []*cliProc{e.coord}
		if row.detectAgent {
			procs = nil
			for _, a := range e.agents {
				procs = append(procs, a.proc)
			}
		}
		for _, p := range procs {
			if at, ok := lineAt(p, row.detect, e.faultAt); ok && (detected < 0 || at.Sub(e.faultAt) < detected) {
				detected = at.Sub(e.faultAt)
			}
		}
		assert.GreaterOrEqual(t, detected, time.Duration(0), "the fault was never reported (%q)", row.detect)
	}

	// A next run on the same agents is exact.
	for i := range dead {
		if e.agents[i].proc != nil {
			<-e.agents[i].proc.done
		}
		e.startAgent(i)
	}
	next := &faultEnv{t: t, agents: e.agents, dir: t.TempDir()}
	for _, a := range e.agents {
		a.dial = a.addr
	}
	nargs := []string{"coordinator", "run", "basic", "--agents", next.dials(), "-p", "recordcount=3000", "-p", "operationcount=600", "-target", "3000",
		"-p", "basicdb.verbose=false", "-p", "status.interval=0.5", "--results", next.dir}
	if e.token != "" {
		nargs = append(nargs, "--token", e.token)
	}
	nargs = append(nargs, e.tls...)
	r := runCLI(t, time.Minute, "", nargs...)
	requireExit(t, r, 0)
	nrun := readFaultRun(t, next.dir)
	assert.Equal(t, "complete", nrun.Status, "%v", nrun.StatusReasons)
	assert.Equal(t, int64(600), nrun.Summary.Operations, "the next run is exact")
	checkCounts(t, nrun)
	return detected, handled, bound
}

// checkCounts: what arrived from each agent equals its own final account,
// and the merged total is the sum of what arrived.
func checkCounts(t *testing.T, run *faultRun) {
	t.Helper()
	var sum int64
	for _, a := range run.Agents {
		sum += a.Operations
		if a.Final != nil {
			assert.Equal(t, a.Final.Operations, a.Operations, "agent %s: every operation it measured arrived, once", a.Address)
		}
	}
	assert.Equal(t, sum, run.Summary.Operations, "the merged total is the agents' sum")
}

// startCoordinator starts the coordinator, from bin when given (another
// build), else the test's ycsbctl.
func startCoordinator(t *testing.T, bin string, args []string) *cliProc {
	if bin == "" {
		return startCLI(t, 3*time.Minute, "", args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "TERM=dumb")
	p := &cliProc{args: args, cmd: cmd, cancel: cancel, stdout: &lineLog{}, stderr: &lineLog{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	p.start = time.Now()
	require.NoError(t, cmd.Start())
	go func() {
		err := cmd.Wait()
		r := &cliResult{args: args, stdout: p.stdout.String(), stderr: p.stderr.String(), took: time.Since(p.start)}
		if ee, ok := err.(*exec.ExitError); ok {
			r.exit = ee.ExitCode()
		}
		p.res = r
		cancel()
		close(p.done)
	}()
	t.Cleanup(func() { cancel(); <-p.done })
	return p
}

var otherBuild struct {
	once sync.Once
	path string
	err  error
}

// otherVersionBinary builds ycsbctl announcing another version.
func otherVersionBinary(t *testing.T, v string) string {
	otherBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "ycsbctl-other-")
		if err != nil {
			otherBuild.err = err
			return
		}
		otherBuild.path = filepath.Join(dir, "ycsbctl")
		cmd := exec.Command("go", "build", "-ldflags", "-X github.com/ycsbctl/ycsbctl/internal/version.Version="+v, "-o", otherBuild.path, "./cmd/ycsbctl")
		cmd.Dir = cliRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			otherBuild.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	require.NoError(t, otherBuild.err)
	return otherBuild.path
}

package coordinator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

type runPhase uint8

const (
	phasePreparing runPhase = iota
	phaseRunning
	phaseStopping
)

// stallExcuse is how long the coordinator's own 100 ms tick may be late
// before it counts as a stall of this process rather than of its agents.
const stallExcuse = time.Second

// pingSamples per agent for the clock-offset estimate.
const pingSamples = 8

// agentRun is the coordinator's record of one agent.
type agentRun struct {
	idx  int
	addr string
	conn *conn

	state    run.AgentState
	hostname string
	version  string
	protocol uint32
	offset   time.Duration
	rtt      time.Duration

	attached     bool
	sentPrepare  bool
	prepared     bool
	threads      int
	startedAt    int64 // coordinator-clock Unix ns of the agent's actual start
	hasStarted   bool
	final        *pb.Final
	lost         bool
	lostFor      string
	gone         bool
	failed       string
	lastHeard    int64 // clk.Nanotime
	reconnects   int
	ops          int64
	intervals    int
	lastOpsPerS  float64
	lastCPU      float64
	cpuTotal     float64
	lagNs        int64
	lastSeq      int64
	localInserts int64
}

// settled: nothing more is expected from the agent.
func (a *agentRun) settled(m *merger) bool {
	if a.lost || a.gone || a.failed != "" {
		return true
	}
	if a.final == nil {
		return false
	}
	for s := int64(1); s <= a.final.Intervals; s++ {
		if !m.has(a.idx, s) {
			return false
		}
	}
	return true
}

// Coordinator is one distributed run: the source of a run session
// (session.Source). Its state is owned by its event loop; Stop and Abort
// only post requests to it.
type Coordinator struct {
	s       *settings
	sink    run.Sink
	stopCh  chan string
	abortCh chan string
	clk     clock.Clock
	runID   string
	self    transport.Identity
	agents  []*agentRun
	events  chan event
	done    chan struct{}
	m       *merger
	// rec is the run's record: every accepted interval record is added
	// to it; nil when the run is not recorded.
	rec *bundle.Recorder
	dec wire.Decoded

	phase         runPhase
	startedWall   time.Time
	plannedStart  int64 // coordinator-clock Unix ns
	measureStart  int64
	prepDeadline  int64
	stopDeadline  int64
	stopReason    string
	operator      operatorRequest
	abortedByLoss bool
	runFailure    error
	lastHB        int64
	lastTick      int64
	// missing holds each agent's unmeasured intervals, for run.json.
	missing []string
	notes   []string
	mergeNs int64
	sealed  int64
}

// New validates a distributed run; errors name the flag or property at
// fault and carry exitcode.InvalidConfig. Nothing is contacted yet.
func New(cfg Config) (*Coordinator, error) {
	s, err := validate(cfg)
	if err != nil {
		return nil, err
	}
	c := &Coordinator{s: s, clk: s.Clock, events: make(chan event, 4096), done: make(chan struct{}),
		stopCh: make(chan string, 1), abortCh: make(chan string, 1)}
	c.startedWall = c.clk.Now()
	c.runID = run.NewID(c.startedWall)
	c.self = transport.Identity{Version: version.Version, Protocol: version.Protocol}
	if s.Version != "" {
		c.self.Version = s.Version
	}
	return c, nil
}

// Info describes the run.
func (c *Coordinator) Info() run.Info {
	return run.Info{RunID: c.runID, Mode: run.ModeDistributed, Command: "coordinator " + c.s.Spec.Phase.String(),
		Agents: c.s.agents, Threads: c.s.plan.ThreadsPerAgent, Started: c.startedWall}
}

// Stop asks every agent to stop gracefully; their last intervals are still
// collected.
func (c *Coordinator) Stop(reason string) {
	select {
	case c.stopCh <- reason:
	default:
	}
}

// Abort asks every agent to stop at once, cancelling calls in flight.
func (c *Coordinator) Abort(reason string) {
	select {
	case c.abortCh <- reason:
	default:
	}
}

// operatorRequest is what the operator asked of the run; the zero value
// is nothing.
type operatorRequest uint8

const (
	// operatorStop: a graceful stop (calls in flight finish).
	operatorStop operatorRequest = iota + 1
	// operatorAbort: calls in flight are cancelled.
	operatorAbort
)

// Run executes the distributed phase, handing every merged interval to
// sink and every accepted record to rec (when the run is recorded), and
// returns how it ended. ctx being cancelled stops the agents gracefully,
// as Stop does.
func (c *Coordinator) Run(ctx context.Context, sink run.Sink, rec *bundle.Recorder) *run.Outcome {
	c.sink = sink
	if c.sink == nil {
		c.sink = run.Sinks{}
	}
	c.rec = rec
	out, err := c.execute(ctx)
	if out == nil {
		// The run never started: nothing was measured, so there is no
		// summary or bundle to write.
		out = &run.Outcome{Total: measurement.NewInterval(0, 0, 0), Status: run.StatusAborted, NeverStarted: true}
	}
	if err != nil && out.Err == nil {
		out.Err = err
	}
	return out
}

func (c *Coordinator) logf(format string, args ...any) { c.s.Logf(format, args...) }

func (c *Coordinator) execute(ctx context.Context) (*run.Outcome, error) {
	s := c.s
	c.logf("ycsbctl coordinator %s: %s %s on %s, run %s", c.self.Version, s.Spec.Phase, s.Spec.DB, plural.Count(len(s.agents), "agent"), c.runID)
	if s.Token != "" && !s.TLS.Enabled() {
		for _, a := range s.agents {
			host := a[:strings.LastIndex(a, ":")]
			if !isLoopbackHost(host) {
				c.logf("WARNING: --token is sent in clear text to %s without TLS", a)
				break
			}
		}
	}

	// Connect and measure clocks. Everything that can refuse (token,
	// certificate, version, busy, clock offset) refuses here, before any
	// agent touches a database.
	connCtx, cancelConns := context.WithCancel(context.Background())
	defer cancelConns()
	name := coordinatorName()
	var errs []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, addr := range s.agents {
		a := &agentRun{idx: i, addr: addr, state: run.AgentConnecting}
		c.agents = append(c.agents, a)
		cc, err := transport.Dial(addr, s.TLS, s.Token, c.self)
		if err != nil {
			return nil, exitcode.Wrap(exitcode.Failure, fmt.Errorf("agent %d (%s): %w", i, addr, err))
		}
		h := &pb.Hello{Version: c.self.Version, Protocol: c.self.Protocol, RunId: c.runID, Coordinator: name, AgentIndex: int32(i)}
		a.conn = newConn(i, addr, cc, h, c.events, c.done)
		defer func() { _ = cc.Close() }()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.probe(ctx, a); err != nil {
				mu.Lock()
				errs = append(errs, err.Error())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, exitcode.Wrap(exitcode.Aborted, errors.New("interrupted before the run started"))
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return nil, exitcode.Wrap(exitcode.Failure, fmt.Errorf("%s", strings.Join(errs, "; ")))
	}
	for _, a := range c.agents {
		c.logf("agent %d %s (%s, %s): clock offset %s, rtt %s", a.idx, a.addr, a.hostname, a.version, fmtDur(a.offset), fmtDur(a.rtt))
	}

	c.m = newMerger(len(c.agents))
	c.m.keepAgents = true
	if c.rec != nil {
		// The run's record starts before any agent prepares: the agents
		// and their clocks are known now.
		c.describe(c.rec.Meta)
		if err := c.rec.Start(); err != nil {
			return nil, exitcode.Wrap(exitcode.Failure, fmt.Errorf("--results: %w", err))
		}
	}

	var loops sync.WaitGroup
	for _, a := range c.agents {
		loops.Add(1)
		go func(a *agentRun) {
			defer loops.Done()
			a.conn.loop(connCtx)
		}(a)
	}
	c.phase = phasePreparing
	c.prepDeadline = c.clk.Nanotime() + int64(s.PrepareTimeout)
	out, err := c.loop(ctx)

	c.releaseAgents()
	cancelConns()
	loops.Wait()
	return out, err
}

// releaseWait bounds how long the coordinator waits, after the run, for
// its agents to confirm their Release.
const releaseWait = 10 * time.Second

// releaseAgents releases every agent and waits, within releaseWait, until
// each one that still takes part in the run has confirmed it: an agent
// confirms once it has ended the run (workers gone, database closed), so
// the next coordinator finds it free. Agents declared lost or gone are
// released if they can be reached but not waited for: they stop by
// themselves when their lease runs out. The coordinator loop has ended,
// so the agents' state is ours to read.
func (c *Coordinator) releaseAgents() {
	for _, a := range c.agents {
		a.conn.release()
	}
	close(c.done)
	deadline := time.NewTimer(releaseWait)
	defer deadline.Stop()
	var unconfirmed []string
	for _, a := range c.agents {
		if a.lost || a.gone {
			continue
		}
		select {
		case <-a.conn.loopDone:
		case <-deadline.C:
			deadline.Reset(0)
		}
		if a.conn.wasAccepted() && !a.conn.isReleased() {
			unconfirmed = append(unconfirmed, fmt.Sprintf("agent %d (%s)", a.idx, a.addr))
		}
	}
	if len(unconfirmed) > 0 {
		c.logf("%s did not confirm the end of run %s within %s; an agent that missed its Release ends the run by itself when its lease runs out",
			strings.Join(unconfirmed, ", "), c.runID, releaseWait)
	}
}

func coordinatorName() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("coordinator %s (pid %d)", h, os.Getpid())
}

func isLoopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1"
}

// probe pings an agent: identity, busy state, clock offset.
func (c *Coordinator) probe(ctx context.Context, a *agentRun) error {
	off, rtt, resp, err := probeClock(ctx, a.conn.cli, c.clk, pingSamples)
	// An agent still ending its previous run (released, or its lease ran
	// out: it is letting in-flight requests finish and closing its
	// database) is free in a moment: wait for it, within a bound, rather
	// than refuse. A run that is not ending belongs to a live coordinator,
	// or to one that died and whose lease has not yet run out: refused.
	for waited := time.Duration(0); err == nil && resp.BusyRun != "" && resp.BusyEnding && waited < endingWait; waited += endingPoll {
		if waited == 0 {
			c.logf("agent %d (%s) is still ending run %s; waiting up to %s", a.idx, a.addr, resp.BusyRun, endingWait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("agent %d (%s): interrupted while it was ending run %s", a.idx, a.addr, resp.BusyRun)
		case <-time.After(endingPoll):
		}
		off, rtt, resp, err = probeClock(ctx, a.conn.cli, c.clk, pingSamples)
	}
	if err != nil {
		msg := transport.Describe(err, transport.Call{TLS: c.s.TLS.Enabled(), First: true})
		return fmt.Errorf("agent %d (%s): %s", a.idx, a.addr, msg)
	}
	a.hostname, a.version, a.protocol = resp.Hostname, resp.Version, resp.Protocol
	peer := transport.Identity{Version: resp.Version, Protocol: resp.Protocol}
	if peer != c.self {
		return fmt.Errorf("agent %d (%s): %v", a.idx, a.addr, transport.VersionMismatch(c.self, peer))
	}
	if resp.BusyRun != "" {
		return fmt.Errorf("agent %d (%s): %s", a.idx, a.addr, busyReason(resp))
	}
	a.offset, a.rtt = off, rtt
	if lim := c.s.MaxClockOffset; lim > 0 && (off > lim || off < -lim) {
		dir := "ahead of"
		if off < 0 {
			dir = "behind"
		}
		return fmt.Errorf("agent %d (%s): its clock is %s %s the coordinator's (limit %s): synchronise clocks (NTP/chrony) or raise the clock-offset limit", a.idx, a.addr, fmtDur(abs(off)), dir, lim)
	}
	return nil
}

// endingWait bounds the wait for an agent that is ending its previous
// run; endingPoll is how often it is asked again.
const (
	endingWait = 30 * time.Second
	endingPoll = 200 * time.Millisecond
)

// busyReason says why a busy agent refuses, and when it will be free if
// its coordinator is gone.
func busyReason(resp *pb.PingResponse) string {
	if resp.BusyEnding {
		return fmt.Sprintf("busy: still ending run %s for %s after %s (finishing in-flight requests and closing its database)", resp.BusyRun, resp.BusyCoordinator, endingWait)
	}
	msg := fmt.Sprintf("busy: running run %s for %s", resp.BusyRun, resp.BusyCoordinator)
	if resp.LeaseNs > 0 {
		silent, lease := time.Duration(resp.BusySilentNs), time.Duration(resp.LeaseNs)
		msg += fmt.Sprintf(" (its coordinator silent for %s; the agent ends the run by itself after %s of silence)",
			silent.Round(time.Millisecond), lease)
	}
	return msg
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func fmtDur(d time.Duration) string {
	switch {
	case abs(d) >= time.Second:
		return d.Round(time.Millisecond).String()
	case abs(d) >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// describeErr words an error of an agent's stream for the operator.
func (c *Coordinator) describeErr(err error) string {
	return transport.Describe(err, transport.Call{TLS: c.s.TLS.Enabled()})
}

// loop is the coordinator's single event loop: all run state is owned
// here, so no locks guard it.
func (c *Coordinator) loop(ctx context.Context) (*run.Outcome, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	ctxDone := ctx.Done()
	stopCh, abortCh := c.stopCh, c.abortCh
	stop := func(reason string) error {
		if c.phase == phasePreparing {
			return exitcode.Wrap(exitcode.Aborted, fmt.Errorf("%s while agents were preparing", reason))
		}
		c.operator = operatorStop
		c.logf("Stopping all agents gracefully (%s)", reason)
		c.beginStop(reason, false)
		return nil
	}
	for {
		select {
		case reason := <-abortCh:
			abortCh, stopCh, ctxDone = nil, nil, nil
			if c.phase == phasePreparing {
				return nil, exitcode.Wrap(exitcode.Aborted, fmt.Errorf("%s while agents were preparing", reason))
			}
			c.operator = operatorAbort
			c.logf("Aborted: agents cancel their calls in flight")
			// A graceful stop may be under way; an abort overrides it.
			c.phase = phaseRunning
			c.beginStop(reason, true)
		case reason := <-stopCh:
			stopCh, ctxDone = nil, nil
			if err := stop(reason); err != nil {
				return nil, err
			}
		case <-ctxDone:
			stopCh, ctxDone = nil, nil
			if err := stop("interrupted by operator"); err != nil {
				return nil, err
			}
		case e := <-c.events:
			if err := c.handle(e); err != nil {
				return nil, err
			}
		case <-tick.C:
			if err := c.tick(); err != nil {
				return nil, err
			}
		}
		c.sealReady()
		if c.phase == phasePreparing {
			if err := c.maybeStart(); err != nil {
				return nil, err
			}
			continue
		}
		if c.allSettled() || (c.phase == phaseStopping && c.clk.Nanotime() > c.stopDeadline) {
			return c.finish(), nil
		}
	}
}

func (c *Coordinator) allSettled() bool {
	for _, a := range c.agents {
		if !a.settled(c.m) {
			return false
		}
	}
	return true
}

func (c *Coordinator) agentErr(a *agentRun, format string, args ...any) error {
	return fmt.Errorf("agent %d (%s): %s", a.idx, a.addr, fmt.Sprintf(format, args...))
}

func (c *Coordinator) handle(e event) error {
	a := c.agents[e.agent]
	now := c.clk.Nanotime()
	switch e.kind {
	case evAttached:
		a.attached = true
		a.lastHeard = now
		if !e.resume {
			a.conn.send(c.prepareMsg(a))
			a.sentPrepare = true
			a.state = run.AgentPreparing
			return nil
		}
		a.reconnects++
		if a.lost {
			a.lost = false
			c.notes = append(c.notes, fmt.Sprintf("agent %d (%s) was declared lost (%s) and re-attached later", a.idx, a.addr, a.lostFor))
			a.state = run.AgentRunning
		}
		c.logf("agent %d (%s): stream re-established (agent state %s); unacknowledged intervals are resent", a.idx, a.addr, e.hello.State)
		// Re-send whatever the broken stream may have swallowed.
		switch e.hello.State {
		case pb.RunState_RUN_STATE_IDLE:
			a.conn.send(c.prepareMsg(a))
		case pb.RunState_RUN_STATE_READY:
			if c.phase != phasePreparing {
				a.conn.send(c.startMsg(a))
			}
		}
		if c.phase == phaseStopping && e.hello.State != pb.RunState_RUN_STATE_FINISHED {
			a.conn.send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Stop{Stop: &pb.Stop{Reason: c.stopReason}}})
		}
	case evDetached:
		a.attached = false
		if !a.settled(c.m) {
			c.logf("agent %d (%s): stream broke (%s); re-connecting", a.idx, a.addr, c.describeErr(e.err))
		}
	case evGone:
		a.attached = false
		if c.phase == phasePreparing {
			a.gone = true
			return exitcode.Wrap(exitcode.Failure, c.agentErr(a, "%s", c.describeErr(e.err)))
		}
		if !a.settled(c.m) {
			c.lose(a, c.describeErr(e.err))
		}
		a.gone = true
	case evMsg:
		a.lastHeard = now
		if a.lost && a.attached && !a.gone {
			// Declared lost for its silence, but it was only slow (or
			// paused) and its stream held: take it back, its intervals
			// still count.
			a.lost = false
			a.state = run.AgentRunning
			c.notes = append(c.notes, fmt.Sprintf("agent %d (%s) was declared lost (%s) and came back", a.idx, a.addr, a.lostFor))
			c.logf("agent %d (%s) is back after being declared lost (%s)", a.idx, a.addr, a.lostFor)
		}
		return c.handleMsg(a, e.msg)
	}
	return nil
}

func (c *Coordinator) prepareMsg(a *agentRun) *pb.CoordinatorMsg {
	ph := pb.Phase_PHASE_RUN
	if c.s.Spec.Phase == run.Load {
		ph = pb.Phase_PHASE_LOAD
	}
	ap := c.s.plan.Agents[a.idx]
	return &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Prepare{Prepare: &pb.Prepare{
		Db: c.s.Spec.DB, Phase: ph, Properties: ap.Props, AgentIndex: int32(a.idx), AgentCount: int32(len(c.agents)), IntervalNs: int64(c.s.Interval),
	}}}
}

func (c *Coordinator) startMsg(a *agentRun) *pb.CoordinatorMsg {
	return &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Start{Start: &pb.Start{StartUnixNs: c.plannedStart + int64(a.offset)}}}
}

func (c *Coordinator) handleMsg(a *agentRun, m *pb.AgentMsg) error {
	switch x := m.Msg.(type) {
	case *pb.AgentMsg_Prepared:
		a.prepared = true
		a.threads = int(x.Prepared.Threads)
		if a.state == run.AgentPreparing {
			a.state = run.AgentReady
		}
	case *pb.AgentMsg_Failed:
		a.failed = x.Failed.Stage + ": " + x.Failed.Reason
		a.state = run.AgentFailed
		if c.phase == phasePreparing {
			return exitcode.Wrap(exitcode.Failure, c.agentErr(a, "failed to prepare: %s", x.Failed.Reason))
		}
		c.logf("agent %d (%s) failed: %s", a.idx, a.addr, a.failed)
		if c.runFailure == nil {
			c.runFailure = c.agentErr(a, "failed: %s", a.failed)
		}
		if c.phase == phaseRunning {
			c.beginStop(fmt.Sprintf("agent %d failed", a.idx), false)
		}
	case *pb.AgentMsg_Started:
		a.hasStarted = true
		a.startedAt = x.Started.StartedUnixNs - int64(a.offset)
		if a.state == run.AgentReady {
			a.state = run.AgentRunning
		}
	case *pb.AgentMsg_Interval:
		return c.onRecord(a, x.Interval)
	case *pb.AgentMsg_Heartbeat:
		hb := x.Heartbeat
		if hb.LocalInsertsAcknowledged > a.localInserts {
			a.localInserts = hb.LocalInsertsAcknowledged
		}
		a.lagNs = hb.LagNs
	case *pb.AgentMsg_Final:
		if a.final == nil {
			a.final = x.Final
			a.state = run.AgentFinished
		}
		a.conn.send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Ack{Ack: &pb.Ack{Final: true}}})
	}
	return nil
}

func (c *Coordinator) onRecord(a *agentRun, rec *pb.IntervalRecord) error {
	if int(rec.AgentIndex) != a.idx {
		c.logf("agent %d (%s): dropped a record claiming to be from agent %d", a.idx, a.addr, rec.AgentIndex)
		return nil
	}
	ack := &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Ack{Ack: &pb.Ack{Seqs: []int64{rec.Seq}}}}
	if c.m.has(a.idx, rec.Seq) {
		a.conn.send(ack) // its ack was lost; say it again
		return nil
	}
	t0 := time.Now()
	if err := wire.DecodeRecord(rec, &c.dec); err != nil {
		// Not acknowledged: a corrupt record is a protocol violation, and
		// dropping it silently would lose data.
		c.logf("agent %d (%s): rejected interval: %v", a.idx, a.addr, err)
		return nil
	}
	off := int64(a.offset)
	start, end := c.dec.StartNs-off, c.dec.EndNs-off
	if _, err := c.m.add(a.idx, &c.dec, start, end); err != nil {
		c.logf("agent %d (%s): merging interval %d: %v", a.idx, a.addr, rec.Seq, err)
		return nil
	}
	c.m.addRuntime(a.idx, rec.Seq, rec.Runtime)
	c.mergeNs += int64(time.Since(t0))
	if c.rec != nil {
		if err := c.rec.Add(rec); err != nil {
			return exitcode.Wrap(exitcode.Failure, fmt.Errorf("--results: %w", err))
		}
	}
	a.conn.send(ack)
	a.ops += c.dec.Ops
	a.intervals++
	a.cpuTotal += c.dec.CPUSeconds
	a.lastCPU = c.dec.CPUSeconds
	if d := end - start; d > 0 {
		a.lastOpsPerS = float64(c.dec.Ops) / (float64(d) / 1e9)
	}
	a.lagNs = c.dec.LagNs
	if rec.Seq > a.lastSeq {
		a.lastSeq = rec.Seq
	}
	if c.dec.LocalInserts > a.localInserts {
		a.localInserts = c.dec.LocalInserts
	}
	return nil
}

// expect reports whether agent i may still deliver seq.
func (c *Coordinator) expect(i int, seq int64) bool {
	a := c.agents[i]
	switch {
	case a.lost, a.gone, a.failed != "":
		return false
	case a.final != nil:
		return seq <= a.final.Intervals
	case !a.prepared:
		return false
	}
	return true
}

func (c *Coordinator) sealReady() {
	if c.m == nil {
		return
	}
	for c.m.sealable(c.expect) {
		t0 := time.Now()
		s := c.m.seal()
		c.mergeNs += int64(time.Since(t0))
		c.sealed++
		c.emit(s)
	}
}

func (c *Coordinator) progress(s *seqMerge) run.Progress {
	final := true
	for _, a := range c.agents {
		if a.final == nil && !a.lost && !a.gone && a.failed == "" {
			final = false
		} else if a.final != nil && a.final.Intervals > s.iv.Seq {
			final = false
		}
	}
	return run.Progress{
		Phase:        c.s.Spec.Phase,
		Elapsed:      time.Duration(s.iv.EndNs - c.measureStart),
		Budget:       c.s.plan.OperationCount,
		MaxExecution: c.s.Spec.MaxExecution,
		Final:        final,
		Lag:          time.Duration(s.lagNs),
	}
}

func (c *Coordinator) emit(s *seqMerge) {
	if c.measureStart == 0 {
		c.measureStart = s.iv.StartNs
	}
	c.sink.OnInterval(&run.Update{RunID: c.runID, Interval: s.iv, Cumulative: c.m.cum.Clone(), Progress: c.progress(s),
		Agents: c.agentStatuses(), AgentIntervals: s.agents, AgentRuntime: s.runtime})
}

func (c *Coordinator) agentStatuses() []run.Agent {
	out := make([]run.Agent, len(c.agents))
	for i, a := range c.agents {
		out[i] = run.Agent{
			Index: a.idx, Address: a.addr, Hostname: a.hostname, Version: a.version, State: a.state,
			ClockOffset: a.offset, RTT: a.rtt, StartSkew: c.skew(a), Ops: a.ops, OpsPerSec: a.lastOpsPerS,
			CPUSeconds: a.lastCPU, Lag: time.Duration(a.lagNs), LastSeq: a.lastSeq, Reconnects: a.reconnects, Error: a.failed,
		}
		if a.lost {
			out[i].Error = "lost: " + a.lostFor
		}
	}
	return out
}

func (c *Coordinator) skew(a *agentRun) time.Duration {
	if !a.hasStarted || c.plannedStart == 0 {
		return 0
	}
	return time.Duration(a.startedAt - c.plannedStart)
}

// maybeStart starts the run once every agent is prepared: at one instant
// a moment ahead, far enough that every Start message arrives first.
func (c *Coordinator) maybeStart() error {
	var maxRTT time.Duration
	for _, a := range c.agents {
		if !a.prepared {
			return nil
		}
		if a.rtt > maxRTT {
			maxRTT = a.rtt
		}
	}
	lead := 4 * maxRTT
	if lead < 500*time.Millisecond {
		lead = 500 * time.Millisecond
	}
	// Every /metrics (the agents' since they prepared, this process'
	// since the session began) shows the run at zero now; the start waits
	// ycsbctl.metrics.startdelay more so that Prometheus scrapes the zeros.
	lead += c.s.Spec.Output.MetricsStartDelay
	c.plannedStart = c.clk.Now().Add(lead).UnixNano()
	for _, a := range c.agents {
		a.conn.send(c.startMsg(a))
	}
	c.phase = phaseRunning
	c.sendHeartbeats()
	c.logf("Starting test on %s at %s.", plural.Count(len(c.agents), "agent"), time.Unix(0, c.plannedStart).Format("15:04:05.000"))
	return nil
}

func (c *Coordinator) tick() error {
	now := c.clk.Nanotime()
	if c.lastTick != 0 {
		if stall := time.Duration(now - c.lastTick); stall > stallExcuse {
			// This process did not run (paused, swapped out, starved of
			// CPU): the agents' messages of that time are still queued
			// and its own clock says nothing about their health. Judge
			// silence from now on.
			c.logf("coordinator stalled for %s; agent silence is judged from now", stall.Round(time.Millisecond))
			c.notes = append(c.notes, fmt.Sprintf("the coordinator stalled for %s (paused or starved of CPU)", stall.Round(time.Millisecond)))
			for _, a := range c.agents {
				if a.lastHeard != 0 {
					a.lastHeard = max(a.lastHeard, now-int64(time.Second))
				}
			}
		}
	}
	c.lastTick = now
	// Read what has arrived before judging anyone silent.
	for drained := false; !drained; {
		select {
		case e := <-c.events:
			if err := c.handle(e); err != nil {
				return err
			}
		default:
			drained = true
		}
	}
	if now-c.lastHB >= int64(time.Second) {
		c.sendHeartbeats()
	}
	for _, a := range c.agents {
		if a.settled(c.m) || a.lastHeard == 0 {
			continue
		}
		if silent := time.Duration(now - a.lastHeard); silent > c.s.AgentTimeout {
			if c.phase == phasePreparing {
				return exitcode.Wrap(exitcode.Failure, c.agentErr(a, "silent for %s while preparing", silent.Round(time.Millisecond)))
			}
			c.lose(a, fmt.Sprintf("silent for %s", silent.Round(time.Millisecond)))
		}
	}
	if c.phase == phasePreparing && now > c.prepDeadline {
		var slow []string
		for _, a := range c.agents {
			if !a.prepared {
				slow = append(slow, fmt.Sprintf("%d (%s)", a.idx, a.addr))
			}
		}
		return exitcode.Wrap(exitcode.Failure, fmt.Errorf("agents %s did not finish preparing within %s", strings.Join(slow, ", "), c.s.PrepareTimeout))
	}
	return nil
}

// sendHeartbeats renews every agent's lease and, in the run phase, hands
// out the cluster-wide acknowledged key limit.
func (c *Coordinator) sendHeartbeats() {
	c.lastHB = c.clk.Nanotime()
	hb := &pb.Heartbeat{SentUnixNs: c.clk.Now().UnixNano()}
	if c.s.Spec.Phase == run.Run && c.s.plan.RecordCount < 1<<62 {
		acked := make([]int64, len(c.agents))
		for i, a := range c.agents {
			acked[i] = a.localInserts
		}
		lim := ClusterLimit(c.s.plan.RecordCount, acked)
		hb.AcknowledgedKeyLimit = &lim
	}
	for _, a := range c.agents {
		if a.attached {
			a.conn.send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Heartbeat{Heartbeat: hb}})
		}
	}
}

// lose applies the agent-loss policy.
func (c *Coordinator) lose(a *agentRun, why string) {
	if a.lost {
		return
	}
	a.lost = true
	a.lostFor = why
	a.state = run.AgentLost
	c.logf("agent %d (%s) lost: %s (--on-agent-loss=%s)", a.idx, a.addr, why, c.s.OnAgentLoss)
	if c.s.OnAgentLoss == LossAbort {
		if !c.abortedByLoss && c.phase != phaseStopping {
			c.abortedByLoss = true
			c.beginStop(fmt.Sprintf("agent %d (%s) lost", a.idx, a.addr), false)
		} else {
			c.abortedByLoss = true
		}
	}
}

// beginStop asks every agent still running to stop; their last intervals
// and finals are still collected (within StopTimeout).
func (c *Coordinator) beginStop(reason string, abort bool) {
	if c.phase == phaseStopping {
		return
	}
	c.phase = phaseStopping
	c.stopReason = reason
	c.stopDeadline = c.clk.Nanotime() + int64(c.s.StopTimeout)
	for _, a := range c.agents {
		if a.final == nil && !a.lost {
			a.conn.send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Stop{Stop: &pb.Stop{Abort: abort, Reason: reason}}})
		}
	}
}

// finish seals what is left and decides how the run ended.
func (c *Coordinator) finish() *run.Outcome {
	// Seal everything that arrived, even from agents that were lost.
	for len(c.m.open) > 0 {
		if _, ok := c.m.open[c.m.nextSeal]; !ok {
			c.m.nextSeal++
			continue
		}
		c.emit(c.m.seal())
	}
	// partial means exactly: some agent's share was not measured for the
	// whole run. An agent that stopped its own load (its lease ran out
	// while it was cut off) or whose intervals never arrived makes the
	// run partial; one that was slow but delivered everything does not.
	status := run.StatusComplete
	var reasons []string
	c.missing = make([]string, len(c.agents))
	last := c.lastClusterSeq()
	for _, a := range c.agents {
		miss := c.missingIntervals(a, last)
		c.missing[a.idx] = formatSeqs(miss)
		selfStopped := a.final != nil && a.final.Stopped != "" && a.final.Stopped != c.stopReason
		switch {
		case a.lost:
			reasons = append(reasons, fmt.Sprintf("agent %d (%s) lost: %s", a.idx, a.addr, a.lostFor))
		case a.failed != "":
			reasons = append(reasons, fmt.Sprintf("agent %d (%s) failed: %s", a.idx, a.addr, a.failed))
		case a.final == nil:
			reasons = append(reasons, fmt.Sprintf("agent %d (%s) did not report its end", a.idx, a.addr))
		case selfStopped:
			reasons = append(reasons, fmt.Sprintf("agent %d (%s) stopped its own load: %s", a.idx, a.addr, a.final.Stopped))
		case len(miss) > 0:
			reasons = append(reasons, fmt.Sprintf("agent %d (%s): intervals missing", a.idx, a.addr))
		case a.final.Operations != a.ops:
			reasons = append(reasons, fmt.Sprintf("agent %d (%s) measured %s but %d arrived", a.idx, a.addr, plural.Count(a.final.Operations, "operation"), a.ops))
		}
		if len(miss) > 0 && (a.lost || a.failed != "" || a.final == nil || selfStopped) {
			reasons[len(reasons)-1] += fmt.Sprintf(" (intervals %s not measured)", c.missing[a.idx])
		}
	}
	if len(reasons) > 0 {
		status = run.StatusPartial
	}
	var err error
	switch {
	case c.operator == operatorAbort:
		status = run.StatusAborted
		err = exitcode.Wrap(exitcode.Aborted, fmt.Errorf("run aborted: %s", c.stopReason))
	case c.abortedByLoss:
		status = run.StatusAborted
		err = exitcode.Wrap(exitcode.AgentLost, fmt.Errorf("agent lost, run stopped (--on-agent-loss=abort): %s", strings.Join(reasons, "; ")))
	case c.runFailure != nil:
		status = run.StatusAborted
		err = exitcode.WithCodeIfNone(exitcode.Failure, c.runFailure)
	case c.noneCompleted():
		// --on-agent-loss=continue, but nothing is left to continue with.
		status = run.StatusAborted
		err = exitcode.Wrap(exitcode.AgentLost, fmt.Errorf("every agent was lost: %s", strings.Join(reasons, "; ")))
	case c.operator == operatorStop:
		// Every agent ended its calls in flight and reported them: a
		// whole measurement of a shorter run.
		status = run.StatusStopped
		reasons = append(reasons, "Stopped early: "+c.stopReason)
		err = exitcode.Wrap(exitcode.Stopped, fmt.Errorf("run stopped: %s", c.stopReason))
	}
	start, end := c.window()
	var warm int64
	for _, a := range c.agents {
		if a.final != nil {
			warm += a.final.WarmupOps
		}
	}
	return &run.Outcome{RunTime: time.Duration(end - start), Total: c.m.cum, WarmupOps: warm, Status: status,
		Reasons: reasons, Notes: append(c.notes, c.rawNotes()...), Err: err}
}

// rawNotes report the raw samples the agents measured but could not write
// (measurementtype raw, hdrhistogram+raw), summed, in the note a single
// host prints. An agent that ended without a count (an older agent, or one
// lost before its end) is named rather than counted as zero.
func (c *Coordinator) rawNotes() []string {
	if !c.s.Spec.Measure.Format.Kind.HasRaw() {
		return nil
	}
	var dropped int64
	var counted int
	var unknown []string
	for _, a := range c.agents {
		if a.final != nil && a.final.RawSamplesDropped != nil {
			dropped += max(a.final.GetRawSamplesDropped(), 0)
			counted++
		} else if a.prepared {
			unknown = append(unknown, fmt.Sprintf("agent %d (%s)", a.idx, a.addr))
		}
	}
	var notes []string
	if counted > 0 {
		notes = append(notes, spec.RawNote(dropped))
	}
	if len(unknown) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s did not report how many raw samples it could not write (older agent?); no count covers them", spec.PropMeasurementType, strings.Join(unknown, " and ")))
	}
	return notes
}

// lastClusterSeq is the last interval of the run: the highest any agent
// reported in its final account or delivered.
func (c *Coordinator) lastClusterSeq() int64 {
	var last int64
	for _, a := range c.agents {
		last = max(last, a.lastSeq)
		if a.final != nil {
			last = max(last, a.final.Intervals)
		}
	}
	return last
}

// missingIntervals lists the seqs of agent a's share that were not
// measured: gaps among what it reported, and, when it did not run to the
// end with the others (lost, failed, stopped by itself), every interval
// after its last.
func (c *Coordinator) missingIntervals(a *agentRun, last int64) []int64 {
	upTo := last
	if a.final != nil && (a.final.Stopped == "" || a.final.Stopped == c.stopReason) && !a.lost && a.failed == "" {
		// It ran to its own end: a budget share can end an interval
		// earlier than another agent's, which is not a gap.
		upTo = a.final.Intervals
	}
	var miss []int64
	for seq := int64(1); seq <= upTo; seq++ {
		if !c.m.has(a.idx, seq) {
			miss = append(miss, seq)
		}
	}
	return miss
}

// formatSeqs writes sequence numbers as ranges: "3, 7-16".
func formatSeqs(seqs []int64) string {
	var parts []string
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.FormatInt(seqs[i], 10))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", seqs[i], seqs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func (c *Coordinator) noneCompleted() bool {
	for _, a := range c.agents {
		if a.final != nil && !a.lost {
			return false
		}
	}
	return true
}

// window returns the measured window on the coordinator's clock: from the
// earliest agent start to the latest agent end.
func (c *Coordinator) window() (start, end int64) {
	for _, a := range c.agents {
		if a.final == nil || a.final.Intervals == 0 {
			continue
		}
		s, e := a.final.StartUnixNs-int64(a.offset), a.final.EndUnixNs-int64(a.offset)
		if start == 0 || s < start {
			start = s
		}
		if e > end {
			end = e
		}
	}
	if start == 0 {
		start, end = c.m.cum.StartNs, c.m.cum.EndNs
	}
	return start, end
}

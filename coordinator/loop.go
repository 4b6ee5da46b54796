package coordinator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/merge"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

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
		c.endBy(endOperatorStop)
		c.logf("Stopping all agents gracefully (%s)", reason)
		c.beginStop(reason, false)
		return nil
	}
	for {
		var err error
		select {
		case reason := <-abortCh:
			abortCh, stopCh, ctxDone = nil, nil, nil
			if c.phase == phasePreparing {
				return nil, exitcode.Wrap(exitcode.Aborted, fmt.Errorf("%s while agents were preparing", reason))
			}
			c.endBy(endOperatorAbort)
			c.logf("Aborted: agents cancel their calls in flight")
			// A graceful stop may be under way; an abort overrides it.
			c.beginStop(reason, true)
		case reason := <-stopCh:
			stopCh, ctxDone = nil, nil
			err = stop(reason)
		case <-ctxDone:
			stopCh, ctxDone = nil, nil
			err = stop("interrupted by operator")
		case e := <-c.events:
			c.noteStall(c.clk.Nanotime())
			err = c.handle(e)
		case <-tick.C:
			err = c.tick()
		}
		if err != nil {
			return nil, err
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

func (c *Coordinator) tick() error {
	now := c.clk.Nanotime()
	c.noteStall(now)
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
	every := heartbeatEvery
	if c.phase == phaseRunning && c.clk.Now().UnixNano() < c.plannedStart {
		every = startHeartbeatEvery
	}
	if now-c.lastHB >= int64(every) {
		c.sendHeartbeats()
	}
	if err := c.judgeSilence(now); err != nil {
		return err
	}
	if c.phase == phasePreparing && now > c.prepDeadline {
		var slow []string
		for _, a := range c.agents {
			if a.state != stReady {
				slow = append(slow, fmt.Sprintf("%d (%s)", a.idx, a.addr))
			}
		}
		return exitcode.Wrap(exitcode.Failure, fmt.Errorf("agents %s did not finish preparing within %s", strings.Join(slow, ", "), c.s.PrepareTimeout))
	}
	return nil
}

func (c *Coordinator) handle(e event) error {
	a := c.agents[e.agent]
	now := c.clk.Nanotime()
	switch e.kind {
	case evAttached:
		a.lastHeard = now
		if h := wire.HostFromProto(e.hello.GetHost(), a.addr); h != nil {
			a.host = h
		}
		if !e.resume {
			a.conn.send(c.prepareMsg(a))
			c.transition(a, stPreparing, "attached")
			return nil
		}
		a.reconnects++
		if to := a.resumed(c.stopReason); a.state == stLost && to != stLost {
			c.notes = append(c.notes, fmt.Sprintf("agent %d (%s) was declared lost (%s) and re-attached later", a.idx, a.addr, a.why))
			c.transition(a, to, "re-attached")
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
		if !a.settled(c.m) {
			c.logf("agent %d (%s): stream broke (%s); re-connecting", a.idx, a.addr, c.describeErr(e.err))
		}
	case evGone:
		if c.phase == phasePreparing {
			c.transition(a, stGone, c.describeErr(e.err))
			return exitcode.Wrap(exitcode.Failure, c.agentErr(a, "%s", c.describeErr(e.err)))
		}
		if !a.settled(c.m) {
			c.depart(a, stGone, c.describeErr(e.err))
		}
	case evMsg:
		a.lastHeard = now
		if to := a.resumed(c.stopReason); a.state == stLost && to != stLost {
			// Declared lost for its silence, but it was only slow (or
			// paused) and its stream held: take it back, its intervals
			// still count.
			c.notes = append(c.notes, fmt.Sprintf("agent %d (%s) was declared lost (%s) and came back", a.idx, a.addr, a.why))
			c.transition(a, to, "heard again")
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
		a.threads = int(x.Prepared.Threads)
		if d := wire.DatabaseFromProto(x.Prepared.Database, c.s.Spec.Adapter.Name, a.addr); d != nil {
			a.db = d
		}
		for _, w := range x.Prepared.Warnings {
			if _, seen := c.agentWarnings[w]; !seen {
				c.warningOrder = append(c.warningOrder, w)
			}
			c.agentWarnings[w] = append(c.agentWarnings[w], a.idx)
		}
		c.transition(a, stReady, "prepared")
	case *pb.AgentMsg_Failed:
		why := x.Failed.Stage + ": " + x.Failed.Reason
		c.transition(a, stFailed, why)
		if c.phase == phasePreparing {
			return exitcode.Wrap(exitcode.Failure, c.agentErr(a, "failed to prepare: %s", x.Failed.Reason))
		}
		if c.runFailure == nil {
			c.runFailure = c.agentErr(a, "failed: %s", why)
		}
		c.endBy(endFailure)
		if c.phase == phaseRunning {
			c.beginStop(fmt.Sprintf("agent %d failed", a.idx), false)
		}
	case *pb.AgentMsg_Started:
		a.startedAt = x.Started.StartedUnixNs - int64(a.offset)
		if a.state == stReady {
			c.transition(a, stRunning, "started")
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
		a.conn.send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Ack{Ack: &pb.Ack{Final: true}}})
		if c.phase == phasePreparing && x.Final.Stopped != "" {
			// Stopped on its host before the run could start: the plan
			// cannot start as prepared.
			c.transition(a, stFailed, "prepare: "+x.Final.Stopped)
			return exitcode.Wrap(exitcode.Failure, c.agentErr(a, "failed to prepare: %s", x.Final.Stopped))
		}
		c.onFinal(a, x.Final)
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
	start, end := merge.OnRunClock(&c.dec, int64(a.offset))
	if _, err := c.m.add(a.idx, &c.dec, start, end); err != nil {
		c.logf("agent %d (%s): merging interval %d: %v", a.idx, a.addr, rec.Seq, err)
		return nil
	}
	c.m.addRuntime(a.idx, rec.Seq, rec.Runtime)
	c.m.addTelemetry(a.idx, rec.Seq, c.dec.Telemetry)
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
	case a.state.out():
		return false
	case a.final != nil:
		return seq <= a.final.Intervals
	}
	return a.state >= stReady
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
		if a.final == nil && !a.state.out() {
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
		Lag:          time.Duration(s.LagNs),
	}
}

func (c *Coordinator) emit(s *seqMerge) {
	if c.measureStart == 0 {
		c.measureStart = s.iv.StartNs
	}
	c.sink.OnInterval(&run.Update{RunID: c.runID, Interval: s.iv, Cumulative: c.m.cum.Clone(), Progress: c.progress(s),
		Agents: c.agentStatuses(), AgentIntervals: s.Agents, AgentRuntime: s.runtime, Telemetry: s.telemetry})
}

func (c *Coordinator) agentStatuses() []run.Agent {
	out := make([]run.Agent, len(c.agents))
	for i, a := range c.agents {
		out[i] = run.Agent{
			Index: a.idx, Address: a.addr, Hostname: a.hostname, Version: a.version, State: a.state.public(),
			ClockOffset: a.offset, RTT: a.rtt, StartSkew: c.skew(a), Ops: a.ops, OpsPerSec: a.lastOpsPerS,
			CPUSeconds: a.lastCPU, Lag: time.Duration(a.lagNs), LastSeq: a.lastSeq, Reconnects: a.reconnects, Error: a.errorText(),
		}
	}
	return out
}

func (c *Coordinator) skew(a *agentRun) time.Duration {
	if a.startedAt == 0 || c.plannedStart == 0 {
		return 0
	}
	return time.Duration(a.startedAt - c.plannedStart)
}

// maybeStart starts the run once every agent is prepared: at one instant
// a moment ahead, far enough that every Start message arrives first.
func (c *Coordinator) maybeStart() error {
	var maxRTT time.Duration
	for _, a := range c.agents {
		if a.state != stReady {
			return nil
		}
		if a.rtt > maxRTT {
			maxRTT = a.rtt
		}
	}
	c.printAgentWarnings()
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

// printAgentWarnings prints, once and before any load, what the agents'
// own parses warned about that this coordinator's did not: a warning
// several agents gave is printed once, naming them.
func (c *Coordinator) printAgentWarnings() {
	own := map[string]bool{}
	for _, w := range c.s.Spec.Warnings {
		own[w] = true
	}
	for _, w := range c.warningOrder {
		if own[w] {
			continue
		}
		idx := c.agentWarnings[w]
		sort.Ints(idx)
		names := make([]string, len(idx))
		for i, n := range idx {
			names[i] = fmt.Sprintf("agent %d (%s)", n, c.agents[n].addr)
		}
		c.logf("%s: %s", strings.Join(names, ", "), w)
	}
	c.warningOrder = nil
}

// sendHeartbeats renews every agent's lease and, in the run phase, hands
// out the cluster-wide acknowledged key limit. An agent without a stream
// misses it; it is renewed again when the stream is back.
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
		a.conn.send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Heartbeat{Heartbeat: hb}})
	}
}

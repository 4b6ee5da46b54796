package coordinator

import (
	"fmt"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// stallExcuse is how long the coordinator's own loop may not run before
// that counts as a stall of this process rather than of its agents.
const stallExcuse = time.Second

// heartbeatEvery is how often the coordinator renews its agents' leases;
// startHeartbeatEvery is how often it does so between announcing the
// start and the start instant, so that an agent hears from it just before
// it starts its load.
const (
	heartbeatEvery      = time.Second
	startHeartbeatEvery = 200 * time.Millisecond
)

// endCause is why the run was stopped before its end, if it was. A later
// cause replaces an earlier one only when it ranks higher: the operator's
// abort over the loss policy over a failure over the operator's graceful
// stop.
type endCause uint8

const (
	// endOperatorStop is the operator's graceful stop (the first Ctrl-C,
	// q, stdout closed): a failure or the loss policy during it decides
	// the verdict instead. The zero value is no cause: the run ran to its
	// end.
	endOperatorStop endCause = iota + 1
	endFailure
	endLossPolicy
	// endOperatorAbort is the operator's abort (the second Ctrl-C).
	endOperatorAbort
)

func (c *Coordinator) endBy(e endCause) {
	if e > c.ending {
		c.ending = e
	}
}

// transition moves agent a to a new state and says so when the move is
// not the ordinary course of a run. It reports whether the state changed.
func (c *Coordinator) transition(a *agentRun, to agentState, why string) bool {
	from := a.state
	changed, err := a.moveTo(to, why, c.since())
	if err != nil {
		c.logf("%v: ignored", err)
		return false
	}
	if !changed || routine(from, to) {
		return changed
	}
	switch {
	case from == stLost:
		c.logf("agent %d (%s) is back after being declared lost (%s); now %s", a.idx, a.addr, a.journalWhy(stLost), to)
	case (to == stLost || to == stGone) && c.phase == phasePreparing:
		// The run fails whatever --on-agent-loss says.
		c.logf("agent %d (%s) lost: %s", a.idx, a.addr, why)
	case to == stLost || to == stGone:
		c.logf("agent %d (%s) lost: %s (--on-agent-loss=%s)", a.idx, a.addr, why, c.s.OnAgentLoss)
	default:
		c.logf("agent %d (%s) %s: %s", a.idx, a.addr, to, why)
	}
	return true
}

// journalWhy is the reason of the agent's latest move to s.
func (a *agentRun) journalWhy(s agentState) string {
	for i := len(a.journal) - 1; i >= 0; i-- {
		if a.journal[i].To == s {
			return a.journal[i].Why
		}
	}
	return ""
}

// noteStall is called whenever the loop runs: a gap since it last ran
// longer than stallExcuse means this process did not run (paused,
// swapped out, starved of CPU). The agents' messages of that time are
// still queued and this process' clock says nothing about their health,
// so their silence is judged from now on.
func (c *Coordinator) noteStall(now int64) {
	if c.lastAwake != 0 {
		if stall := time.Duration(now - c.lastAwake); stall > stallExcuse {
			c.logf("coordinator stalled for %s; agent silence is judged from now", stall.Round(time.Millisecond))
			c.notes = append(c.notes, fmt.Sprintf("the coordinator stalled for %s (paused or starved of CPU)", stall.Round(time.Millisecond)))
			c.longestStall = max(c.longestStall, stall)
			for _, a := range c.agents {
				if a.lastHeard != 0 {
					a.lastHeard = max(a.lastHeard, now-int64(time.Second))
				}
			}
		}
	}
	c.lastAwake = now
}

// stallExcuses reports whether this coordinator's own stall explains why
// agent a left the run: it stopped its load on its lease, or would not
// start it, because it did not hear from us while we did not run. gone
// says its run was gone when we came back (it could not tell us why).
func (c *Coordinator) stallExcuses(a *agentRun, gone bool) bool {
	if c.longestStall == 0 {
		return false
	}
	switch cause := a.final.GetStopCause(); {
	case cause == pb.StopCause_STOP_CAUSE_NO_COORDINATOR:
		return true
	case cause == pb.StopCause_STOP_CAUSE_LEASE || gone:
		// The agent heard from us last up to a heartbeat before the
		// stall began.
		return a.lease > 0 && c.longestStall+heartbeatEvery >= a.lease
	}
	return false
}

// judgeSilence declares agents lost that have been silent longer than
// --agent-timeout. While agents prepare, silence fails the run.
func (c *Coordinator) judgeSilence(now int64) error {
	for _, a := range c.agents {
		if a.settled(c.m) || a.lastHeard == 0 {
			continue
		}
		if silent := time.Duration(now - a.lastHeard); silent > c.s.AgentTimeout {
			why := fmt.Sprintf("silent for %s", silent.Round(time.Millisecond))
			if c.phase == phasePreparing {
				// The run fails. The agent is lost all the same: no
				// Release can reach it and its lease ends the run on its
				// side, so the release does not wait for it (it used to,
				// for the whole 10 s release wait).
				c.transition(a, stLost, why+" while preparing")
				return exitcode.Wrap(exitcode.Failure, c.agentErr(a, "%s while preparing", why))
			}
			c.depart(a, stLost, why)
		}
	}
	return nil
}

// depart records that agent a left the run (lost, gone, or stopped by
// itself) and applies the agent-loss policy, unless the coordinator's own
// stall explains the departure.
func (c *Coordinator) depart(a *agentRun, to agentState, why string) {
	if (to == stGone || to == stStopped) && c.stallExcuses(a, to == stGone) {
		// Our silence stopped it: it did what it must, and is not to
		// blame.
		c.transition(a, stStopped, fmt.Sprintf("%s (the coordinator was stalled for %s; the agent's lease is %s)",
			why, c.longestStall.Round(time.Millisecond), a.lease))
		return
	}
	if !c.transition(a, to, why) {
		return
	}
	if c.s.OnAgentLoss == LossAbort {
		c.endBy(endLossPolicy)
		c.beginStop(fmt.Sprintf("agent %d (%s) %s", a.idx, a.addr, verb(to)), false)
	}
}

func verb(s agentState) string {
	if s == stStopped {
		return "left the run"
	}
	return "lost"
}

// onFinal takes an agent's own end-of-run account: it finished, or it
// stopped by itself (which is a departure).
func (c *Coordinator) onFinal(a *agentRun, f *pb.Final) {
	if a.final != nil {
		return
	}
	a.final = f
	if a.reached(stLost) {
		// Declared lost before: the Final says where it is now (the loss
		// policy was applied then).
		if to := a.resumed(c.stopReason); to != stLost {
			c.transition(a, to, "its end arrived")
			return
		}
		c.notes = append(c.notes, fmt.Sprintf("agent %d (%s) stopped its load on its lease, cut off from the coordinator; its intervals until then arrived later", a.idx, a.addr))
		c.transition(a, stLost, a.journalWhy(stLost))
		return
	}
	to := finalState(f, c.stopReason)
	if to == stStopped {
		c.depart(a, stStopped, f.Stopped)
		return
	}
	c.transition(a, to, "ran its share")
}

// beginStop asks every agent still running to stop; their last intervals
// and finals are still collected (within StopTimeout, or abortGrace for
// an abort).
func (c *Coordinator) beginStop(reason string, abort bool) {
	if c.phase == phaseStopping && !abort {
		return
	}
	c.phase = phaseStopping
	if c.stopReason == "" || abort {
		c.stopReason = reason
	}
	wait := c.s.StopTimeout
	if abort {
		wait = min(wait, abortGrace)
	}
	deadline := c.clk.Nanotime() + int64(wait)
	if c.stopDeadline == 0 || deadline < c.stopDeadline {
		c.stopDeadline = deadline
	}
	for _, a := range c.agents {
		if a.final == nil && !a.state.out() {
			a.conn.send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Stop{Stop: &pb.Stop{Abort: abort, Reason: reason}}})
		}
	}
}

// abortGrace bounds how long an aborted run waits for its agents' last
// intervals: the operator who aborts wants the terminal back within a
// couple of seconds, whatever the timeouts.
const abortGrace = time.Second

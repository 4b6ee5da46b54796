package coordinator

import (
	"fmt"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/environ"
	"github.com/ycsbctl/ycsbctl/internal/run"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// agentState is where one agent is in the coordinator's run. It is the one
// record of an agent's life: it changes only through agentRun.moveTo,
// along the edges of agentMoves, and every change is journaled (run.json)
// and, when it is not the ordinary course of a run, logged.
//
//	connecting ──attached──▶ preparing ──Prepared──▶ ready ──Started──▶ running
//	                             │                     │                   │
//	                             │                     ├──Final──┬─────────┤
//	                             │                     │         ▼         ▼
//	                             │                     │     finished   stopped
//	                             ▼                     ▼         │         │
//	                           failed ◀──Failed── (any live state)         │
//	                                                                       │
//	ready, running, finished, stopped ──silent──▶ lost ──heard again──▶ (back)
//	preparing ──silent──▶ lost (and the run fails: preparing is all or nothing)
//	ready, running, finished, stopped, lost ──stream cannot resume──▶ gone
//
// finished: the agent ran its share to the end, or to the coordinator's
// Stop. stopped: it ended its load by itself and its Final says why (a
// signal on its host, its lease, no coordinator at the start instant).
// finished and stopped are settled once every interval their Final counts
// has arrived; lost, gone and failed are out of the run.
type agentState uint8

const (
	stConnecting agentState = iota
	stPreparing
	stReady
	stRunning
	stFinished
	stStopped
	stLost
	stGone
	stFailed
)

var stateNames = [...]string{"connecting", "preparing", "ready", "running", "finished", "stopped", "lost", "gone", "failed"}

func (s agentState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", s)
}

// public is the state as the live view, /metrics and run.json name it.
func (s agentState) public() run.AgentState {
	switch s {
	case stConnecting:
		return run.AgentConnecting
	case stPreparing:
		return run.AgentPreparing
	case stReady:
		return run.AgentReady
	case stRunning:
		return run.AgentRunning
	case stFinished:
		return run.AgentFinished
	case stStopped:
		return run.AgentStopped
	case stLost, stGone:
		return run.AgentLost
	}
	return run.AgentFailed
}

// out: nothing more is expected from an agent in this state.
func (s agentState) out() bool { return s == stLost || s == stGone || s == stFailed }

// agentMoves is every legal change of state. Anything else is a bug in the
// coordinator or a confused agent, refused and logged.
var agentMoves = map[agentState][]agentState{
	stConnecting: {stPreparing, stFailed, stGone},
	stPreparing:  {stReady, stFailed, stLost, stGone},
	stReady:      {stRunning, stFinished, stStopped, stFailed, stLost, stGone},
	stRunning:    {stFinished, stStopped, stFailed, stLost, stGone},
	stFinished:   {stLost, stGone},
	stStopped:    {stLost, stGone},
	// A lost agent that is heard from again goes back to where it was
	// (ready, running) or to where its Final puts it.
	stLost:   {stReady, stRunning, stFinished, stStopped, stFailed, stGone},
	stGone:   nil,
	stFailed: nil,
}

// routine are the moves of a run going as planned: journaled, not logged.
func routine(from, to agentState) bool {
	switch to {
	case stPreparing, stReady, stRunning:
		return from != stLost
	case stFinished:
		return from == stReady || from == stRunning
	}
	return false
}

// stateChange is one entry of an agent's journal.
type stateChange struct {
	To  agentState
	At  time.Duration // since the coordinator began
	Why string
}

// agentRun is the coordinator's record of one agent.
type agentRun struct {
	idx  int
	addr string
	conn *conn

	state agentState
	// why explains the current state when it is not the plan's course
	// (lost, gone, failed, stopped); journal holds every change.
	why     string
	journal []stateChange

	hostname string
	version  string
	protocol uint32
	offset   time.Duration
	rtt      time.Duration
	// lease is the agent's lease: how long it runs without hearing from
	// this coordinator (0: unknown).
	lease time.Duration
	// props are the properties the agent adds to every run (redacted).
	props map[string]string

	threads      int
	startedAt    int64 // coordinator-clock Unix ns of the agent's actual start; 0 until Started
	final        *pb.Final
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
	// host and db describe the agent's machine (Hello) and, for agent 0,
	// the database (Prepared), for the run's environment record.
	host *environ.Host
	db   *environ.Database
}

// moveTo changes the agent's state along a legal edge and journals it. It
// reports false, changing nothing, for a move to the current state, and
// an error for an illegal one.
func (a *agentRun) moveTo(to agentState, why string, at time.Duration) (bool, error) {
	if a.state == to {
		return false, nil
	}
	legal := false
	for _, s := range agentMoves[a.state] {
		legal = legal || s == to
	}
	if !legal {
		return false, fmt.Errorf("agent %d (%s): no move from %s to %s (%s)", a.idx, a.addr, a.state, to, why)
	}
	a.state, a.why = to, why
	a.journal = append(a.journal, stateChange{To: to, At: at, Why: why})
	return true, nil
}

// reached reports whether the agent was ever in state s.
func (a *agentRun) reached(s agentState) bool {
	for _, c := range a.journal {
		if c.To == s {
			return true
		}
	}
	return a.state == s
}

// resumed is where a lost agent goes when it is heard from again: where
// its Final puts it, else running once it started, else ready. One that
// stopped on its lease lost us as we lost it (a partition longer than
// both): it stays lost, though what it measured until then counts.
func (a *agentRun) resumed(stopReason string) agentState {
	switch {
	case a.final != nil && a.final.StopCause == pb.StopCause_STOP_CAUSE_LEASE:
		return stLost
	case a.final != nil:
		return finalState(a.final, stopReason)
	case a.startedAt != 0:
		return stRunning
	}
	return stReady
}

// finalState is where an agent's Final puts it: finished when it ran its
// share to its end or to the coordinator's stop, stopped when it ended its
// load by itself.
func finalState(f *pb.Final, stopReason string) agentState {
	switch f.StopCause {
	case pb.StopCause_STOP_CAUSE_PLAN, pb.StopCause_STOP_CAUSE_COORDINATOR:
		return stFinished
	case pb.StopCause_STOP_CAUSE_UNSPECIFIED:
		// An agent that does not say: it stopped by itself when its
		// reason is not the coordinator's.
		if f.Stopped != "" && f.Stopped != stopReason {
			return stStopped
		}
		return stFinished
	}
	return stStopped
}

// settled: nothing more is expected from the agent.
func (a *agentRun) settled(m *merger) bool {
	if a.state.out() {
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

// states is the agent's journal as run.json records it.
func (a *agentRun) states() []bundle.StateChange {
	out := make([]bundle.StateChange, len(a.journal))
	for i, c := range a.journal {
		out[i] = bundle.StateChange{State: c.To.String(), AtMs: float64(c.At) / 1e6, Why: c.Why}
	}
	return out
}

// endsByItself: the agent ends the run without a Release: lost or gone
// (its lease runs out), or stopped by a signal on its host (it is
// shutting down).
func (a *agentRun) endsByItself() bool {
	return a.state == stLost || a.state == stGone ||
		(a.state == stStopped && a.final != nil && a.final.StopCause == pb.StopCause_STOP_CAUSE_SIGNAL)
}

// errorText is what run.json and the live view say about an agent that
// did not run as planned; empty when it did.
func (a *agentRun) errorText() string {
	switch a.state {
	case stLost, stGone:
		return "lost: " + a.why
	case stFailed, stStopped:
		return a.why
	}
	return ""
}

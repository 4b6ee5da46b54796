package agent

import (
	"fmt"
	"strings"
	"time"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// runState is where the run an agent holds is in its course. It is the
// one record of that course: it changes only through heldRun.moveLocked,
// along the edges of runMoves, and every change is journaled; an illegal
// move is refused and logged with the journal that led to it.
//
//	idle ──Prepare──▶ preparing ──prepared──▶ ready ──Start──▶ starting ──start instant──▶ running
//	                      │                                       │                          │
//	                      └──failed──▶ failed                     └───stopped──▶ stopping ◀──┤ stopped
//	                                                                                │        │
//	                                                                        load ended    ran its share
//	                                                                                ▼        ▼
//	idle, preparing, ready ──Stop (ready: also a signal on this host)────────────▶ finished
//	finished ──the coordinator acknowledges the Final──▶ acknowledged
//
// stopping: something ended the load before its plan did (the
// coordinator's Stop, the lease, a signal on this host, no coordinator at
// the start instant); the first such cause is the one the Final reports,
// which is why stopping is a state and not entered twice. finished: the
// Final exists and is queued for the coordinator, acknowledged: the
// coordinator has it. failed: the prepare failed and a Failed was sent.
//
// The end of the hold (heldRun.ending: released, lease run out, handed
// over) is not one of these states but a fact beside them: the course
// goes on while the agent lets go (the load in flight ends and its Final
// is made; a Stop read on a stream kept open after the lease is still
// answered), so the agent's run can be ending in any state.
type runState uint8

const (
	stIdle runState = iota
	stPreparing
	stReady
	stStarting
	stRunning
	stStopping
	stFinished
	stAcknowledged
	stFailed
)

var runStateNames = [...]string{"idle", "preparing", "ready", "starting", "running", "stopping", "finished", "acknowledged", "failed"}

func (s runState) String() string {
	if int(s) < len(runStateNames) {
		return runStateNames[s]
	}
	return fmt.Sprintf("state(%d)", s)
}

// public is the state as the coordinator reads it (Hello replies and
// heartbeats): the wire knows only where the load is, not why.
func (s runState) public() pb.RunState {
	switch s {
	case stIdle:
		return pb.RunState_RUN_STATE_IDLE
	case stPreparing:
		return pb.RunState_RUN_STATE_PREPARING
	case stReady:
		return pb.RunState_RUN_STATE_READY
	case stStarting, stRunning, stStopping:
		return pb.RunState_RUN_STATE_RUNNING
	}
	return pb.RunState_RUN_STATE_FINISHED
}

// loadLive: the load was started (its Start arrived) and has not ended;
// the engine's runner is to be stopped or aborted, and waited for.
func (s runState) loadLive() bool { return s == stStarting || s == stRunning || s == stStopping }

// runMoves is every legal change of state. Anything else is a bug in the
// agent, refused and logged.
var runMoves = map[runState][]runState{
	stIdle:      {stPreparing, stFinished},
	stPreparing: {stReady, stFailed, stFinished},
	stReady:     {stStarting, stFinished},
	stStarting:  {stRunning, stStopping},
	// A load may end by its plan (finished) or be stopped first.
	stRunning:      {stStopping, stFinished},
	stStopping:     {stFinished},
	stFinished:     {stAcknowledged},
	stAcknowledged: nil,
	stFailed:       nil,
}

// stateChange is one entry of the run's journal.
type stateChange struct {
	To  runState
	At  time.Duration // since the run was accepted
	Why string
}

func (c stateChange) String() string {
	return fmt.Sprintf("%s at %s (%s)", c.To, c.At.Round(time.Millisecond), c.Why)
}

// moveLocked changes the run's state along a legal edge and journals it;
// r.mu is held. It reports false, changing nothing, for a move to the
// current state (a second stop, say: the first one stands) and for an
// illegal one, which is logged.
func (r *heldRun) moveLocked(to runState, why string) bool {
	from := r.state
	if from == to {
		return false
	}
	for _, s := range runMoves[from] {
		if s == to {
			r.state = to
			r.journal = append(r.journal, stateChange{To: to, At: time.Duration(r.clk.Nanotime() - r.accepted), Why: why})
			return true
		}
	}
	r.logf("no move from %s to %s (%s), ignored; the run so far: %s", from, to, why, r.journalText())
	return false
}

// journalText is the journal as one line, for a log.
func (r *heldRun) journalText() string {
	parts := make([]string, 0, len(r.journal)+1)
	parts = append(parts, stIdle.String())
	for _, c := range r.journal {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, " → ")
}

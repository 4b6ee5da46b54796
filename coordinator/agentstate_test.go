package coordinator

import (
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/run"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Every edge of the agent state machine, one by one: legal moves change
// the state and are journaled with their reason; illegal ones change
// nothing and say which move was refused.
func TestAgentStateMoves(t *testing.T) {
	all := []agentState{stConnecting, stPreparing, stReady, stRunning, stFinished, stStopped, stLost, stGone, stFailed}
	legal := map[[2]agentState]bool{}
	for from, tos := range agentMoves {
		for _, to := range tos {
			legal[[2]agentState{from, to}] = true
		}
	}
	for _, from := range all {
		for _, to := range all {
			if from == to {
				continue
			}
			a := &agentRun{idx: 3, addr: "h:1", state: from}
			changed, err := a.moveTo(to, "because", 1500*time.Millisecond)
			if legal[[2]agentState{from, to}] {
				if err != nil || !changed || a.state != to || len(a.journal) != 1 || a.journal[0] != (stateChange{To: to, At: 1500 * time.Millisecond, Why: "because"}) {
					t.Errorf("%s → %s: changed %v err %v state %s journal %+v", from, to, changed, err, a.state, a.journal)
				}
				continue
			}
			if err == nil || changed || a.state != from || len(a.journal) != 0 {
				t.Errorf("%s → %s was allowed: changed %v state %s", from, to, changed, a.state)
			} else if !strings.Contains(err.Error(), "agent 3 (h:1): no move from "+from.String()+" to "+to.String()) {
				t.Errorf("refusal does not name the move: %v", err)
			}
		}
	}
	// Out of the run is final: gone and failed go nowhere.
	for _, s := range []agentState{stGone, stFailed} {
		if len(agentMoves[s]) != 0 {
			t.Errorf("%s has moves %v", s, agentMoves[s])
		}
	}
}

// A run going as planned is journaled but not logged; everything else is
// logged, once, in the words the operator reads.
func TestTransitionLogging(t *testing.T) {
	var logs []string
	c := &Coordinator{s: &settings{Config: Config{OnAgentLoss: LossContinue, Logf: func(f string, a ...any) {
		logs = append(logs, sprintf(f, a...))
	}}}}
	c.clk = clock.NewReal()
	// The run is under way (the zero phase is preparing, whose losses
	// fail the run whatever the policy; see below).
	c.phase = phaseRunning
	a := &agentRun{idx: 1, addr: "h:2"}
	for _, step := range []struct {
		to   agentState
		why  string
		want string
	}{
		{stPreparing, "attached", ""},
		{stReady, "prepared", ""},
		{stRunning, "started", ""},
		{stLost, "silent for 3s", "agent 1 (h:2) lost: silent for 3s (--on-agent-loss=continue)"},
		{stRunning, "heard again", "agent 1 (h:2) is back after being declared lost (silent for 3s); now running"},
		{stStopped, "agent stopped by SIGTERM on its host", "agent 1 (h:2) stopped: agent stopped by SIGTERM on its host"},
	} {
		logs = nil
		if !c.transition(a, step.to, step.why) {
			t.Fatalf("move to %s refused", step.to)
		}
		got := strings.Join(logs, "\n")
		if got != step.want {
			t.Errorf("move to %s logged %q, want %q", step.to, got, step.want)
		}
	}
	if n := len(a.journal); n != 6 {
		t.Fatalf("journal has %d entries", n)
	}
	if got := a.states()[3]; got.State != "lost" || got.Why != "silent for 3s" {
		t.Errorf("journal entry %+v", got)
	}
	// An illegal move is logged and ignored.
	logs = nil
	if c.transition(a, stPreparing, "again") || a.state != stStopped || !strings.Contains(strings.Join(logs, ""), "no move from stopped to preparing") {
		t.Errorf("illegal move: state %s, logs %q", a.state, logs)
	}

	// An agent silent while the run prepares is lost (its release is not
	// waited for); the run fails whatever --on-agent-loss says, so the
	// policy is not named.
	c.phase = phasePreparing
	b := &agentRun{idx: 2, addr: "h:3"}
	logs = nil
	if !c.transition(b, stPreparing, "attached") || !c.transition(b, stLost, "silent for 2s while preparing") {
		t.Fatalf("preparing → lost refused: %q", logs)
	}
	if got := strings.Join(logs, "\n"); got != "agent 2 (h:3) lost: silent for 2s while preparing" {
		t.Errorf("lost while preparing logged %q", got)
	}
	if !b.endsByItself() {
		t.Error("an agent lost while preparing ends the run by its lease; the release must not wait for it")
	}
}

// Where an agent's Final puts it: finished when its share ran to its end
// or to the coordinator's stop; stopped when something on its host ended
// it. An older agent that gives no cause is judged by its reason.
func TestFinalState(t *testing.T) {
	for _, c := range []struct {
		cause   pb.StopCause
		stopped string
		want    agentState
	}{
		{pb.StopCause_STOP_CAUSE_PLAN, "", stFinished},
		{pb.StopCause_STOP_CAUSE_COORDINATOR, "interrupted by operator", stFinished},
		{pb.StopCause_STOP_CAUSE_LEASE, "no word from coordinator", stStopped},
		{pb.StopCause_STOP_CAUSE_SIGNAL, "agent stopped by SIGTERM on its host", stStopped},
		{pb.StopCause_STOP_CAUSE_NO_COORDINATOR, "did not start", stStopped},
		{pb.StopCause_STOP_CAUSE_UNSPECIFIED, "", stFinished},
		{pb.StopCause_STOP_CAUSE_UNSPECIFIED, "the stop reason", stFinished},
		{pb.StopCause_STOP_CAUSE_UNSPECIFIED, "no word from coordinator", stStopped},
	} {
		if got := finalState(&pb.Final{StopCause: c.cause, Stopped: c.stopped}, "the stop reason"); got != c.want {
			t.Errorf("%v %q: %s, want %s", c.cause, c.stopped, got, c.want)
		}
	}
	if stStopped.public() != run.AgentStopped || stGone.public() != run.AgentLost {
		t.Error("public names")
	}
}

// Where a lost agent goes when it is heard from again: back to its work,
// to where its Final puts it, or nowhere when it stopped on its lease (it
// lost us as we lost it).
func TestResumed(t *testing.T) {
	for _, c := range []struct {
		name string
		a    agentRun
		want agentState
	}{
		{"not started", agentRun{}, stReady},
		{"running", agentRun{startedAt: 1}, stRunning},
		{"ran its share", agentRun{startedAt: 1, final: &pb.Final{StopCause: pb.StopCause_STOP_CAUSE_PLAN}}, stFinished},
		{"stopped by a signal", agentRun{startedAt: 1, final: &pb.Final{StopCause: pb.StopCause_STOP_CAUSE_SIGNAL}}, stStopped},
		{"stopped on its lease", agentRun{startedAt: 1, final: &pb.Final{StopCause: pb.StopCause_STOP_CAUSE_LEASE}}, stLost},
	} {
		if got := c.a.resumed("stop"); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// The coordinator's own stall excuses an agent that stopped on its lease
// (or whose run was gone when the coordinator came back) when the stall
// was as long as that lease, and one that would not start without it; it
// excuses nothing else.
func TestStallExcuses(t *testing.T) {
	final := func(c pb.StopCause) *pb.Final { return &pb.Final{StopCause: c} }
	for _, c := range []struct {
		name  string
		stall time.Duration
		a     agentRun
		gone  bool
		want  bool
	}{
		{"no stall", 0, agentRun{lease: 3 * time.Second, final: final(pb.StopCause_STOP_CAUSE_LEASE)}, false, false},
		{"stall past the lease", 5 * time.Second, agentRun{lease: 3 * time.Second, final: final(pb.StopCause_STOP_CAUSE_LEASE)}, false, true},
		{"stall within the lease", 5 * time.Second, agentRun{lease: 15 * time.Second, final: final(pb.StopCause_STOP_CAUSE_LEASE)}, false, false},
		{"gone after a stall past the lease", 5 * time.Second, agentRun{lease: 3 * time.Second}, true, true},
		{"no coordinator at the start", 2 * time.Second, agentRun{lease: 15 * time.Second, final: final(pb.StopCause_STOP_CAUSE_NO_COORDINATOR)}, false, true},
		{"stopped by a signal", 20 * time.Second, agentRun{lease: 3 * time.Second, final: final(pb.StopCause_STOP_CAUSE_SIGNAL)}, false, false},
	} {
		co := &Coordinator{longestStall: c.stall}
		if got := co.stallExcuses(&c.a, c.gone); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

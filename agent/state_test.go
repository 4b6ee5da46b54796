package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

var allRunStates = []runState{stIdle, stPreparing, stReady, stStarting, stRunning, stStopping, stFinished, stAcknowledged, stFailed}

// logged collects a test agent's log lines.
type logged struct {
	mu    sync.Mutex
	lines []string
}

func (l *logged) logf(f string, a ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(f, a...))
	l.mu.Unlock()
}

func (l *logged) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// Every edge of the run's state machine, one by one: legal moves change
// the state and are journaled with their reason and time; illegal ones
// change nothing and are logged, naming the move and the run so far.
func TestRunStateMoves(t *testing.T) {
	legal := map[[2]runState]bool{}
	for from, tos := range runMoves {
		for _, to := range tos {
			legal[[2]runState{from, to}] = true
		}
	}
	for _, from := range allRunStates {
		for _, to := range allRunStates {
			if from == to {
				continue
			}
			var log logged
			clk := clock.NewReal()
			r := &heldRun{srv: &server{cfg: Config{Logf: log.logf}}, clk: clk, id: "r1", state: from, accepted: clk.Nanotime() - int64(1500*time.Millisecond)}
			moved := r.moveLocked(to, "because")
			if legal[[2]runState{from, to}] {
				if !moved || r.state != to || len(r.journal) != 1 || r.journal[0].To != to || r.journal[0].Why != "because" ||
					r.journal[0].At < 1500*time.Millisecond || log.text() != "" {
					t.Errorf("%s → %s: moved %v state %s journal %v log %q", from, to, moved, r.state, r.journal, log.text())
				}
				continue
			}
			if moved || r.state != from || len(r.journal) != 0 {
				t.Errorf("%s → %s was allowed: state %s", from, to, r.state)
			} else if want := "run r1: no move from " + from.String() + " to " + to.String() + " (because), ignored; the run so far: idle"; log.text() != want {
				t.Errorf("%s → %s: the refusal logged %q, want %q", from, to, log.text(), want)
			}
		}
	}
	// A move to the state the run is in changes nothing and is no bug
	// (a second stop: the first one's cause stands).
	var log logged
	r := &heldRun{srv: &server{cfg: Config{Logf: log.logf}}, clk: clock.NewReal(), state: stStopping}
	if r.moveLocked(stStopping, "again") || len(r.journal) != 0 || log.text() != "" {
		t.Errorf("stopping → stopping: journal %v, log %q", r.journal, log.text())
	}
}

// The table's shape: every state can be reached from idle, and every
// state leads to an end (acknowledged, or failed), so no run is held in a
// state it cannot leave but by its lease; the ends go nowhere.
func TestRunStateTable(t *testing.T) {
	reach := func(from runState) map[runState]bool {
		seen := map[runState]bool{from: true}
		for todo := []runState{from}; len(todo) > 0; todo = todo[1:] {
			for _, s := range runMoves[todo[0]] {
				if !seen[s] {
					seen[s] = true
					todo = append(todo, s)
				}
			}
		}
		return seen
	}
	fromIdle := reach(stIdle)
	for _, s := range allRunStates {
		if !fromIdle[s] {
			t.Errorf("%s cannot be reached from idle", s)
		}
		if r := reach(s); !r[stAcknowledged] && !r[stFailed] {
			t.Errorf("%s leads to no end", s)
		}
		if _, ok := runMoves[s]; !ok {
			t.Errorf("%s is missing from the table", s)
		}
	}
	for _, s := range []runState{stAcknowledged, stFailed} {
		if len(runMoves[s]) != 0 {
			t.Errorf("%s has moves %v", s, runMoves[s])
		}
	}
	if len(runMoves) != len(allRunStates) || len(runStateNames) != len(allRunStates) {
		t.Errorf("%d states, %d in the table, %d names", len(allRunStates), len(runMoves), len(runStateNames))
	}
}

// What the coordinator reads of each state: the wire knows where the load
// is, not why, so a load starting, running or stopping is running, and a
// run with its Final, acknowledged or not, or failed is finished.
func TestRunStatePublic(t *testing.T) {
	want := map[runState]pb.RunState{
		stIdle: pb.RunState_RUN_STATE_IDLE, stPreparing: pb.RunState_RUN_STATE_PREPARING, stReady: pb.RunState_RUN_STATE_READY,
		stStarting: pb.RunState_RUN_STATE_RUNNING, stRunning: pb.RunState_RUN_STATE_RUNNING, stStopping: pb.RunState_RUN_STATE_RUNNING,
		stFinished: pb.RunState_RUN_STATE_FINISHED, stAcknowledged: pb.RunState_RUN_STATE_FINISHED, stFailed: pb.RunState_RUN_STATE_FINISHED,
	}
	for _, s := range allRunStates {
		if got := s.public(); got != want[s] {
			t.Errorf("%s is %v on the wire, want %v", s, got, want[s])
		}
		if live := s.public() == pb.RunState_RUN_STATE_RUNNING; s.loadLive() != live {
			t.Errorf("%s: load live %v", s, s.loadLive())
		}
	}
}

// heldTestRun is a run held by a test agent, its stream attached with
// nothing behind it (what the agent sends is dropped): the test plays the
// coordinator through handle.
func heldTestRun(t *testing.T) (*heldRun, *logged) {
	t.Helper()
	log := &logged{}
	clk := clock.NewReal()
	s := &server{cfg: Config{Lease: 30 * time.Second, Logf: log.logf}, clk: clk}
	r := newRun(s, &pb.Hello{RunId: "run-j", Coordinator: "test"})
	s.current = r
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan *pb.AgentMsg, 16)
	st := &stream{out: out, ctx: ctx, cancel: cancel, draining: make(chan struct{})}
	go func() {
		for {
			select {
			case <-out:
			case <-ctx.Done():
				return
			}
		}
	}()
	r.attached = st
	t.Cleanup(func() { r.end("test over", true); s.runs.Wait(); cancel() })
	return r, log
}

// until waits for the run to reach s, within a bound that only catches a
// hang.
func until(t *testing.T, r *heldRun, s runState, log *logged) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r.mu.Lock()
		now, journal := r.state, r.journalText()
		r.mu.Unlock()
		if now == s {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not reach %s within 15 s: %s\n%s", s, journal, log.text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *heldRun) path() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{}
	for _, c := range r.journal {
		out = append(out, c.To.String()+" ("+c.Why+")")
	}
	return out
}

func coord(m any) *pb.CoordinatorMsg {
	switch x := m.(type) {
	case *pb.Prepare:
		return &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Prepare{Prepare: x}}
	case *pb.Start:
		return &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Start{Start: x}}
	case *pb.Stop:
		return &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Stop{Stop: x}}
	case *pb.Ack:
		return &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Ack{Ack: x}}
	}
	panic(fmt.Sprintf("%T", m))
}

// The journal tells a run's course as it went, in the order it went, with
// the reasons: a load run to its plan, one the coordinator stopped, one
// stopped before its start, one stopped by its lease, one left by a
// signal before its start, and a prepare that failed.
func TestRunJournal(t *testing.T) {
	shortRun := map[string]string{"basicdb.verbose": "false", "recordcount": "10", "operationcount": "20", "status.interval": "0.05"}
	for _, c := range []struct {
		name  string
		drive func(t *testing.T, r *heldRun, log *logged)
		want  []string
		cause pb.StopCause
	}{
		{"to its plan", func(t *testing.T, r *heldRun, log *logged) {
			r.handle(coord(&pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: shortRun, AgentCount: 1}))
			until(t, r, stReady, log)
			r.handle(coord(&pb.Start{StartUnixNs: time.Now().UnixNano()}))
			until(t, r, stFinished, log)
			r.handle(coord(&pb.Ack{Final: true}))
		}, []string{"preparing (Prepare)", "ready (prepared)", "starting (Start)", "running (the start instant)", "finished (ran its share)",
			"acknowledged (the coordinator has the Final)"}, pb.StopCause_STOP_CAUSE_PLAN},
		{"stopped by the coordinator", func(t *testing.T, r *heldRun, log *logged) {
			r.handle(coord(&pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: timedRun, AgentCount: 1}))
			until(t, r, stReady, log)
			r.handle(coord(&pb.Start{StartUnixNs: time.Now().UnixNano()}))
			until(t, r, stRunning, log)
			r.handle(coord(&pb.Stop{Reason: "enough"}))
			// A second stop does not change the cause.
			r.handle(coord(&pb.Stop{Reason: "again", Abort: true}))
			until(t, r, stFinished, log)
		}, []string{"preparing (Prepare)", "ready (prepared)", "starting (Start)", "running (the start instant)", "stopping (enough)",
			"finished (the load stopped: enough)"}, pb.StopCause_STOP_CAUSE_COORDINATOR},
		{"stopped before its start", func(t *testing.T, r *heldRun, log *logged) {
			r.handle(coord(&pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: timedRun, AgentCount: 1}))
			until(t, r, stReady, log)
			r.handle(coord(&pb.Stop{Reason: "changed my mind"}))
			// A Start after the Final starts nothing.
			r.handle(coord(&pb.Start{StartUnixNs: time.Now().UnixNano()}))
		}, []string{"preparing (Prepare)", "ready (prepared)", "finished (changed my mind)"}, pb.StopCause_STOP_CAUSE_COORDINATOR},
		{"its lease run out", func(t *testing.T, r *heldRun, log *logged) {
			r.handle(coord(&pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: timedRun, AgentCount: 1}))
			until(t, r, stReady, log)
			r.handle(coord(&pb.Start{StartUnixNs: time.Now().UnixNano()}))
			until(t, r, stRunning, log)
			r.expire("no word (lease)")
		}, []string{"preparing (Prepare)", "ready (prepared)", "starting (Start)", "running (the start instant)", "stopping (no word (lease))",
			"finished (the load stopped: no word (lease))"}, pb.StopCause_STOP_CAUSE_LEASE},
		{"a signal before its start", func(t *testing.T, r *heldRun, log *logged) {
			r.handle(coord(&pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: timedRun, AgentCount: 1}))
			until(t, r, stReady, log)
			force := make(chan struct{})
			close(force)
			r.handOver("SIGTERM", force)
		}, []string{"preparing (Prepare)", "ready (prepared)", "finished (agent stopped by SIGTERM on its host)"}, pb.StopCause_STOP_CAUSE_SIGNAL},
		{"a prepare that fails", func(t *testing.T, r *heldRun, log *logged) {
			r.handle(coord(&pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: map[string]string{"recordcount": "many"}, AgentCount: 1}))
			until(t, r, stFailed, log)
		}, []string{"preparing (Prepare)", "failed (prepare: "}, pb.StopCause_STOP_CAUSE_UNSPECIFIED},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, log := heldTestRun(t)
			c.drive(t, r, log)
			got := r.path()
			if len(got) != len(c.want) {
				t.Fatalf("journal %q, want %q\n%s", got, c.want, log.text())
			}
			for i := range got {
				if !strings.HasPrefix(got[i], c.want[i]) {
					t.Errorf("journal entry %d is %q, want %q", i, got[i], c.want[i])
				}
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if f := r.final.GetFinal(); f.GetStopCause() != c.cause {
				t.Errorf("the Final's cause is %v, want %v", f.GetStopCause(), c.cause)
			}
			for i := 1; i < len(r.journal); i++ {
				if r.journal[i].At < r.journal[i-1].At {
					t.Errorf("the journal goes back in time: %s", r.journalText())
				}
			}
			if strings.Contains(log.text(), "no move from") {
				t.Errorf("an illegal move was tried:\n%s", log.text())
			}
		})
	}
}

// A Stop that arrives while the run prepares ends it (an empty Final);
// the prepare that completes afterwards keeps what it opened for the
// run's end and announces nothing: a run with a Final is never ready
// again, so a Start after it starts no load. (The run used to go back to
// ready and say Prepared after its Final.)
func TestStopWhilePreparing(t *testing.T) {
	r, log := heldTestRun(t)
	sent := make(chan *pb.AgentMsg, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.mu.Lock()
	r.attached = &stream{out: sent, ctx: ctx, cancel: cancel, draining: make(chan struct{})}
	r.moveLocked(stPreparing, "Prepare")
	r.mu.Unlock()
	r.stop(&pb.Stop{Reason: "not now"})
	r.prepare(&pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: timedRun, AgentCount: 1})
	r.start(&pb.Start{StartUnixNs: time.Now().UnixNano()})
	r.mu.Lock()
	state, prepared := r.state, r.prepared
	r.mu.Unlock()
	if state != stFinished || prepared == nil {
		t.Fatalf("state %s, prepared %v: %s", state, prepared != nil, r.journalText())
	}
	close(sent)
	var kinds []string
	for m := range sent {
		kinds = append(kinds, fmt.Sprintf("%T", m.Msg))
	}
	if len(kinds) != 1 || kinds[0] != "*ycsbctlpb.AgentMsg_Final" {
		t.Errorf("the agent sent %v, want only its Final", kinds)
	}
	if strings.Contains(log.text(), "no move from") {
		t.Errorf("an illegal move was tried:\n%s", log.text())
	}
}

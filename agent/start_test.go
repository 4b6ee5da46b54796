package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// recvAll hands every message of st to a channel, until the stream ends.
func recvAll(st pb.Agent_SessionClient) <-chan *pb.AgentMsg {
	ch := make(chan *pb.AgentMsg, 1024)
	go func() {
		defer close(ch)
		for {
			m, err := st.Recv()
			if err != nil {
				return
			}
			ch <- m
		}
	}()
	return ch
}

// release ends the test coordinator's run the way a coordinator does and
// waits for the agent's confirmation (it closes the stream), so that the
// agent shuts down at once at the end of the test (a run still held would
// wait for its Final's acknowledgement first).
func release(t *testing.T, st pb.Agent_SessionClient, msgs <-chan *pb.AgentMsg) {
	t.Helper()
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Ack{Ack: &pb.Ack{Final: true}}})
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Release{Release: &pb.Release{}}})
	deadline := time.After(15 * time.Second)
	for {
		select {
		case _, ok := <-msgs:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the agent did not confirm its release within 15 s")
		}
	}
}

// untilFinal reads msgs until the Final, within a bound that only catches
// hangs; it reports whether the agent said it started its load.
func untilFinal(t *testing.T, msgs <-chan *pb.AgentMsg, within time.Duration) (*pb.Final, bool) {
	t.Helper()
	started := false
	deadline := time.After(within)
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatal("the stream ended before the agent's Final")
			}
			if m.GetStarted() != nil {
				started = true
			}
			if f := m.GetFinal(); f != nil {
				return f, started
			}
		case <-deadline:
			t.Fatalf("no Final within %s", within)
		}
	}
}

// An agent whose coordinator says nothing between its Start and the start
// instant (paused: the stream holds, no heartbeat comes) does not start
// the load: its Final says why, and nothing was measured. The start
// instant is 1.5 s away, so the coordinator is silent for ~1.4 s at the
// check; the agent used to allow 2 s and ran the load until its lease.
func TestStartRefusedWhenCoordinatorSilent(t *testing.T) {
	c := dial(t, serve(t, Config{Lease: 5 * time.Second}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _ := c.session(ctx, "run-silent", false)
	prepare(t, st, &pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: timedRun, AgentCount: 1})
	msgs := recvAll(st)
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Start{Start: &pb.Start{StartUnixNs: time.Now().Add(1500 * time.Millisecond).UnixNano()}}})
	f, started := untilFinal(t, msgs, 15*time.Second)
	release(t, st, msgs)
	if started || f.StopCause != pb.StopCause_STOP_CAUSE_NO_COORDINATOR || f.Operations != 0 {
		t.Fatalf("started %v, final %v: the load must not start without word from the coordinator", started, f)
	}
	if !strings.Contains(f.Stopped, "did not start: no word from test for") {
		t.Errorf("the Final does not say why: %q", f.Stopped)
	}
}

// A coordinator that renews the lease as it does before the start (every
// 200 ms) gets its load started.
func TestStartWithHeartbeatsRuns(t *testing.T) {
	c := dial(t, serve(t, Config{Lease: 5 * time.Second}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, _ := c.session(ctx, "run-beat", false)
	prepare(t, st, &pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: timedRun, AgentCount: 1})
	msgs := recvAll(st)
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Start{Start: &pb.Start{StartUnixNs: time.Now().Add(1500 * time.Millisecond).UnixNano()}}})
	deadline := time.After(15 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for started := false; !started; {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatal("the stream ended before the start")
			}
			if f := m.GetFinal(); f != nil {
				t.Fatalf("the agent ended the run instead of starting it: %v", f)
			}
			started = m.GetStarted() != nil
		case <-tick.C:
			send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Heartbeat{Heartbeat: &pb.Heartbeat{SentUnixNs: time.Now().UnixNano()}}})
		case <-deadline:
			t.Fatal("the load did not start within 15 s")
		}
	}
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Stop{Stop: &pb.Stop{Reason: "enough"}}})
	f, _ := untilFinal(t, msgs, 15*time.Second)
	release(t, st, msgs)
	if f.StopCause != pb.StopCause_STOP_CAUSE_COORDINATOR {
		t.Fatalf("final %v: the coordinator's stop ended the load", f)
	}
}

// The start check looks again before refusing: a word that was already
// on the stream when the check ran (this agent was late, not its
// coordinator) counts. Silence that lasts, or a stream that is down, is
// refused with the reason.
func TestStartCheckLooksAgain(t *testing.T) {
	clk := clock.NewReal()
	r := &heldRun{srv: &server{cfg: Config{Lease: 5 * time.Second}}, clk: clk, ctx: context.Background(), coordinator: "test", attached: &stream{}}
	r.lastHeard.Store(clk.Nanotime() - int64(time.Second))
	go func() {
		time.Sleep(30 * time.Millisecond)
		r.touch()
	}()
	if why := r.awaitCoordinator(); why != "" {
		t.Fatalf("a word that came during the second look was not counted: %s", why)
	}

	r.lastHeard.Store(clk.Nanotime() - int64(time.Second))
	if why := r.awaitCoordinator(); !strings.Contains(why, "no word from test for") || !strings.Contains(why, "at most 800ms allowed") {
		t.Fatalf("silence: %q", why)
	}
	r.touch()
	r.attached = nil
	if why := r.awaitCoordinator(); !strings.Contains(why, "the stream to test is down") {
		t.Fatalf("stream down: %q", why)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.ctx = ctx
	if why := r.awaitCoordinator(); why != "the run is ending" {
		t.Fatalf("ending run: %q", why)
	}
}

// A stream lost between the Start and the start instant cancels the
// start (issue 34 #8), even when a stream is attached again before the
// instant: the coordinator that sent the Start was, for a while, known
// to be gone. The agent used to look only 100 ms before the instant, and
// a coordinator killed after that look had its load run.
func TestStartRefusedWhenStreamLostBeforeTheInstant(t *testing.T) {
	c := dial(t, serve(t, Config{Lease: 5 * time.Second}))
	ctx, cut := context.WithCancel(context.Background())
	st, _ := c.session(ctx, "run-cut", false)
	prepare(t, st, &pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: timedRun, AgentCount: 1})
	// The instant is far enough for the agent's next heartbeat (every
	// second) to say it took the Start; then the stream is lost.
	at := time.Now().Add(2500 * time.Millisecond)
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Start{Start: &pb.Start{StartUnixNs: at.UnixNano()}}})
	for running := false; !running; {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		running = m.GetHeartbeat().GetState() == pb.RunState_RUN_STATE_RUNNING
	}
	cut()
	ctx2, stop := context.WithCancel(context.Background())
	defer stop()
	st, _ = c.session(ctx2, "run-cut", true)
	msgs := recvAll(st)
	beat := time.NewTicker(100 * time.Millisecond)
	defer beat.Stop()
	deadline := time.After(15 * time.Second)
	var f *pb.Final
	for f == nil {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatal("the resumed stream ended before the Final")
			}
			if m.GetStarted() != nil {
				t.Fatal("the agent started the load of a coordinator whose stream it lost before the start instant")
			}
			f = m.GetFinal()
		case <-beat.C:
			send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Heartbeat{Heartbeat: &pb.Heartbeat{SentUnixNs: time.Now().UnixNano()}}})
		case <-deadline:
			t.Fatal("no Final within 15 s")
		}
	}
	release(t, st, msgs)
	if f.StopCause != pb.StopCause_STOP_CAUSE_NO_COORDINATOR || f.Operations != 0 {
		t.Fatalf("final %v: a stream lost before the start instant must cancel the start", f)
	}
	if !strings.Contains(f.Stopped, "did not start: the stream to test closed ") || !strings.Contains(f.Stopped, " before the start instant") {
		t.Errorf("the Final does not say why: %q", f.Stopped)
	}
}

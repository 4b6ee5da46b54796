package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// stoppable is an agent whose Serve the test ends as a signal would:
// its context is canceled with the signal's name as the cause.
type stoppable struct {
	addr  string
	stop  context.CancelCauseFunc
	force chan struct{}
	done  chan error

	mu   sync.Mutex
	logs []string
}

func startStoppable(t *testing.T) *stoppable {
	t.Helper()
	a := &stoppable{force: make(chan struct{}), done: make(chan error, 1)}
	ready := make(chan string, 1)
	ctx, stop := context.WithCancelCause(context.Background())
	a.stop = stop
	cfg := Config{Listen: "127.0.0.1:0", Lease: 30 * time.Second, Force: a.force, Ready: func(s string) { ready <- s },
		Logf: func(f string, args ...any) {
			a.mu.Lock()
			a.logs = append(a.logs, fmt.Sprintf(f, args...))
			a.mu.Unlock()
		}}
	go func() { a.done <- Serve(ctx, cfg) }()
	t.Cleanup(func() {
		stop(errors.New("test over"))
		close(a.force)
		if err := <-a.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	select {
	case a.addr = <-ready:
	case err := <-a.done:
		t.Fatal(err)
	}
	return a
}

func (a *stoppable) log() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.logs, "\n")
}

// running starts a timed run on a and returns its stream's messages once
// the first interval has arrived.
func (a *stoppable) running(t *testing.T) (pb.Agent_SessionClient, <-chan *pb.AgentMsg) {
	t.Helper()
	st, _ := dial(t, a.addr).session(context.Background(), "run-h", false)
	prepareAndStart(t, st, timedRun)
	msgs := recvAll(st)
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatal("the stream ended before the first interval")
			}
			if m.GetInterval() != nil {
				return st, msgs
			}
		case <-deadline:
			t.Fatal("no interval within 15 s")
		}
	}
}

// exited waits for Serve to return, within a bound that only catches a
// hand-over that does not end.
func (a *stoppable) exited(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case err := <-a.done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		a.done <- nil // for the cleanup
	case <-time.After(within):
		t.Fatalf("the agent did not end within %s of its signal:\n%s", within, a.log())
	}
}

// finalIn returns the Final among msgs (nil when none came).
func finalIn(msgs <-chan *pb.AgentMsg) *pb.Final {
	var f *pb.Final
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return f
			}
			if x := m.GetFinal(); x != nil {
				f = x
			}
		case <-time.After(5 * time.Second):
			return f
		}
	}
}

// A coordinator that acknowledges nothing (cut off, paused) does not hold
// an agent stopped by a signal: it hands over its last intervals and its
// Final, waits handOverWait for the acknowledgement, says it did not come,
// and ends.
func TestHandOverWaitIsBounded(t *testing.T) {
	a := startStoppable(t)
	_, msgs := a.running(t)
	a.stop(errors.New("SIGTERM"))
	a.exited(t, stopGrace+handOverWait+10*time.Second)
	f := finalIn(msgs)
	if f == nil || f.StopCause != pb.StopCause_STOP_CAUSE_SIGNAL || f.Stopped != "agent stopped by SIGTERM on its host" {
		t.Fatalf("final %v: the hand-over says the agent was stopped by the signal", f)
	}
	if !strings.Contains(a.log(), "the coordinator did not acknowledge everything within "+handOverWait.String()) {
		t.Fatalf("the unacknowledged hand-over is not said:\n%s", a.log())
	}
}

// A coordinator that acknowledges the hand-over ends the wait.
func TestHandOverEndsOnAcknowledgement(t *testing.T) {
	a := startStoppable(t)
	st, msgs := a.running(t)
	acked := make(chan *pb.Final, 1)
	go func() {
		for m := range msgs {
			if iv := m.GetInterval(); iv != nil {
				// Every seq up to this one: running read the first.
				var seqs []int64
				for s := int64(1); s <= iv.Seq; s++ {
					seqs = append(seqs, s)
				}
				_ = st.Send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Ack{Ack: &pb.Ack{Seqs: seqs}}})
			}
			if f := m.GetFinal(); f != nil {
				_ = st.Send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Ack{Ack: &pb.Ack{Final: true}}})
				acked <- f
			}
		}
	}()
	a.stop(errors.New("SIGTERM"))
	a.exited(t, stopGrace+handOverWait+10*time.Second)
	select {
	case f := <-acked:
		if f.StopCause != pb.StopCause_STOP_CAUSE_SIGNAL {
			t.Fatalf("final %v", f)
		}
	default:
		t.Fatal("no Final was handed over")
	}
	if strings.Contains(a.log(), "did not acknowledge") {
		t.Fatalf("the agent waited out its hand-over although everything was acknowledged:\n%s", a.log())
	}
}

// The operator's second signal (Force) ends the wait at once.
func TestHandOverForceEndsTheWait(t *testing.T) {
	a := startStoppable(t)
	_, msgs := a.running(t)
	a.stop(errors.New("SIGTERM"))
	close(a.force)
	a.force = make(chan struct{}) // the cleanup closes it again
	a.exited(t, stopGrace+handOverWait+10*time.Second)
	if strings.Contains(a.log(), "did not acknowledge") {
		t.Fatalf("the second signal did not cut the hand-over's wait short:\n%s", a.log())
	}
	_ = finalIn(msgs)
}

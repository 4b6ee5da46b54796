package coordinator

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/testutil/slowclose"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

func ping(t *testing.T, addr string) *pb.PingResponse {
	t.Helper()
	cc, err := transport.Dial(addr, nil, "", transport.Identity{Version: version.Version, Protocol: version.Protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn(t, cc)
	r, err := pb.NewAgentClient(cc).Ping(context.Background(), &pb.PingRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A coordinator returns only once its agents have confirmed the Release,
// i.e. ended the run and closed the database: the agent is free the
// moment the coordinator exits, even when closing takes longer than the
// 2 s the coordinator used to wait before tearing its streams down.
func TestCoordinatorWaitsForReleaseConfirmation(t *testing.T) {
	addr := testAgent(t, agent.Config{})
	start := time.Now()
	r := runCoord(t, runConfig{DB: slowclose.Name, Phase: run.Load, Agents: []string{addr},
		Props: properties.FromMap(baseProps(map[string]string{"recordcount": "200", slowclose.PropCloseMs: "2500"}))})
	if r.code != exitcode.OK {
		t.Fatalf("load: %v %v", r.code, r.err)
	}
	if p := ping(t, addr); p.BusyRun != "" {
		t.Fatalf("the agent still holds run %s (ending %v) after the coordinator returned", p.BusyRun, p.BusyEnding)
	}
	if d := time.Since(start); d < 2500*time.Millisecond {
		t.Fatalf("the coordinator returned after %s, before the agent could have closed its database", d)
	}
	if strings.Contains(r.stderr, "did not confirm") {
		t.Fatalf("release reported unconfirmed:\n%s", r.stderr)
	}
}

// An abort that comes after the run, while the coordinator waits for an
// agent that takes long to confirm its Release (its database closes in
// 7 s), ends that wait within abortReleaseWait: the operator's second
// Ctrl-C used to be ignored there, for up to releaseWait. The wait still
// names the agent that did not confirm.
func TestAbortCutsReleaseWait(t *testing.T) {
	addr := testAgent(t, agent.Config{})
	abort := make(chan struct{})
	var abortedAt atomic.Int64
	var once sync.Once
	final := run.SinkFunc(func(u *run.Update) {
		once.Do(func() {
			// The load is one interval long: the loop ends as soon as it
			// is merged, and the abort comes well after, during the
			// release wait.
			time.AfterFunc(500*time.Millisecond, func() {
				abortedAt.Store(time.Now().UnixNano())
				close(abort)
			})
		})
	})
	r := runCoord(t, runConfig{DB: slowclose.Name, Phase: run.Load, Agents: []string{addr}, Abort: abort, Observers: []run.Sink{final},
		Props: properties.FromMap(baseProps(map[string]string{"recordcount": "200", slowclose.PropCloseMs: "7000"}))})
	returned := time.Now()
	if abortedAt.Load() == 0 {
		t.Fatalf("the run ended without an interval (%v %v)", r.code, r.err)
	}
	if r.code != exitcode.OK {
		t.Fatalf("load: %v %v (the abort came after the run's end and must not change its verdict)", r.code, r.err)
	}
	if !strings.Contains(r.stderr, "Aborted: not waiting more than") {
		t.Fatalf("the abort did not reach the release wait:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "agent 0 ("+addr+") did not confirm the end of run") {
		t.Fatalf("the agent that did not confirm is not named:\n%s", r.stderr)
	}
	// A bound, not a timing: the agent confirms only after 7 s.
	if d := returned.Sub(time.Unix(0, abortedAt.Load())); d > 5*time.Second {
		t.Fatalf("the coordinator returned %s after the abort; the release wait must end within %s of it", d, abortReleaseWait)
	}
}

// A coordinator that starts while an agent is still ending the previous
// run (released, closing its database) waits for it instead of being
// refused as busy; a run that is not ending is refused at once, with
// when the agent would free itself.
func TestNextCoordinatorWaitsForEndingRun(t *testing.T) {
	addr := testAgent(t, agent.Config{Lease: 7 * time.Second})
	st := occupy(t, addr, "run-old", "previous coordinator")
	send := func(m *pb.CoordinatorMsg) {
		t.Helper()
		if err := st.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Prepare{Prepare: &pb.Prepare{Db: slowclose.Name, Phase: pb.Phase_PHASE_LOAD,
		Properties: map[string]string{slowclose.PropCloseMs: "1500", "recordcount": "10"}, AgentCount: 1}}})
	for {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if f := m.GetFailed(); f != nil {
			t.Fatalf("prepare: %s", f.Reason)
		}
		if m.GetPrepared() != nil {
			break
		}
	}

	// Held, not ending: refused, saying when the agent frees itself.
	r := runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: []string{addr}, Props: properties.FromMap(baseProps(nil))})
	if r.code != exitcode.Failure || !strings.Contains(r.err.Error(), "busy: running run run-old for previous coordinator") ||
		!strings.Contains(r.err.Error(), "ends the run by itself after 7s of silence") {
		t.Fatalf("busy agent: %v %v", r.code, r.err)
	}

	send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Release{Release: &pb.Release{}}})
	deadline := time.Now().Add(5 * time.Second)
	for p := ping(t, addr); !p.BusyEnding; p = ping(t, addr) {
		if p.BusyRun == "" || time.Now().After(deadline) {
			t.Fatalf("the released run was never seen ending: %+v", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r = runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: []string{addr}, Props: properties.FromMap(baseProps(nil))})
	if r.code != exitcode.OK {
		t.Fatalf("a coordinator starting while the agent ends its previous run: %v %v", r.code, r.err)
	}
	if !strings.Contains(r.stderr, "is still ending run run-old; waiting") {
		t.Fatalf("the wait is not logged:\n%s", r.stderr)
	}
}

// fakeAgent breaks the first stream right after its Hello reply, then
// answers the resumed one as told: accept it and wait for the Release,
// or say the run is gone.
type fakeAgent struct {
	pb.UnimplementedAgentServer
	sessions   atomic.Int32
	resumed    atomic.Bool
	resumeGone bool
	released   chan struct{}
}

func (f *fakeAgent) Session(st grpc.BidiStreamingServer[pb.CoordinatorMsg, pb.AgentMsg]) error {
	m, err := st.Recv()
	if err != nil {
		return err
	}
	n := f.sessions.Add(1)
	if n > 1 {
		f.resumed.Store(m.GetHello().GetResume())
		if f.resumeGone {
			return status.Error(codes.NotFound, "no run on this agent")
		}
	}
	if err := st.Send(&pb.AgentMsg{Msg: &pb.AgentMsg_Hello{Hello: &pb.HelloReply{Version: version.Version, Protocol: version.Protocol}}}); err != nil {
		return err
	}
	if n == 1 {
		return status.Error(codes.Unavailable, "stream cut by the test")
	}
	for {
		m, err := st.Recv()
		if err != nil {
			return err
		}
		if m.GetRelease() != nil {
			close(f.released)
			return nil
		}
	}
}

// A Release that finds no stream (it broke as the run ended) is delivered
// on a resumed one, and the conn stops only once the agent confirmed it,
// or said the run is gone.
func TestReleaseDeliveredAfterBrokenStream(t *testing.T) {
	for _, gone := range []bool{false, true} {
		f := &fakeAgent{resumeGone: gone, released: make(chan struct{})}
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		gs := grpc.NewServer()
		pb.RegisterAgentServer(gs, f)
		go func() { _ = gs.Serve(lis) }()
		cc, err := transport.Dial(lis.Addr().String(), nil, "", transport.Identity{Version: version.Version, Protocol: version.Protocol})
		if err != nil {
			t.Fatal(err)
		}
		events := make(chan event, 16)
		done := make(chan struct{})
		a := newConn(0, lis.Addr().String(), cc, &pb.Hello{Version: version.Version, Protocol: version.Protocol, RunId: "r"}, events, done)
		ctx, cancel := context.WithCancel(context.Background())
		go a.loop(ctx)
		for _, want := range []evKind{evAttached, evDetached} {
			select {
			case e := <-events:
				if e.kind != want {
					t.Fatalf("event %v, want %v (%v)", e.kind, want, e.err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no event %v", want)
			}
		}
		a.release()
		close(done)
		select {
		case <-a.loopDone:
		case <-time.After(5 * time.Second):
			t.Fatalf("gone=%v: the conn did not stop after its Release", gone)
		}
		if !a.isReleased() || !f.resumed.Load() {
			t.Fatalf("gone=%v: released %v, resumed %v", gone, a.isReleased(), f.resumed.Load())
		}
		select {
		case <-f.released:
			if gone {
				t.Fatal("a Release reached an agent that had refused the resume")
			}
		default:
			if !gone {
				t.Fatal("the agent never received the Release")
			}
		}
		cancel()
		closeConn(t, cc)
		gs.Stop()
	}
}

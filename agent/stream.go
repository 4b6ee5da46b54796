package agent

import (
	"context"
	"os"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ycsbctl/ycsbctl/internal/environ"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// stream is one coordinator's stream (the Session RPC) as the run holds
// it, with its own sender goroutine (a gRPC stream must not be written
// from two goroutines).
type stream struct {
	rpc    pb.Agent_SessionServer
	out    chan *pb.AgentMsg
	ctx    context.Context
	cancel context.CancelFunc
	// draining is closed by drain: the sender sends what is queued, then
	// closes the stream.
	draining  chan struct{}
	drainOnce sync.Once
}

func newStream(rpc pb.Agent_SessionServer) *stream {
	ctx, cancel := context.WithCancel(rpc.Context())
	return &stream{rpc: rpc, out: make(chan *pb.AgentMsg, 4096), ctx: ctx, cancel: cancel, draining: make(chan struct{})}
}

// drain closes the stream once everything queued is sent.
func (s *stream) drain() { s.drainOnce.Do(func() { close(s.draining) }) }

// enqueue never blocks the engine: if the coordinator reads so slowly
// that the queue fills, the stream is dropped; everything unacknowledged
// is resent when it re-attaches.
func (s *stream) enqueue(m *pb.AgentMsg) {
	select {
	case s.out <- m:
	default:
		s.cancel()
	}
}

func (s *stream) close() { s.cancel() }

func (s *stream) sendLoop() {
	draining := s.draining
	for {
		select {
		case <-s.ctx.Done():
			return
		case m := <-s.out:
			if err := s.rpc.Send(m); err != nil {
				s.cancel()
				return
			}
		case <-draining:
			draining = nil
		}
		if draining == nil && len(s.out) == 0 {
			s.cancel()
			return
		}
	}
}

// attach makes st the run's stream: the hello reply first, then every
// message the coordinator may have missed, in order, so that a resumed
// coordinator sees exactly what a never-disconnected one would have.
func (r *heldRun) attach(st *stream, hello *pb.AgentMsg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.attached; old != nil {
		old.close()
	}
	r.attached = st
	st.enqueue(hello)
	if r.started != nil {
		st.enqueue(r.started)
	}
	seqs := make([]int64, 0, len(r.pending))
	for s := range r.pending {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	for _, s := range seqs {
		st.enqueue(r.pending[s])
	}
	// finished: the Final exists and is not acknowledged.
	if r.state == stFinished {
		st.enqueue(r.final)
	}
}

func (r *heldRun) detach(st *stream) {
	r.mu.Lock()
	if r.attached == st {
		r.attached = nil
		r.lostStream = r.clk.Now()
	}
	r.mu.Unlock()
	st.close()
}

// sendLocked queues m on the attached stream, if any; unacknowledged
// messages are kept by the caller for resending. r.mu is held.
func (r *heldRun) sendLocked(m *pb.AgentMsg) {
	if r.attached != nil {
		r.attached.enqueue(m)
	}
}

func (r *heldRun) send(m *pb.AgentMsg) {
	r.mu.Lock()
	r.sendLocked(m)
	r.mu.Unlock()
}

// heartbeats sends a heartbeat every second while st is attached.
func (r *heldRun) heartbeats(st *stream) {
	for {
		select {
		case <-st.ctx.Done():
			return
		case <-r.clk.After(heartbeatEvery):
		}
		hb := &pb.Heartbeat{SentUnixNs: r.clk.Now().UnixNano(), WarmupOps: r.warmupOps.Load(), LagNs: r.lagNs.Load()}
		r.mu.Lock()
		hb.State = r.state.public()
		if r.prepared != nil {
			hb.LocalInsertsAcknowledged = r.prepared.Workload.LocalInsertsAcknowledged()
		}
		if r.attached == st {
			st.enqueue(&pb.AgentMsg{Msg: &pb.AgentMsg_Heartbeat{Heartbeat: hb}})
		}
		r.mu.Unlock()
	}
}

// Session implements the run's stream (the RPC keeps the protocol's
// name): a Hello, then the run's messages both ways until the run is
// released or the stream ends.
func (s *server) Session(rpc pb.Agent_SessionServer) error {
	hello, err := s.awaitHello(rpc)
	if err != nil {
		return err
	}
	r, err := s.admit(rpc.Context(), hello)
	if err != nil {
		return err
	}
	r.touch()

	st := newStream(rpc)
	r.attach(st, &pb.AgentMsg{Msg: &pb.AgentMsg_Hello{Hello: &pb.HelloReply{
		Version: s.self.Version, Protocol: s.self.Protocol, Hostname: s.hostname, Pid: int32(os.Getpid()), State: r.publicState(),
		Host: wire.HostToProto(environ.LocalHost()),
	}}})
	defer r.detach(st)
	go st.sendLoop()
	go r.heartbeats(st)
	// Receive on a separate goroutine so that the handler can also return
	// when the stream is dropped from our side (replaced by a resumed
	// stream, or a send queue overflow): returning is what ends a gRPC
	// server stream.
	msgs := make(chan *pb.CoordinatorMsg)
	errc := make(chan error, 1)
	go func() {
		for {
			m, err := rpc.Recv()
			if err != nil {
				errc <- err
				return
			}
			select {
			case msgs <- m:
			case <-st.ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-st.ctx.Done():
			// The words are the protocol's, as coordinators have read them.
			return status.Error(codes.Aborted, "session closed by the agent")
		case err := <-errc:
			if r.isDone() {
				return nil
			}
			s.cfg.Logf("run %s: stream from coordinator ended (%v); run continues for up to %s waiting for it to re-attach", r.id, errString(err), s.cfg.Lease)
			return nil
		case m := <-msgs:
			r.touch()
			if done := r.handle(m); done {
				return nil
			}
		}
	}
}

// awaitHello reads a stream's first message, which must be a Hello from a
// peer of this agent's version with a run id. A peer that opens a stream
// but never says Hello must not hold a handler forever.
func (s *server) awaitHello(rpc pb.Agent_SessionServer) (*pb.Hello, error) {
	type recvd struct {
		m   *pb.CoordinatorMsg
		err error
	}
	fc := make(chan recvd, 1)
	go func() { m, err := rpc.Recv(); fc <- recvd{m, err} }()
	var first *pb.CoordinatorMsg
	select {
	case r := <-fc:
		if r.err != nil {
			return nil, r.err
		}
		first = r.m
	case <-time.After(helloTimeout):
		return nil, status.Error(codes.DeadlineExceeded, "no Hello within "+helloTimeout.String())
	}
	hello := first.GetHello()
	if hello == nil {
		return nil, status.Error(codes.InvalidArgument, "the first message of a session must be Hello")
	}
	peer := transport.Identity{Version: hello.Version, Protocol: hello.Protocol}
	if peer != s.self {
		return nil, status.Error(codes.FailedPrecondition, transport.VersionMismatch(peer, s.self).Error())
	}
	if hello.RunId == "" {
		return nil, status.Error(codes.InvalidArgument, "Hello without a run id")
	}
	return hello, nil
}

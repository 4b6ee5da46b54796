package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

type evKind uint8

const (
	evMsg      evKind = iota // a message from the agent
	evAttached               // a session (new or resumed) is up
	evDetached               // the session broke; the conn re-dials
	evGone                   // the agent refused or cannot resume: give up
)

type event struct {
	kind   evKind
	agent  int
	msg    *pb.AgentMsg
	hello  *pb.HelloReply
	resume bool
	err    error
}

// conn owns the gRPC stream to one agent. The coordinator always dials;
// when a stream breaks, conn re-dials and resumes the run (Hello.resume)
// until its context is canceled or the agent says the run is gone. It
// reports everything as events to the coordinator's single loop, which
// holds all run state.
type conn struct {
	idx    int
	addr   string
	cc     *grpc.ClientConn
	cli    pb.AgentClient
	hello  *pb.Hello
	events chan<- event
	done   <-chan struct{} // the coordinator loop has exited

	mu  sync.Mutex
	out chan *pb.CoordinatorMsg
	// kill ends the current stream.
	kill context.CancelFunc
	// releasing: the run is over; do not re-dial when the stream ends.
	releasing bool
}

// release sends Release on the current stream, if any, and stops the
// loop from re-dialing once the agent closes it.
func (a *conn) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releasing = true
	if a.out != nil {
		select {
		case a.out <- &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Release{Release: &pb.Release{}}}:
		default:
		}
	}
}

func (a *conn) isReleasing() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.releasing
}

// send queues m on the current stream. It returns false when no stream
// is attached or the queue is full (the stream is then killed so that a
// fresh one resynchronises): callers re-send what matters on re-attach.
func (a *conn) send(m *pb.CoordinatorMsg) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.out == nil {
		return false
	}
	select {
	case a.out <- m:
		return true
	default:
		a.kill()
		return false
	}
}

func (a *conn) emit(e event) bool {
	e.agent = a.idx
	select {
	case a.events <- e:
		return true
	case <-a.done:
		return false
	}
}

// permanent reports errors that re-dialing cannot fix.
func permanent(err error) bool {
	switch status.Code(err) {
	case codes.NotFound, codes.FailedPrecondition, codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument, codes.Unimplemented:
		return true
	}
	return false
}

// loop keeps a session to the agent until ctx is done.
func (a *conn) loop(ctx context.Context) {
	attached := false
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		ok, err := a.session(ctx, attached)
		if ctx.Err() != nil || a.isReleasing() {
			return
		}
		if ok {
			attached = true
			backoff = 100 * time.Millisecond
		}
		if !attached || permanent(err) {
			a.emit(event{kind: evGone, err: err})
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff *= 2; backoff > time.Second {
			backoff = time.Second
		}
	}
}

// session runs one stream. ok reports whether it got as far as the
// agent's HelloReply.
func (a *conn) session(ctx context.Context, resume bool) (ok bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Establishing must not hang on a dead network: the loop re-dials.
	est := time.AfterFunc(5*time.Second, cancel)
	stream, err := a.cli.Session(sctx, grpc.WaitForReady(resume))
	if err != nil {
		est.Stop()
		return false, err
	}
	h := proto.Clone(a.hello).(*pb.Hello)
	h.Resume = resume
	if err := stream.Send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Hello{Hello: h}}); err != nil {
		est.Stop()
		return false, recvErr(stream, err)
	}
	first, err := stream.Recv()
	est.Stop()
	if err != nil {
		return false, err
	}
	reply := first.GetHello()
	if reply == nil {
		return false, fmt.Errorf("agent answered Hello with %T", first.Msg)
	}
	out := make(chan *pb.CoordinatorMsg, 1024)
	a.mu.Lock()
	a.out, a.kill = out, cancel
	if a.releasing {
		// release() came while this stream was being set up and had
		// nowhere to send its Release.
		out <- &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Release{Release: &pb.Release{}}}
	}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		if a.out == out {
			a.out, a.kill = nil, nil
		}
		a.mu.Unlock()
	}()
	// The sender runs before the attach is reported: if the coordinator
	// loop has already ended (another agent failed first), the Release
	// that release() queued must still go out.
	go func() {
		for {
			select {
			case <-sctx.Done():
				return
			case m := <-out:
				if err := stream.Send(m); err != nil {
					cancel()
					return
				}
			}
		}
	}()
	if !a.emit(event{kind: evAttached, hello: reply, resume: resume}) {
		return true, drain(stream)
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			if ctx.Err() == nil {
				a.emit(event{kind: evDetached, err: err})
			}
			return true, err
		}
		if !a.emit(event{kind: evMsg, msg: m}) {
			return true, drain(stream)
		}
	}
}

// drain keeps a stream open after the coordinator loop has ended, until
// the agent closes it in answer to the queued Release or the connection's
// context is canceled: returning at once would cancel the stream before
// the Release was sent, and leave the agent busy until its lease runs out.
func drain(stream grpc.BidiStreamingClient[pb.CoordinatorMsg, pb.AgentMsg]) error {
	for {
		if _, err := stream.Recv(); err != nil {
			return context.Canceled
		}
	}
}

// recvErr surfaces the server's status when Send fails because the
// server already closed the stream (e.g. it refused the Hello).
func recvErr(stream grpc.BidiStreamingClient[pb.CoordinatorMsg, pb.AgentMsg], sendErr error) error {
	if _, err := stream.Recv(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return sendErr
}

package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
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
	// releasing: the run is over. From then on the loop re-attaches only
	// to deliver the Release, until released: the agent confirmed it
	// (closed the stream after receiving it) or said the run is gone.
	// An agent that never gets its Release holds the run until its lease
	// runs out, and refuses the next coordinator meanwhile.
	releasing bool
	released  bool
	// accepted: the agent answered a Hello, so it holds the run.
	accepted bool
	// loopDone is closed when loop returns.
	loopDone chan struct{}
	// wake cuts a re-dial's backoff short, and dialing (when set) a
	// stream still being established that waits for the connection: the
	// Release is to go out now, or not at all.
	wake    chan struct{}
	dialing context.CancelFunc
}

func newConn(idx int, addr string, cc *grpc.ClientConn, hello *pb.Hello, events chan<- event, done <-chan struct{}) *conn {
	return &conn{idx: idx, addr: addr, cc: cc, cli: pb.NewAgentClient(cc), hello: hello, events: events, done: done,
		loopDone: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// release sends Release on the current stream. Without one (the stream
// broke and the loop is re-dialing), or with its queue full, the loop
// delivers it on the next stream it attaches.
func (a *conn) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releasing = true
	select {
	case a.wake <- struct{}{}:
	default:
	}
	if a.dialing != nil {
		a.dialing()
	}
	if a.out != nil {
		select {
		case a.out <- releaseMsg():
		default:
			a.kill()
		}
	}
}

func releaseMsg() *pb.CoordinatorMsg {
	return &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Release{Release: &pb.Release{}}}
}

func (a *conn) isReleasing() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.releasing
}

func (a *conn) isReleased() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.released
}

func (a *conn) wasAccepted() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.accepted
}

func (a *conn) setReleased() {
	a.mu.Lock()
	a.released = true
	a.mu.Unlock()
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

// refused reports a connection refused: no process listens at the
// agent's address.
func refused(err error) bool {
	return status.Code(err) == codes.Unavailable && strings.Contains(err.Error(), "connection refused")
}

// loop keeps a session to the agent until ctx is done, or until the
// agent has confirmed its Release.
func (a *conn) loop(ctx context.Context) {
	defer close(a.loopDone)
	attached := false
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		ok, err := a.session(ctx, attached)
		if ctx.Err() != nil {
			return
		}
		if ok {
			attached = true
			backoff = 100 * time.Millisecond
		}
		if a.isReleasing() {
			// An agent that never accepted the run holds nothing; one that
			// did is re-attached until it confirms the Release. Nothing
			// listening where it was (the agent process is gone) holds
			// nothing either.
			if refused(err) {
				// Nothing there holds the run.
				a.setReleased()
			}
			if !attached || a.isReleased() || permanent(err) {
				return
			}
		} else if !attached || permanent(err) {
			a.emit(event{kind: evGone, err: err})
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		case <-a.wake:
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
	// A resume waits for the connection to come back (within est); a
	// Release does not: it gives up on an agent that is not there.
	a.mu.Lock()
	wait := resume && !a.releasing
	if wait {
		a.dialing = cancel
	}
	a.mu.Unlock()
	stream, err := a.cli.Session(sctx, grpc.WaitForReady(wait))
	a.mu.Lock()
	a.dialing = nil
	a.mu.Unlock()
	if err != nil {
		est.Stop()
		return false, err
	}
	h := proto.Clone(a.hello).(*pb.Hello)
	h.Resume = resume
	if err := stream.Send(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Hello{Hello: h}}); err != nil {
		est.Stop()
		return false, a.noteGone(recvErr(stream, err))
	}
	first, err := stream.Recv()
	est.Stop()
	if err != nil {
		return false, a.noteGone(err)
	}
	reply := first.GetHello()
	if reply == nil {
		return false, fmt.Errorf("agent answered Hello with %T", first.Msg)
	}
	out := make(chan *pb.CoordinatorMsg, 1024)
	a.mu.Lock()
	a.out, a.kill, a.accepted = out, cancel, true
	if a.releasing {
		// release() came while this stream was being set up, or before
		// it, and had nowhere to send its Release.
		out <- releaseMsg()
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
	var releaseSent atomic.Bool
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
				if m.GetRelease() != nil {
					releaseSent.Store(true)
				}
			}
		}
	}()
	// The agent answers a Release by ending the run and then closing the
	// stream cleanly (io.EOF here): that is the confirmation.
	confirm := func(err error) error {
		if errors.Is(err, io.EOF) && releaseSent.Load() {
			a.setReleased()
		}
		return err
	}
	if !a.emit(event{kind: evAttached, hello: reply, resume: resume}) {
		return true, confirm(drain(stream))
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			if ctx.Err() == nil && !a.isReleasing() {
				a.emit(event{kind: evDetached, err: err})
			}
			return true, confirm(err)
		}
		if !a.emit(event{kind: evMsg, msg: m}) {
			return true, confirm(drain(stream))
		}
	}
}

// noteGone records that an agent asked to resume a run after the run was
// over says it no longer holds it: its Release is moot.
func (a *conn) noteGone(err error) error {
	if status.Code(err) == codes.NotFound && a.isReleasing() {
		a.setReleased()
	}
	return err
}

// drain keeps a stream open after the coordinator loop has ended, until
// the agent closes it in answer to the queued Release or the connection's
// context is canceled: returning at once would cancel the stream before
// the Release was sent, and leave the agent busy until its lease runs out.
// It returns the error that ended the stream (io.EOF when the agent
// closed it).
func drain(stream grpc.BidiStreamingClient[pb.CoordinatorMsg, pb.AgentMsg]) error {
	for {
		if _, err := stream.Recv(); err != nil {
			return err
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

package agent

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// heldRun is the one benchmark an agent holds, from Hello to Release (or
// lease expiry). It outlives streams: a broken stream detaches it, a
// resumed one attaches again. Its course is its state (state.go); the
// files beside this one hold its stream (stream.go), its lease (lease.go),
// its prepare, its start and its intervals.
type heldRun struct {
	srv         *server
	clk         clock.Clock
	id          string
	coordinator string
	index       int32
	// accepted is the clk.Nanotime of the Hello that began the run; the
	// journal counts from it.
	accepted int64

	ctx    context.Context
	cancel context.CancelFunc

	lastHeard atomic.Int64 // clk.Nanotime of the last coordinator message
	// ending is set, under mu, once the agent lets go of the run
	// (released, its lease ran out, handed over) while it still finishes
	// in-flight requests and closes its database; freed is closed when the
	// agent no longer holds it. A new coordinator waits for an ending run
	// instead of being refused as busy. It is a fact beside the state,
	// not a state (see runState), set once and never cleared; atomic so
	// that Ping and Hello read it without mu.
	ending    atomic.Bool
	freed     chan struct{}
	warmupOps atomic.Int64
	lagNs     atomic.Int64

	mu       sync.Mutex
	state    runState
	journal  []stateChange
	attached *stream
	prepared *spec.Prepared
	// startRecv is when the Start arrived and lostStream when the
	// attached stream last went down: a stream lost between the two and
	// the start instant cancels the start (see startAt).
	startRecv  time.Time
	lostStream time.Time
	// cause is what stopped the load, and why: set with the move to
	// stopping, which happens once, so the first cause stands. The Final
	// reports it, so that the coordinator can tell a share run to its end
	// from one stopped on this host (a signal, the lease, no coordinator
	// at the start).
	cause    pb.StopCause
	causeWhy string
	// keyLimit is the coordinator's latest acknowledged-key limit (nil
	// until it sends one): a fact of the coordinator's, not a state of the
	// run, kept so that a limit that arrives before the prepare is applied
	// once the engine exists.
	keyLimit *int64
	// finalReady is closed once final is set: whoever ends the run hands
	// the Final over first.
	finalReady chan struct{}
	// pending holds interval records not yet acknowledged, by seq; they
	// are resent, in order, to every newly attached stream.
	pending map[int64]*pb.AgentMsg
	started *pb.AgentMsg
	final   *pb.AgentMsg
	// cpuStart is the process' CPU reading at the start; cpuLast the one
	// of the latest record, owned by the engine's reporter goroutine once
	// the load has started (see ownFigures).
	cpuStart float64
	cpuLast  float64
	// metrics is this agent's own /metrics sink for the run (nil when
	// --metrics-addr is not set); self describes the agent in it.
	metrics run.Sink
	self    run.SelfView
	// runtime samples this process for every interval record when the run
	// tracks it (ycsbctl.trackruntime), nil otherwise. Begun in start, then
	// used only on the engine's reporter goroutine.
	runtime *ycsbtext.RuntimeSampler
	// tel samples this host for every interval record (nil when
	// telemetry is off); started once prepared, cut on the engine's
	// reporter goroutine, closed when the run ends.
	tel     *telemetry.Sampler
	rawOnce sync.Once
	// preparing tracks an in-flight spec.Prepare: the database must be
	// closed after it returns, never under it.
	preparing sync.WaitGroup
}

func newRun(s *server, h *pb.Hello) *heldRun {
	ctx, cancel := context.WithCancel(context.Background())
	r := &heldRun{srv: s, clk: s.clk, id: h.RunId, coordinator: h.Coordinator, index: h.AgentIndex, accepted: s.clk.Nanotime(),
		ctx: ctx, cancel: cancel, state: stIdle, pending: map[int64]*pb.AgentMsg{}, freed: make(chan struct{}),
		finalReady: make(chan struct{})}
	r.touch()
	s.runs.Add(1)
	go r.watchLease()
	return r
}

func (r *heldRun) logf(format string, args ...any) {
	r.srv.cfg.Logf("run %s: "+format, append([]any{r.id}, args...)...)
}

// publicState is the run's state as the coordinator reads it.
func (r *heldRun) publicState() pb.RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.public()
}

func (r *heldRun) isDone() bool { return r.ending.Load() }

// handle processes one coordinator message; it returns true when the
// stream should end.
func (r *heldRun) handle(m *pb.CoordinatorMsg) bool {
	switch x := m.Msg.(type) {
	case *pb.CoordinatorMsg_Prepare:
		r.mu.Lock()
		if r.state != stIdle {
			r.mu.Unlock()
			r.send(failed(r.index, "prepare", "already prepared"))
			return false
		}
		r.moveLocked(stPreparing, "Prepare")
		r.preparing.Add(1)
		r.mu.Unlock()
		go func() {
			defer r.preparing.Done()
			r.prepare(x.Prepare)
		}()
	case *pb.CoordinatorMsg_Start:
		r.start(x.Start)
	case *pb.CoordinatorMsg_Heartbeat:
		if v := x.Heartbeat.AcknowledgedKeyLimit; v != nil {
			limit := *v
			r.mu.Lock()
			r.keyLimit = &limit
			if p := r.prepared; p != nil {
				p.Runner.SetExternalLimit(limit)
			}
			r.mu.Unlock()
		}
	case *pb.CoordinatorMsg_Ack:
		r.mu.Lock()
		for _, s := range x.Ack.Seqs {
			delete(r.pending, s)
		}
		if x.Ack.Final && r.state == stFinished {
			r.moveLocked(stAcknowledged, "the coordinator has the Final")
		}
		r.mu.Unlock()
	case *pb.CoordinatorMsg_Stop:
		r.stop(x.Stop)
	case *pb.CoordinatorMsg_Release:
		r.end("coordinator released the run", false)
		return true
	case *pb.CoordinatorMsg_Hello:
		// "session" is the stage as coordinators have always read it (the
		// RPC's name).
		r.send(failed(r.index, "session", "unexpected second Hello"))
	}
	return false
}

func failed(idx int32, stage, reason string) *pb.AgentMsg {
	return &pb.AgentMsg{Msg: &pb.AgentMsg_Failed{Failed: &pb.Failed{AgentIndex: idx, Stage: stage, Reason: reason}}}
}

// stop is the coordinator's Stop: a run that never started ends with an
// empty Final, so that the coordinator is not left waiting for intervals
// that will not come; a live load is stopped (or aborted) for the
// coordinator, unless something stopped it already.
func (r *heldRun) stop(m *pb.Stop) {
	r.mu.Lock()
	if s := r.state; s == stIdle || s == stPreparing || s == stReady {
		r.finishUnstartedLocked(pb.StopCause_STOP_CAUSE_COORDINATOR, m.Reason)
		r.mu.Unlock()
		return
	}
	live := r.stopLocked(pb.StopCause_STOP_CAUSE_COORDINATOR, m.Reason)
	p := r.prepared
	r.mu.Unlock()
	if !live {
		return
	}
	// An abort after a stop still cancels the operations in flight.
	if m.Abort {
		r.logf("abort requested: %s", m.Reason)
		p.Runner.Abort(m.Reason)
	} else {
		r.logf("stop requested: %s", m.Reason)
		p.Runner.Stop(m.Reason)
	}
}

// stopLocked moves a live load to stopping for cause c, unless something
// stopped it already; it reports whether the load is live (its runner to
// be stopped and waited for). r.mu is held.
func (r *heldRun) stopLocked(c pb.StopCause, why string) bool {
	switch r.state {
	case stStarting, stRunning:
		r.cause, r.causeWhy = c, why
		r.moveLocked(stStopping, why)
		return true
	case stStopping:
		return true
	}
	return false
}

// stopGrace bounds how long a load stopped on this host (lease, signal)
// may take to finish its operations in flight before they are canceled.
const stopGrace = time.Second

// stopLoad stops a live load for a cause of this host's own: the workers
// finish the operation in flight (within stopGrace, else it is canceled)
// and the last interval and the Final are queued for the coordinator. It
// returns once the Final exists, or at once when the load is not live.
func (r *heldRun) stopLoad(c pb.StopCause, why string) {
	r.mu.Lock()
	live := r.stopLocked(c, why)
	p := r.prepared
	r.mu.Unlock()
	if !live {
		return
	}
	p.Runner.Stop(why)
	select {
	case <-p.Runner.Done():
	case <-time.After(stopGrace):
		// Operations in flight that do not finish (a database that hangs)
		// are canceled; a start still pending is given up.
		p.Runner.Abort(why)
		r.cancel()
	}
	<-p.Runner.Done()
	<-r.finalReady
}

// finishUnstartedLocked ends a run whose load never started: an empty
// Final says why, and that nothing was measured, so nothing dropped.
// r.mu is held.
func (r *heldRun) finishUnstartedLocked(c pb.StopCause, why string) {
	f := &pb.Final{AgentIndex: r.index, Stopped: why, StopCause: c}
	if p := r.prepared; p != nil && p.Raw != nil {
		var none int64
		f.RawSamplesDropped = &none
	}
	r.finishLocked(f, why)
}

// finishLocked makes f the run's Final and queues it; r.mu is held.
func (r *heldRun) finishLocked(f *pb.Final, why string) {
	if !r.moveLocked(stFinished, why) {
		return
	}
	r.final = &pb.AgentMsg{Msg: &pb.AgentMsg_Final{Final: f}}
	r.sendLocked(r.final)
	close(r.finalReady)
}

// streamEnd is what ending a run does to its attached stream.
type streamEnd uint8

const (
	// streamClose closes it at once.
	streamClose streamEnd = iota
	// streamDrain sends what is queued, then closes it.
	streamDrain
	// streamKeep leaves it open for orphanKeep (see expire).
	streamKeep
)

// end stops the run for good: aborts the load if it is running, closes
// the database once the workers are gone, and frees the agent.
func (r *heldRun) end(reason string, abort bool) { r.endRun(reason, abort, streamClose) }

// endRun is end, with a say in what becomes of the attached stream.
func (r *heldRun) endRun(reason string, abort bool, se streamEnd) {
	r.mu.Lock()
	if r.ending.Load() {
		r.mu.Unlock()
		return
	}
	r.ending.Store(true)
	p := r.prepared
	live := r.state.loadLive()
	if st := r.attached; st != nil {
		switch se {
		case streamKeep:
			time.AfterFunc(orphanKeep, st.close)
		case streamDrain:
			st.drain()
			r.attached = nil
		default:
			st.close()
			r.attached = nil
		}
	}
	r.mu.Unlock()
	defer r.srv.runs.Done()
	switch {
	case abort && live:
		r.logf("aborting load: %s", reason)
	case se != streamKeep:
		r.logf("released (%s)", reason)
	}
	// Cancel so that a driver still connecting, or a start still waiting
	// for its instant, gives up; prepare() closes what it opened once it
	// sees the run ending.
	r.cancel()
	if p != nil && live {
		p.Runner.Abort(reason)
		<-p.Runner.Done()
	}
	r.preparing.Wait()
	r.closeAll(p)
	r.srv.drop(r)
	close(r.freed)
	if abort && live {
		r.logf("load stopped")
	}
}

// closeAll closes what the run opened: its telemetry, its raw samples'
// output and its database (p, nil when it never prepared).
func (r *heldRun) closeAll(p *spec.Prepared) {
	if r.tel != nil {
		r.tel.Close()
	}
	if p == nil {
		return
	}
	r.closeRaw(p)
	if err := p.Close(); err != nil {
		r.logf("closing database: %v", err)
	}
	if p.Raw != nil {
		// Raw samples stay on this host; say what the file lacks.
		r.logf("%s", spec.RawNote(p.Raw.Dropped()))
	}
}

// closeRaw finishes the raw samples' output once, whichever of the
// run's end and its result comes first; p.Close then finds it closed.
func (r *heldRun) closeRaw(p *spec.Prepared) {
	if p.Raw == nil {
		return
	}
	r.rawOnce.Do(func() {
		if err := p.Raw.Close(); err != nil {
			r.logf("%v", err)
		}
	})
}

func stoppedSuffix(s string) string {
	if s == "" {
		return ""
	}
	return " (stopped: " + s + ")"
}

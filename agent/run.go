package agent

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/procstat"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// heldRun is the one benchmark an agent holds, from Hello to Release (or
// lease expiry). It outlives sessions: a broken stream detaches it, a
// resumed one attaches again.
type heldRun struct {
	srv         *server
	clk         clock.Clock
	id          string
	coordinator string
	index       int32

	ctx    context.Context
	cancel context.CancelFunc

	lastHeard atomic.Int64 // clk.Nanotime of the last coordinator message
	// ending is set, under mu, once the run is over (released, or its
	// lease ran out) while it still finishes in-flight requests and
	// closes its database; freed is closed when the agent no longer holds
	// it. A new coordinator waits for an ending run instead of being
	// refused as busy. Atomic so that Ping and Hello read it without mu.
	ending    atomic.Bool
	freed     chan struct{}
	warmupOps atomic.Int64
	lagNs     atomic.Int64
	limitSet  atomic.Bool
	limit     atomic.Int64

	mu       sync.Mutex
	state    pb.RunState
	sess     *session
	prepared *spec.Prepared
	// startRecv is when the Start arrived and lostStream when the
	// attached stream last went down: a stream lost between the two and
	// the start instant cancels the start (see startAt).
	startRecv  time.Time
	lostStream time.Time
	// cause is what first stopped the load, and why: the Final reports
	// it, so that the coordinator can tell a share run to its end from one
	// stopped on this host (a signal, the lease, no coordinator at the
	// start). Unset until something stops the load.
	cause    pb.StopCause
	causeWhy string
	// finalReady is closed once final is set: whoever ends the run hands
	// the Final over first.
	finalReady chan struct{}
	// pending holds interval records not yet acknowledged, by seq; they
	// are resent, in order, to every newly attached session.
	pending    map[int64]*pb.AgentMsg
	started    *pb.AgentMsg
	final      *pb.AgentMsg
	finalAcked bool
	cpuLast    float64
	cpuStart   float64
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
	r := &heldRun{srv: s, clk: s.clk, id: h.RunId, coordinator: h.Coordinator, index: h.AgentIndex,
		ctx: ctx, cancel: cancel, state: pb.RunState_RUN_STATE_IDLE, pending: map[int64]*pb.AgentMsg{}, freed: make(chan struct{}),
		finalReady: make(chan struct{})}
	r.touch()
	s.runs.Add(1)
	go r.watchLease()
	return r
}

func (r *heldRun) logf(format string, args ...any) {
	r.srv.cfg.Logf("run %s: "+format, append([]any{r.id}, args...)...)
}

// touch notes a word from the coordinator, which renews the lease, unless
// the lease had already run out when the word was read: this process did
// not run for longer than the lease (SIGSTOPped, a frozen VM) and reads
// only now what the coordinator sent meanwhile. The lease is over then:
// the coordinator has had it lost since, and watchLease ends the run at
// its next look. Renewing it would keep the load going on the agent
// whichever of the two goroutines, the stream's reader or watchLease, the
// runtime happened to run first after the pause.
func (r *heldRun) touch() {
	now := r.clk.Nanotime()
	for {
		last := r.lastHeard.Load()
		if last != 0 && now-last > int64(r.srv.cfg.Lease) {
			return
		}
		if r.lastHeard.CompareAndSwap(last, now) {
			return
		}
	}
}

func (r *heldRun) getState() pb.RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

func (r *heldRun) isDone() bool { return r.ending.Load() }

// attach makes sess the run's stream: the hello reply first, then every
// message the coordinator may have missed, in order, so that a resumed
// coordinator sees exactly what a never-disconnected one would have.
func (r *heldRun) attach(sess *session, hello *pb.AgentMsg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.sess; old != nil {
		old.close()
	}
	r.sess = sess
	sess.enqueue(hello)
	if r.started != nil {
		sess.enqueue(r.started)
	}
	seqs := make([]int64, 0, len(r.pending))
	for s := range r.pending {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	for _, s := range seqs {
		sess.enqueue(r.pending[s])
	}
	if r.final != nil && !r.finalAcked {
		sess.enqueue(r.final)
	}
}

func (r *heldRun) detach(sess *session) {
	r.mu.Lock()
	if r.sess == sess {
		r.sess = nil
		r.lostStream = r.clk.Now()
	}
	r.mu.Unlock()
	sess.close()
}

// send queues m on the attached session, if any; unacknowledged messages
// are kept by the caller for resending.
func (r *heldRun) sendLocked(m *pb.AgentMsg) {
	if r.sess != nil {
		r.sess.enqueue(m)
	}
}

func (r *heldRun) send(m *pb.AgentMsg) {
	r.mu.Lock()
	r.sendLocked(m)
	r.mu.Unlock()
}

// watchLease aborts the run when the coordinator has been silent for the
// lease. Load against a database must never outlive its coordinator by
// more than that.
func (r *heldRun) watchLease() {
	lease := int64(r.srv.cfg.Lease)
	tick := r.srv.cfg.Lease / 20
	if tick > 250*time.Millisecond {
		tick = 250 * time.Millisecond
	}
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.clk.After(tick):
		}
		if silent := r.clk.Nanotime() - r.lastHeard.Load(); silent > lease {
			r.expire(fmt.Sprintf("no word from %s for %s (lease)", r.coordinator, time.Duration(silent).Round(time.Millisecond)))
			return
		}
	}
}

// stopGrace bounds how long a load stopped on this host (lease, signal)
// may take to finish its operations in flight before they are canceled.
const stopGrace = time.Second

// setCause records what stopped the load, unless something already did.
// r.mu is held.
func (r *heldRun) setCauseLocked(c pb.StopCause, why string) {
	if r.cause == pb.StopCause_STOP_CAUSE_UNSPECIFIED {
		r.cause, r.causeWhy = c, why
	}
}

// stopLoad stops a running load for a cause of this host's own: the
// workers finish the operation in flight (within stopGrace, else it is
// canceled) and the last interval and the Final are queued for the
// coordinator. It returns once the Final exists, or at once when the load
// never ran.
func (r *heldRun) stopLoad(c pb.StopCause, why string) {
	r.mu.Lock()
	r.setCauseLocked(c, why)
	p, state := r.prepared, r.state
	r.mu.Unlock()
	if p == nil || state != pb.RunState_RUN_STATE_RUNNING {
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

// expire ends the run when the coordinator has been silent for the lease.
// The load stops and the Final is queued; the agent is free for the next
// coordinator at once. A stream that is still attached (a coordinator
// that is paused, not gone) stays open for orphanKeep, so that the
// coordinator, once it runs again, still reads every interval measured
// and the Final, and releases the run.
func (r *heldRun) expire(reason string) {
	r.mu.Lock()
	running := r.state == pb.RunState_RUN_STATE_RUNNING
	r.mu.Unlock()
	if !running {
		r.logf("released (%s)", reason)
		r.endRun(reason, false, sessKeep)
		return
	}
	r.logf("aborting load: %s", reason)
	r.stopLoad(pb.StopCause_STOP_CAUSE_LEASE, reason)
	r.logf("load stopped")
	r.endRun(reason, false, sessKeep)
}

// orphanKeep is how long a stream outlives its run's lease (see expire).
const orphanKeep = 2 * time.Minute

// handOverWait bounds how long an agent that is stopping (a signal on its
// host) waits for its coordinator to acknowledge its last intervals and
// its Final.
const handOverWait = 5 * time.Second

// handOver ends the run because this agent process is stopping: the load
// stops, its last intervals and a Final saying why go to the coordinator,
// which records the agent as stopped with everything it measured; the
// agent waits for the acknowledgement within handOverWait (force, the
// operator's second signal, cuts every wait short), then ends the run. A
// run that has not started is refused to its coordinator instead.
func (r *heldRun) handOver(reason string, force <-chan struct{}) {
	why := "agent stopped by " + reason + " on its host"
	r.mu.Lock()
	state := r.state
	switch state {
	case pb.RunState_RUN_STATE_READY:
		// Prepared, its Start not yet here (it may be on its way): the
		// agent left the run before measuring anything, which is a
		// departure like a stop mid-run, not a failure of the run. An
		// empty Final says so; the coordinator's loss policy decides
		// (whether the Start had arrived must not change the verdict).
		r.setCauseLocked(pb.StopCause_STOP_CAUSE_SIGNAL, why)
		f := &pb.Final{AgentIndex: r.index, Stopped: why, StopCause: r.cause}
		if p := r.prepared; p != nil && p.Raw != nil {
			var none int64
			f.RawSamplesDropped = &none
		}
		r.finishLocked(f)
	case pb.RunState_RUN_STATE_RUNNING, pb.RunState_RUN_STATE_FINISHED:
	default:
		r.sendLocked(failed(r.index, "prepare", why))
	}
	r.mu.Unlock()
	if state == pb.RunState_RUN_STATE_RUNNING {
		r.logf("stopping the load: %s", why)
		stopped := make(chan struct{})
		go func() {
			r.stopLoad(pb.StopCause_STOP_CAUSE_SIGNAL, why)
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-force:
		}
	}
	r.awaitAcks(handOverWait, force)
	r.endRun(why, true, sessDrain)
}

// awaitAcks waits until the coordinator has acknowledged every interval
// and the Final, for at most d or until force is closed. A stream that is
// down meanwhile may be resumed: the coordinator gets everything then.
func (r *heldRun) awaitAcks(d time.Duration, force <-chan struct{}) {
	deadline := time.After(d)
	for {
		r.mu.Lock()
		done := len(r.pending) == 0 && (r.final == nil || r.finalAcked)
		r.mu.Unlock()
		if done {
			return
		}
		select {
		case <-deadline:
			r.logf("the coordinator did not acknowledge everything within %s", d)
			return
		case <-force:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sessionEnd is what ending a run does to its attached stream.
type sessionEnd uint8

const (
	// sessClose closes it at once.
	sessClose sessionEnd = iota
	// sessDrain sends what is queued, then closes it.
	sessDrain
	// sessKeep leaves it open for orphanKeep (see expire).
	sessKeep
)

// end stops the run for good: aborts the load if it is running, closes
// the database once the workers are gone, and frees the agent.
func (r *heldRun) end(reason string, abort bool) { r.endRun(reason, abort, sessClose) }

// endRun is end, with a say in what becomes of the attached stream.
func (r *heldRun) endRun(reason string, abort bool, se sessionEnd) {
	r.mu.Lock()
	if r.ending.Load() {
		r.mu.Unlock()
		return
	}
	r.ending.Store(true)
	p := r.prepared
	state := r.state
	if sess := r.sess; sess != nil {
		switch se {
		case sessKeep:
			time.AfterFunc(orphanKeep, sess.close)
		case sessDrain:
			sess.drain()
			r.sess = nil
		default:
			sess.close()
			r.sess = nil
		}
	}
	r.mu.Unlock()
	defer r.srv.runs.Done()
	switch {
	case abort && state == pb.RunState_RUN_STATE_RUNNING:
		r.logf("aborting load: %s", reason)
	case se != sessKeep:
		r.logf("released (%s)", reason)
	}
	// Cancel so that a driver still connecting, or a start still waiting
	// for its instant, gives up; prepare() closes what it opened once it
	// sees the run ending.
	r.cancel()
	if p != nil && state == pb.RunState_RUN_STATE_RUNNING {
		p.Runner.Abort(reason)
		<-p.Runner.Done()
	}
	r.preparing.Wait()
	if r.tel != nil {
		r.tel.Close()
	}
	if p != nil {
		r.closeRaw(p)
		if err := p.Close(); err != nil {
			r.logf("closing database: %v", err)
		}
		if p.Raw != nil {
			// Raw samples stay on this host; say what the file lacks.
			r.logf("%s", spec.RawNote(p.Raw.Dropped()))
		}
	}
	r.srv.drop(r)
	close(r.freed)
	if abort && state == pb.RunState_RUN_STATE_RUNNING {
		r.logf("load stopped")
	}
}

// handle processes one coordinator message; it returns true when the
// session should end.
func (r *heldRun) handle(m *pb.CoordinatorMsg) bool {
	switch x := m.Msg.(type) {
	case *pb.CoordinatorMsg_Prepare:
		r.mu.Lock()
		if r.state != pb.RunState_RUN_STATE_IDLE {
			r.mu.Unlock()
			r.send(failed(r.index, "prepare", "already prepared"))
			return false
		}
		r.state = pb.RunState_RUN_STATE_PREPARING
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
			r.limit.Store(*v)
			r.limitSet.Store(true)
			r.mu.Lock()
			if p := r.prepared; p != nil {
				p.Runner.SetExternalLimit(*v)
			}
			r.mu.Unlock()
		}
	case *pb.CoordinatorMsg_Ack:
		r.mu.Lock()
		for _, s := range x.Ack.Seqs {
			delete(r.pending, s)
		}
		if x.Ack.Final {
			r.finalAcked = true
		}
		r.mu.Unlock()
	case *pb.CoordinatorMsg_Stop:
		r.stop(x.Stop)
	case *pb.CoordinatorMsg_Release:
		r.end("coordinator released the run", false)
		return true
	case *pb.CoordinatorMsg_Hello:
		r.send(failed(r.index, "session", "unexpected second Hello"))
	}
	return false
}

func failed(idx int32, stage, reason string) *pb.AgentMsg {
	return &pb.AgentMsg{Msg: &pb.AgentMsg_Failed{Failed: &pb.Failed{AgentIndex: idx, Stage: stage, Reason: reason}}}
}

func (r *heldRun) prepare(m *pb.Prepare) {
	sp, phase, err := specOf(m, r.srv.cfg.Properties)
	if err != nil {
		r.failPrepare(err)
		return
	}
	r.logf("preparing %s %s (agent %d of %d)", phase, m.Db, m.AgentIndex, m.AgentCount)
	if r.srv.cfg.Sink != nil {
		// The sink exposes this agent's series at zero as soon as the run
		// is prepared, under the name its intervals will carry.
		host, _ := os.Hostname()
		r.self = run.SelfView{Name: host, Hostname: host}
		r.metrics = r.srv.cfg.Sink(run.Info{RunID: r.id, Mode: run.ModeDistributed, Command: "agent " + phase.String(), Started: r.clk.Now(), Agents: []string{host}}, sp)
	}
	p, err := spec.Prepare(r.ctx, sp, r.clk, func(f string, a ...any) { r.logf(f, a...) }, r)
	if err != nil {
		r.failPrepare(err)
		return
	}
	var dbInfo *pb.DatabaseInfo
	if m.AgentIndex == 0 {
		// One agent describes the database for the run's record: the
		// server is the same for all, and each description costs it
		// a few queries.
		dbInfo = wire.DatabaseToProto(adapters.Describe(r.ctx, sp.Adapter.Name, p.DB))
	}
	r.mu.Lock()
	if r.ending.Load() {
		r.mu.Unlock()
		_ = p.Close()
		return
	}
	r.prepared = p
	if sp.Measure.TrackRuntime {
		r.runtime = &ycsbtext.RuntimeSampler{}
	}
	// Agent 0 reads a remote database's internals when none of its
	// server runs on its host; every agent samples its own host.
	host, _ := os.Hostname()
	r.tel = p.StartTelemetry(host, r.index == 0, r.logf)
	r.state = pb.RunState_RUN_STATE_READY
	if r.limitSet.Load() {
		p.Runner.SetExternalLimit(r.limit.Load())
	}
	r.sendLocked(&pb.AgentMsg{Msg: &pb.AgentMsg_Prepared{Prepared: &pb.Prepared{
		AgentIndex: r.index, Threads: int32(p.Runner.Threads()), OperationCount: p.Spec.OpCount, Warnings: r.srv.ownWarnings(sp), Database: dbInfo,
	}}})
	r.mu.Unlock()
}

func (r *heldRun) failPrepare(err error) {
	r.logf("prepare failed: %v", err)
	r.mu.Lock()
	r.state = pb.RunState_RUN_STATE_FINISHED
	r.sendLocked(failed(r.index, "prepare", err.Error()))
	r.mu.Unlock()
}

func (r *heldRun) start(m *pb.Start) {
	r.mu.Lock()
	if r.state != pb.RunState_RUN_STATE_READY {
		st := r.state
		r.mu.Unlock()
		if st != pb.RunState_RUN_STATE_RUNNING && st != pb.RunState_RUN_STATE_FINISHED {
			r.send(failed(r.index, "start", fmt.Sprintf("cannot start in state %v", st)))
		}
		return
	}
	r.state = pb.RunState_RUN_STATE_RUNNING
	r.startRecv = r.clk.Now()
	p := r.prepared
	r.cpuStart = procstat.CPUSeconds()
	r.cpuLast = r.cpuStart
	r.self.Begin(r.cpuStart)
	if r.runtime != nil {
		// The totals count from the start of the load.
		r.runtime.Begin()
	}
	r.mu.Unlock()

	at := time.Unix(0, m.StartUnixNs)
	r.logf("starting at %s (in %s)", at.Format("15:04:05.000"), at.Sub(r.clk.Now()).Round(time.Millisecond))
	go r.launch(p, at)
}

// Starting the load needs a live coordinator: the stream attached and a
// word from it within startSilence, checked startCheckAhead before the
// start instant, and the stream still attached, never lost since the
// Start arrived, at the instant itself. A coordinator that died or
// stalled between its Start and the start instant gets no load run in
// its name.
//
// The coordinator renews the lease every 200 ms until the start (from a
// 100 ms tick, so a healthy one leaves gaps of up to ~300 ms). startSilence
// is four of those periods: a coordinator late by another half second (a
// GC cycle, a process descheduled on a busy 2-core host) still gets its
// run, and one frozen from 900 ms or more before the start instant
// (startSilence plus startCheckAhead) does not. It was 2 s, which let a
// coordinator paused (SIGSTOP) in the last ~1.9 s have its agents run
// their load until their lease. Tighter would refuse healthy runs on a
// loaded machine, which costs more than it saves: a refused agent leaves
// the run (with the default --on-agent-loss=abort the run is aborted),
// while a freeze inside the window costs at most one lease of load. This
// agent's own lateness does not count: a check that finds the coordinator
// silent looks again for startRecheck, during which whatever the stream
// holds is read (an agent descheduled itself wakes its timers and its
// stream reader together, in no set order).
//
// A coordinator that dies (killed, crashed) closes its stream: that is
// known at once, whatever the margin, so it is looked at again at the
// start instant, under the lock the stream's end takes (startAt). It used
// to be looked at only startCheckAhead before, and a coordinator killed
// in those last 100 ms had its agents run their whole load.
const (
	startCheckAhead = 100 * time.Millisecond
	startSilence    = 800 * time.Millisecond
	startRecheck    = 100 * time.Millisecond
)

// launch starts the load at its instant if the coordinator is still
// there, and otherwise ends it unstarted, its Final saying why; either
// way the runner ends and awaitResult reports it.
func (r *heldRun) launch(p *spec.Prepared, at time.Time) {
	if d := at.Add(-startCheckAhead).Sub(r.clk.Now()); d > 0 {
		select {
		case <-r.clk.After(d):
		case <-r.ctx.Done():
		}
	}
	why := r.awaitCoordinator()
	if why == "" {
		why = r.startAt(p, at)
	}
	if why != "" {
		r.logf("not starting the load: %s", why)
		r.mu.Lock()
		r.setCauseLocked(pb.StopCause_STOP_CAUSE_NO_COORDINATOR, "did not start: "+why)
		r.mu.Unlock()
		// An aborted runner that is started ends at once.
		p.Runner.Abort(why)
		p.Runner.Start(time.Time{})
		r.awaitResult(p)
		return
	}
	// Report the instant the engine itself began, so the coordinator can
	// say how late this agent actually started (not how late this
	// goroutine got a core after the workers took them).
	go func() {
		select {
		case <-p.Runner.Started():
		case <-r.ctx.Done():
			return
		case <-p.Runner.Done():
			select {
			case <-p.Runner.Started(): // a short run began and ended
			default:
				return
			}
		}
		now := p.Runner.StartedAt().UnixNano()
		msg := &pb.AgentMsg{Msg: &pb.AgentMsg_Started{Started: &pb.Started{AgentIndex: r.index, StartedUnixNs: now}}}
		r.mu.Lock()
		r.started = msg
		r.sendLocked(msg)
		r.mu.Unlock()
	}()
	r.awaitResult(p)
}

// startAt waits for the start instant and starts the runner then, unless
// the coordinator's stream is down at that instant or went down since the
// Start arrived; it says why it did not start (empty when it did). The
// check and the start are made under r.mu, which detach takes to note a
// stream's end: a stream that ended before the instant is never missed.
// The runner is given the planned instant, which has just passed, so that
// its intervals are cut from the instant every agent shares.
func (r *heldRun) startAt(p *spec.Prepared, at time.Time) string {
	if err := clock.SleepUntilPrecise(r.ctx, r.clk, clock.WallAt(r.clk, at)); err != nil {
		return "the run is ending"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.ctx.Err() != nil:
		return "the run is ending"
	case r.sess == nil || r.lostStream.After(r.startRecv):
		return fmt.Sprintf("the stream to %s closed %s before the start instant", r.coordinator, at.Sub(r.lostStream).Round(time.Millisecond))
	}
	p.Runner.Start(at)
	return ""
}

// awaitCoordinator says why the coordinator cannot be counted on at the
// start instant (empty when it can): coordinatorAbsent, confirmed by
// looking again for startRecheck (see startSilence).
func (r *heldRun) awaitCoordinator() string {
	why := r.coordinatorAbsent()
	if why == "" {
		return ""
	}
	deadline := r.clk.Nanotime() + int64(startRecheck)
	for r.clk.Nanotime() < deadline {
		select {
		case <-r.clk.After(10 * time.Millisecond):
		case <-r.ctx.Done():
			return "the run is ending"
		}
		if why = r.coordinatorAbsent(); why == "" {
			return ""
		}
	}
	return why
}

// coordinatorAbsent says why the coordinator cannot be counted on at the
// start instant; empty when it can.
func (r *heldRun) coordinatorAbsent() string {
	if r.ctx.Err() != nil {
		return "the run is ending"
	}
	r.mu.Lock()
	attached := r.sess != nil
	r.mu.Unlock()
	silent := time.Duration(r.clk.Nanotime() - r.lastHeard.Load()).Round(time.Millisecond)
	switch {
	case !attached:
		return fmt.Sprintf("the stream to %s is down at the start instant (last word %s before it)", r.coordinator, silent)
	case silent > startSilence:
		return fmt.Sprintf("no word from %s for %s before the start instant (at most %s allowed)", r.coordinator, silent, startSilence)
	}
	return ""
}

func (r *heldRun) awaitResult(p *spec.Prepared) {
	res := p.Runner.Wait()
	cpu := procstat.CPUSeconds()
	var rawDropped *int64
	if p.Raw != nil {
		// Every worker has finished recording: write out what the raw
		// writer still holds so that the dropped count is exact for the
		// Final.
		r.closeRaw(p)
		d := p.Raw.Dropped()
		rawDropped = &d
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &pb.Final{
		AgentIndex: r.index, StartUnixNs: res.StartNs, EndUnixNs: res.EndNs, RuntimeNs: int64(res.RunTime),
		Operations: res.Total.Ops, WarmupOps: res.WarmupOps, Intervals: res.Intervals, Stopped: res.Stopped,
		CpuSeconds: cpu - r.cpuStart, Threads: int32(p.Runner.Threads()), RawSamplesDropped: rawDropped,
		StopCause: r.cause,
	}
	switch r.cause {
	case pb.StopCause_STOP_CAUSE_UNSPECIFIED:
		f.StopCause = pb.StopCause_STOP_CAUSE_PLAN
	case pb.StopCause_STOP_CAUSE_COORDINATOR:
	default:
		// Stopped on this host: say why in this host's words (the engine
		// only knows "aborted before start" for a load it never began).
		f.Stopped = r.causeWhy
	}
	r.finishLocked(f)
	r.logf("finished: %s in %s, %s%s", plural.Count(f.Operations, "operation"), res.RunTime.Round(time.Millisecond), plural.Count(f.Intervals, "interval"), stoppedSuffix(f.Stopped))
}

// finishLocked makes f the run's Final and queues it; r.mu is held.
func (r *heldRun) finishLocked(f *pb.Final) {
	r.state = pb.RunState_RUN_STATE_FINISHED
	r.final = &pb.AgentMsg{Msg: &pb.AgentMsg_Final{Final: f}}
	r.sendLocked(r.final)
	close(r.finalReady)
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

func (r *heldRun) stop(m *pb.Stop) {
	r.mu.Lock()
	state := r.state
	p := r.prepared
	if state == pb.RunState_RUN_STATE_READY || state == pb.RunState_RUN_STATE_IDLE || state == pb.RunState_RUN_STATE_PREPARING {
		// Never started: report an empty final so the coordinator is not
		// left waiting for intervals that will not come.
		r.setCauseLocked(pb.StopCause_STOP_CAUSE_COORDINATOR, m.Reason)
		f := &pb.Final{AgentIndex: r.index, Stopped: m.Reason, StopCause: r.cause}
		if p != nil && p.Raw != nil {
			// Nothing was measured, so nothing was dropped.
			var none int64
			f.RawSamplesDropped = &none
		}
		r.finishLocked(f)
		r.mu.Unlock()
		return
	}
	if state == pb.RunState_RUN_STATE_RUNNING {
		r.setCauseLocked(pb.StopCause_STOP_CAUSE_COORDINATOR, m.Reason)
	}
	r.mu.Unlock()
	if state != pb.RunState_RUN_STATE_RUNNING || p == nil {
		return
	}
	if m.Abort {
		r.logf("abort requested: %s", m.Reason)
		p.Runner.Abort(m.Reason)
	} else {
		r.logf("stop requested: %s", m.Reason)
		p.Runner.Stop(m.Reason)
	}
}

// OnInterval is the engine's sink: every measured interval becomes a
// record, kept until acknowledged. It runs on the engine's reporter
// goroutine, so it only encodes and queues.
func (r *heldRun) OnInterval(u *run.Update) {
	if r.tel != nil && u.Interval != nil {
		if iv := r.tel.Cut(u.Interval.StartNs, u.Interval.EndNs, u.Progress.Warmup); iv != nil {
			for _, n := range iv.Notes {
				r.logf("%s", n)
			}
			u.Telemetry = []*telemetry.Interval{iv}
		}
	}
	if r.metrics != nil {
		r.self.Describe(u, procstat.CPUSeconds())
		r.metrics.OnInterval(u)
	}
	iv, p := u.Interval, u.Progress
	r.lagNs.Store(int64(p.Lag))
	if p.Warmup {
		r.warmupOps.Store(p.WarmupOps)
		return
	}
	rec, err := wire.RecordFromUpdate(r.index, u, r.ownFigures())
	if err != nil {
		r.logf("encoding interval %d: %v", iv.Seq, err)
		return
	}
	m := &pb.AgentMsg{Msg: &pb.AgentMsg_Interval{Interval: rec}}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending[rec.Seq] = m
	r.sendLocked(m)
}

// ownFigures are this agent's own part of a measured interval's record:
// its CPU since its previous record (since the start for the first one,
// so that the warm-up's CPU is counted too), its runtime sample when the
// run tracks it, and its acknowledged inserts. It runs on the engine's
// reporter goroutine, which alone uses cpuLast and the runtime sampler
// once the load has started (start set them before starting it).
func (r *heldRun) ownFigures() wire.OwnFigures {
	cpu := procstat.CPUSeconds()
	own := wire.OwnFigures{CPUSeconds: max(cpu-r.cpuLast, 0)}
	r.cpuLast = cpu
	if r.runtime != nil {
		s := r.runtime.Sample()
		own.Runtime = &s
	}
	if p := r.prepared; p != nil {
		own.LocalInserts = p.Workload.LocalInsertsAcknowledged()
	}
	return own
}

// heartbeats sends a heartbeat every second while sess is attached.
func (r *heldRun) heartbeats(sess *session) {
	for {
		select {
		case <-sess.ctx.Done():
			return
		case <-r.clk.After(heartbeatEvery):
		}
		hb := &pb.Heartbeat{SentUnixNs: r.clk.Now().UnixNano(), WarmupOps: r.warmupOps.Load(), LagNs: r.lagNs.Load()}
		r.mu.Lock()
		hb.State = r.state
		if r.prepared != nil {
			hb.LocalInsertsAcknowledged = r.prepared.Workload.LocalInsertsAcknowledged()
		}
		if r.sess == sess {
			sess.enqueue(&pb.AgentMsg{Msg: &pb.AgentMsg_Heartbeat{Heartbeat: hb}})
		}
		r.mu.Unlock()
	}
}

// session is one attached stream with its own sender goroutine (a gRPC
// stream must not be written from two goroutines).
type session struct {
	stream pb.Agent_SessionServer
	out    chan *pb.AgentMsg
	ctx    context.Context
	cancel context.CancelFunc
	// draining is closed by drain: the sender sends what is queued, then
	// closes the session.
	draining  chan struct{}
	drainOnce sync.Once
}

func newSession(stream pb.Agent_SessionServer) *session {
	ctx, cancel := context.WithCancel(stream.Context())
	return &session{stream: stream, out: make(chan *pb.AgentMsg, 4096), ctx: ctx, cancel: cancel, draining: make(chan struct{})}
}

// drain closes the session once everything queued is sent.
func (s *session) drain() { s.drainOnce.Do(func() { close(s.draining) }) }

// enqueue never blocks the engine: if the coordinator reads so slowly
// that the queue fills, the session is dropped; everything unacknowledged
// is resent when it re-attaches.
func (s *session) enqueue(m *pb.AgentMsg) {
	select {
	case s.out <- m:
	default:
		s.cancel()
	}
}

func (s *session) close() { s.cancel() }

func (s *session) sendLoop() {
	draining := s.draining
	for {
		select {
		case <-s.ctx.Done():
			return
		case m := <-s.out:
			if err := s.stream.Send(m); err != nil {
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

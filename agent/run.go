package agent

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/procstat"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
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
	rawOnce sync.Once
	// preparing tracks an in-flight spec.Prepare: the database must be
	// closed after it returns, never under it.
	preparing sync.WaitGroup
}

func newRun(s *server, h *pb.Hello) *heldRun {
	ctx, cancel := context.WithCancel(context.Background())
	r := &heldRun{srv: s, clk: s.clk, id: h.RunId, coordinator: h.Coordinator, index: h.AgentIndex,
		ctx: ctx, cancel: cancel, state: pb.RunState_RUN_STATE_IDLE, pending: map[int64]*pb.AgentMsg{}, freed: make(chan struct{})}
	r.touch()
	s.runs.Add(1)
	go r.watchLease()
	return r
}

func (r *heldRun) logf(format string, args ...any) {
	r.srv.cfg.Logf("run %s: "+format, append([]any{r.id}, args...)...)
}

func (r *heldRun) touch() { r.lastHeard.Store(r.clk.Nanotime()) }

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
			r.end(fmt.Sprintf("no word from %s for %s (lease)", r.coordinator, time.Duration(silent).Round(time.Millisecond)), true)
			return
		}
	}
}

// end stops the run for good: aborts the load if it is running, closes
// the database once the workers are gone, and frees the agent.
func (r *heldRun) end(reason string, abort bool) {
	r.mu.Lock()
	if r.ending.Load() {
		r.mu.Unlock()
		return
	}
	r.ending.Store(true)
	p := r.prepared
	state := r.state
	if r.sess != nil {
		r.sess.close()
		r.sess = nil
	}
	r.mu.Unlock()
	defer r.srv.runs.Done()
	if abort && state == pb.RunState_RUN_STATE_RUNNING {
		r.logf("aborting load: %s", reason)
	} else {
		r.logf("released (%s)", reason)
	}
	if p != nil && state == pb.RunState_RUN_STATE_RUNNING {
		p.Runner.Abort(reason)
		<-p.Runner.Done()
	}
	// Cancel so that a driver still connecting gives up, then wait for
	// it: prepare() closes what it opened once it sees the run ending.
	r.cancel()
	r.preparing.Wait()
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
	var phase run.Phase
	switch m.Phase {
	case pb.Phase_PHASE_LOAD:
		phase = run.Load
	case pb.Phase_PHASE_RUN:
		phase = run.Run
	default:
		r.failPrepare(fmt.Errorf("unknown phase %v", m.Phase))
		return
	}
	props := properties.FromMap(m.Properties)
	for k, v := range r.srv.cfg.Properties {
		props.Set(k, v)
	}
	r.logf("preparing %s %s (agent %d of %d)", phase, m.Db, m.AgentIndex, m.AgentCount)
	// The properties are parsed once, here; the coordinator validated the
	// same set before sending it.
	sp, err := spec.Parse(m.Db, props, phase)
	if err != nil {
		r.failPrepare(err)
		return
	}
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
	r.state = pb.RunState_RUN_STATE_READY
	if r.limitSet.Load() {
		p.Runner.SetExternalLimit(r.limit.Load())
	}
	r.sendLocked(&pb.AgentMsg{Msg: &pb.AgentMsg_Prepared{Prepared: &pb.Prepared{
		AgentIndex: r.index, Threads: int32(p.Runner.Threads()), OperationCount: p.Spec.OpCount,
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
	p.Runner.Start(at)
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
	go r.awaitResult(p)
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
	}
	r.state = pb.RunState_RUN_STATE_FINISHED
	r.final = &pb.AgentMsg{Msg: &pb.AgentMsg_Final{Final: f}}
	r.logf("finished: %s in %s, %s%s", plural.Count(f.Operations, "operation"), res.RunTime.Round(time.Millisecond), plural.Count(f.Intervals, "interval"), stoppedSuffix(f.Stopped))
	r.sendLocked(r.final)
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
		r.state = pb.RunState_RUN_STATE_FINISHED
		f := &pb.Final{AgentIndex: r.index, Stopped: m.Reason}
		if p != nil && p.Raw != nil {
			// Nothing was measured, so nothing was dropped.
			var none int64
			f.RawSamplesDropped = &none
		}
		r.final = &pb.AgentMsg{Msg: &pb.AgentMsg_Final{Final: f}}
		r.sendLocked(r.final)
		r.mu.Unlock()
		return
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
	rec, err := wire.RecordFromInterval(r.index, iv)
	if err != nil {
		r.logf("encoding interval %d: %v", iv.Seq, err)
		return
	}
	cpu := procstat.CPUSeconds()
	rec.LagNs = int64(p.Lag)
	rec.Final = p.Final
	if r.runtime != nil {
		rec.Runtime = runtimeToPB(r.runtime.Sample())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.CpuSeconds = cpu - r.cpuLast
	if rec.CpuSeconds < 0 {
		rec.CpuSeconds = 0
	}
	r.cpuLast = cpu
	if r.prepared != nil {
		rec.LocalInsertsAcknowledged = r.prepared.Workload.LocalInsertsAcknowledged()
	}
	m := &pb.AgentMsg{Msg: &pb.AgentMsg_Interval{Interval: rec}}
	r.pending[rec.Seq] = m
	r.sendLocked(m)
}

// runtimeToPB is the wire form of a runtime sample.
func runtimeToPB(s run.RuntimeSample) *pb.RuntimeSample {
	return &pb.RuntimeSample{Goroutines: s.Goroutines, HeapInUseMb: s.HeapInUseMB, Gcs: s.GCs, GcPauseNs: int64(s.GCPause),
		TotalGcs: s.TotalGCs, TotalGcPauseNs: int64(s.TotalGCPause)}
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
}

func newSession(stream pb.Agent_SessionServer) *session {
	ctx, cancel := context.WithCancel(stream.Context())
	return &session{stream: stream, out: make(chan *pb.AgentMsg, 4096), ctx: ctx, cancel: cancel}
}

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
	for {
		select {
		case <-s.ctx.Done():
			return
		case m := <-s.out:
			if err := s.stream.Send(m); err != nil {
				s.cancel()
				return
			}
		}
	}
}

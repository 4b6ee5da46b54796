package agent

import (
	"fmt"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/procstat"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// start takes the coordinator's Start: a ready run waits for its instant
// (launch); a run that is already past it ignores a repeated Start, and
// one that is not prepared says it cannot start.
func (r *heldRun) start(m *pb.Start) {
	r.mu.Lock()
	if r.state != stReady {
		st := r.state.public()
		r.mu.Unlock()
		if st != pb.RunState_RUN_STATE_RUNNING && st != pb.RunState_RUN_STATE_FINISHED {
			r.send(failed(r.index, "start", fmt.Sprintf("cannot start in state %v", st)))
		}
		return
	}
	r.moveLocked(stStarting, "Start")
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
		r.stopLocked(pb.StopCause_STOP_CAUSE_NO_COORDINATOR, "did not start: "+why)
		r.mu.Unlock()
		// An aborted runner that is started ends at once.
		p.Runner.Abort(why)
		p.Runner.Start(time.Time{})
		r.awaitResult(p)
		return
	}
	go r.reportStarted(p)
	r.awaitResult(p)
}

// reportStarted reports the instant the engine itself began, so the
// coordinator can say how late this agent actually started (not how late
// the launching goroutine got a core after the workers took them).
func (r *heldRun) reportStarted(p *spec.Prepared) {
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
	case r.attached == nil || r.lostStream.After(r.startRecv):
		return fmt.Sprintf("the stream to %s closed %s before the start instant", r.coordinator, at.Sub(r.lostStream).Round(time.Millisecond))
	}
	// A load stopped while it waited (stopping) is started all the same:
	// its runner, told to stop, ends at once, and the Final says why.
	if r.state == stStarting {
		r.moveLocked(stRunning, "the start instant")
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
	attached := r.attached != nil
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
		StopCause: pb.StopCause_STOP_CAUSE_PLAN,
	}
	why := "ran its share"
	if r.state == stStopping {
		f.StopCause, why = r.cause, "the load stopped: "+r.causeWhy
		if r.cause != pb.StopCause_STOP_CAUSE_COORDINATOR {
			// Stopped on this host: say why in this host's words (the
			// engine only knows "aborted before start" for a load it
			// never began).
			f.Stopped = r.causeWhy
		}
	}
	r.finishLocked(f, why)
	r.logf("finished: %s in %s, %s%s", plural.Count(f.Operations, "operation"), res.RunTime.Round(time.Millisecond), plural.Count(f.Intervals, "interval"), stoppedSuffix(f.Stopped))
}

package agent

import (
	"time"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

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
	case stReady:
		// Prepared, its Start not yet here (it may be on its way): the
		// agent left the run before measuring anything, which is a
		// departure like a stop mid-run, not a failure of the run. An
		// empty Final says so; the coordinator's loss policy decides
		// (whether the Start had arrived must not change the verdict).
		r.finishUnstartedLocked(pb.StopCause_STOP_CAUSE_SIGNAL, why)
	case stIdle, stPreparing:
		r.sendLocked(failed(r.index, "prepare", why))
	}
	r.mu.Unlock()
	if state.loadLive() {
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
	r.endRun(why, true, streamDrain)
}

// awaitAcks waits until the coordinator has acknowledged every interval
// and the Final, for at most d or until force is closed. A stream that is
// down meanwhile may be resumed: the coordinator gets everything then.
func (r *heldRun) awaitAcks(d time.Duration, force <-chan struct{}) {
	deadline := time.After(d)
	for {
		r.mu.Lock()
		// finished: the Final exists and is not acknowledged.
		done := len(r.pending) == 0 && r.state != stFinished
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

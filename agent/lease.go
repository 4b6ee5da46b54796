package agent

import (
	"fmt"
	"time"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

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

// orphanKeep is how long a stream outlives its run's lease (see expire).
const orphanKeep = 2 * time.Minute

// expire ends the run when the coordinator has been silent for the lease.
// The load stops and the Final is queued; the agent is free for the next
// coordinator at once. A stream that is still attached (a coordinator
// that is paused, not gone) stays open for orphanKeep, so that the
// coordinator, once it runs again, still reads every interval measured
// and the Final, and releases the run.
func (r *heldRun) expire(reason string) {
	r.mu.Lock()
	live := r.state.loadLive()
	r.mu.Unlock()
	if !live {
		r.logf("released (%s)", reason)
		r.endRun(reason, false, streamKeep)
		return
	}
	r.logf("aborting load: %s", reason)
	r.stopLoad(pb.StopCause_STOP_CAUSE_LEASE, reason)
	r.logf("load stopped")
	r.endRun(reason, false, streamKeep)
}

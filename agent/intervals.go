package agent

import (
	"github.com/ycsbctl/ycsbctl/internal/procstat"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

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

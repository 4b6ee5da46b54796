package wire

import (
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// OwnFigures are what the process that records an interval adds to the
// engine's measurements: figures of its own, which the engine does not
// know. The single host and an agent work them out differently (the
// single host's CPU comes from its run.SelfView, an agent's is the delta
// since its previous record, and only an agent samples its runtime and
// counts its acknowledged inserts), so they are inputs here rather than
// read by the encoder: the record both spool and stream carry is built in
// one place.
type OwnFigures struct {
	// CPUSeconds is the process' CPU time attributed to the interval.
	CPUSeconds float64
	// Runtime is the process' Go runtime sample (ycsbctl.trackruntime);
	// nil when the run does not track it.
	Runtime *run.RuntimeSample
	// LocalInserts is how many of the inserts this load generator owns
	// are acknowledged in order (0 when it does not count them).
	LocalInserts int64
}

// RecordFromUpdate encodes a measured (not warm-up) interval as the
// record a run's spool and an agent's stream carry: the engine's
// measurements and progress (RecordFromInterval, lag, final), the host's
// telemetry (u.Telemetry[0], the recording process' own), and own.
func RecordFromUpdate(agent int32, u *run.Update, own OwnFigures) (*pb.IntervalRecord, error) {
	rec, err := RecordFromInterval(agent, u.Interval)
	if err != nil {
		return nil, err
	}
	rec.LagNs = int64(u.Progress.Lag)
	rec.Final = u.Progress.Final
	rec.CpuSeconds = own.CPUSeconds
	rec.LocalInsertsAcknowledged = own.LocalInserts
	if own.Runtime != nil {
		rec.Runtime = runtimeToPB(*own.Runtime)
	}
	if len(u.Telemetry) > 0 {
		rec.Telemetry = telemetry.ToPB(u.Telemetry[0])
	}
	return rec, nil
}

// runtimeToPB is the wire form of a runtime sample.
func runtimeToPB(s run.RuntimeSample) *pb.RuntimeSample {
	return &pb.RuntimeSample{Goroutines: s.Goroutines, HeapInUseMb: s.HeapInUseMB, Gcs: s.GCs, GcPauseNs: int64(s.GCPause),
		TotalGcs: s.TotalGCs, TotalGcPauseNs: int64(s.TotalGCPause)}
}

package agent

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// measuredUpdate is an interval as the engine hands it over, with every
// part a record carries: two series, returns, lag, the final mark and the
// host's telemetry.
func measuredUpdate() *run.Update {
	iv := measurement.NewInterval(7, 1_700_000_000_000_000_000, 1_700_000_001_000_000_000)
	for i, s := range []measurement.Series{
		measurement.SeriesOf(measurement.Read, measurement.Service, false),
		measurement.SeriesOf(measurement.Update, measurement.Service, true),
	} {
		h := measurement.NewHistogram()
		for v := int64(1); v < 5000; v += int64(7 + i) {
			_ = h.RecordValue(v * 10)
		}
		iv.Hist[s] = h
	}
	iv.Returns[measurement.Read][adapters.OK] = 700
	iv.Returns[measurement.Update][adapters.Error] = 3
	iv.Ops = 703
	return &run.Update{Interval: iv, Progress: run.Progress{Lag: 1234567 * time.Nanosecond, Final: true},
		Telemetry: []*telemetry.Interval{{Samples: 1, Cores: 4, BusyMax: 55.5, MemTotal: 1 << 30, TCPRetransmits: 2}}}
}

// The record an agent sends for an interval is the shared encoding of
// that interval with the agent's own figures (its CPU since its previous
// record, its runtime sample, its acknowledged inserts), byte for byte.
func TestAgentRecordIsTheSharedEncoding(t *testing.T) {
	sp, _, err := specOf(&pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: timedRun}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := spec.Prepare(context.Background(), sp, clock.NewReal(), t.Logf, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	r := &heldRun{srv: &server{cfg: Config{Logf: t.Logf}}, index: 2, pending: map[int64]*pb.AgentMsg{}, prepared: p,
		runtime: &ycsbtext.RuntimeSampler{}}
	r.runtime.Begin()
	u := measuredUpdate()
	r.OnInterval(u)
	sent := r.pending[7].GetInterval()
	if sent == nil {
		t.Fatal("no record queued")
	}
	rt := sent.Runtime
	want, err := wire.RecordFromUpdate(2, u, wire.OwnFigures{CPUSeconds: sent.CpuSeconds, LocalInserts: p.Workload.LocalInsertsAcknowledged(),
		Runtime: &run.RuntimeSample{Goroutines: rt.Goroutines, HeapInUseMB: rt.HeapInUseMb, GCs: rt.Gcs, GCPause: time.Duration(rt.GcPauseNs),
			TotalGCs: rt.TotalGcs, TotalGCPause: time.Duration(rt.TotalGcPauseNs)}})
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, sent, want)
	if sent.CpuSeconds <= 0 || r.cpuLast <= 0 {
		t.Errorf("the CPU since the start was not counted: %v (last reading %v)", sent.CpuSeconds, r.cpuLast)
	}
}

func sameBytes(t *testing.T, got, want *pb.IntervalRecord) {
	t.Helper()
	det := proto.MarshalOptions{Deterministic: true}
	g, err := det.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := det.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) || len(g) < 100 {
		t.Errorf("the record differs from the shared encoding (%d bytes, want %d):\n got %v\nwant %v", len(g), len(w), got, want)
	}
}

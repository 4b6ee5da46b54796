package wire

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Every part of a record comes from one input: the interval's
// measurements, the engine's progress, the host's telemetry, and the
// recording process' own figures; a figure left out is left out of the
// record, so that a single host's record (no runtime, no inserts) and an
// agent's differ only where their inputs do.
func TestRecordFromUpdate(t *testing.T) {
	iv := measurement.NewInterval(3, 1_000, 2_000)
	h := measurement.NewHistogram()
	_ = h.RecordValue(250)
	iv.Hist[measurement.SeriesOf(measurement.Read, measurement.Service, false)] = h
	iv.Returns[measurement.Read][adapters.OK] = 1
	iv.Ops = 1
	tel := &telemetry.Interval{Samples: 1, Cores: 2, MemTotal: 1 << 20}
	rt := &run.RuntimeSample{Goroutines: 9, HeapInUseMB: 3, GCs: 1, GCPause: time.Millisecond, TotalGCs: 4, TotalGCPause: 5 * time.Millisecond}
	for _, c := range []struct {
		name string
		u    *run.Update
		own  OwnFigures
		set  func(*pb.IntervalRecord)
	}{
		{"bare", &run.Update{Interval: iv}, OwnFigures{}, func(*pb.IntervalRecord) {}},
		{"single host", &run.Update{Interval: iv, Progress: run.Progress{Lag: 7, Final: true}, Telemetry: []*telemetry.Interval{tel}},
			OwnFigures{CPUSeconds: 0.5}, func(r *pb.IntervalRecord) {
				r.LagNs, r.Final, r.CpuSeconds, r.Telemetry = 7, true, 0.5, telemetry.ToPB(tel)
			}},
		{"agent", &run.Update{Interval: iv, Progress: run.Progress{Lag: 9}, Telemetry: []*telemetry.Interval{tel}},
			OwnFigures{CPUSeconds: 0.25, Runtime: rt, LocalInserts: 42}, func(r *pb.IntervalRecord) {
				r.LagNs, r.CpuSeconds, r.Telemetry, r.LocalInsertsAcknowledged = 9, 0.25, telemetry.ToPB(tel), 42
				r.Runtime = &pb.RuntimeSample{Goroutines: 9, HeapInUseMb: 3, Gcs: 1, GcPauseNs: 1_000_000, TotalGcs: 4, TotalGcPauseNs: 5_000_000}
			}},
	} {
		want, err := RecordFromInterval(4, iv)
		if err != nil {
			t.Fatal(err)
		}
		c.set(want)
		got, err := RecordFromUpdate(4, c.u, c.own)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, want) {
			t.Errorf("%s: %v\nwant %v", c.name, got, want)
		}
	}
}

// TestRuntimeToPB: every figure of an agent's runtime sample reaches the
// wire, nanoseconds exact.
func TestRuntimeToPB(t *testing.T) {
	s := run.RuntimeSample{Goroutines: 41, HeapInUseMB: 512, GCs: 7, GCPause: 2345678 * time.Nanosecond, TotalGCs: 99, TotalGCPause: 3*time.Second + 5}
	b, err := proto.Marshal(&pb.IntervalRecord{Seq: 1, Runtime: runtimeToPB(s)})
	if err != nil {
		t.Fatal(err)
	}
	var back pb.IntervalRecord
	if err := proto.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want := &pb.RuntimeSample{Goroutines: 41, HeapInUseMb: 512, Gcs: 7, GcPauseNs: 2345678, TotalGcs: 99, TotalGcPauseNs: 3_000_000_005}
	if !proto.Equal(back.Runtime, want) {
		t.Errorf("on the wire: %v, want %v", back.Runtime, want)
	}
}

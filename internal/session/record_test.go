package session

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spool"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// The record a single host spools for an interval is the shared encoding
// of that interval with the single host's own figure, its CPU as its
// self view describes it, byte for byte: what the spool holds is what an
// agent of the same interval would send, less what only agents add.
func TestSpooledRecordIsTheSharedEncoding(t *testing.T) {
	dir := t.TempDir()
	rec := bundle.NewRecorder(dir, &bundle.Run{RunID: "r1"})
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
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
	u := &run.Update{Interval: iv, Progress: run.Progress{Lag: 1234567 * time.Nanosecond, Final: true},
		Agents:    []run.Agent{{CPUSeconds: 0.75}},
		Telemetry: []*telemetry.Interval{{Samples: 1, Cores: 4, BusyMax: 55.5, MemTotal: 1 << 30, TCPRetransmits: 2}}}
	l := &Local{rec: rec}
	if err := l.spool(u); err != nil {
		t.Fatal(err)
	}
	rd, err := spool.Open(spool.Path(dir, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rd.Close(); err != nil {
			t.Error(err)
		}
	})
	var got pb.IntervalRecord
	if ok, err := rd.Get(0, 7, &got); !ok || err != nil {
		t.Fatalf("the spool holds no record 7: %v", err)
	}
	want, err := wire.RecordFromUpdate(0, u, wire.OwnFigures{CPUSeconds: 0.75})
	if err != nil {
		t.Fatal(err)
	}
	det := proto.MarshalOptions{Deterministic: true}
	g, _ := det.Marshal(&got)
	w, _ := det.Marshal(want)
	if string(g) != string(w) || len(g) < 100 {
		t.Errorf("the spooled record differs from the shared encoding (%d bytes, want %d):\n got %v\nwant %v", len(g), len(w), &got, want)
	}
}

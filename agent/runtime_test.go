package agent

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/internal/run"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

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

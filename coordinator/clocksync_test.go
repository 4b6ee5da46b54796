package coordinator

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// fakeNet simulates an agent whose clock is `offset` ahead, reached over a
// link with random, asymmetric one-way delays, on one fake clock.
type fakeNet struct {
	clk    *clock.Fake
	offset time.Duration
	rnd    *rand.Rand
	// base one-way delay plus up to jitter of extra queueing per direction.
	base, jitter time.Duration
}

func (f *fakeNet) delay() time.Duration {
	return f.base + time.Duration(f.rnd.Int64N(int64(f.jitter)))
}

func (f *fakeNet) Ping(_ context.Context, in *pb.PingRequest, _ ...grpc.CallOption) (*pb.PingResponse, error) {
	f.clk.Advance(f.delay())
	recv := f.clk.Now().Add(f.offset).UnixNano()
	f.clk.Advance(20 * time.Microsecond) // agent processing
	send := f.clk.Now().Add(f.offset).UnixNano()
	f.clk.Advance(f.delay())
	return &pb.PingResponse{AgentReceiveUnixNs: recv, AgentSendUnixNs: send}, nil
}

func (f *fakeNet) Session(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[pb.CoordinatorMsg, pb.AgentMsg], error) {
	panic("unused")
}

func TestClockOffsetEstimate(t *testing.T) {
	for _, off := range []time.Duration{0, 250 * time.Millisecond, -3 * time.Second} {
		f := &fakeNet{clk: clock.NewFake(time.Unix(1_700_000_000, 0)), offset: off, rnd: rand.New(rand.NewPCG(7, uint64(off))),
			base: 200 * time.Microsecond, jitter: 5 * time.Millisecond}
		got, rtt, _, err := probeClock(context.Background(), f, f.clk, 8)
		if err != nil {
			t.Fatal(err)
		}
		// The error bound of the min-RTT sample is RTT/2; with 8 samples
		// of up to 5 ms jitter it is also far better than one sample's.
		if d := got - off; d > rtt/2 || d < -rtt/2 {
			t.Errorf("offset %v: estimated %v (rtt %v)", off, got, rtt)
		}
		if rtt < 400*time.Microsecond || rtt > 10400*time.Microsecond {
			t.Errorf("rtt %v outside the simulated range", rtt)
		}
	}
}

func TestEstimateOffsetPicksMinRTT(t *testing.T) {
	// Sample 0: symmetric 1 ms each way, offset exactly 50 ms.
	// Sample 1: 1 ms out, 30 ms back (queueing): naive offset is wrong by
	// 14.5 ms. The estimator must prefer sample 0.
	s := []PingSample{
		{Send: 0, AgentRecv: 51e6, AgentSend: 51e6, Recv: 2e6},
		{Send: 100e6, AgentRecv: 151e6, AgentSend: 151e6, Recv: 131e6},
	}
	off, rtt, err := EstimateOffset(s)
	if err != nil || off != 50*time.Millisecond || rtt != 2*time.Millisecond {
		t.Fatalf("got %v %v %v", off, rtt, err)
	}
	// Samples where a clock went backwards are ignored.
	if _, _, err := EstimateOffset([]PingSample{{Send: 10, Recv: 5}}); err == nil {
		t.Fatal("unusable sample accepted")
	}
}

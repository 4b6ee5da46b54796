package coordinator

import (
	"context"
	"errors"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// PingSample is one NTP-style exchange: Send and Recv on the
// coordinator's clock, AgentRecv and AgentSend on the agent's (Unix ns).
type PingSample struct {
	Send, AgentRecv, AgentSend, Recv int64
}

// RTT is the round trip minus the agent's processing time.
func (s PingSample) RTT() int64 { return (s.Recv - s.Send) - (s.AgentSend - s.AgentRecv) }

// Offset is the agent clock minus the coordinator clock, assuming the
// request and the reply took equally long. Its error is at most half the
// difference between the two one-way delays, so at most RTT/2.
func (s PingSample) Offset() int64 { return ((s.AgentRecv - s.Send) + (s.AgentSend - s.Recv)) / 2 }

// EstimateOffset picks the sample with the smallest round trip: queueing
// and scheduling delays only ever add to a one-way delay, so the fastest
// exchange is the most symmetric and its offset the most trustworthy.
func EstimateOffset(samples []PingSample) (offset, rtt time.Duration, err error) {
	best := -1
	for i, s := range samples {
		if s.Recv < s.Send || s.AgentSend < s.AgentRecv {
			continue // a clock stepped mid-exchange; ignore the sample
		}
		if best < 0 || s.RTT() < samples[best].RTT() {
			best = i
		}
	}
	if best < 0 {
		return 0, 0, errors.New("no usable clock samples")
	}
	return time.Duration(samples[best].Offset()), time.Duration(samples[best].RTT()), nil
}

// probeClock pings an agent n times and estimates its clock offset.
func probeClock(ctx context.Context, cli pb.AgentClient, clk clock.Clock, n int) (offset, rtt time.Duration, last *pb.PingResponse, err error) {
	samples := make([]PingSample, 0, n)
	for i := 0; i < n; i++ {
		pctx, cancel := context.WithTimeout(ctx, transport.CallTimeout)
		send := clk.Now().UnixNano()
		resp, perr := cli.Ping(pctx, &pb.PingRequest{CoordinatorSendUnixNs: send})
		recv := clk.Now().UnixNano()
		cancel()
		if perr != nil {
			return 0, 0, nil, perr
		}
		last = resp
		samples = append(samples, PingSample{Send: send, AgentRecv: resp.AgentReceiveUnixNs, AgentSend: resp.AgentSendUnixNs, Recv: recv})
	}
	offset, rtt, err = EstimateOffset(samples)
	return offset, rtt, last, err
}

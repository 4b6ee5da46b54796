package coordinator

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// simAgent speaks the agent protocol but, instead of running a workload,
// replays pre-recorded interval records as fast as a pace allows. It lets
// one process simulate a hundred agents to measure the coordinator.
type simAgent struct {
	pb.UnimplementedAgentServer
	idx       int
	templates []*pb.IntervalRecord
	intervals int
	pace      time.Duration
}

func (s *simAgent) Ping(_ context.Context, _ *pb.PingRequest) (*pb.PingResponse, error) {
	now := time.Now().UnixNano()
	return &pb.PingResponse{AgentReceiveUnixNs: now, AgentSendUnixNs: now, Version: version.Version, Protocol: version.Protocol, Hostname: "sim"}, nil
}

func (s *simAgent) Session(st pb.Agent_SessionServer) error {
	if _, err := st.Recv(); err != nil {
		return err
	}
	if err := st.Send(&pb.AgentMsg{Msg: &pb.AgentMsg_Hello{Hello: &pb.HelloReply{Version: version.Version, Protocol: version.Protocol, State: pb.RunState_RUN_STATE_IDLE}}}); err != nil {
		return err
	}
	var sendMu sync.Mutex
	sendMsg := func(m *pb.AgentMsg) error { sendMu.Lock(); defer sendMu.Unlock(); return st.Send(m) }
	for {
		m, err := st.Recv()
		if err != nil {
			return nil
		}
		switch x := m.Msg.(type) {
		case *pb.CoordinatorMsg_Prepare:
			_ = sendMsg(&pb.AgentMsg{Msg: &pb.AgentMsg_Prepared{Prepared: &pb.Prepared{AgentIndex: int32(s.idx), Threads: 1}}})
		case *pb.CoordinatorMsg_Start:
			go s.stream(x.Start.StartUnixNs, sendMsg)
		case *pb.CoordinatorMsg_Release:
			return nil
		}
	}
}

func (s *simAgent) stream(startNs int64, send func(*pb.AgentMsg) error) {
	time.Sleep(time.Until(time.Unix(0, startNs)))
	_ = send(&pb.AgentMsg{Msg: &pb.AgentMsg_Started{Started: &pb.Started{AgentIndex: int32(s.idx), StartedUnixNs: time.Now().UnixNano()}}})
	var ops int64
	const ivNs = int64(10 * time.Second)
	for seq := 1; seq <= s.intervals; seq++ {
		rec := proto.Clone(s.templates[(s.idx+seq)%len(s.templates)]).(*pb.IntervalRecord)
		rec.AgentIndex, rec.Seq = int32(s.idx), int64(seq)
		rec.StartUnixNs, rec.EndUnixNs = startNs+int64(seq-1)*ivNs, startNs+int64(seq)*ivNs
		rec.Final = seq == s.intervals
		ops += rec.Operations
		if send(&pb.AgentMsg{Msg: &pb.AgentMsg_Interval{Interval: rec}}) != nil {
			return
		}
		time.Sleep(s.pace)
	}
	_ = send(&pb.AgentMsg{Msg: &pb.AgentMsg_Final{Final: &pb.Final{AgentIndex: int32(s.idx), StartUnixNs: startNs,
		EndUnixNs: startNs + int64(s.intervals)*ivNs, RuntimeNs: int64(s.intervals) * ivNs, Operations: ops, Intervals: int64(s.intervals)}}})
}

type scaleResult struct {
	wall           time.Duration
	mergePerIv     time.Duration // coordinator decode+merge+seal per interval (all agents)
	bytesPerRecord float64
	heapAfter10    uint64
	heapAfterAll   uint64
	ops, want      int64
	code           int
	err            error
}

// runScale starts n simulated agents that each stream `intervals`
// recorded intervals of opsPerInterval operations over six series.
func runScale(tb testing.TB, n, intervals, opsPerInterval int, pace time.Duration) scaleResult {
	tb.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	templates := make([]*pb.IntervalRecord, 8)
	var bytes, want int64
	for i := range templates {
		templates[i] = mustRecord(tb, 0, sixOpInterval(r, 1, opsPerInterval))
		bytes += int64(proto.Size(templates[i]))
	}
	var addrs []string
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		gs := grpc.NewServer(grpc.MaxRecvMsgSize(transport.MaxMessageBytes))
		sa := &simAgent{idx: i, templates: templates, intervals: intervals, pace: pace}
		for seq := 1; seq <= intervals; seq++ {
			want += templates[(i+seq)%len(templates)].Operations
		}
		pb.RegisterAgentServer(gs, sa)
		go func() { _ = gs.Serve(ln) }()
		tb.Cleanup(gs.Stop)
		addrs = append(addrs, ln.Addr().String())
	}
	res := scaleResult{bytesPerRecord: float64(bytes) / float64(len(templates)), want: want}
	var ms runtime.MemStats
	obs := run.SinkFunc(func(u *run.Update) {
		if u.Interval.Seq == 10 || u.Interval.Seq == int64(intervals) {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if u.Interval.Seq == 10 {
				res.heapAfter10 = ms.HeapInuse
			} else {
				res.heapAfterAll = ms.HeapInuse
			}
		}
	})
	props := properties.FromMap(map[string]string{"recordcount": "1000000", "operationcount": "100000000", "status.interval": "10"})
	dir := tb.TempDir()
	t0 := time.Now()
	code, err := runSession(context.Background(), runConfig{DB: "basic", Phase: run.Run, Props: props, Agents: addrs,
		Stdout: io.Discard, Stderr: io.Discard, Observers: []run.Sink{obs}, ResultsDir: dir})
	res.wall = time.Since(t0)
	res.code, res.err = int(code), err
	if err == nil {
		rep := readReport(tb, dir)
		res.ops = rep.Summary.Operations
		res.mergePerIv = time.Duration(rep.MergeSeconds / float64(intervals) * 1e9)
	}
	return res
}

func TestScaleSmall(t *testing.T) {
	res := runScale(t, 10, 12, 2000, 5*time.Millisecond)
	if res.code != 0 || res.err != nil {
		t.Fatalf("exit %d: %v", res.code, res.err)
	}
	if res.ops != res.want {
		t.Fatalf("merged %d operations, agents sent %d", res.ops, res.want)
	}
	t.Logf("10 agents x 12 intervals: %s wall, merge %s per interval, %.0f bytes per agent-interval",
		res.wall.Round(time.Millisecond), res.mergePerIv, res.bytesPerRecord)
}

// BenchmarkScale100Agents: 100 simulated agents, 100 intervals each, of
// 20 000 operations over six series; reports the coordinator's merge cost
// per interval, heap in use after 10 and after 100 intervals, and the
// wire size of one agent's interval.
func BenchmarkScale100Agents(b *testing.B) {
	for i := 0; i < b.N; i++ {
		res := runScale(b, 100, 100, 20000, 20*time.Millisecond)
		if res.code != 0 {
			b.Fatalf("exit %d: %v", res.code, res.err)
		}
		if res.ops != res.want {
			b.Fatalf("merged %d operations, agents sent %d", res.ops, res.want)
		}
		b.ReportMetric(float64(res.wall.Milliseconds()), "wall-ms")
		b.ReportMetric(float64(res.mergePerIv.Microseconds())/1000, "merge-ms/interval")
		b.ReportMetric(float64(res.heapAfter10)/(1<<20), "heapMB@10")
		b.ReportMetric(float64(res.heapAfterAll)/(1<<20), "heapMB@100")
		b.ReportMetric(res.bytesPerRecord, "B/agent-interval")
		if os.Getenv("SCALE_VERBOSE") != "" {
			b.Logf("%+v", res)
		}
	}
}

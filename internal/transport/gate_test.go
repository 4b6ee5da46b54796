package transport

import (
	"context"
	"io"
	"math"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

type pingServer struct{ pb.UnimplementedAgentServer }

func (pingServer) Ping(context.Context, *pb.PingRequest) (*pb.PingResponse, error) {
	return &pb.PingResponse{Version: "t", Protocol: 1}, nil
}

// serve starts a real gRPC server with the agent's options and gate.
func serve(t *testing.T, g *Guard) string {
	t.Helper()
	opts, err := ServerOptions(nil, g)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	pb.RegisterAgentServer(s, pingServer{})
	go func() { _ = s.Serve(g.Listen(raw)) }()
	t.Cleanup(s.Stop)
	return raw.Addr().String()
}

// closedWithin reports whether the peer closes c within d.
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	ne, ok := err.(net.Error)
	return !(ok && ne.Timeout())
}

func TestGateClosesUnauthenticatedConnections(t *testing.T) {
	self := Identity{Version: "t", Protocol: 1}
	g := &Guard{Token: "tok-0123456789abcdef", Self: self, AuthWindow: 300 * time.Millisecond, MaxPending: 4}
	addr := serve(t, g)

	// Beyond MaxPending, the oldest silent connections go first.
	var conns []net.Conn
	for range 6 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		conns = append(conns, c)
		time.Sleep(20 * time.Millisecond) // keep the accept order
	}
	for i := 0; i < 2; i++ {
		if !closedWithin(conns[i], 150*time.Millisecond) {
			t.Errorf("oldest connection %d not evicted", i)
		}
	}
	for i := 2; i < 6; i++ {
		if !closedWithin(conns[i], 2*time.Second) {
			t.Errorf("silent connection %d outlived the auth window", i)
		}
	}

	// An authenticated connection stays past the window.
	cc, err := Dial(addr, nil, "tok-0123456789abcdef", self)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cc.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := pb.NewAgentClient(cc).Ping(ctx, &pb.PingRequest{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if _, err := pb.NewAgentClient(cc).Ping(ctx, &pb.PingRequest{}, grpc.WaitForReady(false)); err != nil {
		t.Fatalf("authenticated connection closed: %v", err)
	}
	g.gate.mu.Lock()
	pending := len(g.gate.pending)
	g.gate.mu.Unlock()
	if pending != 0 {
		t.Errorf("%d connections still pending", pending)
	}

	// A wrong token is refused from the headers, and does not
	// authenticate the connection.
	bad, err := Dial(addr, nil, "nope", self)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bad.Close() }()
	_, err = pb.NewAgentClient(bad).Ping(ctx, &pb.PingRequest{})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong token: %v", err)
	}
	g.gate.mu.Lock()
	pending = len(g.gate.pending)
	g.gate.mu.Unlock()
	if pending != 1 {
		t.Errorf("the refused connection should still be pending, %d are", pending)
	}
}

// TestKeepaliveCompatible: the coordinator's keepalive must never trip the
// agent's ping enforcement, or long runs would be cut with too_many_pings.
func TestKeepaliveCompatible(t *testing.T) {
	if clientPingInterval < minClientPingInterval {
		t.Fatalf("client pings every %s, the agent tolerates at most one per %s", clientPingInterval, minClientPingInterval)
	}
	if clientPingInterval < 10*time.Second {
		t.Fatalf("gRPC raises client keepalive below 10 s to 10 s; say so with %s", clientPingInterval)
	}
	if idleTimeout < time.Minute || serverPingAfter < 10*time.Second {
		t.Fatalf("idle %s / ping after %s would disturb an honest coordinator between phases", idleTimeout, serverPingAfter)
	}
}

// TestMessageLimitsFitTheLargestRecords: the coordinator's receive limit
// must hold the largest interval record an agent may send (every series
// with a histogram at the codec's cap), or a large run would break.
func TestMessageLimitsFitTheLargestRecords(t *testing.T) {
	hist := make([]byte, wire.MaxHistogramBytes)
	rec := &pb.IntervalRecord{AgentIndex: math.MaxInt32, Seq: math.MaxInt64, Final: true}
	for s := measurement.Series(0); s < measurement.NumSeries; s++ {
		rec.Histograms = append(rec.Histograms, &pb.SeriesHistogram{Series: s.Name(), Hdr: hist})
	}
	for op := 0; op < 64; op++ {
		rec.Returns = append(rec.Returns, &pb.ReturnCount{Op: "READ-MODIFY-WRITE", Status: "UNEXPECTED_STATE", Count: math.MaxInt64})
	}
	msg := &pb.AgentMsg{Msg: &pb.AgentMsg_Interval{Interval: rec}}
	if n := proto.Size(msg); n > MaxMessageBytes {
		t.Fatalf("largest interval record is %d bytes, the limit %d", n, MaxMessageBytes)
	}
}

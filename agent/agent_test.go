package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ycsbctl/ycsbctl/internal/testutil/slowclose"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"

	_ "github.com/ycsbctl/ycsbctl/adapters/basic"
)

func TestListenAddr(t *testing.T) {
	tls := &transport.TLSFiles{Cert: "c", Key: "k", CA: "a"}
	cases := []struct {
		cfg      Config
		want     string
		warn, ok bool
	}{
		{Config{}, "127.0.0.1:7420", false, true},
		{Config{Listen: "127.0.0.1:9000"}, "127.0.0.1:9000", false, true},
		{Config{Listen: "localhost"}, "localhost:7420", false, true},
		{Config{Listen: "[::1]:7000"}, "[::1]:7000", false, true},
		{Config{Listen: "0.0.0.0:7420"}, "", false, false},
		{Config{Listen: ":7420"}, "", false, false},
		{Config{Listen: "10.1.2.3"}, "", false, false},
		{Config{Listen: ":7420", AllowNonLoopback: true}, ":7420", true, true},
		{Config{TLS: tls}, ":7420", false, true},
		{Config{Listen: "10.1.2.3", TLS: tls}, "10.1.2.3:7420", false, true},
	}
	for _, c := range cases {
		got, warn, err := ListenAddr(c.cfg)
		if (err == nil) != c.ok || got != c.want || (warn != "") != c.warn {
			t.Errorf("%+v: got %q warn %q err %v", c.cfg.Listen, got, warn, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--tls-cert") {
			t.Errorf("refusal does not say how to fix it: %v", err)
		}
	}
	// A name that resolves to nothing is a mistyped address, said as
	// such whatever the TLS and loopback settings (.invalid never
	// resolves).
	for _, cfg := range []Config{{Listen: "nonsense.invalid"}, {Listen: "nonsense.invalid:7420", AllowNonLoopback: true}, {Listen: "nonsense.invalid", TLS: tls}} {
		_, _, err := ListenAddr(cfg)
		if err == nil || !strings.Contains(err.Error(), `host "nonsense.invalid" does not resolve`) || strings.Contains(err.Error(), "loopback") {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

func serve(t *testing.T, cfg Config) string {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	ready := make(chan string, 1)
	cfg.Ready = func(a string) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	})
	select {
	case a := <-ready:
		return a
	case err := <-done:
		t.Fatal(err)
	}
	return ""
}

type client struct {
	t   *testing.T
	cli pb.AgentClient
}

func dial(t *testing.T, addr string) *client {
	cc, err := transport.Dial(addr, nil, "", transport.Identity{Version: version.Version, Protocol: version.Protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cc.Close(); err != nil {
			t.Errorf("closing the client connection: %v", err)
		}
	})
	return &client{t: t, cli: pb.NewAgentClient(cc)}
}

func (c *client) session(ctx context.Context, run string, resume bool) (pb.Agent_SessionClient, *pb.HelloReply) {
	c.t.Helper()
	st, err := c.cli.Session(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	send(c.t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Hello{Hello: &pb.Hello{Version: version.Version, Protocol: version.Protocol, RunId: run, Coordinator: "test", Resume: resume}}})
	m, err := st.Recv()
	if err != nil {
		c.t.Fatal(err)
	}
	return st, m.GetHello()
}

func (c *client) busy() string {
	r, err := c.cli.Ping(context.Background(), &pb.PingRequest{})
	if err != nil {
		c.t.Fatal(err)
	}
	return r.BusyRun
}

func send(t *testing.T, st pb.Agent_SessionClient, m *pb.CoordinatorMsg) {
	t.Helper()
	if err := st.Send(m); err != nil {
		t.Fatal(err)
	}
}

// prepare sends p and waits until the agent has prepared it.
func prepare(t *testing.T, st pb.Agent_SessionClient, p *pb.Prepare) {
	t.Helper()
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Prepare{Prepare: p}})
	for {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if f := m.GetFailed(); f != nil {
			t.Fatalf("prepare failed: %s", f.Reason)
		}
		if m.GetPrepared() != nil {
			return
		}
	}
}

func prepareAndStart(t *testing.T, st pb.Agent_SessionClient, props map[string]string) {
	t.Helper()
	prepare(t, st, &pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: props, AgentCount: 1})
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Start{Start: &pb.Start{StartUnixNs: time.Now().Add(50 * time.Millisecond).UnixNano()}}})
}

var timedRun = map[string]string{
	"basicdb.verbose": "false", "recordcount": "100", "operationcount": "0", "maxexecutiontime": "30",
	"target": "2000", "status.interval": "0.05",
}

// A broken stream must not lose intervals: after a resumed Hello, the
// agent resends, in order, every interval not acknowledged.
func TestResumeResendsUnacknowledged(t *testing.T) {
	c := dial(t, serve(t, Config{Lease: 5 * time.Second}))
	ctx1, cut := context.WithCancel(context.Background())
	st, hello := c.session(ctx1, "run-a", false)
	if hello.State != pb.RunState_RUN_STATE_IDLE {
		t.Fatalf("state %v", hello.State)
	}
	prepareAndStart(t, st, timedRun)
	var seen []int64
	for len(seen) < 3 {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if iv := m.GetInterval(); iv != nil {
			seen = append(seen, iv.Seq)
		}
	}
	// Acknowledge the first only, then break the stream.
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Ack{Ack: &pb.Ack{Seqs: []int64{seen[0]}}}})
	time.Sleep(20 * time.Millisecond)
	cut()

	// A second coordinator is refused while the run lives on.
	st2, err := c.cli.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	send(t, st2, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Hello{Hello: &pb.Hello{Version: version.Version, Protocol: version.Protocol, RunId: "run-b", Coordinator: "intruder"}}})
	if _, err := st2.Recv(); err == nil || !strings.Contains(err.Error(), "busy: running run run-a for test") {
		t.Fatalf("second coordinator: %v", err)
	}

	time.Sleep(150 * time.Millisecond) // intervals pile up meanwhile
	ctx2, stop := context.WithCancel(context.Background())
	defer stop()
	st, hello = c.session(ctx2, "run-a", true)
	if hello.State != pb.RunState_RUN_STATE_RUNNING {
		t.Fatalf("resumed state %v", hello.State)
	}
	var resent []int64
	stopped := false
	var final *pb.Final
	for final == nil {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if iv := m.GetInterval(); iv != nil {
			resent = append(resent, iv.Seq)
			send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Ack{Ack: &pb.Ack{Seqs: []int64{iv.Seq}}}})
			if len(resent) >= 6 && !stopped {
				stopped = true
				send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Stop{Stop: &pb.Stop{Reason: "enough"}}})
			}
		}
		final = m.GetFinal()
	}
	// Everything not acknowledged arrives after the resume, in order,
	// with no gap: seq 2 and 3 (seen before the cut, never acknowledged)
	// again, then the rest. Seq 1 was acknowledged; under load the ack
	// may race the cut, so it may or may not be resent.
	if len(resent) == 0 || resent[0] > 2 {
		t.Fatalf("resent seqs %v: unacknowledged seq 2 missing", resent)
	}
	for i, s := range resent {
		if s != resent[0]+int64(i) {
			t.Fatalf("resent seqs %v: not consecutive", resent)
		}
	}
	if last := resent[len(resent)-1]; last != final.Intervals {
		t.Fatalf("last interval %d, final says %d", last, final.Intervals)
	}
	if final.Stopped != "enough" {
		t.Errorf("stopped %q", final.Stopped)
	}
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Release{Release: &pb.Release{}}})
	deadline := time.Now().Add(2 * time.Second)
	for c.busy() != "" {
		if time.Now().After(deadline) {
			t.Fatal("still busy after release")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Without word from its coordinator for the lease, the agent stops the
// load by itself and becomes idle.
func TestLeaseExpiryStopsLoad(t *testing.T) {
	// The lease must outlast the prepare, during which this test (unlike
	// a coordinator) sends nothing: that takes a few ms normally but up
	// to ~0.4 s under the race detector on a loaded 2-core machine.
	const lease = 2 * time.Second
	c := dial(t, serve(t, Config{Lease: lease}))
	ctx, cut := context.WithCancel(context.Background())
	st, _ := c.session(ctx, "run-l", false)
	prepareAndStart(t, st, timedRun)
	for {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetInterval() != nil {
			break
		}
	}
	cut()
	cutAt := time.Now()
	if c.busy() != "run-l" {
		t.Fatal("the run must survive a broken stream within its lease")
	}
	for c.busy() != "" {
		if time.Since(cutAt) > lease+time.Second {
			t.Fatal("load still running past the lease")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d := time.Since(cutAt); d < lease/2 {
		t.Fatalf("stopped after %s, before the lease", d)
	}
	// And a resume afterwards is told the run is gone.
	st, err := c.cli.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Hello{Hello: &pb.Hello{Version: version.Version, Protocol: version.Protocol, RunId: "run-l", Resume: true}}})
	if _, err := st.Recv(); err == nil || !strings.Contains(err.Error(), "no run run-l") {
		t.Fatalf("resume after expiry: %v", err)
	}
}

// A released run that is still closing its database is reported as
// ending; a new Hello meanwhile waits for it and is then accepted, and a
// resume of the ending run is told it is gone rather than re-attached.
func TestHelloWaitsForEndingRun(t *testing.T) {
	c := dial(t, serve(t, Config{Lease: 5 * time.Second}))
	st, _ := c.session(context.Background(), "run-a", false)
	prepare(t, st, &pb.Prepare{Db: slowclose.Name, Phase: pb.Phase_PHASE_LOAD,
		Properties: map[string]string{slowclose.PropCloseMs: "800", "recordcount": "10"}, AgentCount: 1})
	p, err := c.cli.Ping(context.Background(), &pb.PingRequest{})
	if err != nil || p.BusyRun != "run-a" || p.BusyEnding || p.LeaseNs != int64(5*time.Second) {
		t.Fatalf("held run: %+v %v", p, err)
	}
	send(t, st, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Release{Release: &pb.Release{}}})
	for p.BusyRun == "run-a" && !p.BusyEnding {
		if p, err = c.cli.Ping(context.Background(), &pb.PingRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if !p.BusyEnding {
		t.Fatalf("the released run was never reported ending: %+v", p)
	}

	// Resume of the ending run: gone.
	rs, err := c.cli.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	send(t, rs, &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Hello{Hello: &pb.Hello{Version: version.Version, Protocol: version.Protocol, RunId: "run-a", Resume: true}}})
	if _, err := rs.Recv(); status.Code(err) != codes.NotFound {
		t.Fatalf("resume of an ending run: %v", err)
	}
	// A new run: accepted once the old one is freed, not refused.
	start := time.Now()
	_, hello := c.session(context.Background(), "run-b", false)
	if hello.State != pb.RunState_RUN_STATE_IDLE || c.busy() != "run-b" {
		t.Fatalf("new run after an ending one: state %v, busy %q", hello.State, c.busy())
	}
	if d := time.Since(start); d > endingWait {
		t.Fatalf("the new run waited %s, more than %s", d, endingWait)
	}
}

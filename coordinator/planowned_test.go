package coordinator

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/version"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// rewritingAgent answers Ping as an agent whose own properties rewrite the
// plan would, had it not refused them at start-up (another build, or a
// path around the check): the coordinator must refuse the run itself.
type rewritingAgent struct {
	pb.UnimplementedAgentServer
	props    map[string]string
	sessions int
}

func (f *rewritingAgent) Ping(context.Context, *pb.PingRequest) (*pb.PingResponse, error) {
	return &pb.PingResponse{Version: version.Version, Protocol: version.Protocol, Hostname: "rewriter", AgentProperties: f.props}, nil
}

func (f *rewritingAgent) Session(grpc.BidiStreamingServer[pb.CoordinatorMsg, pb.AgentMsg]) error {
	f.sessions++
	return nil
}

func serveFake(t *testing.T, srv pb.AgentServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	pb.RegisterAgentServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return lis.Addr().String()
}

// An agent that reports plan-owned properties of its own is refused
// before any session, naming the agent and the property, as a usage
// error; its per-host properties are not refused, and run.json records
// them per agent.
func TestCoordinatorRefusesPlanRewritingAgent(t *testing.T) {
	good := testAgent(t, agent.Config{Properties: map[string]string{"basicdb.simulatedelay": "0", "mongodb.url": "mongodb://u:secret@db:27017/ycsb"}})
	fake := &rewritingAgent{props: map[string]string{"operationcount": "50", "hosts": "db1", "target": "50"}}
	bad := serveFake(t, fake)
	r := runCoord(t, runConfig{DB: "basic", Phase: run.Run, Agents: []string{good, bad}, Props: properties.FromMap(baseProps(nil))})
	if r.code != exitcode.InvalidConfig || r.err == nil {
		t.Fatalf("got %v %v, want exit 2", r.code, r.err)
	}
	for _, want := range []string{"agent 1 (" + bad + "): its own properties (agent -p) set properties the coordinator's plan owns",
		"operationcount (the run's operation budget is split among the agents)", "target (the run's target rate is split among the agents)"} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("refusal %q does not say %q", r.err, want)
		}
	}
	if strings.Contains(r.err.Error(), "hosts (") {
		t.Errorf("a per-host property was refused: %v", r.err)
	}
	if fake.sessions != 0 {
		t.Errorf("the refused agent got %d sessions", fake.sessions)
	}

	// The same properties an agent may set are recorded, redacted.
	ok := runCoord(t, runConfig{DB: "basic", Phase: run.Load, Agents: []string{good}, Props: properties.FromMap(baseProps(nil))})
	if ok.code != exitcode.OK {
		t.Fatalf("load: %v %v", ok.code, ok.err)
	}
	got := readReport(t, ok.dir).Agents[0].Properties
	if got["basicdb.simulatedelay"] != "0" || strings.Contains(got["mongodb.url"], "secret") || !strings.Contains(got["mongodb.url"], "db:27017") {
		t.Errorf("run.json agent properties %v", got)
	}
}

// The agent itself refuses plan-owned properties before it listens.
func TestAgentRefusesPlanOwnedProperties(t *testing.T) {
	err := agent.Serve(context.Background(), agent.Config{Listen: "127.0.0.1:0", Properties: map[string]string{"insertstart": "0", "embedded.dir": "/tmp/x"}})
	if exitcode.Of(err) != exitcode.InvalidConfig || err == nil || !strings.Contains(err.Error(), "agent -p set property the coordinator's plan owns: insertstart") ||
		strings.Contains(err.Error(), "embedded.dir") {
		t.Fatalf("got %v (exit %d)", err, exitcode.Of(err))
	}
}

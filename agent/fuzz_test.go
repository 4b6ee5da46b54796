package agent

import (
	"testing"

	"google.golang.org/protobuf/proto"

	_ "github.com/ycsbctl/ycsbctl/adapters/all"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/testutil/fuzzbound"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// FuzzPrepare decodes any bytes as a coordinator's message and, when it
// is a Prepare, validates it as the agent does before opening its
// database (specOf). Invariants: it never panics nor takes long; an
// accepted Prepare names a known adapter and a phase, and its run has
// threads and an operation budget the engine can run (a count, or a time
// limit for an unbounded one); the agent's own properties win over the
// coordinator's.
func FuzzPrepare(f *testing.F) {
	for _, m := range []*pb.Prepare{
		{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: map[string]string{"operationcount": "100", "recordcount": "10", "threadcount": "2"}, AgentIndex: 1, AgentCount: 2, IntervalNs: 1e9},
		{Db: "basic", Phase: pb.Phase_PHASE_LOAD, Properties: map[string]string{"recordcount": "10", "insertstart": "5", "insertcount": "5"}},
		{Db: "cassandra", Phase: pb.Phase_PHASE_RUN, Properties: map[string]string{"operationcount": "0", "maxexecutiontime": "5", "hosts": "127.0.0.1"}},
		{Db: "nosuch", Phase: 7},
	} {
		b, _ := proto.Marshal(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Prepare{Prepare: m}})
		f.Add(b, "")
	}
	// Every built-in workload as a coordinator sends it.
	for _, w := range workloads.List() {
		p := properties.New()
		if _, err := p.LoadText([]byte(w.Text)); err != nil {
			f.Fatal(err)
		}
		b, _ := proto.Marshal(&pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Prepare{Prepare: &pb.Prepare{Db: "basic", Phase: pb.Phase_PHASE_RUN, Properties: p.Map()}}})
		f.Add(b, "threadcount")
	}
	f.Fuzz(func(t *testing.T, b []byte, ownKey string) {
		if len(b) > 64<<10 || len(ownKey) > 64 {
			return
		}
		defer fuzzbound.Start(b)()
		var msg pb.CoordinatorMsg
		if proto.Unmarshal(b, &msg) != nil {
			return
		}
		m := msg.GetPrepare()
		if m == nil {
			return
		}
		var own map[string]string
		if ownKey != "" {
			own = map[string]string{ownKey: "3"}
		}
		sp, phase, err := specOf(m, own)
		if err != nil {
			return
		}
		if sp.DB != m.Db || sp.Adapter.Name == "" || phase != sp.Phase {
			t.Fatalf("accepted %q as adapter %q, phase %v/%v", m.Db, sp.Adapter.Name, phase, sp.Phase)
		}
		if sp.Threads < 1 || sp.OpCount < 0 || (sp.OpCount == 0 && sp.MaxExecution <= 0) {
			t.Fatalf("accepted a run the engine cannot run: %d threads, %d operations, limit %s", sp.Threads, sp.OpCount, sp.MaxExecution)
		}
		if v, ok := sp.Props.Lookup(ownKey); ownKey != "" && (!ok || v != "3") {
			t.Fatalf("the agent's own %s=3 lost to the coordinator's %q", ownKey, v)
		}
	})
}

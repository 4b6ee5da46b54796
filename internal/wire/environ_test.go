package wire

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ycsbctl/ycsbctl/internal/environ"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

func TestEnvironmentRoundTrip(t *testing.T) {
	h := environ.Host{Hostname: "h1", OS: "linux", Arch: "amd64", Cores: 8, CPUModel: "EPYC", MemoryBytes: 1 << 34,
		Kernel: "6.1", ClockSource: "tsc", FDLimit: 65536, Errors: []string{"x"}}
	got := HostFromProto(HostToProto(h), "h1:7420")
	h.Address = "h1:7420"
	if !reflect.DeepEqual(*got, h) {
		t.Errorf("host\n got %+v\nwant %+v", *got, h)
	}
	d := environ.Database{Product: "Apache Cassandra", Version: "5.0.9",
		Nodes:      []environ.Node{{Address: "a:9042", Role: "node", Status: "UP NORMAL", DataCenter: "dc1", Rack: "r1", Version: "5.0.9", Tokens: []string{"-1", "2"}, Detail: "x"}},
		Partitions: []environ.Partition{{Name: "t,,1.", Start: "", End: "user5", Node: "rs:16020"}},
		Schema:     []environ.Setting{{Name: "table t compaction", Value: "{}"}}, Error: "partial"}
	back := DatabaseFromProto(DatabaseToProto(d), "cassandra", "a:7420")
	d.Adapter, d.DescribedBy = "cassandra", "a:7420"
	if !reflect.DeepEqual(*back, d) {
		t.Errorf("database\n got %+v\nwant %+v", *back, d)
	}
	if HostFromProto(nil, "x") != nil || DatabaseFromProto(nil, "x", "y") != nil {
		t.Error("nothing sent must read as nothing")
	}
}

// An agent is not trusted to keep run.json small.
func TestEnvironmentBounds(t *testing.T) {
	m := &pb.DatabaseInfo{Product: strings.Repeat("p", 1<<20)}
	for range maxEnvItems + 10 {
		m.Nodes = append(m.Nodes, &pb.DatabaseNode{Address: "a", Tokens: make([]string, maxEnvItems+10)})
	}
	d := DatabaseFromProto(m, "x", "y")
	if len(d.Product) > maxEnvString+10 || len(d.Nodes) != maxEnvItems || len(d.Nodes[0].Tokens) != maxEnvItems {
		t.Errorf("bounds not applied: product %d, nodes %d, tokens %d", len(d.Product), len(d.Nodes), len(d.Nodes[0].Tokens))
	}
}

package wire

import (
	"github.com/ycsbctl/ycsbctl/internal/environ"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Bounds on an agent's environment description: it is only recorded, but
// an agent is not trusted to keep a run.json small.
const (
	maxEnvString = 4 << 10
	maxEnvItems  = 4096
)

// HostToProto encodes a host description for HelloReply.
func HostToProto(h environ.Host) *pb.HostInfo {
	return &pb.HostInfo{Hostname: h.Hostname, Os: h.OS, Arch: h.Arch, Cores: int32(h.Cores), CpuModel: h.CPUModel,
		MemoryBytes: h.MemoryBytes, Kernel: h.Kernel, ClockSource: h.ClockSource, FdLimit: h.FDLimit, Errors: h.Errors}
}

// HostFromProto decodes an agent's host description (nil: none sent).
func HostFromProto(m *pb.HostInfo, address string) *environ.Host {
	if m == nil {
		return nil
	}
	return &environ.Host{Address: address, Hostname: clip(m.Hostname), OS: clip(m.Os), Arch: clip(m.Arch), Cores: int(m.Cores),
		CPUModel: clip(m.CpuModel), MemoryBytes: m.MemoryBytes, Kernel: clip(m.Kernel), ClockSource: clip(m.ClockSource),
		FDLimit: m.FdLimit, Errors: clipAll(m.Errors)}
}

// DatabaseToProto encodes a database description for Prepared.
func DatabaseToProto(d environ.Database) *pb.DatabaseInfo {
	m := &pb.DatabaseInfo{Product: d.Product, Version: d.Version, Error: d.Error}
	for _, n := range d.Nodes {
		m.Nodes = append(m.Nodes, &pb.DatabaseNode{Address: n.Address, Role: n.Role, Status: n.Status, Datacenter: n.DataCenter,
			Rack: n.Rack, Version: n.Version, Tokens: n.Tokens, Detail: n.Detail})
	}
	for _, p := range d.Partitions {
		m.Partitions = append(m.Partitions, &pb.DatabasePartition{Name: p.Name, Start: p.Start, End: p.End, Node: p.Node})
	}
	for _, s := range d.Schema {
		m.Schema = append(m.Schema, &pb.DatabaseSetting{Name: s.Name, Value: s.Value})
	}
	return m
}

// DatabaseFromProto decodes an agent's database description (nil: none
// sent); adapter and describedBy say which adapter and which agent.
func DatabaseFromProto(m *pb.DatabaseInfo, adapter, describedBy string) *environ.Database {
	if m == nil {
		return nil
	}
	d := &environ.Database{Adapter: adapter, Product: clip(m.Product), Version: clip(m.Version), Error: clip(m.Error), DescribedBy: describedBy}
	for i, n := range m.Nodes {
		if i == maxEnvItems {
			break
		}
		d.Nodes = append(d.Nodes, environ.Node{Address: clip(n.Address), Role: clip(n.Role), Status: clip(n.Status),
			DataCenter: clip(n.Datacenter), Rack: clip(n.Rack), Version: clip(n.Version), Tokens: clipAll(n.Tokens), Detail: clip(n.Detail)})
	}
	for i, p := range m.Partitions {
		if i == maxEnvItems {
			break
		}
		d.Partitions = append(d.Partitions, environ.Partition{Name: clip(p.Name), Start: clip(p.Start), End: clip(p.End), Node: clip(p.Node)})
	}
	for i, s := range m.Schema {
		if i == maxEnvItems {
			break
		}
		d.Schema = append(d.Schema, environ.Setting{Name: clip(s.Name), Value: clip(s.Value)})
	}
	return d
}

func clip(s string) string {
	if len(s) > maxEnvString {
		return s[:maxEnvString] + "…"
	}
	return s
}

func clipAll(ss []string) []string {
	if len(ss) > maxEnvItems {
		ss = ss[:maxEnvItems]
	}
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, clip(s))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

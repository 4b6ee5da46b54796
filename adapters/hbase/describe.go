package hbase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"github.com/tsuna/gohbase/region"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/environ"
)

var _ adapters.Describer = (*DB)(nil)

// Describe implements adapters.Describer: the version and servers from
// the master's cluster status, the table's regions from hbase:meta (with
// the region server holding each), and the table's and column family's
// attributes from its descriptor.
func (d *DB) Describe(ctx context.Context) (*environ.Database, error) {
	out := &environ.Database{Product: "Apache HBase"}
	cs, err := d.clusterStatus(ctx)
	if err != nil {
		return out, fmt.Errorf("cluster status: %w", err)
	}
	out.Version = cs.GetHbaseVersion().GetVersion()
	if m := cs.GetMaster(); m != nil {
		out.Nodes = append(out.Nodes, environ.Node{Address: serverName(m), Role: "master", Status: "active"})
	}
	for _, m := range cs.GetBackupMasters() {
		out.Nodes = append(out.Nodes, environ.Node{Address: serverName(m), Role: "master", Status: "backup"})
	}
	var rs []environ.Node
	for _, s := range cs.GetLiveServers() {
		rs = append(rs, environ.Node{Address: serverName(s.GetServer()), Role: "region server", Status: "live",
			Detail: fmt.Sprintf("%d regions, heap %d/%d MB", len(s.GetServerLoad().GetRegionLoads()),
				s.GetServerLoad().GetUsedHeap_MB(), s.GetServerLoad().GetMaxHeap_MB())})
	}
	for _, s := range cs.GetDeadServers() {
		rs = append(rs, environ.Node{Address: serverName(s), Role: "region server", Status: "dead"})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Address < rs[j].Address })
	out.Nodes = append(out.Nodes, rs...)
	var problems []string
	if out.Partitions, err = d.regions(ctx); err != nil {
		problems = append(problems, "regions: "+err.Error())
	}
	if out.Schema, err = d.tableSchema(ctx); err != nil {
		problems = append(problems, "table descriptor: "+err.Error())
	}
	out.Error = strings.Join(problems, "; ")
	return out, nil
}

func serverName(s *pb.ServerName) string {
	return net.JoinHostPort(s.GetHostName(), strconv.Itoa(int(s.GetPort())))
}

// clusterStatus asks the master, with ctx: gohbase's own ClusterStatus
// has no context and waits forever for an unreachable master.
func (d *DB) clusterStatus(ctx context.Context) (*pb.ClusterStatus, error) {
	call := hrpc.NewClusterStatus()
	call.SetContext(ctx)
	msg, err := d.sendAdmin(call)
	if err != nil {
		return nil, err
	}
	r, ok := msg.(*pb.GetClusterStatusResponse)
	if !ok {
		return nil, fmt.Errorf("unexpected reply %T", msg)
	}
	return r.GetClusterStatus(), nil
}

// regions lists the table's regions from hbase:meta, whose row keys are
// "<table>,<start key>,<region id>.<hash>.". The meta table orders rows
// by those parts, not by bytes, so neither a start row "<table>," nor a
// PrefixFilter (which seeks to its prefix) finds the table's first
// region: the whole table is scanned, and it holds only one row per
// region of the cluster.
func (d *DB) regions(ctx context.Context) ([]environ.Partition, error) {
	prefix := []byte(d.table + ",")
	scan, err := hrpc.NewScan(ctx, []byte("hbase:meta"), hrpc.Families(map[string][]string{"info": nil}))
	if err != nil {
		return nil, err
	}
	sc := d.client.Scan(scan)
	defer func() { _ = sc.Close() }()
	var out []environ.Partition
	for {
		res, err := sc.Next()
		if errors.Is(err, errEOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if len(res.Cells) == 0 || !bytes.HasPrefix(res.Cells[0].Row, prefix) {
			continue
		}
		reg, addr, err := region.ParseRegionInfo(res)
		if err != nil {
			return out, err
		}
		out = append(out, environ.Partition{Name: string(reg.Name()), Start: printable(reg.StartKey()), End: printable(reg.StopKey()), Node: addr})
	}
}

// printable shows a row key as text, or as hex when it is not.
func printable(k []byte) string {
	for _, c := range k {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("0x%x", k)
		}
	}
	return string(k)
}

// descriptorsCall is GetTableDescriptors, which this gohbase version has
// no request for: it reuses the cluster-status call's plumbing.
type descriptorsCall struct {
	*hrpc.ClusterStatus
	table string
}

func (c descriptorsCall) Name() string        { return "GetTableDescriptors" }
func (c descriptorsCall) Description() string { return c.Name() }
func (c descriptorsCall) NewResponse() proto.Message {
	return &pb.GetTableDescriptorsResponse{}
}

func (c descriptorsCall) ToProto() proto.Message {
	ns, name, ok := strings.Cut(c.table, ":")
	if !ok {
		ns, name = "default", c.table
	}
	return &pb.GetTableDescriptorsRequest{TableNames: []*pb.TableName{{Namespace: []byte(ns), Qualifier: []byte(name)}}}
}

// tableSchema reads the table's attributes and its column families'.
func (d *DB) tableSchema(ctx context.Context) ([]environ.Setting, error) {
	call := descriptorsCall{ClusterStatus: hrpc.NewClusterStatus(), table: d.table}
	call.SetContext(ctx)
	msg, err := d.sendAdmin(call)
	if err != nil {
		return nil, err
	}
	r, ok := msg.(*pb.GetTableDescriptorsResponse)
	if !ok {
		return nil, fmt.Errorf("unexpected reply %T", msg)
	}
	if len(r.GetTableSchema()) == 0 {
		return []environ.Setting{{Name: "table " + d.table, Value: "does not exist"}}, nil
	}
	ts := r.GetTableSchema()[0]
	var out []environ.Setting
	for _, a := range pairs(ts.GetAttributes()) {
		out = append(out, environ.Setting{Name: "table " + d.table + " " + a.Name, Value: a.Value})
	}
	for _, c := range ts.GetConfiguration() {
		out = append(out, environ.Setting{Name: "table " + d.table + " " + c.GetName(), Value: c.GetValue()})
	}
	for _, cf := range ts.GetColumnFamilies() {
		for _, a := range pairs(cf.GetAttributes()) {
			out = append(out, environ.Setting{Name: "family " + string(cf.GetName()) + " " + a.Name, Value: a.Value})
		}
		for _, c := range cf.GetConfiguration() {
			out = append(out, environ.Setting{Name: "family " + string(cf.GetName()) + " " + c.GetName(), Value: c.GetValue()})
		}
	}
	return out, nil
}

func pairs(ps []*pb.BytesBytesPair) []environ.Setting {
	out := make([]environ.Setting, 0, len(ps))
	for _, p := range ps {
		out = append(out, environ.Setting{Name: printable(p.GetFirst()), Value: printable(p.GetSecond())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

package cassandra

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/environ"
)

var _ adapters.Describer = (*DB)(nil)

// Describe implements adapters.Describer: release_version from
// system.local, every node of the ring (the driver's view: data centre,
// rack, tokens, up or down, refined by the gossip status where the server
// has system_views.gossip_info), and the keyspace's replication and the
// table's options and columns from system_schema.
func (d *DB) Describe(ctx context.Context) (*environ.Database, error) {
	out := &environ.Database{Product: "Apache Cassandra"}
	var problems []string
	if err := d.session.Query("SELECT release_version FROM system.local").ScanContext(ctx, &out.Version); err != nil {
		return out, fmt.Errorf("system.local: %w", err)
	}
	gossip, err := d.gossipStatus(ctx)
	if err != nil {
		problems = append(problems, "gossip status: "+err.Error())
	}
	for _, h := range d.session.GetHosts() {
		n := environ.Node{Address: net.JoinHostPort(h.ConnectAddress().String(), strconv.Itoa(h.Port())), Role: "node",
			DataCenter: h.DataCenter(), Rack: h.Rack(), Version: h.Version().String(), Detail: "host id " + h.HostID()}
		n.Status = "DOWN"
		if h.IsUp() {
			n.Status = "UP"
		}
		if g, ok := gossip[h.ConnectAddress().String()]; ok && g != "" {
			n.Status += " " + g
		}
		n.Tokens = append([]string(nil), h.Tokens()...)
		out.Nodes = append(out.Nodes, n)
	}
	sort.Slice(out.Nodes, func(i, j int) bool { return out.Nodes[i].Address < out.Nodes[j].Address })
	if err := d.describeSchema(ctx, out); err != nil {
		problems = append(problems, "schema: "+err.Error())
	}
	if len(problems) > 0 {
		out.Error = strings.Join(problems, "; ")
	}
	return out, nil
}

// gossipStatus maps node addresses to their gossip status (NORMAL,
// JOINING, LEAVING...) from system_views.gossip_info (Cassandra 4.1+);
// an empty map on servers without it.
func (d *DB) gossipStatus(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	iter := d.session.Query("SELECT * FROM system_views.gossip_info").IterContext(ctx)
	for {
		row := map[string]any{}
		if !iter.MapScan(row) {
			break
		}
		addr := fmt.Sprint(row["address"])
		if ip, ok := row["address"].(net.IP); ok {
			addr = ip.String()
		}
		st := fmt.Sprint(row["status"])
		// "NORMAL,-9223372036854775808": the state, then its token.
		st, _, _ = strings.Cut(st, ",")
		out[addr] = st
	}
	if err := iter.Close(); err != nil {
		if strings.Contains(err.Error(), "gossip_info") || strings.Contains(err.Error(), "system_views") {
			return out, nil // an older server: the driver's up/down is all there is
		}
		return out, err
	}
	return out, nil
}

// describeSchema adds the keyspace's replication and the table's options
// and columns, as the server holds them.
func (d *DB) describeSchema(ctx context.Context, out *environ.Database) error {
	ks, table := d.keyspace, d.table
	var repl map[string]string
	var durable bool
	err := d.session.Query("SELECT replication, durable_writes FROM system_schema.keyspaces WHERE keyspace_name = ?", ks).
		ScanContext(ctx, &repl, &durable)
	if err == gocql.ErrNotFound {
		out.Schema = append(out.Schema, environ.Setting{Name: "keyspace " + ks, Value: "does not exist"})
		return nil
	}
	if err != nil {
		return err
	}
	out.Schema = append(out.Schema,
		environ.Setting{Name: "keyspace " + ks + " replication", Value: formatMap(repl)},
		environ.Setting{Name: "keyspace " + ks + " durable_writes", Value: strconv.FormatBool(durable)})
	row := map[string]any{}
	if err := d.session.Query("SELECT * FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?", ks, table).
		MapScanContext(ctx, row); err != nil {
		if err == gocql.ErrNotFound {
			out.Schema = append(out.Schema, environ.Setting{Name: "table " + ks + "." + table, Value: "does not exist"})
			return nil
		}
		return err
	}
	keys := make([]string, 0, len(row))
	for k := range row {
		if k != "keyspace_name" && k != "table_name" && k != "id" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Schema = append(out.Schema, environ.Setting{Name: "table " + table + " " + k, Value: formatValue(row[k])})
	}
	var cols []string
	iter := d.session.Query("SELECT column_name, kind, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?", ks, table).
		IterContext(ctx)
	var name, kind, typ string
	for iter.Scan(&name, &kind, &typ) {
		c := name + " " + typ
		if kind != "regular" {
			c += " (" + kind + ")"
		}
		cols = append(cols, c)
	}
	if err := iter.Close(); err != nil {
		return err
	}
	sort.Strings(cols)
	out.Schema = append(out.Schema, environ.Setting{Name: "table " + table + " columns", Value: strings.Join(cols, ", ")})
	return nil
}

func formatValue(v any) string {
	switch x := v.(type) {
	case map[string]string:
		return formatMap(x)
	case []byte:
		return fmt.Sprintf("0x%x", x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// formatMap prints a CQL map as {'k': 'v', ...}, keys sorted.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = "'" + k + "': '" + m[k] + "'"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

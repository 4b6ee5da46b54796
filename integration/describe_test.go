//go:build integration

package integration

// Each adapter's description of its server (adapters.Describer), read
// from the real servers servers.sh starts: product and version, topology
// and the benchmark schema exactly as init created it. A run records it
// in its bundle's environment.

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/environ"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// describeAfterInit opens adapter with props, recreates the schema and
// returns the adapter's description of the server.
func describeAfterInit(t *testing.T, adapter string, props map[string]string) environ.Database {
	t.Helper()
	info, err := adapters.Lookup(adapter)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := properties.FromMap(props)
	db, err := info.Driver.Open(ctx, p)
	require.NoError(t, err)
	defer func() { _ = db.(adapters.Closer).Close() }()
	sm := db.(adapters.SchemaManager)
	_, err = sm.DropSchema(ctx, p)
	require.NoError(t, err)
	_, err = sm.CreateSchema(ctx, p)
	require.NoError(t, err)
	d := adapters.Describe(ctx, info.Name, db)
	b, _ := json.MarshalIndent(d, "", "  ")
	t.Logf("%s describes its server as:\n%s", adapter, b)
	assert.Empty(t, d.Error)
	assert.Equal(t, info.Name, d.Adapter)
	return d
}

func setting(d environ.Database, name string) (string, bool) {
	for _, s := range d.Schema {
		if s.Name == name {
			return s.Value, true
		}
	}
	return "", false
}

func TestDescribeCassandra(t *testing.T) {
	endpoint := startServer(t, "cassandra")
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err)
	props := map[string]string{"hosts": host, "port": port, "cassandra.keyspace": "ycsbctl_describe", "table": "usertable",
		"fieldcount": "3", "cassandra.compactionstrategy": "LeveledCompactionStrategy", "cassandra.replicationfactor": "1"}
	d := describeAfterInit(t, "cassandra", props)
	assert.Equal(t, "Apache Cassandra", d.Product)
	assert.Regexp(t, `^\d+\.\d+\.\d+`, d.Version)
	require.Len(t, d.Nodes, 1)
	n := d.Nodes[0]
	assert.Equal(t, net.JoinHostPort(host, port), n.Address)
	assert.Equal(t, "UP NORMAL", n.Status, "up, and NORMAL in gossip (system_views.gossip_info)")
	assert.NotEmpty(t, n.DataCenter)
	assert.NotEmpty(t, n.Rack)
	assert.NotEmpty(t, n.Tokens, "the node's ring tokens")
	repl, ok := setting(d, "keyspace ycsbctl_describe replication")
	require.True(t, ok, "%+v", d.Schema)
	assert.Contains(t, repl, "'replication_factor': '1'")
	comp, ok := setting(d, "table usertable compaction")
	require.True(t, ok, "%+v", d.Schema)
	assert.Contains(t, comp, "LeveledCompactionStrategy")
	cols, _ := setting(d, "table usertable columns")
	assert.Equal(t, "field0 text, field1 text, field2 text, y_id text (partition_key)", cols)

	// A run records the description in its bundle.
	res := filepath.Join(t.TempDir(), "bundle")
	args := []string{"load", "cassandra", "-P", "workloadc", "-p", "recordcount=10", "--results", res}
	for k, v := range props {
		args = append(args, "-p", k+"="+v)
	}
	requireExit(t, runCLI(t, 3*time.Minute, "", args...), 0)
	raw, err := os.ReadFile(filepath.Join(res, "run.json"))
	require.NoError(t, err)
	var rj struct {
		Environment struct {
			Hosts    []environ.Host    `json:"hosts"`
			Database *environ.Database `json:"database"`
		} `json:"environment"`
	}
	require.NoError(t, json.Unmarshal(raw, &rj))
	require.NotNil(t, rj.Environment.Database)
	assert.Equal(t, d.Version, rj.Environment.Database.Version)
	assert.Len(t, rj.Environment.Database.Nodes, 1)
	require.Len(t, rj.Environment.Hosts, 1)
	assert.Equal(t, "local", rj.Environment.Hosts[0].Address)
}

func TestDescribeHBase(t *testing.T) {
	quorum := startServer(t, "hbase")
	d := describeAfterInit(t, "hbase", map[string]string{"hbase.zookeeper.quorum": quorum, "table": "ycsbctl_describe",
		"columnfamily": "family", "hbase.presplit.regions": "4", "hbase.blockcache": "false", "hbase.compression": "GZ"})
	assert.Equal(t, "Apache HBase", d.Product)
	assert.Regexp(t, `^\d+\.\d+\.\d+`, d.Version)
	roles := map[string]int{}
	for _, n := range d.Nodes {
		roles[n.Role+" "+n.Status]++
	}
	assert.Equal(t, 1, roles["master active"], "%+v", d.Nodes)
	assert.Equal(t, 1, roles["region server live"], "%+v", d.Nodes)
	require.Len(t, d.Partitions, 4, "the table's regions")
	assert.Equal(t, "", d.Partitions[0].Start)
	assert.Equal(t, "", d.Partitions[3].End)
	for i, p := range d.Partitions {
		assert.NotEmpty(t, p.Node, "region %d's server", i)
		if i > 0 {
			assert.Equal(t, d.Partitions[i-1].End, p.Start, "regions are contiguous")
		}
	}
	bc, ok := setting(d, "family family BLOCKCACHE")
	require.True(t, ok, "%+v", d.Schema)
	assert.Equal(t, "false", bc)
	gz, _ := setting(d, "family family COMPRESSION")
	assert.Equal(t, "GZ", gz)

	// An agent opens, describes and closes a DB every run: the admin
	// client Describe opens (its own ZooKeeper session) must close too.
	info, _ := adapters.Lookup("hbase")
	props := properties.FromMap(map[string]string{"hbase.zookeeper.quorum": quorum, "table": "ycsbctl_describe", "columnfamily": "family"})
	cycle := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		db, err := info.Driver.Open(ctx, props)
		require.NoError(t, err)
		adapters.Describe(ctx, "hbase", db)
		require.NoError(t, db.(adapters.Closer).Close())
	}
	cycle()
	base := runtime.NumGoroutine()
	for range 5 {
		cycle()
	}
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > base+5 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), base+5, "goroutines left by 5 open-describe-close cycles (%d before)", base)
}

func TestDescribeMongoDB(t *testing.T) {
	endpoint := startServer(t, "mongodb")
	d := describeAfterInit(t, "mongodb", map[string]string{"mongodb.url": endpoint, "table": "ycsbctl_describe", "mongodb.connecttimeout": "5000"})
	// The test server is FerretDB, which answers buildInfo as MongoDB
	// with its own version beside.
	assert.Contains(t, d.Product, "MongoDB")
	assert.NotEmpty(t, d.Version)
	require.Len(t, d.Nodes, 1)
	assert.Equal(t, "standalone", d.Nodes[0].Role)
	opts, ok := setting(d, "collection ycsb.ycsbctl_describe options")
	require.True(t, ok, "%+v", d.Schema)
	assert.NotEmpty(t, opts)
	sh, _ := setting(d, "collection ycsb.ycsbctl_describe sharding")
	assert.Equal(t, "not sharded", sh)
	idx, _ := setting(d, "collection ycsb.ycsbctl_describe indexes")
	assert.Contains(t, idx, "_id_")
}

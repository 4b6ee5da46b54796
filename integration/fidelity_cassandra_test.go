//go:build integration

package integration

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	_ "github.com/ycsbctl/ycsbctl/adapters/cassandra"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// serversDir is where servers.sh keeps its servers (YCSBCTL_SERVERS_DIR or
// .servers/ in the checkout).
func serversDir(t testing.TB) string {
	if d := os.Getenv("YCSBCTL_SERVERS_DIR"); d != "" {
		return d
	}
	d, err := filepath.Abs(filepath.Join("..", ".servers"))
	require.NoError(t, err)
	return d
}

// fidelityCheck is one row of an adapter's YCSB property table: a property
// YCSB's binding reads, and either a check against the real server
// (honoured), or the reason it cannot be: differs (then the adapter's
// Differences must name the property) or unverified (with why).
type fidelityCheck struct {
	prop       string
	check      func(t *testing.T)
	differs    bool
	unverified string
}

func runFidelityTable(t *testing.T, info *adapters.Info, rows []fidelityCheck) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.prop, func(t *testing.T) {
			switch {
			case r.check != nil:
				r.check(t)
			case r.differs:
				found := false
				for _, d := range info.Differences {
					if strings.Contains(d, r.prop) {
						found = true
					}
				}
				assert.True(t, found, "%s is not honoured, so `ycsbctl dbs` must list it under Differs from YCSB", r.prop)
			default:
				require.NotEmpty(t, r.unverified, "a row needs a check, differs or a reason")
				t.Logf("%s: not checked against the server: %s", r.prop, r.unverified)
			}
		})
	}
}

// TestCassandraFidelity checks, against a real Cassandra 5.0.9, each
// property YCSB's CassandraCQLClient reads, plus the init options.
func TestCassandraFidelity(t *testing.T) {
	endpoint := startServer(t, "cassandra")
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err)
	info, err := adapters.Lookup("site.ycsb.db.CassandraCQLClient")
	require.NoError(t, err)
	tlsDir := filepath.Join(serversDir(t), "cassandra", "tls")

	const ks, table = "ycsbctl_fid", "usertable"
	base := map[string]string{"hosts": host, "port": port, "cassandra.keyspace": ks, "table": table,
		"cassandra.connecttimeoutmillis": "5000"}
	props := func(extra ...string) *properties.Properties {
		p := properties.FromMap(base)
		p.SetPairs(extra...)
		return p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	open := func(t *testing.T, p *properties.Properties) adapters.DB {
		t.Helper()
		db, err := info.Driver.Open(ctx, p)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.(adapters.Closer).Close() })
		return db
	}

	// An independent session for server-side evidence.
	cluster := gocql.NewCluster(host)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.Consistency = gocql.One
	cluster.Timeout = 30 * time.Second
	admin, err := cluster.CreateSession()
	require.NoError(t, err)
	defer admin.Close()

	// The schema, with every init option set away from its default, read
	// back from system_schema.
	t.Run("InitOptions", func(t *testing.T) {
		require.NoError(t, admin.Query("DROP KEYSPACE IF EXISTS "+ks).Exec())
		p := props("cassandra.compression", "ZstdCompressor", "cassandra.compactionstrategy", "LeveledCompactionStrategy",
			"cassandra.replication.class", "NetworkTopologyStrategy", "cassandra.replication.dcs", "datacenter1:1")
		p.TrackReads()
		db := open(t, p)
		msg, err := db.(adapters.SchemaManager).CreateSchema(ctx, p)
		require.NoError(t, err)
		t.Logf("init: %s", msg)
		assert.Contains(t, msg, "ZstdCompressor")
		assert.Contains(t, msg, "LeveledCompactionStrategy")
		assert.Contains(t, msg, "datacenter1:1")
		var comp, compaction, repl map[string]string
		require.NoError(t, admin.Query("SELECT compression, compaction FROM system_schema.tables WHERE keyspace_name=? AND table_name=?", ks, table).Scan(&comp, &compaction))
		require.NoError(t, admin.Query("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name=?", ks).Scan(&repl))
		t.Logf("system_schema: compression %v compaction %v replication %v", comp, compaction, repl)
		assert.Contains(t, comp["class"], "ZstdCompressor")
		assert.Contains(t, compaction["class"], "LeveledCompactionStrategy")
		assert.Contains(t, repl["class"], "NetworkTopologyStrategy")
		assert.Equal(t, "1", repl["datacenter1"])
		// Drop too, so that every property Open, init and drop read is
		// checked against the declarations.
		_, err = db.(adapters.SchemaManager).DropSchema(ctx, p)
		require.NoError(t, err)
		assert.Empty(t, info.Undeclared(p.ReadKeys()), "read but not declared")
		// Recreate with the defaults for the rest of the test.
		require.NoError(t, admin.Query("DROP KEYSPACE IF EXISTS "+ks).Exec())
		msg, err = db.(adapters.SchemaManager).CreateSchema(ctx, props())
		require.NoError(t, err)
		require.NoError(t, admin.Query("SELECT compression, compaction FROM system_schema.tables WHERE keyspace_name=? AND table_name=?", ks, table).Scan(&comp, &compaction))
		assert.Contains(t, comp["class"], "LZ4Compressor", msg)
		assert.Contains(t, compaction["class"], "SizeTieredCompactionStrategy")
		p = props("cassandra.compression", "none", "table", "nocomp")
		_, err = db.(adapters.SchemaManager).CreateSchema(ctx, p)
		require.NoError(t, err)
		require.NoError(t, admin.Query("SELECT compression FROM system_schema.tables WHERE keyspace_name=? AND table_name=?", ks, "nocomp").Scan(&comp))
		assert.Equal(t, "false", comp["enabled"], "compression none: %v", comp)
	})

	// traced runs one of each operation with tracing on and returns the
	// consistency level the server recorded per statement kind.
	traced := func(t *testing.T, p *properties.Properties) map[string]string {
		t.Helper()
		require.NoError(t, admin.Query("TRUNCATE system_traces.sessions").Exec())
		db := open(t, p)
		k := []byte("user" + strconv.FormatInt(time.Now().UnixNano(), 10))
		vals := []adapters.Field{{Name: "field0", Value: []byte("v0")}}
		require.Equal(t, adapters.OK, db.Insert(ctx, table, k, vals))
		var rec adapters.Record
		require.Equal(t, adapters.OK, db.Read(ctx, table, k, nil, &rec))
		require.Equal(t, adapters.OK, db.Update(ctx, table, k, vals))
		var rows adapters.Rows
		require.Equal(t, adapters.OK, db.Scan(ctx, table, k, 3, nil, &rows))
		require.Equal(t, adapters.OK, db.Delete(ctx, table, k))
		got := map[string]string{}
		// Sessions are written asynchronously once each request ends.
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && len(got) < 5 {
			iter := admin.Query("SELECT request, parameters FROM system_traces.sessions").Iter()
			var request string
			var params map[string]string
			for iter.Scan(&request, &params) {
				q := params["query"]
				// gocql traces each statement's PREPARE too; only an
				// execution has a consistency level.
				if !strings.Contains(q, ks+"."+table) || !strings.HasPrefix(request, "Execute") {
					continue
				}
				verb := strings.Fields(q)[0]
				if verb == "SELECT" && strings.Contains(q, "token(") {
					verb = "SCAN"
				}
				got[verb] = params["consistency_level"]
			}
			require.NoError(t, iter.Close())
			time.Sleep(500 * time.Millisecond)
		}
		t.Logf("server-side trace consistency levels: %v", got)
		return got
	}

	rows := []fidelityCheck{
		{prop: "hosts", check: func(t *testing.T) { open(t, props()) }},
		{prop: "port", check: func(t *testing.T) {
			_, err := info.Driver.Open(ctx, props("port", "1", "cassandra.connecttimeoutmillis", "500"))
			require.Error(t, err, "port 1 has no Cassandra")
		}},
		{prop: "cassandra.keyspace", check: func(t *testing.T) {
			var n int
			require.NoError(t, admin.Query("SELECT count(*) FROM system_schema.tables WHERE keyspace_name=?", ks).Scan(&n))
			assert.Positive(t, n, "init created the table in %s", ks)
		}},
		{prop: "cassandra.readconsistencylevel", check: func(t *testing.T) {
			// YCSB's default is QUORUM for both.
			got := traced(t, props("cassandra.tracing", "true"))
			assert.Equal(t, map[string]string{"INSERT": "QUORUM", "SELECT": "QUORUM", "UPDATE": "QUORUM", "SCAN": "QUORUM", "DELETE": "QUORUM"}, got)
			got = traced(t, props("cassandra.tracing", "true", "cassandra.readconsistencylevel", "LOCAL_ONE", "cassandra.writeconsistencylevel", "ALL"))
			assert.Equal(t, map[string]string{"INSERT": "ALL", "SELECT": "LOCAL_ONE", "UPDATE": "ALL", "SCAN": "LOCAL_ONE", "DELETE": "ALL"}, got)
		}},
		{prop: "cassandra.writeconsistencylevel", check: func(t *testing.T) {
			// A level one node cannot meet is refused by the server.
			db := open(t, props("cassandra.writeconsistencylevel", "TWO"))
			st := db.Insert(ctx, table, []byte("user_cl_two"), []adapters.Field{{Name: "field0", Value: []byte("x")}})
			assert.Equal(t, adapters.ServiceUnavailable, st, "TWO replicas on a one-node cluster")
		}},
		{prop: "cassandra.tracing", check: func(t *testing.T) {
			got := traced(t, props("cassandra.tracing", "true"))
			assert.Len(t, got, 5, "every statement kind traced")
			require.NoError(t, admin.Query("TRUNCATE system_traces.sessions").Exec())
			db := open(t, props())
			var rec adapters.Record
			db.Read(ctx, table, []byte("user_untraced"), nil, &rec)
			time.Sleep(2 * time.Second)
			var n int
			require.NoError(t, admin.Query("SELECT count(*) FROM system_traces.sessions").Scan(&n))
			assert.Zero(t, n, "no traces without cassandra.tracing")
		}},
		{prop: "cassandra.useSSL", check: func(t *testing.T) {
			tlsClients := func() int {
				iter := admin.Query("SELECT ssl_enabled FROM system_views.clients").Iter()
				n := 0
				var on bool
				for iter.Scan(&on) {
					if on {
						n++
					}
				}
				require.NoError(t, iter.Close())
				return n
			}
			before := tlsClients()
			db := open(t, props("cassandra.useSSL", "true", "cassandra.ssl.ca", filepath.Join(tlsDir, "ca.crt")))
			var rec adapters.Record
			require.Equal(t, adapters.NotFound, db.Read(ctx, table, []byte("user_tls"), nil, &rec))
			after := tlsClients()
			t.Logf("TLS client connections seen by the server: %d before, %d after Open", before, after)
			assert.Greater(t, after, before, "the server sees TLS connections (system_views.clients.ssl_enabled)")
			// A client certificate is presented when configured.
			db2 := open(t, props("cassandra.useSSL", "true", "cassandra.ssl.ca", filepath.Join(tlsDir, "ca.crt"),
				"cassandra.ssl.cert", filepath.Join(tlsDir, "client.crt"), "cassandra.ssl.key", filepath.Join(tlsDir, "client.key")))
			require.Equal(t, adapters.NotFound, db2.Read(ctx, table, []byte("user_tls"), nil, &rec))
			// The system roots do not trust the test CA: the handshake fails.
			_, err := info.Driver.Open(ctx, props("cassandra.useSSL", "true"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "certificate")
		}},
		{prop: "cassandra.maxconnections", check: func(t *testing.T) {
			conns := func() int {
				var n int
				require.NoError(t, admin.Query("SELECT count(*) FROM system_views.clients").Scan(&n))
				return n
			}
			// The baseline once it holds still for a second (bounded): a
			// connection an earlier check left closing once made the
			// baseline one too high and the pool look one short.
			before := conns()
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
				time.Sleep(time.Second)
				n := conns()
				if n == before {
					break
				}
				before = n
			}
			db := open(t, props("cassandra.maxconnections", "4"))
			// gocql fills the pool in the background after Open.
			mid := conns()
			for deadline := time.Now().Add(30 * time.Second); mid-before < 5 && time.Now().Before(deadline); mid = conns() {
				time.Sleep(100 * time.Millisecond)
			}
			_ = db.(adapters.Closer).Close()
			time.Sleep(time.Second)
			after := conns()
			t.Logf("client connections: %d before, %d with maxconnections=4, %d after Close", before, mid, after)
			// The pool plus gocql's control connection.
			assert.Equal(t, 5, mid-before)
		}},
		{prop: "cassandra.coreconnections", differs: true},
		{prop: "cassandra.connecttimeoutmillis", unverified: "client-side connect deadline; loopback refuses or accepts at once, so it cannot expire here"},
		{prop: "cassandra.readtimeoutmillis", unverified: "client-side request deadline (gocql Timeout); the server answers these small requests far within it"},
		{prop: "cassandra.username", unverified: "the test server runs with AllowAllAuthenticator; Open rejects a username without a password (unit test)"},
		{prop: "cassandra.password", unverified: "as cassandra.username"},
		{prop: "debug", differs: true},
	}
	runFidelityTable(t, info, rows)
}

//go:build integration

package integration

import (
	"context"
	"net"
	"sort"
	"strconv"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	_ "github.com/ycsbctl/ycsbctl/adapters/cassandra"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// TestCassandra runs the adapter suite against a real Cassandra started by
// servers.sh, then stops it (the outage check is the last step).
func TestCassandra(t *testing.T) {
	endpoint := startServer(t, "cassandra")
	t.Cleanup(func() { stopServer(t, "cassandra") })
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err)

	const keyspace, table = "ycsbctl_it", "usertable"
	props := properties.FromMap(map[string]string{
		"hosts":                          host,
		"port":                           port,
		"cassandra.keyspace":             keyspace,
		"table":                          table,
		"fieldcount":                     "10",
		"cassandra.readtimeoutmillis":    "5000",
		"cassandra.connecttimeoutmillis": "3000",
	})
	info, err := adapters.Lookup("cassandra-cql")
	require.NoError(t, err)
	require.Equal(t, "cassandra", info.Name)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := info.Driver.Open(ctx, props)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.(adapters.Closer).Close() })

	// Expected scan order: Cassandra scans by partition token, so ask the
	// server for each key's token() and sort by it.
	cluster := gocql.NewCluster(host)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.Consistency = gocql.One
	tokenOrder := func(t *testing.T, keys []string) []string {
		s, err := cluster.CreateSession()
		require.NoError(t, err)
		defer s.Close()
		tok := make(map[string]int64, len(keys))
		for _, k := range keys {
			var v int64
			require.NoError(t, s.Query("SELECT token(y_id) FROM "+keyspace+"."+table+" WHERE y_id = ?", k).Scan(&v))
			tok[k] = v
		}
		out := append([]string(nil), keys...)
		sort.Slice(out, func(i, j int) bool { return tok[out[i]] < tok[out[j]] })
		return out
	}

	suite := &adapterSuite{
		db:         db,
		props:      props,
		table:      table,
		fieldCount: 10,
		scanOrder:  tokenOrder,
		stop:       func(t *testing.T) { stopServer(t, "cassandra") },
		opTimeout:  5 * time.Second,
	}
	suite.run(t)
}

// TestCassandraConfigErrors checks property validation without a server.
func TestCassandraConfigErrors(t *testing.T) {
	info, err := adapters.Lookup("cassandra")
	require.NoError(t, err)
	ctx := context.Background()
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, "hosts"},
		{map[string]string{"hosts": "127.0.0.1", "cassandra.readconsistencylevel": "MOST"}, "cassandra.readconsistencylevel"},
		{map[string]string{"hosts": "127.0.0.1", "cassandra.writeconsistencylevel": "x"}, "cassandra.writeconsistencylevel"},
		{map[string]string{"hosts": "127.0.0.1", "port": "0"}, "port"},
		{map[string]string{"hosts": "127.0.0.1", "cassandra.keyspace": "a;b"}, "cassandra.keyspace"},
	} {
		_, err := info.Driver.Open(ctx, properties.FromMap(c.props))
		require.Error(t, err, "%v", c.props)
		require.Contains(t, err.Error(), c.want)
	}
	// A password must never show up in an error.
	_, err = info.Driver.Open(ctx, properties.FromMap(map[string]string{
		"hosts": "127.0.0.1", "port": "1", "cassandra.username": "u", "cassandra.password": "s3cr3t-pw",
		"cassandra.connecttimeoutmillis": "500",
	}))
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cr3t-pw")
}

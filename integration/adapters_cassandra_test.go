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

// TestCassandraWorkerHandle checks the per-worker handle the engine uses
// (adapters.Threader): it rebinds reused queries and argument buffers on
// every call, so a caller overwriting its key and value buffers between
// calls must never change what was written, and each operation must see
// its own arguments.
func TestCassandraWorkerHandle(t *testing.T) {
	endpoint := startServer(t, "cassandra")
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err)
	props := properties.FromMap(map[string]string{
		"hosts": host, "port": port, "cassandra.keyspace": "ycsbctl_worker", "fieldcount": "3",
		"cassandra.readtimeoutmillis": "5000",
	})
	info, err := adapters.Lookup("cassandra")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := info.Driver.Open(ctx, props)
	require.NoError(t, err)
	defer func() { _ = db.(adapters.Closer).Close() }()
	sm := db.(adapters.SchemaManager)
	_, _ = sm.DropSchema(ctx, props)
	_, err = sm.CreateSchema(ctx, props)
	require.NoError(t, err)

	h, err := db.(adapters.Threader).ForWorker(ctx, 0, 1)
	require.NoError(t, err)
	require.NotSame(t, db, h, "the cassandra adapter gives each worker its own handle")

	// One key buffer and one value buffer, overwritten between calls as
	// the engine does.
	key := []byte("user000")
	val := []byte("aaaa")
	fields := []adapters.Field{{Name: "field0", Value: val}, {Name: "field1", Value: []byte{}}}
	for i := 0; i < 3; i++ {
		key[len(key)-1] = byte('0' + i)
		copy(val, []byte{'a' + byte(i), 'a' + byte(i), 'a' + byte(i), 'a' + byte(i)})
		require.Equal(t, adapters.OK, h.Insert(ctx, "usertable", key, fields))
	}
	copy(val, "zzzz")
	var rec adapters.Record
	for i := 0; i < 3; i++ {
		k := []byte("user00" + strconv.Itoa(i))
		require.Equal(t, adapters.OK, h.Read(ctx, "usertable", k, nil, &rec))
		v, ok := rec.Get("field0")
		require.True(t, ok)
		require.Equal(t, string([]byte{'a' + byte(i), 'a' + byte(i), 'a' + byte(i), 'a' + byte(i)}), string(v), "key %s", k)
		// An empty value is an empty string, not a CQL null.
		v, ok = rec.Get("field1")
		require.True(t, ok, "empty field1 of %s came back as null", k)
		require.Empty(t, v)
	}

	require.Equal(t, adapters.OK, h.Update(ctx, "usertable", []byte("user001"), []adapters.Field{{Name: "field2", Value: []byte("upd")}}))
	require.Equal(t, adapters.OK, h.Read(ctx, "usertable", []byte("user001"), []string{"field2", "field0"}, &rec))
	require.Len(t, rec.Fields, 2)
	v, _ := rec.Get("field2")
	require.Equal(t, "upd", string(v))
	v, _ = rec.Get("field0")
	require.Equal(t, "bbbb", string(v))

	// Scans with different counts through the same reused query.
	var rows adapters.Rows
	for _, n := range []int{1, 3, 2} {
		require.Equal(t, adapters.OK, h.Scan(ctx, "usertable", []byte("user000"), n, nil, &rows))
		require.LessOrEqual(t, rows.N, n)
		require.Positive(t, rows.N)
	}
	total := 0
	for _, k := range []string{"user000", "user001", "user002"} {
		require.Equal(t, adapters.OK, h.Scan(ctx, "usertable", []byte(k), 10, []string{"field0"}, &rows))
		total += rows.N
		for i := 0; i < rows.N; i++ {
			require.Len(t, rows.Records[i].Fields, 1)
		}
	}
	require.Positive(t, total)

	require.Equal(t, adapters.OK, h.Delete(ctx, "usertable", []byte("user002")))
	require.Equal(t, adapters.NotFound, h.Read(ctx, "usertable", []byte("user002"), nil, &rec))
	require.Equal(t, adapters.OK, h.Read(ctx, "usertable", []byte("user000"), nil, &rec))
	require.NoError(t, h.(adapters.Closer).Close())
	// Closing a worker handle leaves the shared session usable.
	require.Equal(t, adapters.OK, db.Read(ctx, "usertable", []byte("user000"), nil, &rec))
	_, err = sm.DropSchema(ctx, props)
	require.NoError(t, err)
}

//go:build integration

package integration

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	_ "github.com/ycsbctl/ycsbctl/adapters/hbase"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// TestHBase runs the adapter suite against a real standalone HBase started
// by servers.sh, then stops it (the outage check is the last step).
func TestHBase(t *testing.T) {
	quorum := startServer(t, "hbase")
	t.Cleanup(func() { stopServer(t, "hbase") })

	const table = "usertable"
	props := properties.FromMap(map[string]string{
		"hbase.zookeeper.quorum": quorum,
		"table":                  table,
		"columnfamily":           "family",
		"fieldcount":             "10",
		"hbase.timeout":          "5000",
	})
	info, err := adapters.Lookup("hbase2")
	require.NoError(t, err)
	require.Equal(t, "hbase", info.Name)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := info.Driver.Open(ctx, props)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.(adapters.Closer).Close() })

	suite := &adapterSuite{
		db:         db,
		props:      props,
		table:      table,
		fieldCount: 10,
		// HBase scans rows in byte order of their keys.
		scanOrder: func(t *testing.T, keys []string) []string {
			out := append([]string(nil), keys...)
			sort.Strings(out)
			return out
		},
		stop:      func(t *testing.T) { stopServer(t, "hbase") },
		opTimeout: 5 * time.Second,
	}
	// HBase-specific: a scan may start at a key that does not exist, and
	// must then return the rows that sort after it, across regions (the
	// table is pre-split in 10 regions).
	suite.extra = func(t *testing.T, keys []string) {
		ordered := append([]string(nil), keys...)
		sort.Strings(ordered)
		var rows adapters.Rows
		for _, start := range []string{"user", "user5", "user9999"} {
			i := sort.SearchStrings(ordered, start)
			want := ordered[i:min(i+30, len(ordered))]
			require.Equal(t, adapters.OK, db.Scan(context.Background(), table, []byte(start), 30, nil, &rows))
			require.Equal(t, len(want), rows.N, "scan from %s", start)
			for j := range want {
				assert.Equal(t, want[j], string(rows.Keys[j]))
			}
		}
	}
	suite.run(t)
}

// TestHBaseConfigErrors checks property validation without a server.
func TestHBaseConfigErrors(t *testing.T) {
	info, err := adapters.Lookup("hbase")
	require.NoError(t, err)
	ctx := context.Background()
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, "columnfamily"},
		{map[string]string{"columnfamily": "f", "durability": "SOMETIMES"}, "durability"},
		{map[string]string{"columnfamily": "f", "hbase.timeout": "-1"}, "hbase.timeout"},
		{map[string]string{"columnfamily": "f", "clientbuffering": "maybe"}, "clientbuffering"},
	} {
		_, err := info.Driver.Open(ctx, properties.FromMap(c.props))
		require.Error(t, err, "%v", c.props)
		require.Contains(t, err.Error(), c.want)
	}
	// Unreachable quorum: Open fails within its timeout, naming the quorum.
	t0 := time.Now()
	_, err = info.Driver.Open(ctx, properties.FromMap(map[string]string{
		"columnfamily": "f", "hbase.zookeeper.quorum": "127.0.0.1:1", "hbase.timeout": "2000",
	}))
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "hbase.zookeeper.quorum"), err.Error())
	require.Less(t, time.Since(t0), 10*time.Second)
}

//go:build integration

package integration

import (
	"net"
	"sort"
	"strconv"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	_ "github.com/ycsbctl/ycsbctl/adapters/cassandra"
)

// TestCLICassandra runs the CLI suite (cli_common_test.go) against a real
// Cassandra started by servers.sh; its last step stops the server.
func TestCLICassandra(t *testing.T) {
	endpoint := startServer(t, "cassandra")
	t.Cleanup(func() { stopServer(t, "cassandra") })
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err)

	// Cassandra scans by partition token (Murmur3): ask the server for
	// every key's token and check that a scan returns the keys that follow
	// its start key in token order.
	cluster := gocql.NewCluster(host)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.Consistency = gocql.One
	cluster.Timeout = 30 * time.Second
	tokens := func(t *testing.T) (map[string]int64, []string) {
		s, err := cluster.CreateSession()
		require.NoError(t, err)
		defer s.Close()
		tok := map[string]int64{}
		iter := s.Query("SELECT y_id, token(y_id) FROM ycsb.usertable").PageSize(5000).Iter()
		var k string
		var v int64
		for iter.Scan(&k, &v) {
			tok[k] = v
		}
		require.NoError(t, iter.Close())
		order := make([]string, 0, len(tok))
		for k := range tok {
			order = append(order, k)
		}
		sort.Slice(order, func(i, j int) bool { return tok[order[i]] < tok[order[j]] })
		return tok, order
	}

	tg := &cliTarget{
		db:     "cassandra",
		server: "cassandra",
		props: map[string]string{
			"hosts":                          host,
			"port":                           port,
			"cassandra.connecttimeoutmillis": "5000",
		},
		records: 2000,
		ops:     2000,
		scanOps: 500,
		faultProps: map[string]string{
			"cassandra.readtimeoutmillis": "3000",
		},
		// The test server has no authenticator, so the driver never
		// sends these; they must still never be printed.
		secretProps: map[string]string{
			"cassandra.username": "ycsbctl",
			"cassandra.password": "{secret}",
		},
		invalidProps: map[string]string{"cassandra.readconsistencylevel": "MOST"},
		invalidWant:  "cassandra.readconsistencylevel",
		faultRun:     40 * time.Second,
		opTimeout:    3 * time.Second,
		scanStarts: func(t *testing.T, keys []string) []string {
			_, order := tokens(t)
			require.Len(t, order, len(keys))
			// The lowest token, one in the middle, and one 25 from the end.
			return []string{order[0], order[len(order)/2], order[len(order)-25]}
		},
		checkScan: func(t *testing.T, keys []string, start string, got []string) {
			tok, order := tokens(t)
			i := sort.Search(len(order), func(i int) bool { return tok[order[i]] >= tok[start] })
			want := order[i:min(i+len(got), len(order))]
			for j := 1; j < len(got); j++ {
				require.Less(t, tok[got[j-1]], tok[got[j]], "scan from %s: %s then %s not in token order", start, got[j-1], got[j])
			}
			require.Equal(t, want, got, "scan from %s", start)
		},
	}
	cliSuite(t, tg)
}

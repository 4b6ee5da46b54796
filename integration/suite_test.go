//go:build integration

package integration

// `ycsbctl suite` against a real Cassandra (started by servers.sh): the
// unit tests' small suite (two databases × three steps × a two-value
// sweep), once on this host and once distributed over 3 local agents.
// Each step is an ordinary run, so the checks are the bundles', the
// database's and the workbook's.

import (
	"encoding/csv"
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
	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/suite"
)

const campaignRecords = 1000

// suiteFile is the small suite with Cassandra as its second database.
func campaignFile(host, port, table string) string {
	return `name: it-suite
properties:
  recordcount: ` + strconv.Itoa(campaignRecords) + `
  status.interval: 0.5
  basicdb.verbose: false
databases:
  - db: basic
  - db: cassandra
    properties:
      hosts: ` + host + `
      port: "` + port + `"
      table: ` + table + `
      cassandra.connecttimeoutmillis: 5000
steps:
  - load: workloada
    threads: [2, 4]
  - pause: 1s
  - run: workloadc
    operations: 3000
    threads: [1, 4]
  - run: workloadb
    warmup: 200
    operations: 600
    target: [300, 600]
`
}

var campaignStepDirs = []string{"01-load-workloada-threads2", "01-load-workloada-threads4", "03-run-workloadc-threads1", "03-run-workloadc-threads4",
	"04-run-workloadb-target300", "04-run-workloadb-target600"}

func TestSuiteCassandra(t *testing.T) {
	endpoint := startServer(t, "cassandra")
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err)
	count := func(t *testing.T, table string) int64 {
		cluster := gocql.NewCluster(host)
		cluster.Port, _ = strconv.Atoi(port)
		cluster.Consistency = gocql.One
		cluster.Timeout = 30 * time.Second
		s, err := cluster.CreateSession()
		require.NoError(t, err)
		defer s.Close()
		var n int64
		require.NoError(t, s.Query("SELECT COUNT(*) FROM ycsb."+table).Scan(&n))
		return n
	}

	t.Run("SingleHost", func(t *testing.T) {
		const table = "ycsbctl_suite"
		dir := t.TempDir()
		file := filepath.Join(dir, "suite.yaml")
		require.NoError(t, os.WriteFile(file, []byte(campaignFile(host, port, table)), 0o644))
		res := filepath.Join(dir, "results")
		r := runCLI(t, 15*time.Minute, "", "suite", file, "--results", res)
		requireExit(t, r, 0)
		checkCampaignResults(t, res, 1)
		// The last load recreated the table and inserted every record
		// once; runs of B and C insert nothing.
		assert.Equal(t, int64(campaignRecords), count(t, table))
	})

	t.Run("Distributed", func(t *testing.T) {
		const table = "ycsbctl_suite_dist"
		_, addrs := startAgents(t, 3)
		dir := t.TempDir()
		file := filepath.Join(dir, "suite.yaml")
		require.NoError(t, os.WriteFile(file, []byte(campaignFile(host, port, table)), 0o644))
		res := filepath.Join(dir, "results")
		r := runCLI(t, 15*time.Minute, "", "suite", file, "--results", res, "--agents", strings.Join(addrs, ","))
		requireExit(t, r, 0)
		assert.Contains(t, r.stderr, "coordinator")
		checkCampaignResults(t, res, 3)
		assert.Equal(t, int64(campaignRecords), count(t, table), "the load split over 3 agents inserted every record once")
		st, err := suite.ReadState(res)
		require.NoError(t, err)
		assert.Equal(t, addrs, st.Agents)
		for _, s := range st.Steps {
			if s.Measured() {
				assert.Equal(t, "coordinator", s.Args[0], s.Dir)
			}
		}
	})
}

// checkCampaignResults checks every step's bundle, the workbook and the CSV.
func checkCampaignResults(t *testing.T, res string, agents int) {
	t.Helper()
	st, err := suite.ReadState(res)
	require.NoError(t, err)
	for _, s := range st.Steps {
		assert.Equal(t, suite.StatusPassed, s.Status, "%s %s", s.Database, s.Dir)
	}
	tput := map[string]float64{}
	for _, db := range []string{"basic", "cassandra"} {
		for _, d := range campaignStepDirs {
			b, err := bundle.Read(filepath.Join(res, db, d))
			require.NoError(t, err)
			assert.Equal(t, run.StatusComplete, b.Run.Status, "%s/%s", db, d)
			assert.Len(t, b.Run.Agents, agents, "%s/%s", db, d)
			for op, m := range b.Run.Summary.Returns {
				for code, n := range m {
					if code != "OK" && code != "BATCHED_OK" {
						t.Errorf("%s/%s: %s returned %s %d times", db, d, op, code, n)
					}
				}
			}
			switch {
			case strings.HasPrefix(d, "01-"):
				assert.Equal(t, int64(campaignRecords), b.Run.Summary.Operations, "%s/%s", db, d)
			case strings.HasPrefix(d, "03-"):
				assert.Equal(t, int64(3000), b.Run.Summary.Operations, "%s/%s", db, d)
			default:
				assert.Equal(t, int64(600), b.Run.Summary.Operations, "%s/%s", db, d)
			}
			tput[db+"/"+d] = b.Run.Summary.Throughput
		}
	}
	// A target is a ceiling: the paced run never exceeds it (5% for the
	// rate's rounding over a short run). How far below it lands depends on
	// what else the machine runs, so the floor only proves pacing did not
	// collapse.
	paced := tput["cassandra/04-run-workloadb-target300"]
	assert.LessOrEqual(t, paced, 315.0)
	assert.Greater(t, paced, 100.0)

	x, err := excelize.OpenFile(filepath.Join(res, "summary.xlsx"))
	require.NoError(t, err)
	defer func() { _ = x.Close() }()
	rows, err := x.GetRows("Overall", excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	require.Len(t, rows, 1+2*len(campaignStepDirs))
	f, err := os.Open(filepath.Join(res, "summary.csv"))
	require.NoError(t, err)
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, f.Close())
	require.NoError(t, err)
	require.Len(t, recs, len(rows))
	for i := 1; i < len(rows); i++ {
		b := rows[i][len(rows[i])-1]
		v, err := strconv.ParseFloat(rows[i][9], 64)
		require.NoError(t, err)
		assert.InEpsilon(t, tput[b], v, 1e-12, b)
		assert.Equal(t, recs[i][:len(rows[i])], rows[i])
	}
	assert.FileExists(t, filepath.Join(res, "compare.html"))
}

//go:build integration

package integration

import (
	"sort"
	"testing"
	"time"

	_ "github.com/ycsbctl/ycsbctl/adapters/hbase"
)

// TestCLIHBase runs the CLI suite (cli_common_test.go) against a real
// standalone HBase started by servers.sh; its last step stops the server.
func TestCLIHBase(t *testing.T) {
	quorum := startServer(t, "hbase")
	t.Cleanup(func() { stopServer(t, "hbase") })
	tg := &cliTarget{
		db:     "hbase",
		server: "hbase",
		props: map[string]string{
			"columnfamily":           "family",
			"hbase.zookeeper.quorum": quorum,
		},
		records: 2000,
		ops:     2000,
		scanOps: 500,
		faultProps: map[string]string{
			"hbase.timeout": "3000",
		},
		invalidProps: map[string]string{"hbase.timeout": "-1"},
		invalidWant:  "hbase.timeout",
		faultRun:     40 * time.Second,
		opTimeout:    3 * time.Second,
		// HBase scans rows in byte order of their keys, across the
		// pre-split regions; a start row need not exist.
		scanStarts: func(t *testing.T, keys []string) []string {
			sorted := append([]string(nil), keys...)
			sort.Strings(sorted)
			return []string{sorted[0], sorted[len(sorted)/2], "user5", sorted[len(sorted)-25]}
		},
		checkScan: checkSortedScan,
	}
	cliSuite(t, tg)
}

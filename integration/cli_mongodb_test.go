//go:build integration

package integration

import (
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/ycsbctl/ycsbctl/adapters/mongodb"
)

// TestCLIMongoDB runs the CLI suite (cli_common_test.go) against FerretDB
// (the MongoDB wire-protocol stand-in) started by servers.sh; its last
// step stops the server. FerretDB answers every scan by reading and
// sorting the whole collection, so workload E runs few operations. Any
// timing logged here is FerretDB's, not MongoDB's.
func TestCLIMongoDB(t *testing.T) {
	endpoint := startServer(t, "mongodb")
	t.Cleanup(func() { stopServer(t, "mongodb") })
	tg := &cliTarget{
		db:     "mongodb",
		server: "mongodb",
		props: map[string]string{
			"mongodb.url": endpoint,
		},
		records: 2000,
		ops:     1000,
		scanOps: 60,
		faultProps: map[string]string{
			"mongodb.timeout":        "3000",
			"mongodb.connecttimeout": "3000",
		},
		// FerretDB cannot authenticate (no SCRAM), so the run fails to
		// start (exit 1); its error must not show the password either.
		secretProps: map[string]string{
			"mongodb.url": strings.Replace(endpoint, "mongodb://", "mongodb://ycsbctl:{secret}@", 1),
		},
		secretExit:   1,
		invalidProps: map[string]string{"mongodb.url": "http://127.0.0.1:27017/ycsb"},
		invalidWant:  "mongodb.url",
		faultRun:     25 * time.Second,
		opTimeout:    3 * time.Second,
		// _id strings compare bytewise: scans follow sorted key order, and
		// a start key need not exist ($gte).
		scanStarts: func(t *testing.T, keys []string) []string {
			sorted := append([]string(nil), keys...)
			sort.Strings(sorted)
			return []string{sorted[0], sorted[len(sorted)/2], "user5", sorted[len(sorted)-25]}
		},
		checkScan: checkSortedScan,
	}
	cliSuite(t, tg)
}

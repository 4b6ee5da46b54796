//go:build integration

package integration

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/doctest"
)

// docServers are the needs this tier meets by starting a server, in the
// order their blocks run (one JVM server at a time).
var docServers = []string{"cassandra", "hbase", "mongodb"}

// TestDocs runs the documentation's blocks that need minutes or a
// database server (internal/doctest and docs/testing.md describe the
// convention), each as written in a scratch copy of the repository.
// Blocks that need a server run with that server started by servers.sh,
// which listens where the documentation says (127.0.0.1, default ports).
func TestDocs(t *testing.T) {
	blocks, err := doctest.Blocks(cliRoot())
	if err != nil {
		t.Fatal(err)
	}
	goEnv, err := doctest.GoEnv()
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := doctest.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	bin := cliBinary(t)
	runBlock := func(t *testing.T, b doctest.Block) {
		dir := t.TempDir()
		home, err := doctest.Scratch(cliRoot(), bin, dir)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, err := doctest.Run(b.Text, dir, append(goEnv, "HOME="+home, "XDG_CACHE_HOME=", "XDG_CONFIG_HOME=",
			// make demo at a tenth of its counts: the same commands, in
			// about a tenth of its 1 to 2.5 minutes.
			"YCSBCTL_DEMO_DIR="+filepath.Join(dir, "demo"), "YCSBCTL_DEMO_RECORDS=10000", "YCSBCTL_DEMO_OPS=50000"), 20*time.Minute)
		if err != nil {
			t.Fatalf("%s failed: %v\n--- block\n%s--- output\n%s", b.Name(), err, b.Text, out)
		}
		t.Logf("%s ran in %s", b.Name(), time.Since(start).Round(100*time.Millisecond))
	}
	ran := map[string]bool{}
	for _, db := range docServers {
		var mine []doctest.Block
		for _, b := range blocks {
			if b.Has(db) {
				mine = append(mine, b)
			}
		}
		if len(mine) == 0 {
			continue
		}
		t.Run(db, func(t *testing.T) {
			startServer(t, db)
			for _, b := range mine {
				ran[b.Name()] = true
				t.Run(b.Name(), func(t *testing.T) { runBlock(t, b) })
			}
		})
	}
	for _, b := range blocks {
		if b.Has("minutes") && !ran[b.Name()] {
			ran[b.Name()] = true
			t.Run(b.Name(), func(t *testing.T) { runBlock(t, b) })
		}
	}
	if len(ran) == 0 {
		t.Fatal("no block needs this tier: the convention changed without this test")
	}
}

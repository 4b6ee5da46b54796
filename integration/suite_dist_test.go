//go:build integration

package integration

// A distributed suite exactly as an operator runs one: `ycsbctl certs`
// makes the CA and certificates, three agents listen on loopback with
// mutual TLS and a token, and `ycsbctl suite` runs a scaled comparison2014
// over them (every step, tiny counts, a pause, warm-ups). The coordinator
// (the suite process) is killed with SIGKILL in the middle of a step;
// a resume with another -p is refused, naming what differs; the resume
// with the same configuration redoes only the interrupted step (and runs
// the ones never reached). Then `suite report`, and the workbook read back
// with openpyxl, and compare.html in Chromium (the checks are
// internal/testutil/suitecheck's, shared with the cluster test's suite
// step). The database is BasicDB: no server is needed, and every
// count is exact.

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/testutil/suitecheck"
)

// distDB is the loopback suite's one database: BasicDB, no server.
var distDB = suitecheck.Database{DB: "basic", Product: "BasicDB"}

// distScale is the built-in comparison2014 at test size: fewer records,
// threads and seconds, a pause after the loads, BasicDB as the database.
var distScale = suitecheck.Scale{
	Databases: []suitecheck.Database{distDB}, Records: 3000, LoadThreads: 2, BulkThreads: 1, RunThreads: 2,
	Warmup: "1s", Duration: "2s", Pause: "1s", StatusInterval: "0.5",
	// A millisecond's delay: BasicDB's own latencies are below a
	// microsecond, which compare.html's latency bars would draw as "no data".
	Properties: map[string]string{"basicdb.verbose": "false", "basicdb.simulatedelay": "1"},
}

const distInterrupted = "06-updateheavy"

func TestSuiteDistributedTLS(t *testing.T) {
	dir := t.TempDir()
	certDir := filepath.Join(dir, "certs")
	requireExit(t, runCLI(t, time.Minute, "", "certs", "--dir", certDir, "--hosts", "127.0.0.1"), 0)
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("suite-test-token\n"), 0o600))

	var addrs []string
	var agents []*cliProc
	for _, p := range freePorts(t, 3) {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		agents = append(agents, startCLI(t, 20*time.Minute, "", "agent", "--listen", addr,
			"--tls-cert", filepath.Join(certDir, "127.0.0.1", "agent.pem"), "--tls-key", filepath.Join(certDir, "127.0.0.1", "agent-key.pem"),
			"--tls-ca", filepath.Join(certDir, "ca.pem"), "--token-file", tokenFile, "--lease", "5s"))
		addrs = append(addrs, addr)
	}
	for i, a := range agents {
		waitListening(t, addrs[i], a, time.Minute)
	}
	file := filepath.Join(dir, "comparison2014-scaled.yaml")
	require.NoError(t, os.WriteFile(file, []byte(suitecheck.Comparison2014(t, distScale)), 0o644))
	res := filepath.Join(dir, "results")
	tlsFlags := []string{"--agents", strings.Join(addrs, ","), "--tls-cert", filepath.Join(certDir, "coordinator.pem"),
		"--tls-key", filepath.Join(certDir, "coordinator-key.pem"), "--tls-ca", filepath.Join(certDir, "ca.pem")}

	// Without the token the agents refuse before any step runs.
	r := runCLI(t, 2*time.Minute, "", append([]string{"suite", file, "--results", filepath.Join(dir, "no-token")}, tlsFlags...)...)
	assert.NotEqual(t, 0, r.exit, "%s", r)

	// The first invocation takes its token from YCSBCTL_TOKEN.
	t.Setenv("YCSBCTL_TOKEN", "suite-test-token")
	sp := startCLI(t, 15*time.Minute, "", append([]string{"suite", file, "--results", res}, tlsFlags...)...)
	t.Setenv("YCSBCTL_TOKEN", "")
	// Kill the coordinator once the interrupted step is measuring: its
	// log shows status lines (status: true, every 0.5 s).
	suitecheck.WaitMeasuring(t, res, "basic", distInterrupted, 5*time.Minute,
		func() bool {
			select {
			case <-sp.done:
				return true
			default:
				return false
			}
		}, func() string { return "suite stderr:\n" + tail(sp.stderr.String(), 4000) })
	killed := time.Now()
	require.NoError(t, sp.cmd.Process.Signal(syscall.SIGKILL))
	<-sp.done
	t.Logf("suite killed during %s after %s", distInterrupted, killed.Sub(sp.start).Round(time.Millisecond))

	in := suitecheck.ReadInterrupted(t, res, "basic/"+distInterrupted)

	// The agents stop the orphaned load by themselves (lease 5 s: 2 s expired once
	// while the coordinator was starved on a machine at load 23).
	for i, a := range agents {
		waitStderrMatch(t, a, killed, regexp.MustCompile(`load stopped|released`), time.Minute, "agent "+addrs[i]+" ending the orphaned run")
	}

	logsBefore := suitecheck.LogCount(res)
	secure := append(append([]string(nil), tlsFlags...), "--token-file", tokenFile)
	// Another configuration: refused before anything runs, naming what
	// differs (issue 19: a changed -p used to reuse the old bundles).
	r = runCLI(t, 2*time.Minute, "", append([]string{"suite", "--resume", "--results", res, "-p", "recordcount=4000"}, secure...)...)
	requireExit(t, r, 2)
	assert.Contains(t, r.stderr, `basic/01-load: property recordcount: "3000" → "4000"`)
	assert.Contains(t, r.stderr, "basic/05-readmostly")
	assert.Equal(t, logsBefore, suitecheck.LogCount(res), "a refused resume runs nothing")

	// The same configuration resumes (the suite file kept in the
	// results): only the interrupted step and those never reached run.
	r = runCLI(t, 10*time.Minute, "", append([]string{"suite", "--resume", "--results", res}, secure...)...)
	requireExit(t, r, 0)
	in.CheckResumed(t, r.stderr)

	// Every step's bundle: complete, three agents over TLS with a token,
	// merged counts exact, the environment recorded.
	host, _ := os.Hostname()
	suitecheck.CheckBundles(t, res, distScale.Databases, suitecheck.Expect{Agents: addrs, Hostname: func(int) string { return host },
		Records: distScale.Records, LoadThreads: 2, BulkThreads: 1, RunThreads: 2})

	// suite report rewrites the summaries from the bundles alone.
	for _, f := range []string{"summary.xlsx", "summary.csv", "compare.html"} {
		require.NoError(t, os.Remove(filepath.Join(res, f)))
	}
	requireExit(t, runCLI(t, 2*time.Minute, "", "suite", "report", res), 0)
	suitecheck.CheckWorkbook(t, filepath.Join(res, "summary.xlsx"), distScale.Databases, addrs)
	suitecheck.CheckCompare(t, filepath.Join(res, "compare.html"), 1)
}

// waitStderrMatch waits for a line matching re that p printed on stderr after
// since; it fails with p's output when none comes within bound.
func waitStderrMatch(t *testing.T, p *cliProc, since time.Time, re *regexp.Regexp, bound time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		for _, l := range p.stderr.Lines() {
			if l.at.After(since) && re.MatchString(l.text) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: no line matching %q within %s:\n%s", what, re, bound, tail(p.stderr.String(), 3000))
}

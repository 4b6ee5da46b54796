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
// with openpyxl. The database is BasicDB: no server is needed, and every
// count is exact.

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// scaledComparison2014 is the built-in comparison2014 at test size: the
// same steps and per-step settings, fewer records, threads and seconds,
// a pause after the loads, and BasicDB as the database.
func scaledComparison2014(t *testing.T) string {
	s, ok := workloads.LookupSuite("comparison2014")
	require.True(t, ok)
	text := s.Text
	for _, r := range [][2]string{
		{"recordcount: 100000\n", "recordcount: 3000\n  basicdb.verbose: false\n  status: true\n"},
		{"status.interval: 10\n", "status.interval: 0.5\n"},
		{"  - db: embedded\n", "  - db: basic\n"},
		{"threads: 24\n", "threads: 2\n"},
		{"threads: 8\n", "threads: 1\n"},
		{"threads: 36\n", "threads: 2\n"},
		{"warmup: 30s\n", "warmup: 1s\n"},
		{"duration: 5m\n", "duration: 2s\n"},
		{"  - run: comparison2014-read\n", "  - pause: 1s\n  - run: comparison2014-read\n"},
	} {
		require.Contains(t, text, r[0], "the built-in suite changed: update the scaling")
		text = strings.ReplaceAll(text, r[0], r[1])
	}
	return text
}

// The scaled suite's measured steps, in order (03 is the pause).
var distSteps = []string{"01-load", "02-bulkload", "04-read", "05-readmostly", "06-updateheavy", "07-readmodifywrite", "08-readlatest", "09-scan", "10-insertread"}

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
			"--tls-ca", filepath.Join(certDir, "ca.pem"), "--token-file", tokenFile, "--lease", "2s"))
		addrs = append(addrs, addr)
	}
	for i, a := range agents {
		waitListening(t, addrs[i], a, time.Minute)
	}
	file := filepath.Join(dir, "comparison2014-scaled.yaml")
	require.NoError(t, os.WriteFile(file, []byte(scaledComparison2014(t)), 0o644))
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
	stepLog := func() string {
		logs, _ := filepath.Glob(filepath.Join(res, "logs", "*-basic-"+distInterrupted+".log"))
		if len(logs) == 0 {
			return ""
		}
		b, _ := os.ReadFile(logs[0])
		return string(b)
	}
	statusLine := regexp.MustCompile(`(?m) sec: \d+ operations;`)
	deadline := time.Now().Add(5 * time.Minute)
	for len(statusLine.FindAllString(stepLog(), -1)) < 2 {
		select {
		case <-sp.done:
			t.Fatalf("the suite ended before %s measured: %s", distInterrupted, sp.res)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never measured; its log:\n%s\nsuite stderr:\n%s", distInterrupted, stepLog(), tail(sp.stderr.String(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	killed := time.Now()
	require.NoError(t, sp.cmd.Process.Signal(syscall.SIGKILL))
	<-sp.done
	t.Logf("suite killed during %s after %s", distInterrupted, killed.Sub(sp.start).Round(time.Millisecond))

	st, err := suite.ReadState(res)
	require.NoError(t, err)
	before := map[string]string{} // dir -> run id of the complete bundles
	for _, s := range st.Steps {
		if code, ok := s.Exit(); s.Status == suite.StatusPending {
			assert.False(t, ok, "pending %s recorded with exit code %d", s.Dir, code)
		}
		if s.Status == suite.StatusPassed && s.Measured() {
			b, err := bundle.Read(filepath.Join(res, s.Dir))
			require.NoError(t, err)
			before[s.Dir] = b.Run.RunID
		}
	}
	assert.Len(t, before, 4, "01, 02, 04 and 05 were complete when the coordinator died: %v", before)

	// The agents stop the orphaned load by themselves (lease 2 s).
	for i, a := range agents {
		waitStderrMatch(t, a, killed, regexp.MustCompile(`load stopped|released`), time.Minute, "agent "+addrs[i]+" ending the orphaned run")
	}

	logsBefore, _ := os.ReadDir(filepath.Join(res, "logs"))
	secure := append(append([]string(nil), tlsFlags...), "--token-file", tokenFile)
	// Another configuration: refused before anything runs, naming what
	// differs (issue 19: a changed -p used to reuse the old bundles).
	r = runCLI(t, 2*time.Minute, "", append([]string{"suite", "--resume", "--results", res, "-p", "recordcount=4000"}, secure...)...)
	requireExit(t, r, 2)
	assert.Contains(t, r.stderr, `basic/01-load: property recordcount: "3000" → "4000"`)
	assert.Contains(t, r.stderr, "basic/05-readmostly")
	logsRefused, _ := os.ReadDir(filepath.Join(res, "logs"))
	assert.Equal(t, len(logsBefore), len(logsRefused), "a refused resume runs nothing")

	// The same configuration resumes (the suite file kept in the
	// results): only the interrupted step and those never reached run.
	r = runCLI(t, 10*time.Minute, "", append([]string{"suite", "--resume", "--results", res}, secure...)...)
	requireExit(t, r, 0)
	assert.Equal(t, 4, strings.Count(r.stderr, "already complete, skipped"), r.stderr)
	for d, id := range before {
		b, err := bundle.Read(filepath.Join(res, d))
		require.NoError(t, err)
		assert.Equal(t, id, b.Run.RunID, "%s ran again", d)
	}
	logsAfter, _ := os.ReadDir(filepath.Join(res, "logs"))
	assert.Equal(t, len(logsBefore)+5, len(logsAfter), "resumed: 06 again, then 07..10")

	st, err = suite.ReadState(res)
	require.NoError(t, err)
	for _, s := range st.Steps {
		switch {
		case s.Kind == suite.KindPause:
			assert.Equal(t, suite.StatusSkipped, s.Status)
		case before[s.Dir] != "":
			assert.Equal(t, suite.StatusResumed, s.Status, s.Dir)
		default:
			assert.Equal(t, suite.StatusPassed, s.Status, s.Dir)
		}
	}

	// Every step's bundle: complete, three agents over TLS with a token,
	// merged counts exact, the environment recorded.
	for _, d := range distSteps {
		b, err := bundle.Read(filepath.Join(res, "basic", d))
		require.NoError(t, err, d)
		checkDistBundle(t, d, b.Run, addrs)
	}

	// suite report rewrites the summaries from the bundles alone.
	for _, f := range []string{"summary.xlsx", "summary.csv", "compare.html"} {
		require.NoError(t, os.Remove(filepath.Join(res, f)))
	}
	requireExit(t, runCLI(t, 2*time.Minute, "", "suite", "report", res), 0)
	checkDistWorkbook(t, filepath.Join(res, "summary.xlsx"), addrs)
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

func checkDistBundle(t *testing.T, d string, r *bundle.Run, addrs []string) {
	t.Helper()
	assert.Equal(t, run.StatusComplete, r.Status, d)
	assert.Equal(t, 0, r.ExitCode, d)
	assert.True(t, r.Config.TLS, "%s: mutual TLS", d)
	assert.True(t, r.Config.Token, "%s: token", d)
	require.Len(t, r.Agents, 3, d)
	var agentOps, intervalOps int64
	for i, a := range r.Agents {
		assert.Equal(t, addrs[i], a.Address, d)
		require.NotNil(t, a.Final, "%s agent %d", d, i)
		assert.Equal(t, a.Final.Operations, a.Operations, "%s agent %d: operations received = its own count", d, i)
		agentOps += a.Operations
	}
	for _, iv := range r.Intervals {
		intervalOps += iv.Operations
	}
	assert.Equal(t, r.Summary.Operations, agentOps, "%s: merged operations = the agents' sum", d)
	assert.Equal(t, r.Summary.Operations, intervalOps, "%s: merged operations = the intervals' sum", d)
	switch d {
	case "01-load", "02-bulkload":
		assert.Equal(t, int64(3000), r.Summary.Operations, d)
	default:
		assert.Greater(t, r.Summary.Operations, int64(0), d)
		assert.Greater(t, r.Summary.WarmupOps, int64(0), "%s warmed up", d)
	}
	threads := map[string]int{"01-load": 2, "02-bulkload": 1}[d]
	if threads == 0 {
		threads = 2
	}
	for _, a := range r.Agents {
		assert.Equal(t, threads, a.Threads, "%s: threads per agent", d)
	}
	e := r.Environment
	require.NotNil(t, e, d)
	require.Len(t, e.Hosts, 3, d)
	host, _ := os.Hostname()
	for i, h := range e.Hosts {
		assert.Equal(t, addrs[i], h.Address, d)
		assert.Equal(t, host, h.Hostname, d)
		assert.Greater(t, h.Cores, 0, d)
		assert.NotZero(t, h.FDLimit, d)
	}
	require.NotNil(t, e.Database, d)
	assert.Equal(t, "basic", e.Database.Adapter)
	assert.Equal(t, addrs[0], e.Database.DescribedBy, "agent 0 describes the database")
	assert.Contains(t, e.Database.Product, "BasicDB")
	require.NotEmpty(t, e.Command, d)
	assert.Equal(t, "suite", e.Command[1], d)
	require.NotNil(t, r.Suite, d)
	assert.Equal(t, "comparison2014", r.Suite.Suite)
}

// checkDistWorkbook reads summary.xlsx back with openpyxl (another
// implementation than the one that wrote it).
func checkDistWorkbook(t *testing.T, xlsx string, addrs []string) {
	t.Helper()
	py := tools.Python(t, "openpyxl")
	script := `
import json, sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1])
out = {"sheets": wb.sheetnames}
for name in ("Overall", "Operations", "Periods", "Environment"):
    out[name] = [[("" if c is None else str(c)) for c in row] for row in wb[name].iter_rows(values_only=True)]
print(json.dumps(out))
`
	out, err := exec.Command(py, "-c", script, xlsx).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var wb struct {
		Sheets      []string   `json:"sheets"`
		Overall     [][]string `json:"Overall"`
		Operations  [][]string `json:"Operations"`
		Periods     [][]string `json:"Periods"`
		Environment [][]string `json:"Environment"`
	}
	require.NoError(t, json.Unmarshal(out, &wb))
	assert.Equal(t, []string{"Overall", "Operations", "Periods", "Hosts", "Environment", "Throughput chart"}, wb.Sheets)
	require.Len(t, wb.Overall, 1+len(distSteps))
	for i, d := range distSteps {
		assert.Equal(t, "basic/"+d, wb.Overall[i+1][len(wb.Overall[i+1])-1])
	}
	assert.Greater(t, len(wb.Operations), len(distSteps))
	assert.Greater(t, len(wb.Periods), 2*len(distSteps), "several intervals per step")
	hosts := map[string]bool{}
	var product string
	for _, row := range wb.Environment[1:] {
		if row[0] == "host" && row[3] == "hostname" {
			hosts[row[2]] = true
		}
		if row[0] == "database" && row[3] == "product" {
			product = row[4]
		}
	}
	want := map[string]bool{}
	for _, a := range addrs {
		want[a] = true
	}
	assert.Equal(t, want, hosts, "the Environment sheet lists every agent's host")
	assert.Contains(t, product, "BasicDB")
}

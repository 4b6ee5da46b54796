//go:build integration

package integration

// Long faults with real processes (the fault matrix, faultmatrix_test.go,
// holds one row per fault):
//
//	Soak               8 agents, random pauses shorter than the lease: complete,
//	                   exit 0, merged operations equal the agents' finals
//	VerdictsRealProcess, ResultsOnAFullFileSystem: single-host verdicts

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultRun is the part of run.json the fault tests read.
type faultRun struct {
	Status        string   `json:"status"`
	StatusReasons []string `json:"status_reasons"`
	ExitCode      int      `json:"exit_code"`
	Summary       struct {
		Operations int64 `json:"operations"`
	} `json:"summary"`
	Agents []struct {
		Address          string            `json:"address"`
		State            string            `json:"state"`
		Operations       int64             `json:"operations_received"`
		MissingIntervals string            `json:"missing_intervals"`
		Error            string            `json:"error"`
		Properties       map[string]string `json:"properties"`
		Final            *struct {
			Operations int64  `json:"operations"`
			Stopped    string `json:"stopped"`
		} `json:"final"`
	} `json:"agents"`
}

func readFaultRun(t *testing.T, dir string) *faultRun {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err, "run.json")
	var r faultRun
	require.NoError(t, json.Unmarshal(b, &r))
	return &r
}

// startAgents starts n agent processes on free loopback ports.
func startAgents(t *testing.T, n int, extra ...string) ([]*cliProc, []string) {
	t.Helper()
	var procs []*cliProc
	var addrs []string
	for _, port := range freePorts(t, n) {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p := startCLI(t, 20*time.Minute, "", append([]string{"agent", "--listen", addr}, extra...)...)
		procs = append(procs, p)
		addrs = append(addrs, addr)
	}
	for i, p := range procs {
		waitListening(t, addrs[i], p, time.Minute)
	}
	return procs, addrs
}

// faultArgs is a timed, paced coordinator run of workload A on the basic
// adapter with a 1 ms simulated delay and a status line every second.
func faultArgs(agents []string, seconds int, dir string, extra ...string) []string {
	args := []string{"coordinator", "run", "basic", "--agents", strings.Join(agents, ","), "-P", "workloada",
		"-p", "recordcount=10000", "-p", "operationcount=0", "-p", "maxexecutiontime=" + strconv.Itoa(seconds), "-target", "600",
		"-p", "basicdb.verbose=false", "-p", "basicdb.simulatedelay=1", "-p", "status.interval=1", "-s", "--results", dir}
	return append(args, extra...)
}

func signal(t *testing.T, p *cliProc, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
}

// TestSoak runs 8 agents while random agents are paused (SIGSTOP, then
// SIGCONT) for random spans always shorter than their lease; the run must
// end complete, exit 0, with the merged operations equal to the sum of the
// agents' own finals. YCSBCTL_SOAK_SECONDS sets its length (default 120;
// the closing note's figures are from 600).
func TestSoak(t *testing.T) {
	seconds := 120
	if v := os.Getenv("YCSBCTL_SOAK_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "YCSBCTL_SOAK_SECONDS")
		seconds = n
	}
	agents, addrs := startAgents(t, 8)
	dir := t.TempDir()
	c := startCLI(t, time.Duration(seconds+180)*time.Second, "", faultArgs(addrs, seconds, dir, "--on-agent-loss", "continue",
		"-p", "status.interval=2")...)
	rng := rand.New(rand.NewPCG(20261122, 8))
	end := time.Now().Add(time.Duration(seconds-5) * time.Second)
	time.Sleep(3 * time.Second)
	pauses := 0
	for time.Now().Before(end) {
		a := agents[rng.IntN(len(agents))]
		// At most 6 s: shorter than the 15 s lease, sometimes longer than
		// the 3 s agent timeout (the agent is declared lost, then comes
		// back).
		d := time.Duration(200+rng.IntN(5800)) * time.Millisecond
		if time.Now().Add(d).After(end) {
			break
		}
		signal(t, a, syscall.SIGSTOP)
		time.Sleep(d)
		signal(t, a, syscall.SIGCONT)
		pauses++
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
	}
	r := c.Wait(t)
	requireExit(t, r, 0)
	run := readFaultRun(t, dir)
	var finals int64
	for _, a := range run.Agents {
		require.NotNil(t, a.Final, a.Address)
		finals += a.Final.Operations
		assert.Empty(t, a.MissingIntervals, a.Address)
	}
	assert.Equal(t, "complete", run.Status, "%v", run.StatusReasons)
	assert.Equal(t, finals, run.Summary.Operations, "merged operations equal the agents' finals")
	t.Logf("soak: %d s, %d pauses, %d operations, status %s, notes %d", seconds, pauses, run.Summary.Operations, run.Status, len(run.StatusReasons))
	fmt.Fprintf(os.Stderr, "SOAK %d s: %d pauses, %d operations merged = %d in finals, %s\n", seconds, pauses, run.Summary.Operations, finals, run.Status)
}

// TestVerdictsRealProcess runs the single-host verdicts through the real
// binary: a run whose every operation fails (an embedded store never
// loaded) says why and exits 5 by default, with run.json agreeing; a run
// of mostly successes exits 0; bounded inputs are refused with exit 2
// before anything runs.
func TestVerdictsRealProcess(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, 2*time.Minute, "", "run", "embedded", "-P", "workloada", "-p", "embedded.dir="+t.TempDir(),
		"-p", "recordcount=1000", "-p", "operationcount=3000", "--results", dir)
	requireExit(t, r, 5)
	assert.Contains(t, r.stderr, "every operation failed")
	assert.Contains(t, r.stderr, "was the data loaded")
	assert.Contains(t, r.stdout, "[NOTE], WARNING: 3000 of 3000 operations failed")
	assert.Equal(t, 5, readFaultRun(t, dir).ExitCode)

	for _, bad := range [][]string{
		{"-threads", "1048576"},
		{"-p", "maxexecutiontime=18446744074"},
		{"-target", "1e-300"},
		{"-p", "status.interval=1e-9"},
		{"-p", "warmuptime=9300000000"},
	} {
		args := append([]string{"run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=100"}, bad...)
		r := runCLI(t, time.Minute, "", args...)
		requireExit(t, r, 2)
		assert.Contains(t, r.stderr, "expected", "%v: the valid range is named", bad)
		assert.NotContains(t, r.stdout, "[OVERALL]", "%v: nothing ran", bad)
	}
	r = runCLI(t, time.Minute, "", "agent", "--lease", "100ms")
	requireExit(t, r, 2)
	assert.Contains(t, r.stderr, "at least 2s")
}

// TestResultsOnAFullFileSystem: results on a file system that fills up
// during the run. The summary still reaches stdout, the exit code says the
// bundle could not be written, and no temporary file is left.
func TestResultsOnAFullFileSystem(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("YCSBCTL_REQUIRE_TOOLS") == "1" {
			t.Fatal("mounting a small tmpfs needs root (CI runs as root)")
		}
		t.Skip("mounting a small tmpfs needs root")
	}
	mnt := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "ycsbctl-full", mnt).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	// Fill it up but for two pages: the directory's lock file takes one,
	// the spool gets its header in the other, then the intervals and the
	// bundle no longer fit. (With one page left the spool's header does
	// not fit: the run then never starts, exit 1, and leaves nothing.)
	filler := filepath.Join(mnt, "filler")
	_ = exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=1k", "count=56").Run()
	dir := filepath.Join(mnt, "bundle")
	r := runCLI(t, 2*time.Minute, "", "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=0",
		"-p", "maxexecutiontime=3", "-target", "2000", "-p", "status.interval=0.5", "--results", dir)
	requireExit(t, r, 1)
	assert.Contains(t, r.stdout, "[OVERALL], RunTime(ms)", "the summary reaches stdout")
	assert.Contains(t, r.stderr, "--results")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		assert.False(t, strings.Contains(e.Name(), ".tmp"), "left behind: %s", e.Name())
	}
}

//go:build integration

package integration

// Faults with real processes: agents and coordinators paused (SIGSTOP),
// killed (SIGKILL) and interrupted (SIGINT), and the verdict each run
// records. No database is needed: the basic adapter's simulated delay
// stands in for one, so what is tested is the harness itself.
//
//	AgentStall         an agent paused 5 s (past --agent-timeout, within its
//	                   lease): it comes back, nothing is lost, complete, 0
//	AgentPastLease     an agent paused past its lease stops its own load: the
//	                   run is partial and run.json names the missing intervals
//	CoordinatorPause   the coordinator paused 8 s: it excuses its agents,
//	                   complete, 0
//	AgentKilledAbort   an agent killed under --on-agent-loss=abort: exit 3,
//	                   and every other agent is free for the next run at once
//	OperatorAbort      two SIGINTs: exit 4, run.json says 4, agents free
//	CoordinatorKilled  the coordinator killed: agents stop within their
//	                   lease, and `ycsbctl report` rebuilds what was merged
//	Soak               8 agents, random pauses shorter than the lease: complete,
//	                   exit 0, merged operations equal the agents' finals

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

	"github.com/ycsbctl/ycsbctl/internal/testutil/bridge"
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
		Address          string `json:"address"`
		State            string `json:"state"`
		Operations       int64  `json:"operations_received"`
		MissingIntervals string `json:"missing_intervals"`
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
		waitListening(t, addrs[i], p, 30*time.Second)
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

// requireFreeForNextRun proves every agent is idle: a new run on all of
// them starts and completes (an agent still busy refuses it).
func requireFreeForNextRun(t *testing.T, agents []string) {
	t.Helper()
	dir := t.TempDir()
	r := runCLI(t, 2*time.Minute, "", faultArgs(agents, 2, dir)...)
	requireExit(t, r, 0)
	assert.NotContains(t, r.stderr, "busy")
}

func TestFaults(t *testing.T) {
	agents, addrs := startAgents(t, 3)

	t.Run("AgentStall", func(t *testing.T) {
		dir := t.TempDir()
		c := startCLI(t, 3*time.Minute, "", faultArgs(addrs, 14, dir, "--on-agent-loss", "continue")...)
		time.Sleep(4 * time.Second)
		signal(t, agents[2], syscall.SIGSTOP)
		time.Sleep(5 * time.Second)
		signal(t, agents[2], syscall.SIGCONT)
		r := c.Wait(t)
		requireExit(t, r, 0)
		run := readFaultRun(t, dir)
		assert.Equal(t, "complete", run.Status, "%v", run.StatusReasons)
		assert.Equal(t, 0, run.ExitCode)
		var finals int64
		for _, a := range run.Agents {
			require.NotNil(t, a.Final, a.Address)
			finals += a.Final.Operations
			assert.Equal(t, a.Final.Operations, a.Operations, "agent %s: every measured operation arrived", a.Address)
			assert.Empty(t, a.MissingIntervals)
		}
		assert.Equal(t, finals, run.Summary.Operations, "nothing lost or counted twice")
		assert.Contains(t, strings.Join(run.StatusReasons, ";"), "came back")
	})

	t.Run("AgentPastLease", func(t *testing.T) {
		// Its own agents, with a short lease, and a bridge that cuts one
		// of them off from the coordinator for longer than that lease:
		// the agent stops its own load, and the run cannot be complete.
		_, shortAddrs := startAgents(t, 2, "--lease", "3s")
		br, err := bridge.New(shortAddrs[1])
		require.NoError(t, err)
		defer func() { _ = br.Close() }()
		dir := t.TempDir()
		c := startCLI(t, 3*time.Minute, "", faultArgs([]string{shortAddrs[0], br.Addr()}, 14, dir, "--on-agent-loss", "continue")...)
		time.Sleep(3 * time.Second)
		br.Cut()
		time.Sleep(7 * time.Second)
		br.Restore()
		r := c.Wait(t)
		requireExit(t, r, 0)
		run := readFaultRun(t, dir)
		assert.Equal(t, "partial", run.Status, "an agent's share was not measured for the whole run")
		assert.NotEmpty(t, run.Agents[1].MissingIntervals, "run.json names the intervals the agent missed")
		assert.Contains(t, strings.Join(run.StatusReasons, ";"), "agent 1")
		assert.Empty(t, run.Agents[0].MissingIntervals)
		assert.Contains(t, r.stderr, "WARNING: results are partial")
	})

	t.Run("CoordinatorPause", func(t *testing.T) {
		dir := t.TempDir()
		c := startCLI(t, 3*time.Minute, "", faultArgs(addrs, 16, dir)...)
		time.Sleep(4 * time.Second)
		signal(t, c, syscall.SIGSTOP)
		time.Sleep(8 * time.Second)
		signal(t, c, syscall.SIGCONT)
		r := c.Wait(t)
		requireExit(t, r, 0)
		run := readFaultRun(t, dir)
		assert.Equal(t, "complete", run.Status, "%v", run.StatusReasons)
		assert.NotContains(t, r.stderr, " lost: ", "a paused coordinator must not blame its agents")
		assert.Contains(t, r.stderr, "coordinator stalled for")
	})

	t.Run("AgentKilledAbort", func(t *testing.T) {
		extra, extraAddr := startAgents(t, 1)
		all := append(append([]string(nil), addrs...), extraAddr...)
		dir := t.TempDir()
		c := startCLI(t, 3*time.Minute, "", faultArgs(all, 30, dir, "--on-agent-loss", "abort")...)
		time.Sleep(3 * time.Second)
		killed := time.Now()
		signal(t, extra[0], syscall.SIGKILL)
		r := c.Wait(t)
		requireExit(t, r, 3)
		assert.Less(t, time.Since(killed), 20*time.Second, "the coordinator aborts promptly")
		run := readFaultRun(t, dir)
		assert.Equal(t, "aborted", run.Status)
		assert.Equal(t, 3, run.ExitCode)
		// The survivors were told to stop at once, not left to their lease.
		start := time.Now()
		requireFreeForNextRun(t, addrs)
		t.Logf("the surviving agents took a new run %s after the abort", time.Since(start).Round(time.Millisecond))
	})

	t.Run("OperatorAbort", func(t *testing.T) {
		dir := t.TempDir()
		// Calls of 2 s: the first SIGINT's graceful stop cannot have
		// ended the run when the second, an abort, arrives.
		c := startCLI(t, 3*time.Minute, "", faultArgs(addrs, 60, dir, "-p", "basicdb.simulatedelay=2000", "-p", "basicdb.randomizedelay=false")...)
		time.Sleep(4 * time.Second)
		signal(t, c, syscall.SIGINT)
		time.Sleep(20 * time.Millisecond)
		_ = c.cmd.Process.Signal(syscall.SIGINT)
		r := c.Wait(t)
		requireExit(t, r, 4)
		run := readFaultRun(t, dir)
		assert.Equal(t, 4, run.ExitCode, "run.json records the exit code the process returned")
		assert.Equal(t, "aborted", run.Status)
		requireFreeForNextRun(t, addrs)
	})

	t.Run("CoordinatorKilled", func(t *testing.T) {
		_, shortAddrs := startAgents(t, 2, "--lease", "3s")
		dir := t.TempDir()
		c := startCLI(t, 3*time.Minute, "", faultArgs(shortAddrs, 60, dir)...)
		time.Sleep(5 * time.Second)
		signal(t, c, syscall.SIGKILL)
		<-c.done
		killed := time.Now()
		// Within the lease (plus a margin for this busy machine) every
		// agent has stopped its load and takes the next run.
		time.Sleep(4 * time.Second)
		requireFreeForNextRun(t, shortAddrs)
		t.Logf("agents free %s after the coordinator was killed", time.Since(killed).Round(time.Millisecond))
		// What was merged before the kill is not lost.
		r := runCLI(t, time.Minute, "", "report", dir)
		requireExit(t, r, 0)
		assert.Contains(t, r.stderr, "Recovered the bundle of an unfinished run")
		run := readFaultRun(t, dir)
		assert.Equal(t, "aborted", run.Status)
		assert.Greater(t, run.Summary.Operations, int64(0))
		assert.Contains(t, strings.Join(run.StatusReasons, ";"), "recovered from the spool")
	})
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
	// Fill it up but for a few KB: the spool gets its header, then the
	// intervals and the bundle no longer fit.
	filler := filepath.Join(mnt, "filler")
	_ = exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=1k", "count=60").Run()
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

package main_test

import (
	"encoding/csv"
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

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// Telemetry through real processes: two agents and a coordinator on this
// host, each agent sampling it; the database process named by
// ycsbctl.telemetry.pids (a real process of the test's); the record, the
// report and the printed summary read back.

// serverStandIn starts a process to stand for a database server: named
// by its pid, it must be found, and its memory reported.
func serverStandIn(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// rawRows reads telemetry.csv.
func rawRows(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, telemetry.RawFile))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}

func TestTelemetryDistributed(t *testing.T) {
	pid := serverStandIn(t)
	a0, a1 := startAgent(t), startAgent(t)
	work := t.TempDir()
	dir := filepath.Join(work, "bundle")
	p := startProc(t, work, "coordinator", "run", "basic", "--agents", a0.addr+","+a1.addr, "-P", "workloada", "-p", "basicdb.verbose=false",
		"-p", "operationcount=0", "-p", "maxexecutiontime=6", "-target", "400", "-threads", "2", "--interval", "2s",
		"-p", "ycsbctl.telemetry.pids="+strconv.Itoa(pid), "--results", dir)
	require.Equal(t, 0, p.wait(t, 2*time.Minute), p.stderr())

	run := readRun(t, dir)
	require.NotNil(t, run.Telemetry, "run.json telemetry")
	require.Len(t, run.Telemetry.Hosts, 2, "one host per agent")
	want := "sleep (pid " + strconv.Itoa(pid) + ")"
	for i, h := range run.Telemetry.Hosts {
		assert.Equal(t, i, h.Agent)
		assert.Equal(t, []string{a0.addr, a1.addr}[i], h.Address)
		assert.NotEmpty(t, h.Hostname)
		assert.Positive(t, h.Cores)
		assert.Contains(t, strings.Join(h.Notes, "\n"), want, "agent %d found the named process", i)
		assert.Equal(t, 1, strings.Count(strings.Join(h.Notes, "\n"), want), "said once")
		require.GreaterOrEqual(t, len(h.Intervals), 2, "agent %d intervals", i)
		for _, iv := range h.Intervals {
			assert.Positive(t, iv.Samples, "agent %d interval %d", i, iv.Seq)
			assert.Equal(t, 1, iv.DB.Count)
			assert.Positive(t, iv.DB.RSSMax, "the stand-in's memory")
			assert.Positive(t, iv.Client.RSSMax, "the agent's own memory")
			assert.InDelta(t, 100, iv.CPU.User+iv.CPU.System+iv.CPU.IOWait+iv.CPU.Steal+iv.CPU.Idle, 0.5)
		}
		// Each host's intervals are the run's intervals of that agent, but
		// for a trailing sliver shorter than the 1 s readings.
		seqs := map[int64]bool{}
		for _, hi := range h.Intervals {
			seqs[hi.Seq] = true
		}
		for _, iv := range run.Intervals {
			for _, a := range iv.Agents {
				if a.Index == i && iv.EndUnixNs-iv.StartUnixNs > int64(1500*time.Millisecond) {
					assert.True(t, seqs[iv.Seq], "agent %d: no telemetry for interval %d", i, iv.Seq)
				}
			}
		}
	}
	// The coordinator says each agent's notes once, with its name.
	assert.Equal(t, 1, strings.Count(p.stderr(), "agent 0 ("+a0.addr+"): "+"telemetry: database processes"), p.stderr())
	assert.Equal(t, 1, strings.Count(p.stderr(), "agent 1 ("+a1.addr+"): "+"telemetry: database processes"), p.stderr())
	// Raw samples of both hosts, on the coordinator's clock, within the run.
	rows := rawRows(t, dir)
	require.Greater(t, len(rows), 6)
	hosts := map[string]bool{}
	for _, r := range rows[1:] {
		hosts[r[0]] = true
		ns, err := strconv.ParseInt(r[2], 10, 64)
		require.NoError(t, err)
		assert.True(t, ns >= run.StartedAt.UnixNano() && ns <= run.EndedAt.UnixNano()+int64(time.Second), "sample at %d outside the run", ns)
	}
	assert.Equal(t, map[string]bool{"0": true, "1": true}, hosts)
	// The summary's verdicts are run.json's.
	summary, err := os.ReadFile(filepath.Join(dir, bundle.FileSummary))
	require.NoError(t, err)
	for _, l := range run.Telemetry.Lines() {
		assert.Contains(t, string(summary), "[NOTE], "+l+", 0")
	}
	assert.Equal(t, len(run.Telemetry.Lines()), strings.Count(string(summary), "[NOTE], Client-bound")+strings.Count(string(summary), "[NOTE], Disk-bound"))

	r := ycsbctl(t, "report", dir)
	require.Equal(t, 0, r.code, r.stderr)
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	for _, id := range []string{"host0-cpu", "host1-cpu", "host0-proc-rss", "host1-net"} {
		assert.Contains(t, string(page), `id="`+id+`"`)
	}
	assert.Contains(t, string(page), "Hosts: where the time went")
}

// Off is off: no section, no raw file, no sampling notes.
func TestTelemetryOff(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	r := ycsbctl(t, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=500",
		"-p", "ycsbctl.telemetry=false", "--results", dir)
	require.Equal(t, 0, r.code, r.stderr)
	run := readRun(t, dir)
	assert.Nil(t, run.Telemetry)
	_, err := os.Stat(filepath.Join(dir, telemetry.RawFile))
	assert.True(t, os.IsNotExist(err), "no telemetry.csv")
	assert.NotContains(t, r.stderr, "telemetry:")
	assert.NotContains(t, r.stderr, "telemetry on")
}

// A pattern that is not one is refused before any load, naming the
// property and what it takes.
func TestTelemetryBadPidsExitsTwo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	r := ycsbctl(t, "run", "basic", "-P", "workloada", "-p", "operationcount=500", "-p", "ycsbctl.telemetry.pids=mongo[", "--results", dir)
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, `ycsbctl.telemetry.pids`)
	assert.Contains(t, r.stderr, "regular expression")
	_, err := os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "nothing was written")
}

// A single host killed mid-run: `report DIR` rebuilds the telemetry of
// every interval it had spooled, with its raw samples, as the builder
// does at the end of a run.
func TestTelemetrySurvivesACrash(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "killed")
	p := startProc(t, work, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=0",
		"-p", "maxexecutiontime=120", "-target", "500", "-threads", "2", "-p", "status.interval=1.5", "-s", "--results", dir)
	p.waitLines(t, `current ops/sec`, 3, 30*time.Second)
	p.signal(syscall.SIGKILL)
	p.wait(t, 10*time.Second)
	r := ycsbctl(t, "report", dir)
	require.Equal(t, 0, r.code, r.stderr)
	run := readRun(t, dir)
	require.NotNil(t, run.Telemetry)
	require.Len(t, run.Telemetry.Hosts, 1)
	h := run.Telemetry.Hosts[0]
	assert.Equal(t, len(run.Intervals), len(h.Intervals), "one telemetry interval per recovered interval (each holds a 1 s reading)")
	assert.GreaterOrEqual(t, len(h.Intervals), 3)
	assert.Greater(t, len(rawRows(t, dir)), len(h.Intervals)/2, "raw samples recovered")
	assert.Equal(t, run.Telemetry.RawFile, telemetry.RawFile)
}

// An agent run as its own user reads another user's database process only
// with CAP_DAC_READ_SEARCH and CAP_SYS_PTRACE (what the Ansible role gives
// it): without them it says so once and still reports CPU and memory,
// with them the I/O counters are read. (The cluster's agents once held
// CAP_SYS_PTRACE alone and could not open /proc/PID/io, mode 0400.)
func TestTelemetryReadsAnotherUsersProcessWithCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run ycsbctl as another user (CI runs as root)")
	}
	setpriv, err := exec.LookPath("setpriv")
	require.NoError(t, err, "setpriv (util-linux)")
	pid := serverStandIn(t) // root's
	// Not under t.TempDir(), whose parent only root may enter.
	work, err := os.MkdirTemp("", "ycsbctl-caps-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	require.NoError(t, os.Chmod(work, 0o777))
	bin := filepath.Join(work, "ycsbctl")
	b, err := os.ReadFile(binary(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	runAs := func(caps, dir string) *bundle.Run {
		args := []string{"--reuid=65534", "--regid=65534", "--clear-groups", "--no-new-privs"}
		if caps != "" {
			args = append(args, "--inh-caps="+caps, "--ambient-caps="+caps)
		}
		args = append(args, bin, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=0",
			"-p", "maxexecutiontime=2", "-target", "200", "-p", "status.interval=1", "-p", "ycsbctl.telemetry.pids="+strconv.Itoa(pid),
			"--results", filepath.Join(work, dir))
		cmd := exec.Command(setpriv, args...)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return readRun(t, filepath.Join(work, dir))
	}
	without := runAs("", "without")
	notes := strings.Join(without.Telemetry.Hosts[0].Notes, "\n")
	assert.Contains(t, notes, "disk I/O and open files cannot be read")
	assert.Positive(t, without.Telemetry.Hosts[0].Summary.DBRSSMax, "memory is still read")
	with := runAs("+dac_read_search,+sys_ptrace", "with")
	notes = strings.Join(with.Telemetry.Hosts[0].Notes, "\n")
	assert.NotContains(t, notes, "cannot be read")
	for _, iv := range with.Telemetry.Hosts[0].Intervals {
		assert.Positive(t, iv.DB.FilesMax, "interval %d: the process' open files are counted", iv.Seq)
	}
	for _, caps := range []string{"+sys_ptrace", "+dac_read_search"} {
		one := runAs(caps, "only"+caps[1:])
		assert.Contains(t, strings.Join(one.Telemetry.Hosts[0].Notes, "\n"), "cannot be read", "%s alone is not enough", caps)
	}
}

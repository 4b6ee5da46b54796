package main_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
)

// The tests of this file hold that a results directory has one owner at a
// time: whatever writes or rebuilds a bundle (a run, a coordinator, a
// capacity search, a suite, report, --overwrite) owns its directory while
// it does, and every other command that would write there is refused at
// once (exit 2) naming the owner's PID, never waits, never deletes; the
// owner's record is whole and says how it ended.

// quiet are the properties of a basic run that prints no operation.
var quiet = []string{"-p", "basicdb.verbose=false"}

// longRun is a single host's run that measures until it is told to stop.
func longRun(dir string, extra ...string) []string {
	return append(append([]string{"run", "basic", "-P", "workloada"}, quiet...), append([]string{"-p", "operationcount=0", "-p", "maxexecutiontime=600",
		"-target", "200", "-p", "status.interval=0.3", "-s", "--results", dir}, extra...)...)
}

// shortRun is a run of a moment into dir.
func shortRun(dir string, extra ...string) []string {
	return append(append([]string{"run", "basic", "-P", "workloada"}, quiet...), append([]string{"-p", "operationcount=200", "--results", dir}, extra...)...)
}

// treeOf is dir's files (the lock file aside) with their content's hash:
// what "intact" and "as it was" compare.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".ycsbctl-lock" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = hex.EncodeToString(sum[:8])
		return nil
	}))
	return out
}

func fileNames(tree map[string]string) []string {
	var out []string
	for k := range tree {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ownerHolder is a command that owns a results directory while the table
// of would-be writers runs against it.
type ownerHolder struct {
	name string
	// start starts it owning dir (work is its working directory) and
	// returns once it is measuring.
	start func(t *testing.T, work, dir string) *proc
	// check verifies, once it ended with code, that its record is whole
	// and says so.
	check func(t *testing.T, dir string, code int)
}

// checkRunRecord: one run's bundle, no spool left, its exit code in
// run.json.
func checkRunRecord(t *testing.T, dir string, code int) {
	t.Helper()
	r := readRun(t, dir)
	assert.Equal(t, code, r.ExitCode, "run.json's exit code is the process'")
	assert.Equal(t, "stopped", string(r.Status))
	assert.NotEmpty(t, r.Intervals)
	checkBundleCounts(t, r)
	spools, _ := filepath.Glob(filepath.Join(dir, ".spool-*"))
	assert.Empty(t, spools)
}

func ownerHolders(agent string) []ownerHolder {
	return []ownerHolder{
		{name: "run", start: func(t *testing.T, work, dir string) *proc {
			p := startProc(t, work, longRun(dir)...)
			p.waitLines(t, `current ops/sec`, 2, 60*time.Second)
			return p
		}, check: checkRunRecord},
		{name: "coordinator run", start: func(t *testing.T, work, dir string) *proc {
			args := append(append([]string{"coordinator", "run", "basic", "--agents", agent, "-P", "workloada"}, quiet...),
				"-p", "operationcount=0", "-p", "maxexecutiontime=600", "-target", "200", "--interval", "300ms", "-s", "--results", dir)
			p := startProc(t, work, args...)
			p.waitLines(t, `current ops/sec`, 2, 60*time.Second)
			return p
		}, check: checkRunRecord},
		{name: "capacity", start: func(t *testing.T, work, dir string) *proc {
			args := append(append([]string{"capacity", "basic", "-P", "workloadc"}, quiet...), "-threads", "1", "--slo", "READ.p99<=1h",
				"--max-error-rate", "1", "--probe", "600s", "--warmup", "0s", "--start", "100", "--interval", "300ms", "-s", "--results", dir)
			p := startProc(t, work, args...)
			p.waitLines(t, `current ops/sec`, 2, 60*time.Second)
			return p
		}, check: func(t *testing.T, dir string, code int) {
			rec, err := capacity.Read(dir)
			require.NoError(t, err)
			assert.Equal(t, code, rec.ExitCode, "capacity.json's exit code is the process'")
			assert.Equal(t, capacity.StatusStopped, rec.Status)
			checkRunRecord(t, filepath.Join(dir, bundle.ProbeDir(1)), code)
		}},
		{name: "suite", start: func(t *testing.T, work, dir string) *proc {
			file := filepath.Join(work, "held.yaml")
			require.NoError(t, os.WriteFile(file, []byte(`name: held
properties: {status.interval: 0.3, basicdb.verbose: false, target: 200}
databases: [basic]
steps:
  - run: workloada
    duration: 600s
`), 0o644))
			p := startProc(t, work, "suite", file, "--results", dir)
			waitFor(t, "the step's spool", func() bool {
				m, _ := filepath.Glob(filepath.Join(dir, "basic", "*", ".spool-*"))
				return len(m) == 1
			}, p.stderr)
			return p
		}, check: func(t *testing.T, dir string, code int) {
			steps, err := filepath.Glob(filepath.Join(dir, "basic", "*"))
			require.NoError(t, err)
			require.Len(t, steps, 1, "one step")
			r := readRun(t, steps[0])
			assert.Equal(t, 6, r.ExitCode, "the step was stopped by the SIGTERM")
			assert.NotZero(t, code)
			assert.FileExists(t, filepath.Join(dir, "suite.json"))
		}},
	}
}

// writer is a command that would write into dir.
type writer struct {
	name string
	args func(dir string) []string
}

// writers are the commands that write into a results directory, each
// given the held directory and a finished bundle elsewhere.
func writers(work, other, agent string) []writer {
	suite := filepath.Join(work, "writer.yaml")
	_ = os.WriteFile(suite, []byte("name: writer\nproperties: {basicdb.verbose: false}\ndatabases: [basic]\nsteps:\n  - run: workloada\n    operations: 100\n"), 0o644)
	dist := func(verb, dir string) []string {
		return append(append([]string{"coordinator", verb, "basic", "--agents", agent, "-P", "workloada"}, quiet...), "-p", "operationcount=100", "--results", dir)
	}
	return []writer{
		{"run", func(dir string) []string { return shortRun(dir) }},
		{"load", func(dir string) []string {
			return append(append([]string{"load", "basic", "-P", "workloada"}, quiet...), "-p", "recordcount=100", "--results", dir)
		}},
		{"run --overwrite", func(dir string) []string { return shortRun(dir, "--overwrite") }},
		{"coordinator run", func(dir string) []string { return dist("run", dir) }},
		{"coordinator load", func(dir string) []string { return dist("load", dir) }},
		{"coordinator run --overwrite", func(dir string) []string { return append(dist("run", dir), "--overwrite") }},
		{"capacity", func(dir string) []string {
			return append(append([]string{"capacity", "basic", "-P", "workloadc"}, quiet...), "--slo", "READ.p99<=1h", "--probe", "1s", "--warmup", "0s", "--results", dir)
		}},
		{"capacity --overwrite", func(dir string) []string {
			return append(append([]string{"capacity", "basic", "-P", "workloadc"}, quiet...), "--slo", "READ.p99<=1h", "--probe", "1s", "--warmup", "0s", "--results", dir, "--overwrite")
		}},
		{"suite", func(dir string) []string { return []string{"suite", suite, "--results", dir} }},
		{"suite --resume", func(dir string) []string { return []string{"suite", suite, "--resume", "--results", dir} }},
		{"suite report", func(dir string) []string { return []string{"suite", "report", dir} }},
		{"report", func(dir string) []string { return []string{"report", dir} }},
		{"report --format csv", func(dir string) []string { return []string{"report", dir, "--format", "csv"} }},
		{"report -o", func(dir string) []string { return []string{"report", other, "-o", filepath.Join(dir, "copy.html")} }},
		{"compare -o", func(dir string) []string {
			return []string{"compare", other, other, "-o", filepath.Join(dir, "compare.html")}
		}},
		{"exportfile", func(dir string) []string {
			return shortRun(filepath.Join(work, "elsewhere"), "-p", "exportfile="+filepath.Join(dir, "summary-copy.txt"))
		}},
	}
}

// Every command that writes into a results directory, against each kind
// of live owner: each is refused at once with exit 2 naming the owner's
// PID, and the owner, told to stop afterwards, ends with a whole record
// whose exit code is its own. (report used to take a live run's spool for
// a crash's and remove it: the run then exited 1 with 3 s of 8 in a
// bundle stamped "killed or crashed"; --overwrite deleted its spool.)
func TestResultsDirHasOneOwner(t *testing.T) {
	agent := startAgent(t)
	for _, h := range ownerHolders(agent.addr) {
		t.Run(h.name, func(t *testing.T) {
			work := t.TempDir()
			other := filepath.Join(work, "other")
			r := ycsbctl(t, shortRun(other)...)
			require.Equal(t, 0, r.code, r.stderr)
			dir := filepath.Join(work, "held")
			p := h.start(t, work, dir)
			pid := fmt.Sprintf("PID %d", p.cmd.Process.Pid)
			for _, w := range writers(work, other, agent.addr) {
				args := w.args(dir)
				r := ycsbctl(t, args...)
				assert.Equal(t, 2, r.code, "%s: %v\n%s", w.name, args, r.stderr)
				assert.Contains(t, r.stderr, pid, "%s: the refusal names the owner", w.name)
				// A file named inside the directory, or the directory.
				if strings.Contains(strings.Join(args, " "), dir+"/") {
					assert.Contains(t, r.stderr, "is inside "+dir+", which is in use by "+pid, w.name)
				} else {
					assert.Contains(t, r.stderr, dir+" is in use by "+pid, w.name)
				}
				assert.NotContains(t, r.stdout, "[OVERALL]", "%s: refused before any load", w.name)
			}
			assert.NoDirExists(t, filepath.Join(work, "elsewhere"), "a run refused for its exportfile leaves no results directory")
			p.signal(syscall.SIGTERM)
			code := p.wait(t, 60*time.Second)
			h.check(t, dir, code)
		})
	}
}

// A stopped owner (SIGSTOP) still owns its directory; a killed one
// (SIGKILL) does not, and the next owner says whose lock it took over,
// then rebuilds the bundle from the spool.
func TestDeadOwnerIsTakenOver(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "r")
	p := startProc(t, work, longRun(dir)...)
	p.waitLines(t, `current ops/sec`, 2, 60*time.Second)
	pid := p.cmd.Process.Pid

	p.signal(syscall.SIGSTOP)
	r := ycsbctl(t, "report", dir)
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, fmt.Sprintf("PID %d", pid))
	p.signal(syscall.SIGCONT)

	p.signal(syscall.SIGKILL)
	require.Equal(t, 128+int(syscall.SIGKILL), p.wait(t, 10*time.Second))
	r = ycsbctl(t, "report", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, fmt.Sprintf("took over the lock of PID %d (ycsbctl run basic", pid))
	assert.Contains(t, r.stderr, "no longer running")
	assert.Contains(t, r.stderr, "Recovered the bundle of an unfinished run")
	assert.Equal(t, bundle.RecoveredExitCode, readRun(t, dir).ExitCode)
}

// Two runs started at once into one new directory, on one host or each
// over its own agent: one owns it and writes its bundle, the other is
// refused (exit 2) naming it. (Both used to exit 0 and print "Results: D"
// over one bundle: nothing kept the second out between the first's check
// of the directory and its spool, which a coordinator starts only after
// reaching its agents.)
func TestConcurrentRunsOneOwner(t *testing.T) {
	a0, a1 := startAgent(t), startAgent(t)
	single := func(dir, _ string) []string {
		return shortRun(dir, "-p", "operationcount=0", "-p", "maxexecutiontime=3", "-target", "200")
	}
	dist := func(dir, agent string) []string {
		return append(append([]string{"coordinator", "run", "basic", "--agents", agent, "-P", "workloada"}, quiet...),
			"-p", "operationcount=0", "-p", "maxexecutiontime=3", "-target", "200", "--results", dir)
	}
	for _, tc := range []struct {
		name string
		args func(dir, agent string) []string
	}{{"single host", single}, {"coordinator", dist}} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			dir := filepath.Join(work, "r")
			concurrentRuns(t, work, dir, tc.args(dir, a0.addr), tc.args(dir, a1.addr))
		})
	}
}

func concurrentRuns(t *testing.T, work, dir string, argsA, argsB []string) {
	a, b := startProc(t, work, argsA...), startProc(t, work, argsB...)
	ca, cb := a.wait(t, 60*time.Second), b.wait(t, 60*time.Second)
	winner, loser, lc := a, b, cb
	if ca != 0 {
		winner, loser, lc = b, a, ca
	}
	require.Equal(t, []int{0, 2}, []int{min(ca, cb), max(ca, cb)}, "one owner, one refused:\n%s\n---\n%s", a.stderr(), b.stderr())
	require.Equal(t, 2, lc)
	if !strings.Contains(loser.stderr(), "already holds the results of a run") {
		// It came while the winner ran: refused for its owner.
		assert.Contains(t, loser.stderr(), fmt.Sprintf("PID %d", winner.cmd.Process.Pid))
	}
	assert.Contains(t, winner.stderr(), "Results: "+dir)
	assert.NotContains(t, loser.stderr(), "Results: ")
	run := readRun(t, dir)
	assert.Equal(t, 0, run.ExitCode)
	checkBundleCounts(t, run)
}

// silentAgent is a port that accepts connections and never answers: a
// coordinator waits on it until it is killed.
func silentAgent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// --overwrite keeps the old bundle until the new run has measured: a run
// that never starts (database or agent unreachable, an agent that cannot
// prepare, a capacity search whose probe cannot start) leaves the
// directory as it was, and so does one killed before it measured (the
// next owner puts the bundle back, and says so); one killed after it
// measured has replaced it (the next owner removes the old one, and says
// so). (The old bundle used to be removed first: an unreachable database
// left the directory empty.)
func TestOverwriteKeepsTheOldBundleUntilTheNewMeasures(t *testing.T) {
	work := t.TempDir()
	badAgent := startAgent(t, "-p", "embedded.dir=/dev/null/cannot-exist")
	unreachable := []string{"-p", "hosts=127.0.0.1", "-p", "port=1", "-p", "cassandra.connecttimeoutmillis=500"}
	fresh := func(t *testing.T) (string, string, map[string]string) {
		dir := filepath.Join(t.TempDir(), "r")
		r := ycsbctl(t, shortRun(dir)...)
		require.Equal(t, 0, r.code, r.stderr)
		r = ycsbctl(t, "report", dir)
		require.Equal(t, 0, r.code, r.stderr)
		return dir, readRun(t, dir).RunID, treeOf(t, dir)
	}
	for _, tc := range []struct {
		name string
		args func(dir string) []string
		code int
	}{
		{"database unreachable", func(dir string) []string {
			return append(append([]string{"run", "cassandra", "-P", "workloada"}, unreachable...), "--results", dir, "--overwrite")
		}, 1},
		{"agent unreachable", func(dir string) []string {
			return []string{"coordinator", "run", "basic", "--agents", "127.0.0.1:1", "-P", "workloada", "--results", dir, "--overwrite"}
		}, 1},
		{"agent cannot prepare", func(dir string) []string {
			return []string{"coordinator", "run", "embedded", "--agents", badAgent.addr, "-P", "workloada", "--results", dir, "--overwrite"}
		}, 1},
		{"capacity probe cannot start", func(dir string) []string {
			return append(append([]string{"capacity", "cassandra", "-P", "workloadc"}, unreachable...), "--slo", "READ.p99<=1h", "--probe", "1s", "--warmup", "0s",
				"--results", dir, "--overwrite")
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, id, before := fresh(t)
			r := ycsbctl(t, tc.args(dir)...)
			assert.Equal(t, tc.code, r.code, r.stderr)
			assert.Contains(t, r.stderr, "put back the bundle that was set aside")
			assert.Equal(t, before, treeOf(t, dir), "the directory is as it was")
			assert.Equal(t, id, readRun(t, dir).RunID)
		})
	}

	t.Run("killed before it measured", func(t *testing.T) {
		dir, id, before := fresh(t)
		p := startProc(t, work, "coordinator", "run", "basic", "--agents", silentAgent(t), "-P", "workloada", "--results", dir, "--overwrite")
		waitFor(t, "the old bundle set aside", func() bool {
			m, _ := filepath.Glob(filepath.Join(dir, ".ycsbctl-replaced-*"))
			return len(m) == 1
		}, p.stderr)
		p.signal(syscall.SIGKILL)
		p.wait(t, 10*time.Second)
		// Any next owner settles it; this one is then refused, for the
		// bundle is back.
		r := ycsbctl(t, shortRun(dir)...)
		assert.Equal(t, 2, r.code, r.stderr)
		assert.Contains(t, r.stderr, "put back the bundle that was set aside")
		assert.Contains(t, r.stderr, "already holds the results of a run")
		assert.Equal(t, before, treeOf(t, dir))
		assert.Equal(t, id, readRun(t, dir).RunID)
	})

	t.Run("killed after it measured", func(t *testing.T) {
		dir, id, _ := fresh(t)
		p := startProc(t, work, longRun(dir, "--overwrite")...)
		p.waitLines(t, `current ops/sec`, 2, 60*time.Second)
		p.signal(syscall.SIGKILL)
		p.wait(t, 10*time.Second)
		r := ycsbctl(t, "report", dir)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stderr, "removed the bundle --overwrite had set aside")
		assert.Contains(t, r.stderr, "Recovered the bundle of an unfinished run")
		run := readRun(t, dir)
		assert.NotEqual(t, id, run.RunID, "the new run's bundle")
		assert.Equal(t, bundle.RecoveredExitCode, run.ExitCode)
		left, _ := filepath.Glob(filepath.Join(dir, ".ycsbctl-replac*"))
		assert.Empty(t, left)
	})
}

// An output the user names never replaces part of a bundle's record: -o
// of report and compare, exportfile, the HdrHistogram log and raw samples
// naming run.json, summary.txt, merged.hlog or telemetry.csv of a bundle,
// by name, through a symbolic link or a hard link, are refused (exit 2,
// naming the flag and the file) before anything is written. (`report D
// -o D/run.json` used to write HTML over run.json, exit 0.)
func TestOutputsNeverReplaceARecord(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "b")
	r := ycsbctl(t, shortRun(dir)...)
	require.Equal(t, 0, r.code, r.stderr)
	link := filepath.Join(work, "latest.json")
	require.NoError(t, os.Symlink(filepath.Join(dir, bundle.FileRunJSON), link))
	hard := filepath.Join(work, "copy.txt")
	require.NoError(t, os.Link(filepath.Join(dir, bundle.FileSummary), hard))
	before := treeOf(t, dir)
	elsewhere := filepath.Join(work, "e")
	for _, tc := range []struct {
		args       []string
		flag, file string
	}{
		{[]string{"report", dir, "-o", filepath.Join(dir, "run.json")}, "-o", "run.json"},
		{[]string{"report", dir, "--format", "csv", "-o", filepath.Join(dir, "summary.txt")}, "-o", "summary.txt"},
		{[]string{"report", dir, "-o", link}, "-o", "run.json"},
		{[]string{"report", dir, "-o", hard}, "-o", "summary.txt"},
		{[]string{"compare", dir, dir, "-o", filepath.Join(dir, "merged.hlog")}, "-o", "merged.hlog"},
		{[]string{"compare", dir, "--format", "csv", "-o", filepath.Join(dir, "telemetry.csv")}, "-o", "telemetry.csv"},
		{shortRun(elsewhere, "-p", "exportfile="+filepath.Join(dir, "summary.txt")), `"exportfile"`, "summary.txt"},
		{shortRun(elsewhere, "-p", "hdrhistogram.fileoutput=true", "-p", "hdrhistogram.output.path="+filepath.Join(dir, "merged.hlog")), `"hdrhistogram.output.path"`, "merged.hlog"},
		{shortRun(elsewhere, "-p", "measurementtype=raw", "-p", "measurement.raw.output_file="+filepath.Join(dir, "run.json")), `"measurement.raw.output_file"`, "run.json"},
		{shortRun(dir, "--overwrite", "-p", "exportfile="+filepath.Join(dir, "summary.txt")), `"exportfile"`, "summary.txt"},
	} {
		r := ycsbctl(t, tc.args...)
		assert.Equal(t, 2, r.code, "%v\n%s", tc.args, r.stderr)
		assert.Contains(t, r.stderr, tc.flag, "%v", tc.args)
		assert.Contains(t, r.stderr, tc.file, "%v", tc.args)
		assert.NotContains(t, r.stdout, "[OVERALL]", "%v", tc.args)
		assert.Equal(t, before, treeOf(t, dir), "%v: the bundle is untouched", tc.args)
	}
	assert.NoDirExists(t, elsewhere)
	// A report of its own, in the bundle or anywhere, is not a record.
	r = ycsbctl(t, "report", dir, "-o", filepath.Join(dir, "report.html"))
	require.Equal(t, 0, r.code, r.stderr)
}

// A capacity search killed mid-way: the next owner (report) marks its
// record as ended without an ending (status aborted, exit code unknown),
// as a run's rebuilt bundle is, and says so. (capacity.json said
// "running", exit code 0, for good.)
func TestKilledCapacitySearchIsMarked(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "cap")
	args := append(append([]string{"capacity", "basic", "-P", "workloadc"}, quiet...), "-threads", "1", "--slo", "READ.p99<=1h",
		"--max-error-rate", "1", "--probe", "600s", "--warmup", "0s", "--start", "100", "--interval", "300ms", "-s", "--results", dir)
	p := startProc(t, work, args...)
	p.waitLines(t, `current ops/sec`, 2, 60*time.Second)
	p.signal(syscall.SIGKILL)
	p.wait(t, 10*time.Second)

	r := ycsbctl(t, "report", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "marked aborted, exit code unknown")
	assert.Contains(t, r.stderr, "Recovered the bundle of an unfinished probe")
	b, err := os.ReadFile(filepath.Join(dir, capacity.FileRecord))
	require.NoError(t, err)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(b, &rec))
	assert.Equal(t, "aborted", rec["status"])
	assert.InDelta(t, float64(bundle.RecoveredExitCode), rec["exit_code"], 0)
	assert.Contains(t, rec["error"], "killed or crashed")
	page, err := os.ReadFile(filepath.Join(dir, bundle.FileReport))
	require.NoError(t, err)
	assert.Contains(t, string(page), "killed or crashed")
}

// What a writer killed during its final write leaves (outfile's temporary
// files) is debris, not a result: a new run into that directory is not
// refused for it, and its next owner removes it, saying so.
func TestDebrisOfAKilledWriteIsNotAResult(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "r")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for _, n := range []string{".merged.hlog.tmp-0123456789ab", ".telemetry.csv.tmp-ba9876543210"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("half"), 0o644))
	}
	r := ycsbctl(t, shortRun(dir)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "removed 2 temporary files of writes a killed process did not finish")
	left := fileNames(treeOf(t, dir))
	assert.Contains(t, left, "run.json")
	for _, n := range left {
		assert.NotContains(t, n, ".tmp-")
	}
}

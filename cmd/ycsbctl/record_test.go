package main_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/version"
)

// proc is a ycsbctl process running in the background, its output
// captured; lines receives its stderr line by line.
type proc struct {
	cmd   *exec.Cmd
	start time.Time
	mu    sync.Mutex
	out   strings.Builder
	errb  strings.Builder
	lines chan string
	done  chan struct{}
	code  int
	took  time.Duration
}

// startProc starts bin/ycsbctl with args in dir.
func startProc(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	p := &proc{cmd: cmd, lines: make(chan string, 4096), done: make(chan struct{}), start: time.Now()}
	require.NoError(t, cmd.Start())
	var wg sync.WaitGroup
	wg.Add(2)
	copyLines := func(r io.Reader, into *strings.Builder, lines chan string) {
		defer wg.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			into.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if lines != nil {
				select {
				case lines <- sc.Text():
				default:
				}
			}
		}
	}
	go copyLines(stdout, &p.out, nil)
	go copyLines(stderr, &p.errb, p.lines)
	go func() {
		wg.Wait()
		err := cmd.Wait()
		p.took = time.Since(p.start)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.code = 128 + int(ws.Signal())
			}
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("ycsbctl %s\n--- stderr:\n%s--- stdout (tail):\n%s", strings.Join(args, " "), p.stderr(), tailOf(p.stdout(), 3000))
		}
	})
	return p
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func (p *proc) stdout() string { p.mu.Lock(); defer p.mu.Unlock(); return p.out.String() }
func (p *proc) stderr() string { p.mu.Lock(); defer p.mu.Unlock(); return p.errb.String() }

func (p *proc) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// wait waits for the process to exit, within d, and returns its exit code
// (128+N when a signal N killed it).
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		t.Fatalf("ycsbctl still running after %s:\n%s", d, p.stderr())
		return -1
	}
}

// waitLines waits for n stderr lines matching re.
func (p *proc) waitLines(t *testing.T, re string, n int, d time.Duration) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(d)
	for n > 0 {
		select {
		case l := <-p.lines:
			if rx.MatchString(l) {
				n--
			}
		case <-p.done:
			t.Fatalf("ycsbctl exited (%d) while waiting for %q:\n%s", p.code, re, p.stderr())
		case <-deadline:
			t.Fatalf("no %q within %s:\n%s", re, d, p.stderr())
		}
	}
}

// readRun reads dir's run.json.
func readRun(t *testing.T, dir string) *bundle.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, bundle.FileRunJSON))
	require.NoError(t, err, "run.json")
	var r bundle.Run
	require.NoError(t, json.Unmarshal(b, &r))
	return &r
}

// hlogTags counts merged.hlog's lines by tag suffix ("all", "agent-0").
func hlogTags(t *testing.T, dir string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, bundle.FileHlog))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	out := map[string]int{}
	require.NoError(t, bundle.ScanHlog(f, func(l *bundle.HlogLine) error {
		out[l.Agent]++
		return nil
	}))
	return out
}

// A single host killed with SIGKILL mid-run leaves its spool; `ycsbctl
// report DIR` rebuilds from it the bundle of every interval measured
// until then, with the run's metadata, marked aborted with its exit code
// unknown. (It used to leave only merged.hlog, and report exited 2.)
func TestSingleHostKilledThenReport(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "killed")
	p := startProc(t, work, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=0", "-p", "maxexecutiontime=120",
		"-target", "600", "-threads", "3", "-p", "status.interval=0.3", "-s", "--results", dir)
	p.waitLines(t, `current ops/sec`, 3, 30*time.Second)
	p.signal(syscall.SIGKILL)
	require.Equal(t, 128+int(syscall.SIGKILL), p.wait(t, 10*time.Second))

	r := ycsbctl(t, "report", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "Recovered the bundle of an unfinished run")
	run := readRun(t, dir)
	assert.Equal(t, "aborted", string(run.Status))
	assert.Equal(t, bundle.RecoveredExitCode, run.ExitCode)
	assert.Contains(t, run.ExitReason, "unknown")
	assert.Contains(t, strings.Join(run.StatusReasons, ";"), "recovered from the spool")
	// The metadata written when the run started.
	assert.Equal(t, "single-host", run.Mode)
	assert.Equal(t, version.Version, run.Version)
	assert.Equal(t, "basic", run.DB)
	assert.Contains(t, strings.Join(run.Config.CommandLine, " "), "run basic -P workloada")
	assert.Equal(t, []string{"local"}, run.Config.Agents)
	require.Len(t, run.Agents, 1)
	assert.Equal(t, 3, run.Agents[0].Threads)
	assert.Equal(t, "local", run.Agents[0].Address)
	assert.NotNil(t, run.Environment)
	// Every interval measured before the kill, and figures that agree.
	require.GreaterOrEqual(t, len(run.Intervals), 3)
	checkBundleCounts(t, run)
	tags := hlogTags(t, dir)
	assert.Equal(t, len(run.Intervals), tags["agent-0"]/2, "merged.hlog: READ and UPDATE per interval for agent 0")
	assert.Equal(t, tags["agent-0"], tags["all"], "merged.hlog: the merge beside the agent")
	assert.FileExists(t, filepath.Join(dir, bundle.FileReport))
	assert.FileExists(t, filepath.Join(dir, bundle.FileSummary))
}

// A coordinator killed mid-run: the rebuilt bundle carries the run's
// metadata (version, threads, the clock-offset limit, agents with their
// clock offsets and round trips, the command line), which it used to lose.
func TestCoordinatorKilledRebuildCarriesMetadata(t *testing.T) {
	a0, a1 := startAgent(t), startAgent(t)
	work := t.TempDir()
	dir := filepath.Join(work, "killed")
	p := startProc(t, work, "coordinator", "run", "basic", "--agents", a0.addr+","+a1.addr, "-P", "workloada", "-p", "basicdb.verbose=false",
		"-p", "operationcount=0", "-p", "maxexecutiontime=120", "-target", "600", "-threads", "2", "--interval", "300ms", "-s", "--results", dir)
	p.waitLines(t, `current ops/sec`, 3, 30*time.Second)
	p.signal(syscall.SIGKILL)
	p.wait(t, 10*time.Second)

	r := ycsbctl(t, "report", dir)
	require.Equal(t, 0, r.code, r.stderr)
	run := readRun(t, dir)
	assert.Equal(t, "aborted", string(run.Status))
	assert.Equal(t, bundle.RecoveredExitCode, run.ExitCode)
	assert.Equal(t, "distributed", run.Mode)
	assert.Equal(t, version.Version, run.Version)
	assert.Equal(t, int64(time.Second), run.Config.MaxClockOffsetNs)
	assert.Equal(t, "abort", run.Config.OnAgentLoss)
	assert.Contains(t, strings.Join(run.Config.CommandLine, " "), "coordinator run basic --agents")
	assert.NotNil(t, run.Plan)
	require.Len(t, run.Agents, 2)
	for i, a := range run.Agents {
		assert.Equal(t, 2, a.Threads, "agent %d threads", i)
		assert.Positive(t, a.RTTNs, "agent %d round trip", i)
		assert.NotEmpty(t, a.Hostname, "agent %d host", i)
		assert.Equal(t, []string{a0.addr, a1.addr}[i], a.Address)
		// The coordinator died, not the agents: what is known is said,
		// never "lost" (both used to be marked lost).
		assert.Equal(t, "unknown", string(a.State), "agent %d state", i)
		assert.Contains(t, a.Error, "coordinator ended before this agent's end was known", "agent %d", i)
	}
	require.GreaterOrEqual(t, len(run.Intervals), 3)
	checkBundleCounts(t, run)
	tags := hlogTags(t, dir)
	assert.Positive(t, tags["agent-0"])
	assert.Positive(t, tags["agent-1"])
	assert.Positive(t, tags["all"])
}

// checkBundleCounts checks that run.json agrees with itself: every
// interval's operations are the sum of its agents' and of its series'
// counts (CLEANUP aside), and the summary's are the sum of the intervals'.
func checkBundleCounts(t *testing.T, run *bundle.Run) {
	t.Helper()
	var sum int64
	for _, iv := range run.Intervals {
		sum += iv.Operations
		var agents int64
		for _, a := range iv.Agents {
			agents += a.Operations
		}
		assert.Equal(t, iv.Operations, agents, "interval %d: agents' operations", iv.Seq)
		assert.Equal(t, iv.Operations, callCount(iv.Series), "interval %d: calls of its series", iv.Seq)
	}
	assert.Equal(t, run.Summary.Operations, sum, "summary operations = sum of the intervals'")
	assert.Equal(t, run.Summary.Operations, callCount(run.Summary.Series), "summary operations = calls of its series")
	var agents int64
	for _, a := range run.Agents {
		agents += a.Operations
	}
	assert.Equal(t, run.Summary.Operations, agents, "summary operations = agents' operations")
}

// callCount sums the counts of the series that are a transaction's one
// call (workloads without read-modify-write): every operation's series,
// failures included, but not CLEANUP nor the intended-latency copies.
func callCount(series []bundle.SeriesStats) int64 {
	var n int64
	for _, s := range series {
		if strings.HasPrefix(s.Series, "CLEANUP") || strings.HasPrefix(s.Series, "Intended-") {
			continue
		}
		n += s.Count
	}
	return n
}

// `--results DIR` never replaces a bundle silently: a directory holding
// one (run.json, a spool, a report) is refused, naming it and the way
// out, before any load; --overwrite replaces it, report.html included.
// (A second run used to replace run.json and leave the first run's
// report.html beside it.)
func TestResultsNeverClobbered(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "r")
	args := []string{"run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=300", "--results", dir}
	first := ycsbctl(t, args...)
	require.Equal(t, 0, first.code, first.stderr)
	r := ycsbctl(t, "report", dir)
	require.Equal(t, 0, r.code, r.stderr)
	id := readRun(t, dir).RunID

	again := ycsbctl(t, args...)
	assert.Equal(t, 2, again.code, again.stderr)
	assert.Contains(t, again.stderr, dir)
	assert.Contains(t, again.stderr, "--overwrite")
	assert.NotContains(t, again.stdout, "[OVERALL]", "refused before any load")
	assert.Equal(t, id, readRun(t, dir).RunID, "the first bundle is intact")
	assert.FileExists(t, filepath.Join(dir, bundle.FileReport))

	over := ycsbctl(t, append(args, "--overwrite")...)
	require.Equal(t, 0, over.code, over.stderr)
	assert.NotEqual(t, id, readRun(t, dir).RunID)
	assert.NoFileExists(t, filepath.Join(dir, bundle.FileReport), "the old run's report went with it")

	// A spool (a run killed in this directory) is a bundle too.
	spooled := filepath.Join(work, "spooled")
	require.NoError(t, os.Mkdir(spooled, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(spooled, ".spool-x"), []byte("ycsbctl-spool 2\n"), 0o600))
	refused := ycsbctl(t, "coordinator", "run", "basic", "--agents", "127.0.0.1:1", "-P", "workloada", "--results", spooled)
	assert.Equal(t, 2, refused.code, refused.stderr)
	assert.Contains(t, refused.stderr, ".spool-x")
}

// A run that cannot start (the database unreachable, an agent that fails
// to prepare) leaves nothing: no results directory, not a directory
// holding only merged.hlog.
func TestFailedStartLeavesNothing(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "results", "a")
	r := ycsbctl(t, "run", "cassandra", "-P", "workloada", "-p", "hosts=127.0.0.1", "-p", "port=1", "-p", "cassandra.connecttimeoutmillis=500", "--results", dir)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.NoDirExists(t, filepath.Join(work, "results"), "the directories the run would have written are gone")

	bad := startAgent(t, "-p", "embedded.dir=/dev/null/cannot-exist")
	r = ycsbctl(t, "coordinator", "run", "embedded", "--agents", bad.addr, "-P", "workloada", "--results", dir)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "failed to prepare")
	assert.NoDirExists(t, filepath.Join(work, "results"))
}

// One SIGTERM (here from timeout(1)) stops gracefully; calls that do not
// return within ycsbctl.stopgrace are then aborted, counted as CANCELLED,
// and the bundle is written: exit 4. (`timeout 15 ycsbctl run basic -p
// basicdb.simulatedelay=<huge>` used to be alive 10 minutes later.)
func TestStopGraceAbortsStuckCalls(t *testing.T) {
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Fatal("timeout(1) is needed")
	}
	work := t.TempDir()
	dir := filepath.Join(work, "r")
	cmd := exec.Command("timeout", "--preserve-status", "2", binary(t), "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false",
		"-p", "basicdb.simulatedelay=99999999999", "-p", "basicdb.randomizedelay=false", "-threads", "3", "-p", "ycsbctl.stopgrace=2", "--results", dir)
	cmd.Dir = work
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("still running 30 s after start (timeout 2 s + grace 2 s), then killed (%v):\n%s", <-done, stderr.String())
	}
	took := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	t.Logf("ended %s after start (SIGTERM at 2 s, grace 2 s)", took.Round(time.Millisecond))
	require.Equal(t, 4, code, stderr.String())
	assert.Less(t, took, 2*time.Second+2*time.Second+10*time.Second)
	assert.Contains(t, stderr.String(), "Interrupted (SIGTERM): stopping gracefully")
	assert.Contains(t, stderr.String(), "ycsbctl.stopgrace")
	cancelled := regexp.MustCompile(`\[(READ|UPDATE)\], Return=CANCELLED, (\d+)`).FindAllStringSubmatch(stdout.String(), -1)
	var n int64
	for _, m := range cancelled {
		v, _ := strconv.ParseInt(m[2], 10, 64)
		n += v
	}
	assert.Equal(t, int64(3), n, "the three calls in flight are CANCELLED:\n%s", stdout.String())
	run := readRun(t, dir)
	assert.Equal(t, "aborted", string(run.Status))
	assert.Equal(t, 4, run.ExitCode)
	assert.Equal(t, int64(3), run.Summary.Returns["READ"]["CANCELLED"]+run.Summary.Returns["UPDATE"]["CANCELLED"])
	assert.Contains(t, strings.Join(run.StatusReasons, ";"), "Stopped early: interrupted by operator (SIGTERM)")
	checkBundleCounts(t, run)
}

// `report DIR` on a directory holding the spools of two unfinished runs
// does not pick one: it refuses, naming both.
func TestReportRefusesTwoSpools(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".spool-run1", ".spool-run2"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("ycsbctl-spool 2\n"), 0o600))
	}
	r := ycsbctl(t, "report", dir)
	assert.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, ".spool-run1, .spool-run2")
	assert.NoFileExists(t, filepath.Join(dir, bundle.FileRunJSON))
}

// stdout closed under the run (`| head -1`): SIGPIPE no longer kills the
// process (exit 141, no message, a bundle holding only merged.hlog). A
// run whose stdout closes while it measures stops gracefully (exit 6,
// status stopped, the reason said); one whose summary finds stdout closed
// keeps its complete bundle and exits 1, saying where the summary is.
func TestStdoutClosed(t *testing.T) {
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	pipe := func(t *testing.T, args, reader string) (int, string, string) {
		t.Helper()
		work := t.TempDir()
		errFile := filepath.Join(work, "stderr")
		script := binary(t) + " " + args + " 2>" + errFile + " | " + reader + ` >/dev/null; echo "${PIPESTATUS[0]}"`
		cmd := exec.Command(bash, "-c", script)
		cmd.Dir = work
		out, err := cmd.Output()
		require.NoError(t, err)
		code, err := strconv.Atoi(strings.TrimSpace(string(out)))
		require.NoError(t, err, "%s", out)
		stderr, _ := os.ReadFile(errFile)
		return code, string(stderr), work
	}

	t.Run("while measuring", func(t *testing.T) {
		start := time.Now()
		code, stderr, work := pipe(t, "run basic -P workloada -p basicdb.verbose=true -p operationcount=0 -p maxexecutiontime=60 -target 300 --results r", "head -1")
		require.Equal(t, 6, code, stderr)
		assert.Less(t, time.Since(start), 30*time.Second, "stopped, not run to its end")
		assert.Contains(t, stderr, "stdout was closed")
		run := readRun(t, filepath.Join(work, "r"))
		assert.Equal(t, "stopped", string(run.Status))
		assert.Equal(t, 6, run.ExitCode)
		assert.Contains(t, strings.Join(run.StatusReasons, ";"), "stdout was closed")
		checkBundleCounts(t, run)
	})
	t.Run("at the summary", func(t *testing.T) {
		// The reader is gone before the run ends: the summary is the
		// first thing written to stdout.
		code, stderr, work := pipe(t, "run basic -P workloada -p basicdb.verbose=false -p operationcount=500 -target 1000 --results r", "true")
		require.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, "stdout was closed: the summary could not be printed (it is in r/summary.txt)")
		run := readRun(t, filepath.Join(work, "r"))
		assert.Equal(t, "complete", string(run.Status))
		assert.Equal(t, 1, run.ExitCode)
		assert.Equal(t, int64(500), run.Summary.Operations)
		sum, err := os.ReadFile(filepath.Join(work, "r", bundle.FileSummary))
		require.NoError(t, err)
		assert.Contains(t, string(sum), "[OVERALL], RunTime(ms)")
	})
}

// `report -o`, `compare -o` and `--format csv -o` write only over a
// regular file or nothing: a character device, a FIFO or a directory is
// refused (exit 2, named) and left as it was. (`report DIR -o n` with n a
// character device used to replace the device node with a regular file.)
func TestOutputsRefuseWhatIsNotAFile(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "b")
	r := ycsbctl(t, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=200", "--results", dir)
	require.Equal(t, 0, r.code, r.stderr)

	dev := filepath.Join(work, "n")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		// Without CAP_MKNOD: a link to /dev/null leads to the same node.
		require.NoError(t, os.Symlink("/dev/null", dev))
	}
	fifo := filepath.Join(work, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sub := filepath.Join(work, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	for _, tc := range []struct {
		target, what string
		mode         os.FileMode
	}{
		{dev, "character device", os.ModeCharDevice},
		{fifo, "FIFO", os.ModeNamedPipe},
		{sub, "directory", os.ModeDir},
	} {
		for _, args := range [][]string{
			{"report", dir, "-o", tc.target},
			{"report", dir, "--format", "csv", "-o", tc.target},
			{"compare", dir, dir, "-o", tc.target},
		} {
			r := ycsbctl(t, args...)
			assert.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
			assert.Contains(t, r.stderr, tc.target, "%v", args)
			assert.Contains(t, r.stderr, tc.what, "%v", args)
			st, err := os.Stat(tc.target)
			require.NoError(t, err)
			assert.NotZero(t, st.Mode()&tc.mode, "%v: %s is still a %s", args, tc.target, tc.what)
		}
	}
	entries, err := os.ReadDir(work)
	require.NoError(t, err)
	assert.Len(t, entries, 4, "no temporary file left beside the targets")
	// A regular file, and a link to one, are replaced whole.
	file := filepath.Join(work, "page.html")
	require.NoError(t, os.WriteFile(file, []byte("old"), 0o644))
	link := filepath.Join(work, "latest.html")
	require.NoError(t, os.Symlink("page.html", link))
	r = ycsbctl(t, "report", dir, "-o", link)
	require.Equal(t, 0, r.code, r.stderr)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<html")
}

package tui_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

// These tests use the live view as a person would: the real binary runs
// in a detached tmux session of a fixed size, the screen is read with
// capture-pane, and keys are typed with send-keys.

// buildBinary builds cmd/ycsbctl once per test binary.
var builtBinary string

func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short mode")
	}
	if builtBinary != "" {
		return builtBinary
	}
	dir, err := os.MkdirTemp("", "ycsbctl-tui-bin")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ycsbctl")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ycsbctl")
	cmd.Dir = "../../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	builtBinary = bin
	return bin
}

func needTmux(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("tmux test skipped in -short mode")
	}
	tools.Require(t, "tmux")
}

type tmux struct {
	t      *testing.T
	socket string
	dir    string
}

// startTmux runs shell command line in a new detached 120x40 session on a
// private server, records its exit status in a file and keeps the pane
// open afterwards so the final screen can be read.
func startTmux(t *testing.T, line string) *tmux {
	t.Helper()
	needTmux(t)
	dir := t.TempDir()
	tm := &tmux{t: t, socket: fmt.Sprintf("ycsbctl-test-%d-%d", os.Getpid(), time.Now().UnixNano()), dir: dir}
	script := filepath.Join(dir, "run.sh")
	body := fmt.Sprintf("#!/bin/sh\ncd %q\n%s\necho $? > %q\nsleep 120\n", dir, line, filepath.Join(dir, "exit"))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.run("new-session", "-d", "-s", "main", "-x", "120", "-y", "40", "-e", "TERM=xterm-256color", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmux) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (tm *tmux) screen() string { return tm.run("capture-pane", "-p", "-t", "main") }

func (tm *tmux) keys(k ...string) { tm.run(append([]string{"send-keys", "-t", "main"}, k...)...) }

// waitFor polls the screen until every pattern matches.
func (tm *tmux) waitFor(timeout time.Duration, patterns ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	var s string
	for time.Now().Before(deadline) {
		s = tm.screen()
		ok := true
		for _, p := range patterns {
			if !regexp.MustCompile(p).MatchString(s) {
				ok = false
				break
			}
		}
		if ok {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("screen never showed %q; last screen:\n%s", patterns, s)
	return ""
}

// exitCode waits for the command to finish and returns its status.
func (tm *tmux) exitCode(timeout time.Duration) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(tm.dir, "exit")); err == nil && len(bytes.TrimSpace(b)) > 0 {
			return string(bytes.TrimSpace(b))
		}
		time.Sleep(100 * time.Millisecond)
	}
	tm.t.Fatalf("command did not finish; screen:\n%s", tm.screen())
	return ""
}

func TestTmuxRunQuit(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	tm := startTmux(t, bin+" run basic -P workloada -p basicdb.verbose=false -p basicdb.simulatedelay=2"+
		" -p operationcount=100000000 -p maxexecutiontime=50 -p status.interval=1 -threads 4 --results bundle")
	s := tm.waitFor(20*time.Second, `Since start`, `READ\s+[\d,]+\s+[\d,]+\s+[\d.]+(µs|ms)`,
		`UPDATE\s+[\d,]+\s+[\d,]+\s+[\d.]+(µs|ms)`)
	for _, want := range []string{
		`ycsbctl run · basic · workloada`, `RUNNING`, `elapsed 0:00:0\d`, `ETA`, `Throughput [\d,]+ ops/s`,
		`OPERATION\s+COUNT\s+OPS/S\s+P50\s+P95\s+P99\s+P99\.9\s+MAX\s+ERRORS`, `q stop gracefully`,
	} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	for _, op := range []string{"READ", "UPDATE"} {
		checkLatencyRow(t, s, op)
	}
	if strings.Contains(s, "[OVERALL]") || strings.Contains(s, "Starting test.") {
		t.Errorf("the view shares the screen with other output:\n%s", s)
	}
	tm.keys("q")
	if code := tm.exitCode(15 * time.Second); code != "6" {
		t.Errorf("exit code %s, want 6 (stopped by the operator)", code)
	}
	s = tm.screen()
	t.Logf("final screen:\n%s", s)
	for _, want := range []string{`\[OVERALL\], RunTime\(ms\), \d+`, `\[READ\], Operations, \d+`, `\[UPDATE\], 99thPercentileLatency\(us\), \d+`, `Interrupted \(q in the live view\): stopping gracefully`} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("final screen lacks %q:\n%s", want, s)
		}
	}
	// Restored terminal: nothing of the view is left, and summary lines
	// start at column 0 (raw mode would have staircased them).
	if strings.Contains(s, "q stop gracefully") || strings.Contains(s, "Since start") {
		t.Errorf("view remnants after exit:\n%s", s)
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "[READ]") && !strings.HasPrefix(l, "[READ]") {
			t.Errorf("garbled summary line %q", l)
		}
	}
	if _, err := os.Stat(filepath.Join(tm.dir, "bundle", "run.json")); err != nil {
		t.Errorf("no bundle after a stop from the view: %v", err)
	}
}

// checkLatencyRow parses op's row of the live view's table (OPERATION
// COUNT OPS/S P50 P95 P99 P99.9 MAX ERRORS) and checks it numerically:
// operations were counted, none failed, the percentiles never decrease,
// and with basicdb.simulatedelay=2 (a uniform 0-2 ms sleep) the median is
// below 10 ms: 2 ms of delay plus 8 ms for scheduling on a loaded 2-core
// machine. The view rounds to three significant digits, so each step of
// the percentiles may appear up to 1% lower than the one before.
func checkLatencyRow(t *testing.T, screen, op string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + op + `\s+([\d,]+)\s+([\d,]+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+([\d,]+))?\s*$`).FindStringSubmatch(screen)
	if m == nil {
		t.Errorf("no complete %s row in the table:\n%s", op, screen)
		return
	}
	count, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil || count <= 0 {
		t.Errorf("%s count %q, want > 0", op, m[1])
	}
	// The view leaves ERRORS blank while there are none.
	if m[8] != "" && m[8] != "0" {
		t.Errorf("%s errors %q, want none", op, m[8])
	}
	names := []string{"P50", "P95", "P99", "P99.9", "MAX"}
	lat := make([]float64, len(names))
	for i := range names {
		lat[i] = screenLatency(t, m[3+i])
		if lat[i] <= 0 {
			t.Errorf("%s %s = %s, want > 0", op, names[i], m[3+i])
		}
	}
	for i := 1; i < len(lat); i++ {
		if lat[i] < lat[i-1]*0.99 {
			t.Errorf("%s %s (%s) below %s (%s)", op, names[i], m[3+i], names[i-1], m[2+i])
		}
	}
	if lat[0] >= 10_000 {
		t.Errorf("%s P50 %s, want < 10ms for a 0-2 ms simulated delay", op, m[3])
	}
}

func TestTmuxCtrlCTwiceAborts(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	// Every operation takes 5 s, so a graceful stop visibly waits for
	// the operations in flight until the second Ctrl-C cancels them.
	tm := startTmux(t, bin+" run basic -P workloadc -p basicdb.verbose=false -p basicdb.simulatedelay=5000"+
		" -p basicdb.randomizedelay=false -p operationcount=1000 -p status.interval=1 -threads 2")
	tm.waitFor(20*time.Second, `RUNNING`, `Waiting for the first interval|Since start`)
	tm.keys("C-c")
	tm.waitFor(5*time.Second, `STOPPING`, `ctrl\+c again to abort`)
	start := time.Now()
	tm.keys("C-c")
	if code := tm.exitCode(10 * time.Second); code != "4" {
		t.Errorf("exit code %s, want 4", code)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("abort took %s; operations in flight were not cancelled", d)
	}
	s := tm.screen()
	sum := summaryNumbers(t, s, "[OVERALL], RunTime(ms)", "[READ-FAILED], Operations", "[READ-FAILED], MinLatency(us)",
		"[READ-FAILED], AverageLatency(us)", "[READ-FAILED], MaxLatency(us)", "[READ], Return=CANCELLED")
	// Each of the 2 threads had one read in flight; the abort cancels
	// them and they are reported under their own return code, never as
	// OK. More than 2 would mean reads ran to completion and new ones
	// started.
	if n := sum["[READ-FAILED], Operations"]; n < 1 || n > 2 {
		t.Errorf("[READ-FAILED], Operations = %v, want 1 or 2 (the reads in flight):\n%s", n, s)
	}
	if sum["[READ], Return=CANCELLED"] != sum["[READ-FAILED], Operations"] {
		t.Errorf("the cancelled reads are not all counted as CANCELLED:\n%s", s)
	}
	if strings.Contains(s, "[READ], Return=OK") {
		t.Errorf("a cancelled read was counted as OK:\n%s", s)
	}
	// The reads in flight were cancelled well before their 5 s: with a
	// 4 s bound on the abort above, a read that reached 4.5 s would have
	// outlived the abort's deadline; and no read can outlast the run
	// (RunTime is in ms, rounded down, hence the 1 ms tolerance).
	const natural, margin = 5_000_000.0, 500_000.0
	maxLat, minLat, avgLat := sum["[READ-FAILED], MaxLatency(us)"], sum["[READ-FAILED], MinLatency(us)"], sum["[READ-FAILED], AverageLatency(us)"]
	if maxLat >= natural-margin {
		t.Errorf("reads ran (nearly) to completion: max %.0f µs, want < %.0f µs:\n%s", maxLat, natural-margin, s)
	}
	if runUs := sum["[OVERALL], RunTime(ms)"] * 1000; maxLat > runUs+1000 {
		t.Errorf("a read (%.0f µs) outlasted the run (%.0f µs):\n%s", maxLat, runUs, s)
	}
	if minLat <= 0 || minLat > avgLat || avgLat > maxLat {
		t.Errorf("latencies out of order: min %.0f, avg %.1f, max %.0f µs:\n%s", minLat, avgLat, maxLat, s)
	}
}

// summaryNumbers parses the YCSB summary lines "[SECTION], Metric, value"
// on screen and returns the values of every wanted line, failing the test
// for any that is missing or not a number.
func summaryNumbers(t *testing.T, screen string, want ...string) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	re := regexp.MustCompile(`(?m)^(\[[A-Z_-]+\], [^,\n]+), (\S+)\s*$`)
	for _, m := range re.FindAllStringSubmatch(screen, -1) {
		if v, err := strconv.ParseFloat(m[2], 64); err == nil {
			got[m[1]] = v
		}
	}
	out := map[string]float64{}
	for _, w := range want {
		v, ok := got[w]
		if !ok {
			t.Fatalf("summary lacks a numeric %q line:\n%s", w, screen)
		}
		out[w] = v
	}
	return out
}

// screenLatency parses a latency as the live view prints it (850ns, 412µs,
// 1.23ms, 2.50s) into microseconds.
func screenLatency(t *testing.T, s string) float64 {
	t.Helper()
	for _, u := range []struct {
		suffix string
		us     float64
	}{{"ns", 1e-3}, {"µs", 1}, {"ms", 1e3}, {"s", 1e6}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				t.Fatalf("latency %q: %v", s, err)
			}
			return v * u.us
		}
	}
	t.Fatalf("latency %q has no unit", s)
	return 0
}

func TestTmuxLoadProgressAndNoTUI(t *testing.T) {
	needTmux(t)
	bin := binary(t)
	tm := startTmux(t, bin+" load basic -P workloada -p basicdb.verbose=false -p basicdb.simulatedelay=1"+
		" -p recordcount=2000000 -p status.interval=1 -threads 4")
	s := tm.waitFor(20*time.Second, `Records .*[█░]+\s+\d+%\s+[\d,]+ / 2,000,000\s+[\d,]+ rec/s\s+ETA \d:\d\d:\d\d`, `INSERT\s+[\d,]+`)
	if !strings.Contains(s, "ycsbctl load · basic · workloada") {
		t.Errorf("no load title:\n%s", s)
	}
	tm.keys("q")
	if code := tm.exitCode(15 * time.Second); code != "6" {
		t.Errorf("exit code %s, want 6 (stopped by the operator)", code)
	}

	// --no-tui keeps YCSB's status lines on a terminal.
	tm2 := startTmux(t, bin+" run basic -P workloada -p basicdb.verbose=false -p operationcount=3000 -p status.interval=1 -s -target 1000 --no-tui")
	if code := tm2.exitCode(20 * time.Second); code != "0" {
		t.Errorf("--no-tui exit code %s, want 0", code)
	}
	s = tm2.screen()
	if !regexp.MustCompile(`\d+ sec: \d+ operations; [\d.]+ current ops/sec;`).MatchString(s) || !strings.Contains(s, "[OVERALL]") {
		t.Errorf("--no-tui screen lacks status lines or summary:\n%s", s)
	}
	if strings.Contains(s, "Since start") {
		t.Errorf("--no-tui still drew the view:\n%s", s)
	}
}

// TestPipedStdoutStaysPlain checks that scripts capturing stdout never get
// the view's escape sequences.
func TestPipedStdoutStaysPlain(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=2000", "-p", "status.interval=1", "-s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if bytes.Contains(stdout.Bytes(), []byte("\x1b[")) || bytes.Contains(stderr.Bytes(), []byte("\x1b[")) {
		t.Errorf("escape sequences in piped output:\n%q", stdout.String())
	}
	if !strings.Contains(stdout.String(), "[OVERALL], RunTime(ms)") || !strings.Contains(stderr.String(), "current ops/sec") {
		t.Errorf("plain output missing summary or status lines:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

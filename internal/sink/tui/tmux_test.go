package tui_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	if testing.Short() {
		t.Skip("tmux test skipped in -short mode")
	}
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
	s := tm.waitFor(20*time.Second, `Since start`, `READ\s+[\d,]+\s+[\d,]+\s+[\d.]+(µs|ms)`)
	for _, want := range []string{
		`ycsbctl run · basic · workloada`, `RUNNING`, `elapsed 0:00:0\d`, `ETA`, `Throughput [\d,]+ ops/s`,
		`OPERATION\s+COUNT\s+OPS/S\s+P50\s+P95\s+P99\s+P99\.9\s+MAX\s+ERRORS`,
		`UPDATE\s+[\d,]+\s+[\d,]+\s+[\d.]+(µs|ms)`, `q stop gracefully`,
	} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "[OVERALL]") || strings.Contains(s, "Starting test.") {
		t.Errorf("the view shares the screen with other output:\n%s", s)
	}
	tm.keys("q")
	if code := tm.exitCode(15 * time.Second); code != "4" {
		t.Errorf("exit code %s, want 4 (stopped by the operator)", code)
	}
	s = tm.screen()
	t.Logf("final screen:\n%s", s)
	for _, want := range []string{`\[OVERALL\], RunTime\(ms\), \d+`, `\[READ\], Operations, \d+`, `\[UPDATE\], 99thPercentileLatency\(us\), \d+`, `Interrupted: stopping gracefully`} {
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
	t.Logf("DEBUG final:\n%s", s)
	if !strings.Contains(s, "[OVERALL], RunTime(ms)") {
		t.Errorf("no summary after the abort:\n%s", s)
	}
	// The operations in flight were cancelled well before their 5 s.
	if m := regexp.MustCompile(`\[READ\], MaxLatency\(us\), (\d+)`).FindStringSubmatch(s); m != nil && len(m[1]) >= 7 && m[1] >= "5000000" {
		t.Errorf("operations ran to completion (max %s µs):\n%s", m[1], s)
	}
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
	if code := tm.exitCode(15 * time.Second); code != "4" {
		t.Errorf("exit code %s, want 4", code)
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

package scripts

import (
	"bufio"
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

// makefile is a Makefile whose stages pass, fail, or wait to be
// interrupted (make runs a recipe without shell syntax itself, so the
// waiting stage's process is sleep, and a signal to its group ends it:
// a shell between echo and sleep could take the signal and still start
// sleep).
const makefile = `ok1:
	@echo stage one runs
ok2:
	@echo stage two runs
fails:
	@echo the failing stage; exit 3
waits:
	@sleep 600
bgok:
	@echo background ran
bgfails:
	@echo background fails; exit 4
`

// stageLines starts scripts/stages.sh STAGE... on makefile in a process
// group of its own and returns it, its output lines as they come, and a
// wait for its exit code.
func stageLines(t *testing.T, stages ...string) (*exec.Cmd, <-chan string, func() int) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Makefile"), []byte(makefile), 0o644))
	cmd := exec.Command(script(t, "stages.sh"), stages...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MAKELEVEL=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = pw, pw
	require.NoError(t, cmd.Start())
	_ = pw.Close()
	lines := make(chan string, 100)
	go func() {
		defer func() { _ = pr.Close() }()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	exited := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
	}()
	var code *int
	t.Cleanup(func() {
		if code == nil { // still running: end its group
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	return cmd, lines, func() int {
		select {
		case c := <-exited:
			code = &c
			return c
		case <-time.After(2 * time.Minute):
			t.Fatal("stages.sh did not exit within 2 minutes")
			return -1
		}
	}
}

// collect reads lines until the output ends; diag, if set, says what runs
// when it does not.
func collect(t *testing.T, lines <-chan string, diag func() string) string {
	t.Helper()
	var b strings.Builder
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return b.String()
			}
			b.WriteString(l + "\n")
		case <-timeout:
			state := ""
			if diag != nil {
				state = diag()
			}
			t.Fatalf("output did not end within 2 minutes:\n%s\n%s", b.String(), state)
		}
	}
}

// TestStages runs scripts/stages.sh (make test-all) on a Makefile of its
// own: each stage ends with its duration, a failure stops the stages that
// follow, and the output ends with a table of every stage's status and
// duration, whether all passed, one failed or the run was interrupted
// (CI's log keeps its tail; make test-all once ended without a word on how
// long each stage took).
func TestStages(t *testing.T) {
	for _, c := range []struct {
		name   string
		stages []string
		code   int
		rows   []string // the table's rows after its header, in order
		out    []string // each appears in the output
		log    map[string]string
	}{
		{name: "all-pass", stages: []string{"ok1", "ok2"}, code: 0,
			rows: []string{`ok1 +\d+s +ok`, `ok2 +\d+s +ok`, `total +\d+s +ok`}},
		{name: "one-fails", stages: []string{"ok1", "fails", "ok2"}, code: 2,
			rows: []string{`ok1 +\d+s +ok`, `fails +\d+s +FAILED \(exit 2\)`, `ok2 +- +not run`, `total +\d+s +FAILED`}},
		{name: "background-waited", stages: []string{"ok1", "bg:bgok", "ok2", "wait:bgok"}, code: 0,
			rows: []string{`ok1 +\d+s +ok`, `bg:bgok +\d+s +ok`, `ok2 +\d+s +ok`, `total +\d+s +ok`},
			log:  map[string]string{".bgok.log": "background ran"}},
		{name: "background-waited-at-the-end", stages: []string{"bg:bgok", "ok1"}, code: 0,
			rows: []string{`bg:bgok +\d+s +ok`, `ok1 +\d+s +ok`, `total +\d+s +ok`}},
		{name: "background-fails", stages: []string{"bg:bgfails", "ok1", "wait:bgfails", "ok2"}, code: 2,
			rows: []string{`bg:bgfails +\d+s +FAILED \(exit 2\)`, `ok1 +\d+s +ok`, `ok2 +- +not run`, `total +\d+s +FAILED`},
			out:  []string{"=== background stage bgfails: FAILED (exit 2) after", "--- end of .bgfails.log ---", "background fails"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, lines, wait := stageLines(t, c.stages...)
			out := collect(t, lines, nil)
			assert.Equal(t, c.code, wait(), out)
			for _, s := range c.stages {
				switch {
				case s == "ok2" && c.code != 0:
					assert.NotContains(t, out, "stage two runs", "a stage after a failure does not run")
				case strings.HasPrefix(s, "bg:"):
					assert.Regexp(t, `(?m)^=== background stage `+s[3:]+`: (ok|FAILED \(exit 2\)) after \d+s ===$`, out)
				case !strings.HasPrefix(s, "wait:"):
					assert.Regexp(t, `(?m)^=== stage `+s+`: (ok|FAILED \(exit 2\)) after \d+s ===$`, out)
				}
			}
			for _, w := range c.out {
				assert.Contains(t, out, w)
			}
			for name, want := range c.log {
				b, err := os.ReadFile(filepath.Join(cmd.Dir, name))
				require.NoError(t, err)
				assert.Contains(t, string(b), want, name)
			}
			assertTableEnds(t, out, c.rows)
		})
	}
	t.Run("stage-fails-while-a-background-one-runs", func(t *testing.T) {
		cmd, lines, wait := stageLines(t, "bg:waits", "fails", "ok2")
		out := collect(t, lines, nil)
		assert.Equal(t, 2, wait(), out)
		assertTableEnds(t, out, []string{`bg:waits +\d+s +stopped \(a stage failed\)`, `fails +\d+s +FAILED \(exit 2\)`, `ok2 +- +not run`, `total +\d+s +FAILED`})
		assert.False(t, groupRuns(cmd.Process.Pid, "sleep"), "the background stage's sleep still runs:\n%s", psGroup(cmd.Process.Pid))
	})
	t.Run("interrupted", func(t *testing.T) {
		cmd, lines, wait := stageLines(t, "ok1", "waits", "ok2")
		// Wait until the stage's sleep runs in the group.
		group := cmd.Process.Pid
		deadline := time.Now().Add(time.Minute)
		for !groupRuns(group, "sleep") {
			if time.Now().After(deadline) {
				t.Fatalf("no sleep in process group %d after a minute:\n%s", group, psGroup(group))
			}
			time.Sleep(20 * time.Millisecond)
		}
		// As a Ctrl-C does: the whole process group.
		require.NoError(t, syscall.Kill(-group, syscall.SIGINT))
		out := collect(t, lines, func() string { return psGroup(group) })
		assert.Equal(t, 130, wait(), out)
		assertTableEnds(t, out, []string{`ok1 +\d+s +ok`, `waits +\d+s +interrupted`, `ok2 +- +not run`, `total +\d+s +interrupted`})
	})
}

// groupRuns reports whether a process of process group pgid runs the
// command comm.
func groupRuns(pgid int, comm string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		s := string(b)
		i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) > 2 && s[i+1:j] == comm && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// psGroup lists process group pgid's processes, for a failure's message.
func psGroup(pgid int) string {
	out, _ := exec.Command("ps", "-o", "pid,stat,cmd", "--pgid", strconv.Itoa(pgid)).CombinedOutput()
	return string(out)
}

// assertTableEnds checks that out ends with the stages table and its rows.
func assertTableEnds(t *testing.T, out string, rows []string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	n := len(rows) + 2
	require.GreaterOrEqual(t, len(lines), n, out)
	tail := lines[len(lines)-n:]
	assert.Equal(t, "=== stages: duration and status ===", tail[0], out)
	assert.Regexp(t, `^stage +time +status$`, tail[1])
	for i, r := range rows {
		assert.Regexp(t, "^"+r+"$", tail[i+2], out)
	}
}

package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
)

// What telemetry counts as the database's processes, with real ones: a
// stand-in server under a name of the test's own (sleep, symlinked: its
// comm is the link's name, so that no other process on a shared machine
// matches), the load generator under wrappers whose command lines hold
// the same pattern, and a stand-in that exits mid-run.

var standIns atomic.Int64

// namedStandIn starts sleep under a name no other process has (comm is
// at most 15 bytes) and returns it and the name.
func namedStandIn(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	name := fmt.Sprintf("ydb%d%c", os.Getpid(), 'a'+rune(standIns.Add(1)%26))
	if len(name) > 15 {
		name = name[len(name)-15:]
	}
	bin, err := exec.LookPath("sleep")
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.Symlink(bin, link))
	cmd := exec.Command(link, "600")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, name
}

// TestTelemetryPidsPatternSkipsWrappers: ycsbctl.telemetry.pids=PATTERN
// run under a wrapper (timeout, a shell, both) whose command line holds
// the pattern counts the stand-in alone, names it with its pid, and
// says which matching processes it left out as the load generator's
// own. Before, the wrapper was counted as a second database process.
func TestTelemetryPidsPatternSkipsWrappers(t *testing.T) {
	db, name := namedStandIn(t)
	for _, tc := range []struct {
		name    string
		wrap    func(args []string) []string
		wrapper string // comm of the wrapper the note leaves out
	}{
		{"timeout", func(a []string) []string { return append([]string{"timeout", "60"}, a...) }, "timeout"},
		{"a shell", func(a []string) []string { return []string{"sh", "-c", shellLine(a) + "; exit $?"} }, "sh"},
		{"a shell under timeout", func(a []string) []string {
			return []string{"timeout", "60", "sh", "-c", shellLine(a) + "; exit $?"}
		}, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "b")
			args := tc.wrap([]string{binary(t), "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=0",
				"-p", "maxexecutiontime=3", "-target", "200", "-p", "status.interval=1", "-p", "ycsbctl.telemetry.pids=" + name, "--results", dir})
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			run := readRun(t, dir)
			require.NotNil(t, run.Telemetry)
			require.Len(t, run.Telemetry.Hosts, 1)
			h := run.Telemetry.Hosts[0]
			notes := strings.Join(h.Notes, "\n")
			want := fmt.Sprintf("database processes on %s: %s (pid %d)", h.Hostname, name, db.Process.Pid)
			assert.Contains(t, notes, want, "the stand-in, by name and pid")
			assert.Regexp(t, `not counted, though they match: .*`+regexp.QuoteMeta(tc.wrapper)+` \(pid \d+, (the load generator's parent|an ancestor of the load generator)\)`, notes,
				"the wrapper is named as left out")
			require.NotEmpty(t, h.Intervals)
			for _, iv := range h.Intervals {
				assert.Equal(t, 1, iv.DB.Count, "interval %d: the stand-in alone is the database (notes: %s)", iv.Seq, notes)
			}
		})
	}
}

// shellLine quotes args for sh -c.
func shellLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// TestTelemetryDatabaseExitsMidRun: the database process exits while the
// run goes on. The record says which process exited and in which
// interval, the intervals after it have no database figures (before it
// they have), and nothing calls it a remote database: it was here.
func TestTelemetryDatabaseExitsMidRun(t *testing.T) {
	db, name := namedStandIn(t)
	work := t.TempDir()
	dir := filepath.Join(work, "b")
	p := startProc(t, work, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=0",
		"-p", "maxexecutiontime=8", "-target", "200", "-p", "status.interval=1", "-s", "-p", "ycsbctl.telemetry.pids="+name, "--results", dir)
	p.waitLines(t, `current ops/sec`, 3, time.Minute)
	require.NoError(t, db.Process.Signal(syscall.SIGKILL))
	_, _ = db.Process.Wait()
	require.Equal(t, 0, p.wait(t, 2*time.Minute), p.stderr())

	run := readRun(t, dir)
	require.NotNil(t, run.Telemetry)
	h := run.Telemetry.Hosts[0]
	notes := strings.Join(h.Notes, "\n")
	assert.NotContains(t, notes, "remote", "a database that exited is not remote")
	assert.NotContains(t, p.stderr(), "remote database")
	m := regexp.MustCompile(`the database process ` + regexp.QuoteMeta(name) + ` \(pid ` + strconv.Itoa(db.Process.Pid) +
		`\) exited in interval (\d+) \(last read at [0-9:.]+, missing at [0-9:.]+ UTC\): no database process is left on this host, so the intervals after it have no database figures`).FindStringSubmatch(notes)
	require.NotNil(t, m, "the exit is said, with its interval: %s", notes)
	k, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, k, int64(2))
	var before, after int
	for _, iv := range h.Intervals {
		switch {
		case iv.Seq < k-1:
			assert.Equal(t, 1, iv.DB.Count, "interval %d, before the exit", iv.Seq)
			before++
		case iv.Seq > k:
			assert.Equal(t, 0, iv.DB.Count, "interval %d, after the exit", iv.Seq)
			after++
		}
	}
	assert.Positive(t, before, "intervals before the exit")
	assert.Positive(t, after, "intervals after the exit")
	summary, err := os.ReadFile(filepath.Join(dir, bundle.FileSummary))
	require.NoError(t, err)
	assert.NotContains(t, string(summary), "remote database")
}

//go:build cluster

package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// progressWait waits for something that moves in steps on a loaded
// machine (a node joining, a region server checking in): it gives up only
// when nothing moved for stall, or after limit overall, and then returns
// the last state seen with the diagnostics diag gathers.
type progressWait struct {
	what  string
	limit time.Duration // overall bound
	stall time.Duration // bound without progress
	every time.Duration // between probes
}

// probe reports whether the wait is over and, if not, a mark of how far
// things got (any change counts as progress) and the error of the check.
type probe func() (done bool, mark string, err error)

// errUnitFailed from a probe ends the wait at once: the unit it waits on
// failed and will not come up by itself.
var errUnitFailed = errors.New("its systemd unit failed")

// errStalled is in the error of a wait that ended because nothing moved
// for its stall bound (rather than at its overall limit): the caller may
// know a remedy, such as restarting the daemon once.
var errStalled = errors.New("no progress")

type stalledError struct{ error }

func (s stalledError) Unwrap() []error { return []error{s.error, errStalled} }

func (w progressWait) run(p probe, diag func() string) error {
	start := time.Now()
	moved := start
	var mark string
	var last error
	for {
		done, m, err := p()
		if done {
			return nil
		}
		last = err
		if errors.Is(err, errUnitFailed) {
			return fmt.Errorf("%s: %w\n--- diagnostics\n%s", w.what, err, diag())
		}
		if m != mark {
			mark, moved = m, time.Now()
		}
		now := time.Now()
		stalled := now.Sub(moved) >= w.stall
		if stalled || now.Sub(start) >= w.limit {
			err := fmt.Errorf("%s: not done after %s (no progress for the last %s; at most %s, or %s without progress)\nlast state: %s\nlast check: %v\n--- diagnostics\n%s",
				w.what, now.Sub(start).Round(time.Second), now.Sub(moved).Round(time.Second), w.limit, w.stall, mark, last, diag())
			if stalled {
				return stalledError{err}
			}
			return err
		}
		time.Sleep(w.every)
	}
}

// unitDiag is what a failed wait on a systemd unit in hN shows: the unit's
// state, the last lines of its journal and of the log file (without the
// lines a stuck daemon repeats, which would fill the tail), and for a JVM
// the stacks of its threads, last: CI's summary of a failure shows the end
// of the output.
func (e *env) unitDiag(n int, unit, logFile string) string {
	h := fmt.Sprintf("h%d", n)
	var b strings.Builder
	st, _ := e.clusterErr("exec", h, "systemctl", "status", "--no-pager", "--lines=0", unit)
	fmt.Fprintf(&b, "== %s: systemctl status %s\n%s\n", h, unit, strings.TrimSpace(st))
	j, _ := e.clusterErr("exec", h, "journalctl", "--no-pager", "-n", "15", "-u", unit)
	fmt.Fprintf(&b, "== %s: journal of %s\n%s\n", h, unit, strings.TrimSpace(j))
	l, _ := e.clusterErr("exec", h, "bash", "-c", `f=$1; r=$(grep -cE "$2" "$f"); grep -vE "$2" "$f" | tail -n 40; `+
		`[ "${r:-0}" = 0 ] || { echo "($r repeated warnings left out; the first and the last:)"; grep -E "$2" "$f" | sed -n '1p;$p'; }`, "-", logFile, repeatedWarnings)
	fmt.Fprintf(&b, "== %s: tail of %s\n%s\n", h, logFile, strings.TrimSpace(l))
	b.WriteString(e.jvmThreads(n, unit))
	return b.String()
}

// repeatedWarnings are the log lines a daemon writes every second or so
// while it is stuck: they are not progress, and they are left out of the
// tail of the log a failure shows.
const repeatedWarnings = `Gossip stage has [0-9]+ pending tasks|Not marking nodes down due to local pause`

// jvmThreads is a thread dump of the unit's JVM in hN (jcmd Thread.print),
// if the unit runs one: kept whole in a file under the system's temporary
// directory, and shown here for the threads a stuck start is usually
// waiting in (main, the gossip and migration stages, and any thread
// BLOCKED on a monitor).
func (e *env) jvmThreads(n int, unit string) string {
	h := fmt.Sprintf("h%d", n)
	pid, err := e.clusterErr("exec", h, "systemctl", "show", "-p", "MainPID", "--value", unit)
	if pid = strings.TrimSpace(pid); err != nil || pid == "" || pid == "0" {
		return ""
	}
	dump, err := e.clusterErr("exec", h, "/usr/lib/jvm/java-17-openjdk-amd64/bin/jcmd", pid, "Thread.print")
	if err != nil {
		return fmt.Sprintf("== %s: jcmd %s Thread.print: %v\n%s\n", h, pid, err, strings.TrimSpace(dump))
	}
	file := filepath.Join(os.TempDir(), fmt.Sprintf("ycsbctl-cluster-%s-%s-threads-%s.txt", h, unit, time.Now().Format("150405")))
	where := "kept in " + file
	if err := os.WriteFile(file, []byte(dump), 0o644); err != nil {
		where = "not kept: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "== %s: threads of %s (pid %s; whole dump %s)\n", h, unit, pid, where)
	for _, th := range strings.Split(dump, "\n\n") {
		first, _, _ := strings.Cut(strings.TrimSpace(th), "\n")
		if strings.HasPrefix(first, "\"main\"") || strings.Contains(first, "GossipStage") || strings.Contains(first, "MigrationStage") ||
			strings.Contains(th, "java.lang.Thread.State: BLOCKED") {
			b.WriteString(strings.TrimSpace(th) + "\n")
		}
	}
	return b.String()
}

// logProgress is a progress mark: the lines of a log file in hN (a
// starting daemon writes as it goes), not counting the warnings a stuck
// one repeats.
func (e *env) logProgress(n int, logFile string) string {
	out, err := e.clusterErr("exec", fmt.Sprintf("h%d", n), "grep", "-cvE", repeatedWarnings, logFile)
	if out = strings.TrimSpace(out); out == "" || (err != nil && out != "0") {
		return "no log"
	}
	return out + " lines of log"
}

//go:build cluster

package cluster

import (
	"errors"
	"fmt"
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
			return fmt.Errorf("%s: %v\n--- diagnostics\n%s", w.what, err, diag())
		}
		if m != mark {
			mark, moved = m, time.Now()
		}
		now := time.Now()
		if now.Sub(start) >= w.limit || now.Sub(moved) >= w.stall {
			return fmt.Errorf("%s: not done after %s (no progress for the last %s; at most %s, or %s without progress)\nlast state: %s\nlast check: %v\n--- diagnostics\n%s",
				w.what, now.Sub(start).Round(time.Second), now.Sub(moved).Round(time.Second), w.limit, w.stall, mark, last, diag())
		}
		time.Sleep(w.every)
	}
}

// unitDiag is what a failed wait on a systemd unit in hN shows: the unit's
// state, the last lines of its journal and of the log file.
func (e *env) unitDiag(n int, unit, logFile string) string {
	h := fmt.Sprintf("h%d", n)
	var b strings.Builder
	st, _ := e.clusterErr("exec", h, "systemctl", "status", "--no-pager", "--lines=0", unit)
	fmt.Fprintf(&b, "== %s: systemctl status %s\n%s\n", h, unit, strings.TrimSpace(st))
	j, _ := e.clusterErr("exec", h, "journalctl", "--no-pager", "-n", "15", "-u", unit)
	fmt.Fprintf(&b, "== %s: journal of %s\n%s\n", h, unit, strings.TrimSpace(j))
	l, _ := e.clusterErr("exec", h, "tail", "-n", "30", logFile)
	fmt.Fprintf(&b, "== %s: tail of %s\n%s\n", h, logFile, strings.TrimSpace(l))
	return b.String()
}

// logSize is a progress mark: the size of a log file in hN (a starting
// daemon writes as it goes).
func (e *env) logSize(n int, logFile string) string {
	out, err := e.clusterErr("exec", fmt.Sprintf("h%d", n), "stat", "-c", "%s", logFile)
	if err != nil {
		return "no log"
	}
	return strings.TrimSpace(out) + " bytes of log"
}

//go:build robustness

package robustness

// The end of a history: the agents must be idle by themselves, no
// process of the test may be left, and every run left unfinished is
// recovered the way an operator would (`ycsbctl report DIR` on every
// directory holding a spool, then on every capacity search still marked
// running), so that the checker reads the world as the operator finds it.

import (
	"sort"
	"strings"
	"syscall"
	"time"
)

// ending is what the end of a history found.
type ending struct {
	busyAgents []string // agents still holding a run
	leftovers  []string // processes of the test still alive
	before     *view    // the directories once every step had exited
	final      *view    // after the recovery
}

func (w *world) finish() *ending {
	e := &ending{}
	// A coordinator killed or frozen past the lease leaves its agents'
	// run until the lease runs out; they must then be idle by themselves.
	for i, a := range w.agents {
		if busy := a.idle(time.Duration(leaseMs)*time.Millisecond + 10*time.Second); busy != "" {
			e.busyAgents = append(e.busyAgents, "agent "+a.addr+" still busy: "+busy)
			w.log(-1, "agent %d (%s) still busy: %s", i, a.addr, busy)
		}
	}
	agents := map[int]bool{}
	for _, a := range w.agents {
		agents[a.p.pid] = true
	}
	for _, l := range ownProcesses(w.bin, agents) {
		e.leftovers = append(e.leftovers, l.String())
		w.log(-1, "left behind: %s (killed)", l)
		_ = syscall.Kill(l.pid, syscall.SIGKILL)
	}
	e.before = w.sc.scan(w.dirs)
	w.w.observe(e.before)
	w.recover(e.before)
	e.final = w.sc.scan(w.dirs)
	w.w.observe(e.final)
	w.w.close()
	return e
}

// recover runs `report DIR` on every directory holding a spool (the
// deepest first: a probe's before its search), then on every capacity
// search still marked running.
func (w *world) recover(v *view) {
	var spooled, running []string
	seen := map[string]bool{}
	for _, r := range v.recs {
		if hidden(r.dir) {
			continue // ycsbctl's own (--overwrite's set-aside): its next owner settles it
		}
		if r.form == formSpool && !seen[r.dir] {
			spooled, seen[r.dir] = append(spooled, r.dir), true
		}
		if r.form == formCapacity && r.status == "running" {
			running = append(running, r.dir)
		}
	}
	sort.Slice(spooled, func(i, j int) bool { return strings.Count(spooled[i], "/") > strings.Count(spooled[j], "/") })
	for _, d := range append(spooled, running...) {
		w.recoverDir(d)
	}
}

func (w *world) recoverDir(dir string) {
	o := &outcome{s: &step{id: -1, kind: kReport, dir: dir}, args: []string{"report", dir}}
	o.pre = w.sc.scan(w.dirs)
	o.startAt = w.since()
	p, err := startProc(w.bin, w.work, o.args...)
	o.p, o.startErr = p, err
	if err != nil {
		w.log(-1, "recovery: ycsbctl report %s could not start: %v", dir, err)
		return
	}
	if !p.waitExit(time.Minute) {
		o.hung = p.goroutines()
	}
	o.endAt = w.since()
	o.post = w.sc.scan(w.dirs)
	w.log(-1, "recovery: ycsbctl report %s → exit %d", dir, p.exit)
	w.mu.Lock()
	w.recovery = append(w.recovery, o)
	w.mu.Unlock()
}

// stopAgents ends the agents (the only processes a history kills at its
// end), by their PIDs.
func (w *world) stopAgents() {
	for _, a := range w.agents {
		_ = a.p.signal(syscall.SIGTERM)
	}
	for _, a := range w.agents {
		if !a.p.waitExit(15 * time.Second) {
			_ = a.p.signal(syscall.SIGKILL)
			a.p.waitExit(10 * time.Second)
		}
	}
}

// hidden reports whether a path has a component ycsbctl keeps for itself
// (a name starting with a dot).
func hidden(dir string) bool {
	for _, p := range strings.Split(dir, "/") {
		if strings.HasPrefix(p, ".") && p != "." {
			return true
		}
	}
	return false
}

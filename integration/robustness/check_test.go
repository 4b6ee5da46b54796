//go:build robustness

package robustness

// The checker: it reads what the executor kept and the world as the
// history left it, and says every way in which they break the rules of
// docs/results.md, docs/exit-codes.md and issue 34's "a results directory
// has one owner at a time":
//
//   - refusal: an exit 2 names what it refused (a directory or file the
//     step named) and, for a directory a live run holds, the holder's PID;
//     a step the rules must refuse is refused; nothing else is;
//   - exit: each step's exit code is the one its fault calls for (the
//     table in expectExit), and equals its run.json's exit_code with the
//     status that goes with it;
//   - lost: every record that ever existed (a spool, run.json,
//     capacity.json) is still there at the end, unless a step was asked
//     to replace it (--overwrite after its run ended, once the new run
//     measured; a suite's --resume re-running a step that did not
//     complete);
//   - one: a directory holds at most one run's record;
//   - recovered: a killed run's spool is rebuilt by report as aborted
//     with its exit code unknown (-1); a killed search is not left
//     "running";
//   - counts: every run.json agrees with itself, summary.txt and
//     merged.hlog;
//   - processes: no step hangs, none is left behind, every agent is idle
//     by itself;
//   - files: the operator's file is intact, and a suite's definition is
//     never replaced by another suite's.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type violation struct {
	class string
	step  int // -1: the history as a whole
	msg   string
}

func (v violation) String() string {
	if v.step < 0 {
		return fmt.Sprintf("[%s] %s", v.class, v.msg)
	}
	return fmt.Sprintf("[%s] #%d: %s", v.class, v.step, v.msg)
}

type checker struct {
	w   *world
	e   *ending
	out []violation
}

func (c *checker) fail(class string, step int, format string, args ...any) {
	c.out = append(c.out, violation{class: class, step: step, msg: fmt.Sprintf(format, args...)})
}

// check judges a finished history.
func check(w *world, e *ending) []violation {
	c := &checker{w: w, e: e}
	c.processes()
	for _, o := range w.outs {
		if o == nil || o.p == nil {
			continue
		}
		c.step(o)
	}
	c.records()
	c.counts()
	c.files()
	for _, o := range w.recovery {
		if o.exit() != 0 {
			c.fail("recovery", -1, "ycsbctl report %s (the operator's recovery, nothing else running) exited %d: %s", o.s.dir, o.exit(), errorLine(o.p.errText()))
		}
	}
	return c.out
}

func (c *checker) processes() {
	for _, o := range c.w.outs {
		if o != nil && o.hung != "" {
			c.fail("hang", o.s.id, "still running %s after its start; goroutines in ycsbctl code:\n%s", exitBound(o.s), ownGoroutines(o.hung))
		}
	}
	for _, l := range c.e.leftovers {
		c.fail("left-behind", -1, "a process of the test outlived the history: %s", l)
	}
	for _, b := range c.e.busyAgents {
		c.fail("agent-busy", -1, "%s (lease %dms: an agent stops its load by itself when its coordinator is gone)", b, leaseMs)
	}
}

func ownGoroutines(dump string) string {
	var own []string
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, "github.com/ycsbctl/ycsbctl/") {
			own = append(own, g)
		}
	}
	return tail(strings.Join(own, "\n\n"), 6000)
}

// overlapping lists the writing steps whose lives overlap o's in o's
// directory.
func (c *checker) overlapping(o *outcome) []*outcome {
	var out []*outcome
	for _, x := range c.w.outs {
		if x == nil || x.p == nil || x == o || !x.s.kind.writes() {
			continue
		}
		if topDir(x.s.dir) == topDir(o.s.dir) && x.startAt < o.endAt && x.endAt > o.startAt {
			out = append(out, x)
		}
	}
	return out
}

// bundleFiles are the files of o's directory, before it started, that
// make it a used results directory.
func bundleFiles(v *view, dir string) []string {
	var out []string
	for f := range v.files {
		d, name := filepath.Dir(f), filepath.Base(f)
		switch {
		case d == dir && (isBundleFile(name) || strings.HasPrefix(name, ".spool-")):
			out = append(out, f)
		case strings.HasPrefix(f, dir+"/probe-"):
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

func isBundleFile(name string) bool {
	switch name {
	case "run.json", "summary.txt", "merged.hlog", "report.html", "intervals.csv", "capacity.json", "telemetry.csv":
		return true
	}
	return false
}

// runKind: a step that makes a run's bundle in its directory.
func runKind(k kind) bool {
	return k == kRun || k == kLoad || k == kCoord || k == kCapacity || k == kFailStart
}

// mustRefuse says why the rules refuse o ("" when they do not).
func (c *checker) mustRefuse(o *outcome) string {
	s := o.s
	for _, h := range o.holders {
		x := c.w.outs[h.id]
		// Established before o started, and still there when o ended (or
		// long enough after its start that o met its lock).
		if h.established && (x.endAt > o.endAt || x.endAt > o.startAt+2*time.Second) && s.kind.writes() {
			return fmt.Sprintf("#%d (pid %d) was measuring into %s (a results directory has one owner at a time: refused naming its PID)", h.id, h.pid, topDir(s.dir))
		}
	}
	suiteJSON := o.pre.files[filepath.Join(suiteDir, "suite.json")]
	switch {
	case runKind(s.kind) && !s.overwrite:
		if f := bundleFiles(o.pre, s.dir); len(f) > 0 {
			return fmt.Sprintf("%s held a bundle (%s) and no --overwrite", s.dir, strings.Join(f, ", "))
		}
	case s.kind == kSuite && suiteJSON:
		return "s0 held an earlier suite and no --resume"
	case s.kind == kResume && !suiteJSON:
		return "--resume into a directory without a suite (it must not start from scratch)"
	case s.kind == kResumeOther:
		return "--resume of another suite's file into s0"
	case (s.kind == kReportOut || s.kind == kCompare) && s.out != "" && isBundleFile(filepath.Base(s.out)):
		if o.pre.files[s.out] || len(bundleFiles(o.pre, filepath.Dir(s.out))) > 0 {
			return fmt.Sprintf("-o %s is a file of the bundle in %s", s.out, filepath.Dir(s.out))
		}
	}
	return ""
}

// mayRefuse says whether a refusal of o is within the rules.
func (c *checker) mayRefuse(o *outcome) bool {
	if len(c.overlapping(o)) > 0 {
		return true
	}
	switch o.s.kind {
	case kReport, kReportOut, kCompare:
		// Not a readable bundle, or a file -o must not replace.
		for _, d := range []string{o.s.dir, o.s.other} {
			if d == "" {
				continue
			}
			if r, ok := readableRun(o.pre, d); !ok || r.status == "" {
				return true
			}
		}
		return o.s.out != "" && !strings.HasSuffix(o.s.out, ".html")
	}
	return false
}

// readableRun is a directory's readable run.json record.
func readableRun(v *view, dir string) (rec, bool) {
	for _, r := range v.recs {
		if r.dir == dir && r.form == formRun && r.bad == "" {
			return r, true
		}
	}
	return rec{}, false
}

var pidRE = regexp.MustCompile(`(?i)\bpid\s*(\d+)`)

// refusal checks an exit 2: it names what it refused, the holder's PID
// when a live run held the directory, and left nothing of its own.
func (c *checker) refusal(o *outcome) {
	s, text := o.s, o.p.errText()
	named := false
	for _, p := range []string{s.dir, s.other, s.out} {
		if p != "" && strings.Contains(text, p) {
			named = true
		}
	}
	if !named {
		c.fail("refusal-unnamed", s.id, "exit 2 names none of %s: %s", strings.Join(nonEmpty(s.dir, s.other, s.out), ", "), errorLine(text))
	}
	// Refused over a live run's spool: the holder must be named by PID.
	for _, x := range c.overlapping(o) {
		for _, r := range c.w.w.sightings() {
			if r.label == x.s.label() && r.form == formSpool && strings.Contains(text, ".spool-"+r.id) && !strings.Contains(text, strconv.Itoa(x.p.pid)) {
				c.fail("refusal-no-pid", s.id, "refused over the spool of #%d, a live run (pid %d), without naming its PID: %s", x.s.id, x.p.pid, errorLine(text))
			}
		}
	}
	if why := c.mustRefuse(o); strings.Contains(why, "(pid ") {
		pids := pidRE.FindAllStringSubmatch(text, -1)
		ok := false
		for _, h := range o.holders {
			for _, m := range pids {
				ok = ok || m[1] == strconv.Itoa(h.pid)
			}
		}
		if !ok {
			c.fail("refusal-no-pid", s.id, "%s; the refusal names no holder's PID: %s", why, errorLine(text))
		}
	}
	for _, r := range o.post.recs {
		if r.label == s.label() {
			c.fail("refused-but-wrote", s.id, "exit 2, yet %s", r)
		}
	}
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// errorLine is the first line of stderr saying what went wrong.
func errorLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Error") || strings.Contains(l, "error:") {
			return strconv.Quote(l)
		}
	}
	return strconv.Quote(tail(strings.TrimSpace(stderr), 300))
}

// step judges one step's exit and its record.
func (c *checker) step(o *outcome) {
	code, s := o.exit(), o.s
	why := c.mustRefuse(o)
	if code == 2 {
		c.refusal(o)
		if why == "" && !c.mayRefuse(o) {
			c.fail("unexpected-refusal", s.id, "exit 2 where nothing called for a refusal: %s", errorLine(o.p.errText()))
		}
		return
	}
	if why != "" {
		c.fail("not-refused", s.id, "%s; it exited %d instead", why, code)
	}
	want, desc := c.expectExit(o)
	status, ok := want[code]
	if !ok {
		c.fail("exit", s.id, "%s: exited %d, expected %s; %s", desc, code, wantString(want), errorLine(o.p.errText()))
		return
	}
	switch {
	case s.kind.suite():
		c.suiteRecord(o)
	case s.kind == kCapacity:
		c.capacityRecord(o, code, status)
	case runKind(s.kind):
		c.runRecord(o, code, status)
	}
}

// Expected records: a status, or one of these.
const (
	noRecord    = "(no record)"
	spoolRecord = "(its spool)"
	anyRecord   = ""
)

func wantString(want map[int]string) string {
	var codes []int
	for c := range want {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		if want[c] == anyRecord {
			parts = append(parts, strconv.Itoa(c))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", c, want[c]))
		}
	}
	return strings.Join(parts, " or ")
}

// expectExit is the table of docs/exit-codes.md applied to what was done
// to o: exit codes allowed, each with the record it leaves.
func (c *checker) expectExit(o *outcome) (map[int]string, string) {
	s := o.s
	base := map[int]string{0: anyRecord}
	if runKind(s.kind) {
		base = map[int]string{0: "complete"}
	}
	if s.kind == kFailStart {
		base = map[int]string{1: noRecord}
	}
	want := map[int]string{}
	desc := s.kind.String() + " (no fault)"
	late := false
	for _, x := range o.signals {
		late = late || x.lines >= expectedLines(s)-1
	}
	terms, kills, stops := o.signalled(syscall.SIGTERM), o.signalled(syscall.SIGKILL), o.signalled(syscall.SIGSTOP)
	switch {
	case kills > 0:
		// A SIGKILL cannot be ignored: a process that did not die of it
		// had exited already, and is judged as if nothing was done to it.
		want[128+int(syscall.SIGKILL)] = spoolRecord
		desc = s.kind.String() + " killed (SIGKILL)"
		late = true
	case terms >= 2:
		// The second signal aborts the calls in flight; when the first
		// one's stop had nothing left in flight, the run is stopped.
		want[4] = "aborted"
		want[6] = "stopped"
		desc = s.kind.String() + " given two SIGTERMs"
	case terms == 1:
		want[6] = "stopped"
		desc = s.kind.String() + " given one SIGTERM"
	case stops > 0 && s.kind == kCoord && s.fault.pause >= leaseMs:
		want[1] = "coordinator-stalled"
		desc = fmt.Sprintf("coordinator frozen %dms, past its agents' %dms lease", s.fault.pause, leaseMs)
	case stops > 0:
		desc = fmt.Sprintf("%s frozen %dms", s.kind, s.fault.pause)
		late = true // within the lease: nothing changes
	default:
		late = true
	}
	if late {
		for k, v := range base {
			want[k] = v
		}
	}
	if s.kind == kSuite || s.kind == kResume {
		for k := range want { // a suite's record is checked step by step
			want[k] = anyRecord
		}
	}
	c.contention(o, want)
	if s.out != "" && !o.pre.dirs[filepath.Dir(s.out)] && strings.Contains(o.p.errText(), filepath.Dir(s.out)+"/") {
		want[1] = anyRecord // -o into a directory that does not exist, named
	}
	return want, desc
}

// expectedLines is about how many status lines a step prints when
// nothing stops it: a signal sent within the last of them may find the
// run already ending.
func expectedLines(s *step) int {
	switch s.kind {
	case kRun, kCoord:
		return s.seconds * 10 / 3
	case kLoad:
		return s.seconds * 10 / 3
	case kCapacity:
		return 3 * s.seconds * 4
	case kSuite, kResume:
		return 13
	}
	return 1
}

// contention adds the failures a step may meet from its neighbours, which
// leave nothing behind: agents still busy with another coordinator's run
// (until their lease), an embedded store another load has open.
func (c *checker) contention(o *outcome, want map[int]string) {
	text := o.p.errText()
	for _, x := range c.w.outs {
		if x == nil || x.p == nil || x == o {
			continue
		}
		near := x.startAt < o.endAt && x.endAt+time.Duration(leaseMs)*time.Millisecond+3*time.Second > o.startAt
		switch {
		case usesAgents(o.s) && usesAgents(x.s) && near && strings.Contains(text, "busy"):
			want[1] = noRecord
		case o.s.kind == kLoad && x.s.kind == kLoad && x.startAt < o.endAt && x.endAt > o.startAt && strings.Contains(text, "embedded.dir"):
			want[1] = noRecord
		}
	}
}

// ownRecord is o's record in its directory, as found at its exit.
func ownRecord(o *outcome, dir string) (rec, bool) {
	for _, r := range o.post.recs {
		if r.label == o.s.label() && r.dir == dir {
			return r, true
		}
	}
	return rec{}, false
}

// finished is o's finished record in its directory as the watcher last
// saw it (a run.json or capacity.json, else its spool), else as found at
// its exit: the next owner may replace it between the two, as soon as o
// has given up the directory.
func (c *checker) finished(o *outcome, dir string) (rec, bool) {
	var found rec
	ok := false
	for _, r := range c.w.w.sightings() {
		// In dir, or where the next owner's --overwrite put it aside.
		inDir := r.dir == dir || (strings.HasPrefix(r.dir, dir+"/") && hidden(strings.TrimPrefix(r.dir, dir+"/")))
		if r.label == o.s.label() && inDir && (!ok || r.form != formSpool) {
			found, ok = r.rec, true
		}
	}
	if !ok || found.form == formSpool {
		if r, at := ownRecord(o, dir); at {
			return r, true
		}
	}
	return found, ok
}

func (c *checker) runRecord(o *outcome, code int, status string) {
	s := o.s
	r, ok := ownRecord(o, s.dir)
	if status != noRecord && status != spoolRecord {
		r, ok = c.finished(o, s.dir)
	}
	switch {
	case status == noRecord:
		if ok {
			c.fail("exit", s.id, "exited %d (a run that never started), yet left %s", code, r)
		}
	case status == spoolRecord:
		if ok && r.form != formSpool && r.status != "complete" {
			c.fail("exit", s.id, "killed, yet its record is %s", r)
		}
	case !ok:
		c.fail("no-record", s.id, "exited %d, but %s never held a finished record of its own (at its exit it holds: %s)", code, s.dir, recList(o.post, s.dir))
	case r.form == formSpool:
		c.fail("no-record", s.id, "exited %d, but its record was never more than a spool", code)
	case r.exit != code || r.status != status:
		c.fail("exit-mismatch", s.id, "exited %d, expected status %s; its run.json says exit_code %d, status %s", code, status, r.exit, r.status)
	}
}

func recList(v *view, dir string) string {
	var out []string
	for _, r := range v.recs {
		if r.dir == dir {
			out = append(out, r.String())
		}
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, "; ")
}

func (c *checker) capacityRecord(o *outcome, code int, status string) {
	s := o.s
	r, ok := c.finished(o, s.dir)
	if status == spoolRecord {
		return // judged once recovered (records)
	}
	switch {
	case status == noRecord && !ok:
		// A search that could not start may leave nothing.
	case !ok:
		c.fail("no-record", s.id, "exited %d, but %s holds no capacity.json of its own (it holds: %s)", code, s.dir, recList(o.post, s.dir))
	case r.exit != code:
		c.fail("exit-mismatch", s.id, "exited %d; its capacity.json says exit_code %d, status %s", code, r.exit, r.status)
	case status != anyRecord && status != noRecord && r.status != status:
		c.fail("exit-mismatch", s.id, "exited %d; its capacity.json says status %s, expected %s", code, r.status, status)
	}
}

// suiteRecord checks suite.json against its steps' bundles at the suite's
// exit.
func (c *checker) suiteRecord(o *outcome) {
	sr, ok := o.post.suites[suiteDir]
	if !ok {
		c.fail("no-record", o.s.id, "exited %d without a suite.json in %s", o.exit(), suiteDir)
		return
	}
	for _, st := range sr.steps {
		if st.ExitCode == nil {
			continue
		}
		r, ok := readableRun(o.post, filepath.Join(suiteDir, st.Dir))
		if !ok {
			if *st.ExitCode != 1 && *st.ExitCode != 2 {
				c.fail("no-record", o.s.id, "suite.json has step %s %s (exit %d) but its directory holds no readable run.json", st.Dir, st.Status, *st.ExitCode)
			}
			continue
		}
		if r.exit != *st.ExitCode {
			c.fail("exit-mismatch", o.s.id, "suite.json says step %s exited %d (%s); its run.json says exit_code %d, status %s", st.Dir, *st.ExitCode, st.Status, r.exit, r.status)
		}
	}
}

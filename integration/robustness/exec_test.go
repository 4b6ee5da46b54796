//go:build robustness

package robustness

// The executor: it runs a history's steps as real processes, each when
// its trigger happens, injects each step's fault at its instant, and
// keeps what happened (the timeline, each step's outcome, the
// directories just before each step started and just after it exited).
// It judges nothing: the checker does, afterwards.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// event is one line of a history's timeline.
type event struct {
	at   time.Duration
	step int // -1: the history itself
	what string
}

// sent is a signal sent to a step.
type sent struct {
	at    time.Duration
	sig   syscall.Signal
	lines int // the step's status lines when it was sent
	err   error
}

// outcome is what became of one step.
type outcome struct {
	s        *step
	args     []string
	p        *proc
	startErr error
	fellBack string // why its trigger did not happen as planned
	startAt  time.Duration
	endAt    time.Duration
	pre      *view // the directories just before it started
	post     *view // just after it exited
	signals  []sent
	hung     string // its goroutines, when it did not exit in time
	// holders are the steps writing to its directory when it started.
	holders []holder
}

// holder is a step that wrote to a step's directory when it started;
// established when its record was already there.
type holder struct {
	id          int
	pid         int
	established bool
}

func (o *outcome) exit() int {
	if o.p == nil {
		return -1
	}
	return o.p.exit
}

func (o *outcome) signalled(sig syscall.Signal) int {
	n := 0
	for _, s := range o.signals {
		if s.sig == sig && s.err == nil {
			n++
		}
	}
	return n
}

// world is one history's execution.
type world struct {
	h      *history
	bin    string
	work   string
	agents []*agent
	dead   string // an address nothing listens on
	start  time.Time
	sc     *scanner
	w      *watcher
	dirs   []string

	mu       sync.Mutex
	events   []event
	outs     []*outcome
	started  []chan struct{} // closed once step i started, or gave up
	recovery []*outcome
}

// The suites of a history: robust.yaml (a load and two timed runs) and
// other.yaml, a different suite that must never take robust's directory.
const suiteFile = `name: robust
properties: {recordcount: 500, basicdb.verbose: false, status.interval: 0.3}
databases: [basic]
steps:
  - load: workloada
  - run: workloada
    duration: 2s
    target: 400
  - run: workloadc
    duration: 2s
    target: 400
`

const otherSuiteFile = `name: other
properties: {recordcount: 200, basicdb.verbose: false, status.interval: 0.3}
databases: [basic]
steps:
  - run: workloadc
    duration: 1s
    target: 200
`

// userFile is a file of the operator's in r0: nothing may remove it.
const (
	userFile    = "r0/NOTES.txt"
	userContent = "the operator's notes: not a bundle file\n"
)

func newWorld(h *history, bin, work string) (*world, error) {
	w := &world{h: h, bin: bin, work: work, dirs: append(append([]string{}, bundleDirs...), suiteDir)}
	for _, f := range []struct{ name, text string }{
		{userFile, userContent}, {"robust.yaml", suiteFile}, {"other.yaml", otherSuiteFile},
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(work, f.name)), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(work, f.name), []byte(f.text), 0o644); err != nil {
			return nil, err
		}
	}
	for range 2 {
		a, err := startAgent(bin, work)
		if err != nil {
			w.stopAgents()
			return nil, err
		}
		w.agents = append(w.agents, a)
	}
	dead, err := freePort()
	if err != nil {
		w.stopAgents()
		return nil, err
	}
	w.dead = dead
	for range h.steps {
		w.started = append(w.started, make(chan struct{}))
		w.outs = append(w.outs, nil)
	}
	return w, nil
}

func (w *world) since() time.Duration { return time.Since(w.start) }

func (w *world) log(step int, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, event{at: w.since(), step: step, what: fmt.Sprintf(format, args...)})
}

func (w *world) agentList() string {
	var a []string
	for _, ag := range w.agents {
		a = append(a, ag.addr)
	}
	return strings.Join(a, ",")
}

// args is a step's command line.
func (w *world) args(s *step) []string {
	L := s.label()
	timed := func(seconds int) []string {
		return []string{"-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=0",
			"-p", "maxexecutiontime=" + strconv.Itoa(seconds), "-target", "400", "-threads", "2",
			"-p", "status.interval=0.3", "-s", "-l", L, "--results", s.dir}
	}
	var a []string
	switch s.kind {
	case kRun:
		a = append([]string{"run", "basic"}, timed(s.seconds)...)
	case kCoord:
		a = append([]string{"coordinator", "run", "basic", "--agents", w.agentList(), "--agent-timeout", strconv.Itoa(agentTimeoutMs) + "ms"}, timed(s.seconds)...)
	case kLoad:
		first := s.id * 100000
		n := s.seconds * 1000
		a = []string{"load", "embedded", "-P", "workloada", "-p", "embedded.dir=store", "-p", fmt.Sprintf("insertstart=%d", first),
			"-p", fmt.Sprintf("insertcount=%d", n), "-p", fmt.Sprintf("recordcount=%d", first+n), "-target", "1000",
			"-p", "status.interval=0.3", "-s", "-l", L, "--results", s.dir}
	case kCapacity:
		a = []string{"capacity", "basic"}
		if usesAgents(s) {
			a = []string{"coordinator", "capacity", "basic", "--agents", w.agentList(), "--agent-timeout", strconv.Itoa(agentTimeoutMs) + "ms"}
		}
		a = append(a, "-P", "workloada", "-p", "basicdb.verbose=false", "--slo", "READ.p99<=50ms",
			"--probe", strconv.Itoa(s.seconds)+"s", "--warmup", "0s", "--start", "200", "--max", "800", "--max-probes", "3",
			"--interval", "250ms", "-s", "-l", L, "--results", s.dir)
	case kSuite, kResume, kResumeOther:
		file := "robust.yaml"
		if s.kind == kResumeOther {
			file = "other.yaml"
		}
		a = []string{"suite", file, "--results", s.dir, "-p", "status=true", "-p", "label=" + L}
		if s.kind != kSuite {
			a = append(a, "--resume")
		}
	case kReport, kReportOut:
		a = []string{"report", s.dir}
	case kCompare:
		a = []string{"compare", s.dir, s.other}
	case kFailStart:
		if s.id%2 == 0 {
			port := w.dead[strings.LastIndex(w.dead, ":")+1:]
			a = []string{"run", "cassandra", "-P", "workloada", "-p", "hosts=127.0.0.1", "-p", "port=" + port,
				"-p", "cassandra.connecttimeoutmillis=500", "-l", L, "--results", s.dir}
		} else {
			a = append([]string{"coordinator", "run", "basic", "--agents", w.dead}, timed(2)...)
		}
	}
	if s.csv {
		a = append(a, "--format", "csv")
	}
	if s.out != "" {
		a = append(a, "-o", s.out)
	}
	if s.overwrite {
		a = append(a, "--overwrite")
	}
	return a
}

// execute runs the history to its end: every step has exited (or was
// killed as hung).
func (w *world) execute() {
	w.start = time.Now()
	w.sc = newScanner(w.work)
	w.w = newWatcher(w.sc, w.dirs, w.start)
	var wg sync.WaitGroup
	for _, s := range w.h.steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.runStep(s)
		}()
	}
	wg.Wait()
}

// waitTrigger waits for a step's trigger; it returns why it gave up
// waiting, if it did (the step then starts anyway).
func (w *world) waitTrigger(t trigger) string {
	const bound = 3 * time.Minute
	if t.kind == tAt {
		time.Sleep(time.Until(w.start.Add(time.Duration(t.ms) * time.Millisecond)))
		return ""
	}
	select {
	case <-w.started[t.step]:
	case <-time.After(bound):
		return fmt.Sprintf("#%d not started within %s", t.step, bound)
	}
	w.mu.Lock()
	o := w.outs[t.step]
	w.mu.Unlock()
	if t.kind == tWith {
		return ""
	}
	if o == nil || o.p == nil {
		return fmt.Sprintf("#%d never ran", t.step)
	}
	switch t.kind {
	case tStatus:
		if !o.p.waitStatus(t.lines, bound) {
			return fmt.Sprintf("#%d exited (or stalled) after %d status lines", t.step, o.p.status())
		}
	case tExit:
		if !o.p.waitExit(bound) {
			return fmt.Sprintf("#%d still running after %s", t.step, bound)
		}
	}
	return ""
}

// holdersOf lists the writing steps alive in dir now.
func (w *world) holdersOf(s *step) []holder {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []holder
	for _, o := range w.outs {
		if o == nil || o.p == nil || o.s.id == s.id || !o.s.kind.writes() || o.p.exited() || topDir(o.s.dir) != topDir(s.dir) {
			continue
		}
		out = append(out, holder{id: o.s.id, pid: o.p.pid, established: w.hasRecordOf(o.s)})
	}
	return out
}

// hasRecordOf reports whether the watcher has seen a record of s: it
// measures, so it holds its directory.
func (w *world) hasRecordOf(s *step) bool {
	for _, r := range w.w.sightings() {
		if r.label == s.label() && topDir(r.dir) == topDir(s.dir) {
			return true
		}
	}
	return false
}

// topDir is the history's directory a path is in ("r0/probe-01" → "r0").
func topDir(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return p
}

// exitBound is how long a step may take before it counts as hung: its
// planned length, its pause, and a margin for a loaded 2-core machine
// (the bound catches hangs, it times nothing).
func exitBound(s *step) time.Duration {
	d := 60 * time.Second
	switch s.kind {
	case kRun, kCoord, kLoad, kFailStart:
		d += time.Duration(s.seconds) * time.Second
	case kCapacity:
		d += 3 * time.Duration(s.seconds) * time.Second
	case kSuite, kResume:
		d += 10 * time.Second
	}
	return d + time.Duration(s.fault.pause)*time.Millisecond
}

func (w *world) runStep(s *step) {
	o := &outcome{s: s, args: w.args(s)}
	var once sync.Once
	started := func() { once.Do(func() { close(w.started[s.id]) }) }
	defer started()
	o.fellBack = w.waitTrigger(s.start)
	o.holders = w.holdersOf(s)
	o.pre = w.sc.scan(w.dirs)
	w.w.observe(o.pre)
	o.startAt = w.since()
	p, err := startProc(w.bin, w.work, o.args...)
	o.p, o.startErr = p, err
	w.mu.Lock()
	w.outs[s.id] = o
	w.mu.Unlock()
	if err != nil {
		w.log(s.id, "could not start: %v", err)
		return
	}
	w.log(s.id, "start pid %d: ycsbctl %s%s", p.pid, strings.Join(o.args, " "), fellBackNote(o.fellBack))
	started()
	faulted := make(chan struct{})
	go func() {
		defer close(faulted)
		w.inject(o)
	}()
	if !p.waitExit(exitBound(s)) {
		w.log(s.id, "still running after %s: its goroutines taken (SIGQUIT), then killed", exitBound(s))
		o.hung = p.goroutines()
	}
	<-faulted
	o.endAt = w.since()
	o.post = w.sc.scan(w.dirs)
	w.w.observe(o.post)
	w.log(s.id, "exit %d after %s (%d status lines)", p.exit, p.took.Round(time.Millisecond), p.status())
}

func fellBackNote(why string) string {
	if why == "" {
		return ""
	}
	return " (trigger fell back: " + why + ")"
}

// inject sends a step's fault at its instant: after its own n-th status
// line, or a delay after its start. A process that exits first is left
// alone (the timeline says so).
func (w *world) inject(o *outcome) {
	f, p := o.s.fault, o.p
	if f.kind == fNone {
		return
	}
	if f.lines > 0 {
		if !p.waitStatus(f.lines, exitBound(o.s)) {
			w.log(o.s.id, "%s not sent: exited after %d status lines", f.kind, p.status())
			return
		}
	} else {
		select {
		case <-p.done:
			w.log(o.s.id, "%s not sent: exited before %dms", f.kind, f.ms)
			return
		case <-time.After(time.Until(p.began.Add(time.Duration(f.ms) * time.Millisecond))):
		}
	}
	send := func(sig syscall.Signal) {
		at, lines := w.since(), p.status()
		err := p.signal(sig)
		w.mu.Lock()
		o.signals = append(o.signals, sent{at: at, sig: sig, lines: lines, err: err})
		w.mu.Unlock()
		note := ""
		if err != nil {
			note = " (not delivered: " + err.Error() + ")"
		}
		w.log(o.s.id, "%s after %d status lines%s", sigName(sig), lines, note)
	}
	switch f.kind {
	case fTerm:
		send(syscall.SIGTERM)
	case fTermTwice:
		send(syscall.SIGTERM)
		time.Sleep(100 * time.Millisecond) // the second signal of an impatient operator
		send(syscall.SIGTERM)
	case fKill:
		send(syscall.SIGKILL)
	case fStop:
		send(syscall.SIGSTOP)
		time.Sleep(time.Duration(f.pause) * time.Millisecond) // the pause is the fault itself
		send(syscall.SIGCONT)
	}
}

func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGSTOP:
		return "SIGSTOP"
	case syscall.SIGCONT:
		return "SIGCONT"
	}
	return s.String()
}

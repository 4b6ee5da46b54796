//go:build robustness

package robustness

// A history is data: a list of steps generated from a seed, each a real
// ycsbctl command with the instant it starts (relative to the history's
// start or to another step's observed progress) and the fault it suffers.
// The executor (exec_test.go) runs it; the checker (check_test.go) reads
// the world afterwards. The plan is a pure function of the seed, so a
// failing history is re-run by its seed (the instants at which real
// processes print their lines are not).

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// kind is what a step runs.
type kind int

const (
	kRun         kind = iota // run basic on this host, timed
	kLoad                    // load embedded into the history's store
	kCoord                   // coordinator run basic over the history's agents
	kCapacity                // capacity basic, a short search
	kSuite                   // suite FILE
	kResume                  // suite FILE --resume
	kResumeOther             // suite OTHER --resume into the suite directory of FILE
	kReport                  // report DIR
	kReportOut               // report DIR -o TARGET
	kCompare                 // compare DIR DIR [-o TARGET]
	kFailStart               // a run --overwrite whose database or agent is unreachable
)

var kindNames = [...]string{"run", "load", "coordinator run", "capacity", "suite", "suite --resume", "suite OTHER --resume",
	"report", "report", "compare", "failing start"}

func (k kind) String() string { return kindNames[k] }

// writes reports whether the step takes a results directory for itself:
// only one such step may own a directory at a time.
func (k kind) writes() bool {
	switch k {
	case kRun, kLoad, kCoord, kCapacity, kSuite, kResume, kResumeOther, kReport, kFailStart:
		return true
	}
	return false
}

// measures reports whether the step runs a workload (and so prints status
// lines and can be faulted).
func (k kind) measures() bool {
	switch k {
	case kRun, kLoad, kCoord, kCapacity, kSuite, kResume:
		return true
	}
	return false
}

func (k kind) suite() bool { return k == kSuite || k == kResume || k == kResumeOther }

// usesAgents reports whether a step runs over the history's agents: a
// coordinator run, and every other capacity search (coordinator
// capacity).
func usesAgents(s *step) bool { return s.kind == kCoord || (s.kind == kCapacity && s.id%2 == 1) }

// triggerKind is what starts a step.
type triggerKind int

const (
	tAt     triggerKind = iota // ms after the history's start
	tWith                      // with another step, at once (two invocations at the same instant)
	tStatus                    // once another step printed its n-th status line
	tExit                      // once another step exited
)

type trigger struct {
	kind  triggerKind
	ms    int
	step  int
	lines int
}

func (t trigger) String() string {
	switch t.kind {
	case tWith:
		return fmt.Sprintf("with #%d", t.step)
	case tStatus:
		return fmt.Sprintf("at #%d's status line %d", t.step, t.lines)
	case tExit:
		return fmt.Sprintf("after #%d exits", t.step)
	}
	return fmt.Sprintf("at %dms", t.ms)
}

// faultKind is what is done to a step's process while it runs.
type faultKind int

const (
	fNone      faultKind = iota
	fTerm                // one SIGTERM: a graceful stop
	fTermTwice           // two SIGTERMs: an abort
	fKill                // SIGKILL
	fStop                // SIGSTOP, then SIGCONT after pause ms
)

var faultNames = [...]string{"none", "SIGTERM", "SIGTERM twice", "SIGKILL", "SIGSTOP"}

func (f faultKind) String() string { return faultNames[f] }

// fault is a step's fault and its instant: after the step's own n-th
// status line (lines > 0), else ms after its start.
type fault struct {
	kind  faultKind
	lines int
	ms    int
	pause int
}

func (f fault) String() string {
	if f.kind == fNone {
		return ""
	}
	s := f.kind.String()
	if f.kind == fStop {
		s += fmt.Sprintf(" for %dms", f.pause)
	}
	if f.lines > 0 {
		return s + fmt.Sprintf(" after its status line %d", f.lines)
	}
	return s + fmt.Sprintf(" %dms after its start", f.ms)
}

// step is one command of a history.
type step struct {
	id        int
	kind      kind
	dir       string // its results directory (relative to the history's)
	other     string // compare's second directory
	out       string // -o TARGET, "" for the default
	csv       bool   // --format csv
	overwrite bool
	seconds   int // how long its workload runs (each probe, for capacity)
	start     trigger
	fault     fault
}

func (s *step) label() string { return fmt.Sprintf("rb%d", s.id) }

func (s *step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s: %s", s.id, s.start, s.kind)
	if s.kind.measures() && s.kind != kSuite && s.kind != kResume {
		fmt.Fprintf(&b, " %ds", s.seconds)
	}
	if s.kind == kCapacity && usesAgents(s) {
		b.WriteString(" over the agents")
	}
	fmt.Fprintf(&b, " %s", s.dir)
	if s.other != "" {
		fmt.Fprintf(&b, " %s", s.other)
	}
	if s.csv {
		b.WriteString(" --format csv")
	}
	if s.out != "" {
		fmt.Fprintf(&b, " -o %s", s.out)
	}
	if s.overwrite {
		b.WriteString(" --overwrite")
	}
	if f := s.fault.String(); f != "" {
		fmt.Fprintf(&b, "; %s", f)
	}
	return b.String()
}

// history is one generated interleaving.
type history struct {
	seed  uint64
	steps []*step
}

// Where steps go: bundle directories (runs, capacity searches; r0
// exists with a file of the operator's in it, the others do not exist
// yet) and one suite directory.
var (
	bundleDirs = []string{"r0", "r1", "r2"}
	suiteDir   = "s0"
	// ownFiles are files of a bundle that an output (-o) must never
	// replace.
	ownFiles = []string{"run.json", "merged.hlog", "summary.txt"}
)

// generate builds the history of a seed.
func generate(seed uint64) *history {
	r := rand.New(rand.NewPCG(seed, 34))
	h := &history{seed: seed}
	n := 4 + r.IntN(5)
	for i := 0; i < n; i++ {
		h.steps = append(h.steps, genStep(r, i, h.steps))
	}
	return h
}

// kindWeights are how often each kind is drawn.
var kindWeights = []struct {
	k kind
	w int
}{
	{kRun, 20}, {kCoord, 14}, {kLoad, 5}, {kCapacity, 8}, {kSuite, 6}, {kResume, 6}, {kResumeOther, 2},
	{kReport, 14}, {kReportOut, 8}, {kCompare, 6}, {kFailStart, 5},
}

func drawKind(r *rand.Rand, prev []*step) kind {
	total := 0
	for _, kw := range kindWeights {
		total += kw.w
	}
	for {
		n := r.IntN(total)
		for _, kw := range kindWeights {
			if n < kw.w {
				if kw.k == kResume && !hasKind(prev, kSuite) {
					break // a resume wants a suite before it; draw again
				}
				return kw.k
			}
			n -= kw.w
		}
	}
}

func hasKind(steps []*step, k kind) bool {
	for _, s := range steps {
		if s.kind == k {
			return true
		}
	}
	return false
}

// pickDir prefers a directory an earlier step used, so that steps meet.
func pickDir(r *rand.Rand, prev []*step) string {
	var used []string
	for _, s := range prev {
		if !s.kind.suite() {
			used = append(used, s.dir)
		}
	}
	if len(used) > 0 && r.IntN(10) < 7 {
		return used[r.IntN(len(used))]
	}
	return bundleDirs[r.IntN(len(bundleDirs))]
}

func genStep(r *rand.Rand, i int, prev []*step) *step {
	s := &step{id: i, kind: drawKind(r, prev)}
	switch {
	case s.kind.suite():
		s.dir = suiteDir
	default:
		s.dir = pickDir(r, prev)
	}
	switch s.kind {
	case kRun, kCoord, kLoad:
		s.seconds = 2 + r.IntN(3)
		s.overwrite = r.IntN(10) < 4
	case kCapacity:
		s.seconds = 1
		s.overwrite = r.IntN(10) < 4
	case kFailStart:
		s.overwrite = true
	case kReportOut:
		s.out, s.csv = pickOutput(r, i, prev, "report")
	case kCompare:
		s.other = pickDir(r, prev)
		if r.IntN(10) < 3 {
			s.out, s.csv = pickOutput(r, i, prev, "compare")
		}
	}
	s.start = genTrigger(r, i, s, prev)
	if s.kind.measures() {
		s.fault = genFault(r, s)
	}
	if s.kind == kCoord && s.fault.pause >= leaseMs {
		// Frozen past the lease mid-run, not across the run's end: the
		// agents stop their load by their lease while it has seconds to go.
		s.seconds = 8
		s.fault.lines, s.fault.ms = 1+r.IntN(3), 0
	}
	return s
}

// pickOutput is an -o target: a file of its own in the history's
// directory, or a file of a bundle (which must be refused).
func pickOutput(r *rand.Rand, i int, prev []*step, what string) (string, bool) {
	if r.IntN(2) == 0 {
		return fmt.Sprintf("%s-%d.html", what, i), false
	}
	f := ownFiles[r.IntN(len(ownFiles))]
	return pickDir(r, prev) + "/" + f, f == "summary.txt"
}

func genTrigger(r *rand.Rand, i int, s *step, prev []*step) trigger {
	if i == 0 {
		return trigger{kind: tAt}
	}
	var measuring, sameDir []int
	for _, p := range prev {
		if p.kind.measures() {
			measuring = append(measuring, p.id)
			if p.dir == s.dir {
				sameDir = append(sameDir, p.id)
			}
		}
	}
	n := r.IntN(100)
	switch {
	case n < 40 && len(measuring) > 0:
		pool := measuring
		if len(sameDir) > 0 && r.IntN(4) > 0 {
			pool = sameDir
		}
		return trigger{kind: tStatus, step: pool[r.IntN(len(pool))], lines: 1 + r.IntN(3)}
	case n < 55:
		return trigger{kind: tWith, step: prev[r.IntN(len(prev))].id}
	case n < 75:
		return trigger{kind: tExit, step: prev[r.IntN(len(prev))].id}
	}
	return trigger{kind: tAt, ms: r.IntN(5000)}
}

// Agents' lease, and the coordinator's agent timeout below it: a pause
// of the coordinator beyond the lease stops the agents' load.
const (
	leaseMs        = 3000
	agentTimeoutMs = 2000
)

func genFault(r *rand.Rand, s *step) fault {
	var f fault
	switch n := r.IntN(100); {
	case n < 45:
		return f
	case n < 60:
		f.kind = fTerm
	case n < 65:
		f.kind = fTermTwice
	case n < 85:
		f.kind = fKill
	default:
		f.kind = fStop
		f.pause = 200 + r.IntN(1300)
		if usesAgents(s) {
			// Within the lease and the agent timeout by a margin a
			// loaded machine keeps, or (a coordinator run) past the lease.
			f.pause = 200 + r.IntN(800)
			if s.kind == kCoord && r.IntN(2) == 0 {
				f.pause = leaseMs + 2000
			}
		}
	}
	maxLines := 3
	if s.kind.suite() || s.kind == kCapacity {
		maxLines = 8
	}
	if r.IntN(10) < 7 {
		f.lines = 1 + r.IntN(maxLines)
	} else {
		f.ms = 200 + r.IntN(1000*max(s.seconds, 2))
	}
	return f
}

// features names what a history exercises, to choose seeds that cover
// every kind of step, fault and meeting (TestRobustnessPlans).
func (h *history) features() map[string]bool {
	f := map[string]bool{}
	for _, s := range h.steps {
		f["kind "+s.kind.String()] = true
		if s.fault.kind != fNone {
			f[fmt.Sprintf("%s, %s", s.kind, s.fault.kind)] = true
		}
		if s.kind == kCoord && s.fault.pause >= leaseMs {
			f["coordinator run frozen past the lease"] = true
		}
		if s.kind == kCapacity && usesAgents(s) {
			f["coordinator capacity"] = true
			if s.fault.kind != fNone {
				f["coordinator capacity, "+s.fault.kind.String()] = true
			}
		}
		if s.overwrite && s.kind != kFailStart {
			f[s.kind.String()+" --overwrite"] = true
		}
		if s.out != "" && isOwnFile(s.out) {
			f[s.kind.String()+" -o a bundle's file"] = true
		}
		if s.start.kind == tStatus || s.start.kind == tWith {
			o := h.steps[s.start.step]
			if o.dir == s.dir && o.kind.writes() {
				f[fmt.Sprintf("%s meets a live %s", s.kind, o.kind)] = true
			}
		}
		if o := h.steps[s.start.step]; s.start.kind == tExit && o.fault.kind == fKill && o.dir == s.dir && s.kind.writes() {
			f[fmt.Sprintf("%s after a killed step in its directory", s.kind)] = true
		}
	}
	return f
}

func isOwnFile(path string) bool {
	for _, f := range ownFiles {
		if strings.HasSuffix(path, "/"+f) {
			return true
		}
	}
	return false
}

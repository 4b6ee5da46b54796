package capacity

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
)

// Settings are a search's objectives and bounds.
type Settings struct {
	Objectives []Objective `json:"objectives"`
	// MaxErrorRate is the largest share of failed calls a passing probe
	// may have.
	MaxErrorRate float64 `json:"max_error_rate"`
	// Precision ends the bisection: the answer is at most this share
	// below the lowest failing target.
	Precision float64 `json:"precision"`
	// Start is the first target; Max the largest the search tries.
	Start float64 `json:"start_ops_per_sec"`
	Max   float64 `json:"max_ops_per_sec"`
	// MaxProbes bounds the number of probes, repeats included, so that
	// the search always ends.
	MaxProbes int `json:"max_probes"`
	// Probe and Warmup are each probe's measured time and warm-up.
	Probe  time.Duration `json:"-"`
	Warmup time.Duration `json:"-"`
}

// Defaults of the command's flags.
const (
	DefaultMaxErrorRate = 0.001
	DefaultPrecision    = 0.05
	DefaultStart        = 1000
	DefaultMax          = 10_000_000
	DefaultMaxProbes    = 20
	DefaultProbe        = 60 * time.Second
	DefaultWarmup       = 20 * time.Second
)

// Bounds of the settings (beyond them a search means nothing or never
// ends in useful time).
const (
	MinPrecision = 0.001
	MaxPrecision = 0.5
	MaxMaxProbes = 1000
	// Growth is the ramp's factor between targets.
	Growth = 2
	// floorDivisor bounds a downward ramp: below Start/floorDivisor the
	// search gives up looking for a passing target.
	floorDivisor = 1024
	// MaxPartialRetries is how many times a partial probe (an agent
	// lost) is tried again at its target before the target is left
	// undecided: a lost agent says nothing of the database, and another
	// try most often has every agent.
	MaxPartialRetries = 2
)

// Check validates the settings; errors name the flag.
func (s *Settings) Check() error {
	switch {
	case s.MaxErrorRate < 0 || s.MaxErrorRate > 1 || math.IsNaN(s.MaxErrorRate):
		return fmt.Errorf("--max-error-rate %g: expected a share of calls from 0 to 1 (0.001 = 0.1%%)", s.MaxErrorRate)
	case !(s.Precision >= MinPrecision && s.Precision <= MaxPrecision):
		return fmt.Errorf("--precision %g: expected from %g%% to %g%%", s.Precision, 100*MinPrecision, 100*MaxPrecision)
	case !(s.Start > 0) || math.IsInf(s.Start, 0):
		return fmt.Errorf("--start %g: expected a positive target in operations per second", s.Start)
	case !(s.Max >= s.Start) || math.IsInf(s.Max, 0):
		return fmt.Errorf("--max %g: expected a target at least --start (%g)", s.Max, s.Start)
	case s.MaxProbes < 1 || s.MaxProbes > MaxMaxProbes:
		return fmt.Errorf("--max-probes %d: expected from 1 to %d", s.MaxProbes, MaxMaxProbes)
	case s.Probe <= 0:
		return fmt.Errorf("--probe %s: expected a positive duration such as 60s", s.Probe)
	case s.Warmup < 0:
		return fmt.Errorf("--warmup %s: expected a duration of 0 or more", s.Warmup)
	case DueCalls(s.Start, s.Probe) < MinProbeCalls:
		return fmt.Errorf("--start %g: expected at least %s ops/s with --probe %s: a probe must hold at least %d calls due at its target to be judged (%s at %g ops/s); raise --start, or lengthen --probe to at least %s",
			s.Start, FormatRate(MinTarget(s.Probe)), s.Probe, MinProbeCalls, FormatRate(DueCalls(s.Start, s.Probe)), s.Start, probeFor(s.Start))
	}
	return nil
}

// Plan is one probe the search asks for.
type Plan struct {
	N      int
	Target float64
	// Repeat marks the repeat of an unsteady probe; Retry counts the
	// tries again of a partial one.
	Repeat bool
	Retry  int
	// Bracket is what the search knows when the probe starts.
	Bracket Bracket
	// MaxProbes is the search's budget, for progress lines.
	MaxProbes int
}

// Bracket is the search's knowledge: the highest target that passed and
// the lowest that failed, 0 where there is none yet; and the lowest
// target that could not be judged (a probe too short, or partial in
// every try), which bounds the search as a failure would without being
// one.
type Bracket struct {
	Pass      float64 `json:"pass_ops_per_sec"`
	Fail      float64 `json:"fail_ops_per_sec"`
	Undecided float64 `json:"undecided_ops_per_sec,omitempty"`
}

// upper is the bracket's upper end: the lowest target that failed or
// could not be judged (0: none yet).
func (b Bracket) upper() float64 {
	switch {
	case b.Fail == 0:
		return b.Undecided
	case b.Undecided == 0:
		return b.Fail
	}
	return min(b.Fail, b.Undecided)
}

// undecidedAbove says the upper end is a target that could not be
// judged, not a failure.
func (b Bracket) undecidedAbove() bool {
	return b.Undecided > 0 && (b.Fail == 0 || b.Undecided < b.Fail)
}

func (b Bracket) String() string {
	lo, hi := "none yet", "none yet"
	if b.Pass > 0 {
		lo = FormatRate(b.Pass)
	}
	if b.Fail > 0 {
		hi = FormatRate(b.Fail)
	}
	s := fmt.Sprintf("passed %s, failed %s", lo, hi)
	if b.Undecided > 0 {
		s += ", undecided " + FormatRate(b.Undecided)
	}
	return s
}

// Prober runs one probe: a paced run at plan.Target with its own warm-up.
// It returns what was measured; an error means the probe did not run to
// its end (stopped, aborted, failed) and carries its exit code, and the
// search ends with it. A probe whose database errors exceeded a run's
// own threshold still returns its measurements: the search judges them.
type Prober interface {
	Probe(ctx context.Context, plan Plan) (*Measured, error)
}

// ProberFunc adapts a function to Prober.
type ProberFunc func(ctx context.Context, plan Plan) (*Measured, error)

// Probe calls f.
func (f ProberFunc) Probe(ctx context.Context, plan Plan) (*Measured, error) { return f(ctx, plan) }

// Ending says why a search ended.
type Ending string

// Endings.
const (
	// EndConverged: the bracket is within the precision.
	EndConverged Ending = "converged"
	// EndAtMax: the largest target allowed (--max) passed.
	EndAtMax Ending = "max reached"
	// EndBudget: the probe budget ran out before the precision.
	EndBudget Ending = "probe budget spent"
	// EndNoPass: no target passed, down to the floor of the ramp.
	EndNoPass Ending = "no target passed"
	// EndUndecided: the passing end is within the precision of a target
	// that could not be judged (too short, or partial in every try):
	// the search cannot narrow further, and did not converge.
	EndUndecided Ending = "undecided"
	// EndTooShort: no target passed, and the next one down would hold
	// fewer than MinProbeCalls calls in a probe.
	EndTooShort Ending = "probes too short"
	// EndInterrupted: a probe did not run to its end (the operator
	// stopped it, an agent was lost, a run failed).
	EndInterrupted Ending = "interrupted"
	// EndRunning is a record written while the search goes on.
	EndRunning Ending = "running"
)

// Answer is what the search found.
type Answer struct {
	// Found says a target passed; Capacity is the highest that did and
	// Achieved the throughput its probe achieved.
	Found    bool    `json:"found"`
	Capacity float64 `json:"capacity_ops_per_sec"`
	Achieved float64 `json:"achieved_ops_per_sec"`
	// Probe is the number of the probe that passed at Capacity, and
	// Steady whether it was steady.
	Probe   int     `json:"probe,omitempty"`
	Steady  bool    `json:"steady,omitempty"`
	Bracket Bracket `json:"bracket"`
	// Converged says the bracket is within the precision.
	Converged bool   `json:"converged"`
	Ended     Ending `json:"ended"`
	// Reason says why the search could not decide (EndUndecided,
	// EndTooShort): what the undecided probe lacked, what to lengthen.
	Reason string `json:"reason,omitempty"`
}

// Search runs the search.
type Search struct {
	Settings Settings
	Prober   Prober
	// Logf receives one line per probe: what it found and why.
	Logf func(format string, args ...any)
	// Progress, when set, is called after every probe with the probes so
	// far and the answer as it stands (to keep the record current).
	Progress func(probes []Probe, a Answer)
}

// Run searches until the precision, --max, the probe budget or a probe
// that did not run ends it. It returns every probe and the answer; err is
// the error of a probe that did not run to its end (the answer is then
// what the probes before it found).
func (s *Search) Run(ctx context.Context) ([]Probe, Answer, error) {
	st := &Settings{}
	*st = s.Settings
	r := &searchRun{s: st, logf: s.Logf, a: Answer{Ended: EndRunning}, target: st.Start}
	if r.logf == nil {
		r.logf = func(string, ...any) {}
	}
	for {
		if len(r.probes) >= st.MaxProbes {
			r.a.Ended = EndBudget
			break
		}
		plan := Plan{N: len(r.probes) + 1, Target: r.target, Repeat: r.repeat, Retry: r.retry, Bracket: r.b, MaxProbes: st.MaxProbes}
		m, err := s.Prober.Probe(ctx, plan)
		if err != nil {
			if m != nil {
				p := Probe{N: plan.N, Repeat: r.repeat, Retry: r.retry, Measured: *m, Verdict: Stopped, Reasons: []string{err.Error()}}
				r.probes = append(r.probes, p)
				r.logf("Probe %d at %s ops/s did not run to its end: %v", plan.N, FormatRate(r.target), err)
			}
			r.a.Ended = EndInterrupted
			r.a.Bracket = r.b
			return r.probes, r.a, err
		}
		m.Target = r.target
		p := judge(m, st)
		p.N, p.Repeat, p.Retry = plan.N, r.repeat, r.retry
		r.probes = append(r.probes, p)
		r.logf("%s", describe(&p, st))
		if end := r.next(&p); end != "" {
			r.a.Ended = end
			break
		}
		r.a.Bracket = r.b
		if s.Progress != nil {
			s.Progress(r.probes, r.a)
		}
	}
	r.a.Bracket = r.b
	r.a.Converged = converged(r.b, st.Precision)
	return r.probes, r.a, nil
}

// searchRun is a search under way: the probes so far, the bracket and
// the answer as they stand, and what the next probe is.
type searchRun struct {
	s      *Settings
	logf   func(format string, args ...any)
	probes []Probe
	b      Bracket
	a      Answer
	target float64
	// repeat marks the next probe as the repeat of an unsteady one,
	// retry as the retry of a partial one.
	repeat bool
	retry  int
	// undecidedWhy says why the bracket's undecided target was not
	// judged.
	undecidedWhy string
}

// next takes p's verdict into the search and sets the next probe, or
// says why the search ends.
func (r *searchRun) next(p *Probe) Ending {
	switch {
	case p.Verdict == Partial && r.retry < MaxPartialRetries:
		// The same probe again, as it was planned (a repeat stays a
		// repeat).
		r.retry++
		r.logf("Probe %d was partial (%s): it says nothing of the database; trying %s ops/s again (retry %d of %d)",
			p.N, strings.Join(p.Partial, "; "), FormatRate(p.Target), r.retry, MaxPartialRetries)
		return ""
	case (p.Verdict == Pass || p.Verdict == Fail) && !p.Steady && !r.repeat && !p.Saturated:
		// An unsteady probe is repeated once unless it was saturated:
		// a database that cannot keep the pace at all fails whatever
		// the trend, but a passing probe should be sustainable, and a
		// failure may be a passing disturbance.
		r.repeat, r.retry = true, 0
		r.logf("Probe %d was not steady (%s): repeating it at the same target", p.N, p.Unsteady)
		return ""
	}
	r.repeat, r.retry = false, 0
	switch p.Verdict {
	case Pass:
		r.b.Pass = max(r.b.Pass, p.Target)
		if r.b.Pass == p.Target {
			r.a.Found, r.a.Capacity, r.a.Achieved, r.a.Probe, r.a.Steady = true, p.Target, p.Achieved, p.N, p.Steady
		}
	case Fail:
		if r.b.Fail == 0 || p.Target < r.b.Fail {
			r.b.Fail = p.Target
		}
	default:
		why := strings.Join(p.Reasons, "; ")
		if p.Verdict == Partial {
			why = fmt.Sprintf("probe %d at %s ops/s was partial in %d tries (%s)", p.N, FormatRate(p.Target), MaxPartialRetries+1, strings.Join(p.Partial, "; "))
		} else {
			why = fmt.Sprintf("probe %d at %s ops/s was %s", p.N, FormatRate(p.Target), why)
		}
		r.logf("Probe %d leaves %s ops/s undecided: the search looks below it, and cannot converge on it", p.N, FormatRate(p.Target))
		if r.b.Undecided == 0 || p.Target < r.b.Undecided {
			r.b.Undecided, r.undecidedWhy = p.Target, why
		}
	}
	next, end := nextTarget(r.b, r.s, r.s.Start/floorDivisor)
	switch end {
	case EndUndecided:
		r.a.Reason = r.undecidedWhy
	case EndTooShort:
		r.a.Reason = fmt.Sprintf("a target below %s ops/s holds fewer than %d calls in a probe of %s, too few to judge: lengthen --probe to search lower",
			FormatRate(MinTarget(r.s.Probe)), MinProbeCalls, r.s.Probe)
		if r.undecidedWhy != "" && r.b.undecidedAbove() {
			r.a.Reason = r.undecidedWhy + "; and " + r.a.Reason
		}
	}
	r.target = next
	return end
}

// nextTarget is the next target, or why the search ends: up the ramp
// while nothing has failed or been left undecided, down it while nothing
// has passed (not below what a probe can judge), then the middle of the
// bracket, whose upper end is the lowest target that failed or could not
// be judged.
func nextTarget(b Bracket, s *Settings, floor float64) (float64, Ending) {
	up := b.upper()
	switch {
	case up == 0:
		if b.Pass >= s.Max {
			return 0, EndAtMax
		}
		return min(b.Pass*Growth, s.Max), ""
	case b.Pass == 0:
		next := up / Growth
		switch {
		case next < floor:
			return 0, EndNoPass
		case DueCalls(next, s.Probe) < MinProbeCalls:
			return 0, EndTooShort
		}
		return next, ""
	case b.Pass >= up*(1-s.Precision):
		if b.undecidedAbove() {
			return 0, EndUndecided
		}
		return 0, EndConverged
	}
	mid := (b.Pass + up) / 2
	if r := math.Round(mid); r > b.Pass && r < up {
		// Whole operations per second read better, where the bracket
		// leaves room for them.
		mid = r
	}
	return mid, ""
}

// converged says the bracket's passing end is within the precision of
// its failing end, and no undecided target lies between them.
func converged(b Bracket, precision float64) bool {
	return b.Pass > 0 && b.Fail > 0 && !b.undecidedAbove() && b.Pass >= b.Fail*(1-precision)
}

// describe is a probe's one-line account.
func describe(p *Probe, s *Settings) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Probe %d at %s ops/s: achieved %s ops/s", p.N, FormatRate(p.Target), FormatRate(p.Achieved))
	for _, o := range s.Objectives {
		if v, ok := p.Value(o); ok {
			fmt.Fprintf(&b, ", %s %s %s (≤ %s)", o.Op, o.Key(), FormatMicros(v), o.Bound)
		}
	}
	if p.Calls > 0 {
		fmt.Fprintf(&b, ", errors %s", FormatShare(p.ErrorRate()))
	}
	if !p.Steady {
		b.WriteString(", not steady")
	}
	b.WriteString(": " + string(p.Verdict))
	if len(p.Reasons) > 0 {
		b.WriteString(" (" + strings.Join(p.Reasons, "; ") + ")")
	}
	return b.String()
}

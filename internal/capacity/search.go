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
	}
	return nil
}

// Plan is one probe the search asks for.
type Plan struct {
	N      int
	Target float64
	// Repeat marks the repeat of an unsteady probe.
	Repeat bool
	// Bracket is what the search knows when the probe starts.
	Bracket Bracket
	// MaxProbes is the search's budget, for progress lines.
	MaxProbes int
}

// Bracket is the search's knowledge: the highest target that passed and
// the lowest that failed, 0 where there is none yet.
type Bracket struct {
	Pass float64 `json:"pass_ops_per_sec"`
	Fail float64 `json:"fail_ops_per_sec"`
}

func (b Bracket) String() string {
	lo, hi := "none yet", "none yet"
	if b.Pass > 0 {
		lo = FormatRate(b.Pass)
	}
	if b.Fail > 0 {
		hi = FormatRate(b.Fail)
	}
	return fmt.Sprintf("passed %s, failed %s", lo, hi)
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
	logf := s.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	var (
		probes []Probe
		b      Bracket
		a      = Answer{Ended: EndRunning}
		target = st.Start
		repeat = false
	)
	floor := st.Start / floorDivisor
	for {
		if len(probes) >= st.MaxProbes {
			a.Ended = EndBudget
			break
		}
		plan := Plan{N: len(probes) + 1, Target: target, Repeat: repeat, Bracket: b, MaxProbes: st.MaxProbes}
		m, err := s.Prober.Probe(ctx, plan)
		if err != nil {
			if m != nil {
				p := Probe{N: plan.N, Repeat: repeat, Measured: *m, Verdict: Stopped, Reasons: []string{err.Error()}}
				probes = append(probes, p)
				logf("Probe %d at %s ops/s did not run to its end: %v", plan.N, FormatRate(target), err)
			}
			a.Ended = EndInterrupted
			a.Bracket = b
			return probes, a, err
		}
		m.Target = target
		p := judge(m, st)
		p.N, p.Repeat = plan.N, repeat
		// An unsteady probe is repeated once unless it was saturated:
		// a database that cannot keep the pace at all fails whatever
		// the trend, but a passing probe should be sustainable, and a
		// failure may be a passing disturbance.
		repeat = !p.Steady && !repeat && !p.Saturated
		probes = append(probes, p)
		logf("%s", describe(&p, st))
		if repeat {
			logf("Probe %d was not steady (%s): repeating it at the same target", p.N, p.Unsteady)
		} else {
			if p.Verdict == Pass {
				b.Pass = max(b.Pass, target)
				if b.Pass == target {
					a.Found, a.Capacity, a.Achieved, a.Probe, a.Steady = true, target, p.Achieved, p.N, p.Steady
				}
			} else if b.Fail == 0 || target < b.Fail {
				b.Fail = target
			}
			next, end := nextTarget(b, st, floor)
			if end != "" {
				a.Ended = end
				break
			}
			target = next
		}
		a.Bracket = b
		if s.Progress != nil {
			s.Progress(probes, a)
		}
	}
	a.Bracket = b
	a.Converged = converged(b, st.Precision)
	return probes, a, nil
}

// nextTarget is the next target, or why the search ends: up the ramp
// while nothing has failed, down it while nothing has passed, then the
// middle of the bracket.
func nextTarget(b Bracket, s *Settings, floor float64) (float64, Ending) {
	switch {
	case b.Fail == 0:
		if b.Pass >= s.Max {
			return 0, EndAtMax
		}
		return min(b.Pass*Growth, s.Max), ""
	case b.Pass == 0:
		next := b.Fail / Growth
		if next < floor {
			return 0, EndNoPass
		}
		return next, ""
	case converged(b, s.Precision):
		return 0, EndConverged
	}
	mid := (b.Pass + b.Fail) / 2
	if r := math.Round(mid); r > b.Pass && r < b.Fail {
		// Whole operations per second read better, where the bracket
		// leaves room for them.
		mid = r
	}
	return mid, ""
}

// converged says the bracket's passing end is within the precision of
// its failing end.
func converged(b Bracket, precision float64) bool {
	return b.Pass > 0 && b.Fail > 0 && b.Pass >= b.Fail*(1-precision)
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

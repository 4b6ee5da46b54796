package capacity

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Measured is what one probe measured, as a Prober hands it over.
type Measured struct {
	// Target is the probe's target and Achieved the throughput over its
	// measured window (warm-up excluded), in operations per second.
	Target   float64 `json:"target_ops_per_sec"`
	Achieved float64 `json:"achieved_ops_per_sec"`
	// Operations counts measured transactions; Calls the return codes of
	// every call and Failed those that were not OK (calls cancelled by an
	// abort are neither).
	Operations int64 `json:"operations"`
	Calls      int64 `json:"calls"`
	Failed     int64 `json:"failed"`
	// RunTime is the measured window: the probe's length (--probe) for a
	// probe that ran to its end, whatever its calls' own span (a probe of
	// one call that took 0.1 ms offered the database a whole --probe).
	RunTimeMs float64 `json:"runtime_ms"`
	// ServiceMeanUs is the mean service time of the probe's calls (µs):
	// with Achieved it says how many calls were in flight at the
	// window's end (Little's law), which a probe too short to judge
	// cannot tell apart (InFlightUndecided).
	ServiceMeanUs float64 `json:"service_mean_us,omitempty"`
	// Partial says why the probe's run did not measure every agent's
	// share for the whole run (an agent lost, the run continued without
	// it: run.json's partial status and reasons); such a probe says
	// nothing of the database and is not judged.
	Partial []string `json:"partial,omitempty"`
	// Latency holds, per operation, the intended and service-time
	// percentiles over the whole probe: the points of the curve.
	Latency []OpLatency `json:"latency"`
	// Intervals are the probe's measured intervals, for the steadiness
	// check and the record.
	Intervals []Point `json:"intervals"`
	// Bundle is the probe's run bundle, relative to the capacity bundle
	// (empty when the search writes none).
	Bundle string `json:"bundle,omitempty"`
}

// OpLatency is one operation's latency percentiles, in microseconds,
// keyed by PercentileKey ("p99").
type OpLatency struct {
	Op       string             `json:"op"`
	Count    int64              `json:"count"`
	Intended map[string]float64 `json:"intended_us"`
	Service  map[string]float64 `json:"service_us"`
}

// Point is one measured interval: its throughput and, for each objective
// in order, the interval's own value of the objective's percentile (µs;
// 0 when the operation had no call in the interval).
type Point struct {
	StartUnixNs int64     `json:"start_unix_ns"`
	EndUnixNs   int64     `json:"end_unix_ns"`
	Operations  int64     `json:"operations"`
	OpsPerSec   float64   `json:"ops_per_sec"`
	Objectives  []float64 `json:"objectives_us"`
}

// ErrorRate is the share of calls that failed.
func (m *Measured) ErrorRate() float64 {
	if m.Calls == 0 {
		return 0
	}
	return float64(m.Failed) / float64(m.Calls)
}

// Op returns the latency of operation name, or nil.
func (m *Measured) Op(name string) *OpLatency {
	for i := range m.Latency {
		if m.Latency[i].Op == name {
			return &m.Latency[i]
		}
	}
	return nil
}

// Value returns the objective's intended-time value over the probe (µs)
// and whether the operation was measured at all.
func (m *Measured) Value(o Objective) (float64, bool) {
	l := m.Op(o.Op.String())
	if l == nil || l.Count == 0 {
		return 0, false
	}
	v, ok := l.Intended[o.Key()]
	return v, ok
}

// Verdict is what a probe's measurements say about its target.
type Verdict string

// Verdicts. A probe the operator stopped or that could not run is not
// judged; nor is a partial one (an agent lost), or one too short to tell
// whether the database kept the pace: neither is a verdict on the
// database.
const (
	Pass      Verdict = "pass"
	Fail      Verdict = "fail"
	Stopped   Verdict = "stopped"
	Partial   Verdict = "partial"
	Undecided Verdict = "undecided"
)

// Probe is one probe as the search judged it and capacity.json records it.
type Probe struct {
	N int `json:"n"`
	// Repeat marks the repeat of an unsteady probe at the same target;
	// Retry counts the tries again of a partial probe (1, 2).
	Repeat bool `json:"repeat,omitempty"`
	Retry  int  `json:"retry,omitempty"`
	Measured
	Verdict Verdict `json:"verdict"`
	// Reasons say why a probe failed, one line each.
	Reasons []string `json:"reasons,omitempty"`
	// Saturated says the database fell short of the target: the
	// target is above what it can do at all.
	Saturated bool `json:"saturated,omitempty"`
	// Steady is false when the last intervals' throughput or objective
	// latencies trend; Unsteady says how. A passing probe that is not
	// steady after its repeat still passes, reported as such.
	Steady   bool   `json:"steady"`
	Unsteady string `json:"unsteady,omitempty"`
}

// Rules of a probe's verdict.
const (
	// MinAchieved is the share of its target a probe must achieve: below
	// it the database is saturated (it cannot keep the pace at all).
	MinAchieved = 0.97
	// steadyWindow is how many of the last full intervals the
	// steadiness check fits; minSteadyPoints how many it needs to judge.
	steadyWindow    = 10
	minSteadyPoints = 3
	// minIntervalOps is how many calls an interval must hold, on the
	// median, for its throughput to be compared with the others': one
	// call more or less is then at most 5%, half of throughputTrend.
	minIntervalOps = 20
	// throughputTrend is the largest change of throughput across the
	// window (the fitted line's rise, relative to the median) that still
	// counts as steady.
	throughputTrend = 0.10
	// latencyTrend is the same for an objective's latency; changes
	// smaller than latencyTrendOfBound of the objective's bound never
	// count, so that jitter far below the bound does not make a probe
	// unsteady.
	latencyTrend        = 0.25
	latencyTrendOfBound = 0.10
	// MinProbeCalls is how many calls must be due at a probe's target
	// over its measured window for the probe to be judged: one call more
	// or less (a paced schedule fits the floor or the ceiling of target ×
	// window calls, and Saturated allows one short) is then at most 1%
	// of its throughput, a third of the 3% a passing probe may miss. A
	// probe of 1 thread at 2.5 ops/s for 2 s (5 calls) passed against a
	// database of 2 ops/s on that call alone.
	MinProbeCalls = 100
)

// Saturated says the probe fell short of its target: it achieved less
// than MinAchieved of it, by more than one operation over its window. A
// paced schedule puts the floor or the ceiling of target × window calls
// in a window, so a slow probe (16 threads at 7.7 ops/s for 2 s: 15.4
// calls due) can be one call short of its target through no fault of the
// database, and that one call is 6% of its throughput.
func Saturated(m *Measured) bool {
	if m.RunTimeMs <= 0 {
		return m.Achieved < MinAchieved*m.Target
	}
	return m.Achieved+1e3/m.RunTimeMs < MinAchieved*m.Target
}

// judge decides a probe's verdict from its measurements. Steadiness is
// recorded, not judged here: the search repeats an unsteady probe once,
// and the repeat's verdict stands, reported as not steady if it still is
// not (a trend of a short probe on a busy host is as often noise as
// drift; the record shows it either way).
func judge(m *Measured, s *Settings) Probe {
	p := Probe{Measured: *m, Verdict: Pass}
	if len(m.Partial) > 0 {
		// What the probe measured is the survivors' share: short of
		// the target because an agent was lost, not because the
		// database could not keep the pace.
		p.Verdict, p.Steady = Partial, true
		p.Reasons = append([]string{"an agent's share was not measured for the whole probe, so it says nothing of the database"}, m.Partial...)
		return p
	}
	p.Steady, p.Unsteady = steady(m.Intervals, s.Objectives)
	fail := func(format string, a ...any) {
		p.Verdict = Fail
		p.Reasons = append(p.Reasons, fmt.Sprintf(format, a...))
	}
	if m.Operations == 0 {
		fail("nothing was measured")
		return p
	}
	if Saturated(m) {
		p.Saturated = true
		fail("achieved %s ops/s, below %g%% of the target %s ops/s: the database is saturated", FormatRate(m.Achieved), 100*MinAchieved, FormatRate(m.Target))
	}
	for _, o := range s.Objectives {
		v, ok := m.Value(o)
		switch {
		case !ok:
			fail("%s: no %s was measured", o, o.Op)
		case v > float64(o.Bound.Nanoseconds())/1e3:
			fail("%s: intended %s %s", o, o.Key(), FormatMicros(v))
		}
	}
	if r := m.ErrorRate(); r > s.MaxErrorRate {
		fail("error rate %s above %s (%d of %d calls failed)", FormatShare(r), FormatShare(s.MaxErrorRate), m.Failed, m.Calls)
	}
	if p.Verdict == Pass {
		// A failure above is a verdict whatever the length; a pass
		// must not rest on calls the window cannot place.
		if why := TooShort(m); why != "" {
			p.Verdict = Undecided
			p.Reasons = append(p.Reasons, why)
		}
	}
	return p
}

// DueCalls is how many calls a probe at target holds over a window of
// probe: target × window.
func DueCalls(target float64, probe time.Duration) float64 { return target * probe.Seconds() }

// MinTarget is the lowest target a probe of this length can judge
// (MinProbeCalls due over it).
func MinTarget(probe time.Duration) float64 { return MinProbeCalls / probe.Seconds() }

// TooShort says why a probe that would pass cannot be judged, or "":
// fewer than MinProbeCalls calls were due at its target over its window,
// or the calls in flight at the window's end decide it. A paced worker
// issues every call due before the window ends, and each is counted
// however long after it completes: a database that keeps the pace
// completes them in time, one that does not completes them later, and
// both count the same. By Little's law about achieved × mean service
// time calls are in flight at any instant; without them the probe must
// still reach MinAchieved of its target (with the one call Saturated
// allows) to pass, else the window is too short to tell (16 threads
// queued on a 50 ops/s server for 2 s count 16 calls beyond what it
// served, a sixth of the target).
func TooShort(m *Measured) string {
	if m.RunTimeMs <= 0 {
		return ""
	}
	window := time.Duration(m.RunTimeMs * 1e6)
	if due := DueCalls(m.Target, window); due < MinProbeCalls {
		return fmt.Sprintf("too short to judge: %s calls due at %s ops/s over %s, fewer than %d (one call more or less would be %s of the target): lengthen --probe to at least %s",
			FormatRate(due), FormatRate(m.Target), window.Round(time.Millisecond), MinProbeCalls, FormatShare(1/max(due, 1)), probeFor(m.Target))
	}
	inFlight := m.Achieved * m.ServiceMeanUs / 1e6
	secs := window.Seconds()
	if (float64(m.Operations)-inFlight+1)/secs >= MinAchieved*m.Target {
		return ""
	}
	why := fmt.Sprintf("too short to judge: about %s calls were in flight at any instant (achieved %s ops/s × mean service time %s), and without them the probe falls below %g%% of its target: over %s the window cannot tell a database that keeps the pace from one that does not",
		FormatRate(inFlight), FormatRate(m.Achieved), FormatMicros(m.ServiceMeanUs), 100*MinAchieved, window.Round(time.Millisecond))
	if spare := m.Achieved - MinAchieved*m.Target; spare > 0 {
		// Longer, the same calls in flight weigh less: they fit in
		// what it achieved above the bar.
		need := time.Duration(math.Ceil(max(inFlight-1, 0)/spare)) * time.Second
		why += fmt.Sprintf("; lengthen --probe to at least %s", max(need, window+time.Second))
	} else {
		why += "; lengthen --probe"
	}
	return why
}

// probeFor is the shortest whole-second probe that holds MinProbeCalls
// calls at target.
func probeFor(target float64) time.Duration {
	return time.Duration(math.Ceil(MinProbeCalls/target)) * time.Second
}

// steady reports whether the last full intervals' throughput and
// objective latencies hold level: a line is fitted through each by the
// Theil–Sen estimator (the median of the slopes between every two
// points, which one interval's spike barely moves, where least squares
// would follow it), and its rise across the window compared with the
// level. A trailing interval cut short by the end of the run is left
// out; with fewer than minSteadyPoints intervals there is nothing to
// judge.
func steady(points []Point, objs []Objective) (bool, string) {
	pts := fullIntervals(points)
	if len(pts) > steadyWindow {
		pts = pts[len(pts)-steadyWindow:]
	}
	if len(pts) < minSteadyPoints {
		return true, ""
	}
	rates := make([]float64, len(pts))
	var ops []float64
	for i, p := range pts {
		rates[i] = p.OpsPerSec
		ops = append(ops, float64(p.Operations))
	}
	// An interval of a few calls holds one more or one fewer as the
	// schedule falls: with fewer than minIntervalOps that is noise above
	// throughputTrend, not a trend.
	if rise, level := trend(rates); median(ops) >= minIntervalOps && math.Abs(rise) > throughputTrend*level {
		return false, fmt.Sprintf("throughput %s by %s ops/s over the last %d intervals (median %s ops/s)", direction(rise), FormatRate(math.Abs(rise)), len(pts), FormatRate(level))
	}
	for k, o := range objs {
		var vals []float64
		for _, p := range pts {
			if k < len(p.Objectives) && p.Objectives[k] > 0 {
				vals = append(vals, p.Objectives[k])
			}
		}
		if len(vals) < minSteadyPoints {
			continue
		}
		rise, level := trend(vals)
		floor := latencyTrendOfBound * float64(o.Bound.Nanoseconds()) / 1e3
		if math.Abs(rise) > max(latencyTrend*level, floor) {
			return false, fmt.Sprintf("%s %s %s by %s over the last %d intervals (median %s)", o.Op, o.Key(), direction(rise), FormatMicros(math.Abs(rise)), len(vals), FormatMicros(level))
		}
	}
	return true, ""
}

func direction(rise float64) string {
	if rise < 0 {
		return "falls"
	}
	return "rises"
}

// fullIntervals drops a trailing interval much shorter than the one
// before it: the end of the run cut it short, and its few operations
// would read as a collapse.
func fullIntervals(points []Point) []Point {
	n := len(points)
	if n >= 2 {
		last, prev := points[n-1], points[n-2]
		if float64(last.EndUnixNs-last.StartUnixNs) < 0.9*float64(prev.EndUnixNs-prev.StartUnixNs) {
			return points[:n-1]
		}
	}
	return points
}

// trend returns the rise across the points, b·(n−1), of the Theil–Sen
// line through (i, y[i]) (b is the median slope between two points), and
// the median of y as the level it is compared with.
func trend(y []float64) (rise, level float64) {
	n := len(y)
	slopes := make([]float64, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			slopes = append(slopes, (y[j]-y[i])/float64(j-i))
		}
	}
	return median(slopes) * float64(n-1), median(append([]float64(nil), y...))
}

// median sorts v and returns its median.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// FormatRate writes an operations-per-second figure for people: whole
// numbers from 100 up, three significant digits below.
func FormatRate(v float64) string {
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.3g", v)
	if !strings.Contains(s, ".") {
		// 50 stays 50: only a fraction's zeros go.
		return s
	}
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// FormatMicros writes a latency in microseconds in the unit that suits
// it (850µs, 12.3ms, 1.52s).
func FormatMicros(us float64) string {
	d := time.Duration(us * 1e3)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", us/1e3)
	default:
		return fmt.Sprintf("%.3gµs", us)
	}
}

// FormatShare writes a share as a percentage (0.1%).
func FormatShare(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", 100*v), "0"), ".") + "%"
}

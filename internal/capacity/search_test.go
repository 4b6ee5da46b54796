package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// model is a synthetic database whose capacity is known: it serves up to
// knee operations per second, each call taking base; below the knee the
// intended-time p99 grows as base/(1−ρ) with the utilisation ρ (a queue),
// at or above it the queue grows without bound and the database achieves
// only the knee. An objective p99 <= B therefore holds exactly up to
// knee·(1 − base/B).
type model struct {
	knee float64
	base time.Duration
	// errors is the share of failed calls at every target.
	errors float64
	// unsteady makes the first probe at each listed target trend (its
	// latency rises over the probe); always makes every probe trend.
	unsteady map[float64]bool
	always   bool
	// failAt makes the probe with this number return an error.
	failAt int
	// partial makes the probes with these numbers lose an agent: half
	// the target's share measured, and the run says why.
	partial map[int]bool
	// serviceMean is every probe's mean service time (0: none), for the
	// calls in flight at a probe's end.
	serviceMean time.Duration
	plans       []Plan
}

func (m *model) Probe(_ context.Context, plan Plan) (*Measured, error) {
	m.plans = append(m.plans, plan)
	if plan.N == m.failAt {
		return &Measured{Target: plan.Target}, errors.New("run stopped by operator")
	}
	rho := plan.Target / m.knee
	achieved := min(plan.Target, m.knee)
	p99 := 3600e6 // an hour: the queue grows without bound
	if rho < 1 {
		p99 = float64(m.base.Microseconds()) / (1 - rho)
	}
	service := float64(m.base.Microseconds())
	calls := int64(achieved * 60)
	out := &Measured{Target: plan.Target, Achieved: achieved, Operations: calls, Calls: calls,
		Failed: int64(math.Ceil(m.errors * float64(calls))), RunTimeMs: 60e3,
		Latency: []OpLatency{{Op: "READ", Count: calls,
			Intended: map[string]float64{"p50": p99 / 2, "p99": p99},
			Service:  map[string]float64{"p50": service / 2, "p99": service}}}}
	out.ServiceMeanUs = float64(m.serviceMean.Microseconds())
	if m.partial[plan.N] {
		out.Partial = []string{"agent 1 (127.0.0.1:1) lost: no heartbeat for 3s"}
		out.Achieved /= 2
		out.Operations /= 2
	}
	trend := m.always || (m.unsteady[plan.Target] && !plan.Repeat)
	for i := range 6 {
		v := p99
		if trend {
			v = p99 * float64(1+i)
		}
		start := int64(i) * 10e9
		out.Intervals = append(out.Intervals, Point{StartUnixNs: start, EndUnixNs: start + 10e9, Operations: int64(achieved * 10),
			OpsPerSec: achieved, Objectives: []float64{v}})
	}
	return out, nil
}

func settings(bound time.Duration) Settings {
	return Settings{Objectives: []Objective{{Op: measurement.Read, Percentile: 99, Bound: bound}},
		MaxErrorRate: DefaultMaxErrorRate, Precision: DefaultPrecision, Start: DefaultStart, Max: DefaultMax,
		MaxProbes: DefaultMaxProbes, Probe: time.Minute, Warmup: 10 * time.Second}
}

// TestSearchFindsTheKnown gives the search databases whose capacity at
// the objective is known, from several starting targets, and checks that
// the answer is within the precision below it and that the search
// converged within its budget.
func TestSearchFindsTheKnown(t *testing.T) {
	for _, tc := range []struct {
		knee, start float64
		base, bound time.Duration
	}{
		{knee: 2000, start: 1000, base: time.Millisecond, bound: 10 * time.Millisecond},
		{knee: 2000, start: 100, base: time.Millisecond, bound: 50 * time.Millisecond},
		{knee: 2000, start: 50000, base: time.Millisecond, bound: 10 * time.Millisecond},
		{knee: 137000, start: 1000, base: 2 * time.Millisecond, bound: 5 * time.Millisecond},
		{knee: 3.5, start: 1000, base: 10 * time.Millisecond, bound: time.Second},
	} {
		t.Run(fmt.Sprintf("knee %g start %g", tc.knee, tc.start), func(t *testing.T) {
			m := &model{knee: tc.knee, base: tc.base}
			s := settings(tc.bound)
			s.Start = tc.start
			probes, a, err := (&Search{Settings: s, Prober: m}).Run(context.Background())
			require.NoError(t, err)
			want := tc.knee * (1 - float64(tc.base)/float64(tc.bound))
			require.True(t, a.Found, "%+v", a)
			assert.Equal(t, EndConverged, a.Ended)
			assert.True(t, a.Converged)
			assert.LessOrEqual(t, a.Capacity, want, "the answer passed, so it is at most the capacity")
			assert.GreaterOrEqual(t, a.Capacity, want*(1-s.Precision), "within the precision below the capacity (%d probes)", len(probes))
			assert.LessOrEqual(t, len(probes), s.MaxProbes)
			assert.Equal(t, Pass, probes[a.Probe-1].Verdict)
			assert.Equal(t, a.Capacity, probes[a.Probe-1].Target)
		})
	}
}

// TestTighterObjectiveLowerAnswer: a tighter objective on the same
// database gives a lower capacity.
func TestTighterObjectiveLowerAnswer(t *testing.T) {
	var got []float64
	for _, bound := range []time.Duration{50 * time.Millisecond, 5 * time.Millisecond, 2 * time.Millisecond} {
		_, a, err := (&Search{Settings: settings(bound), Prober: &model{knee: 5000, base: time.Millisecond}}).Run(context.Background())
		require.NoError(t, err)
		require.True(t, a.Found)
		got = append(got, a.Capacity)
	}
	assert.Greater(t, got[0], got[1])
	assert.Greater(t, got[1], got[2])
}

func TestSearchEndings(t *testing.T) {
	t.Run("max reached", func(t *testing.T) {
		s := settings(time.Second)
		s.Max = 8000
		probes, a, err := (&Search{Settings: s, Prober: &model{knee: 1e9, base: time.Millisecond}}).Run(context.Background())
		require.NoError(t, err)
		assert.Equal(t, EndAtMax, a.Ended)
		assert.Equal(t, 8000.0, a.Capacity)
		var targets []float64
		for _, p := range probes {
			targets = append(targets, p.Target)
		}
		assert.Equal(t, []float64{1000, 2000, 4000, 8000}, targets, "doubling from --start, capped at --max")
	})
	t.Run("budget", func(t *testing.T) {
		s := settings(10 * time.Millisecond)
		s.MaxProbes = 4
		probes, a, err := (&Search{Settings: s, Prober: &model{knee: 3000, base: time.Millisecond}}).Run(context.Background())
		require.NoError(t, err)
		assert.Len(t, probes, 4)
		assert.Equal(t, EndBudget, a.Ended)
		assert.False(t, a.Converged)
		assert.True(t, a.Found, "the best passing target so far is still an answer")
	})
	t.Run("nothing passes", func(t *testing.T) {
		s := settings(500 * time.Microsecond) // below the service time
		s.MaxProbes = 100
		s.Probe = 10 * time.Minute // its floor is above what a probe can judge
		probes, a, err := (&Search{Settings: s, Prober: &model{knee: 3000, base: time.Millisecond}}).Run(context.Background())
		require.NoError(t, err)
		assert.False(t, a.Found)
		assert.Equal(t, EndNoPass, a.Ended)
		last := probes[len(probes)-1].Target
		assert.GreaterOrEqual(t, last, s.Start/floorDivisor, "the downward ramp stops at its floor")
		assert.Less(t, last/Growth, s.Start/floorDivisor)
	})
	t.Run("nothing passes down to what a probe can judge", func(t *testing.T) {
		s := settings(500 * time.Microsecond)
		s.MaxProbes = 100 // 60 s probes: 1.67 ops/s at least, above the floor
		probes, a, err := (&Search{Settings: s, Prober: &model{knee: 3000, base: time.Millisecond}}).Run(context.Background())
		require.NoError(t, err)
		assert.False(t, a.Found)
		assert.Equal(t, EndTooShort, a.Ended)
		last := probes[len(probes)-1].Target
		assert.GreaterOrEqual(t, DueCalls(last, s.Probe), float64(MinProbeCalls), "every probe run could be judged")
		assert.Less(t, DueCalls(last/Growth, s.Probe), float64(MinProbeCalls), "the next one down could not")
		assert.Contains(t, (&Record{Settings: s, Answer: a}).AnswerText(), "lengthen --probe to search lower")
	})
	t.Run("errors fail a probe", func(t *testing.T) {
		probes, a, err := (&Search{Settings: settings(time.Second), Prober: &model{knee: 3000, base: time.Millisecond, errors: 0.01}}).Run(context.Background())
		require.NoError(t, err)
		assert.False(t, a.Found)
		assert.Contains(t, probes[0].Reasons[0], "error rate 1% above 0.1%")
	})
	t.Run("a probe that does not end", func(t *testing.T) {
		m := &model{knee: 3000, base: time.Millisecond, failAt: 3}
		var progress [][]Probe
		probes, a, err := (&Search{Settings: settings(time.Second), Prober: m,
			Progress: func(ps []Probe, _ Answer) { progress = append(progress, ps) }}).Run(context.Background())
		require.Error(t, err)
		assert.Equal(t, EndInterrupted, a.Ended)
		require.Len(t, probes, 3)
		assert.Equal(t, Stopped, probes[2].Verdict)
		assert.Equal(t, 2000.0, a.Capacity, "what the probes before it found")
		assert.Len(t, progress, 2, "progress after each judged probe")
	})
}

// TestUnsteadyProbes: an unsteady probe is repeated once at the same
// target, and the repeat's verdict stands; a saturated probe is never
// repeated.
func TestUnsteadyProbes(t *testing.T) {
	m := &model{knee: 3000, base: time.Millisecond, unsteady: map[float64]bool{2000: true}}
	probes, a, err := (&Search{Settings: settings(100 * time.Millisecond), Prober: m}).Run(context.Background())
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(probes), 3)
	assert.False(t, probes[1].Steady)
	assert.Contains(t, probes[1].Unsteady, "READ p99 rises")
	assert.Equal(t, 2000.0, probes[2].Target)
	assert.True(t, probes[2].Repeat)
	assert.Equal(t, Pass, probes[2].Verdict, "the repeat was steady")
	assert.True(t, a.Found)

	// A repeat that is still unsteady keeps its verdict, reported as not
	// steady, up to the answer.
	always := &model{knee: 3000, base: time.Millisecond, always: true}
	probes, a, err = (&Search{Settings: settings(20 * time.Millisecond), Prober: always}).Run(context.Background())
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(probes), 2)
	assert.True(t, probes[1].Repeat)
	assert.Equal(t, Pass, probes[1].Verdict)
	assert.False(t, probes[1].Steady)
	assert.Equal(t, 2000.0, probes[2].Target, "the search goes on after the repeat")
	require.True(t, a.Found)
	assert.False(t, a.Steady)
	rec := &Record{Settings: settings(20 * time.Millisecond), Answer: a}
	assert.Contains(t, rec.AnswerText(), "not steady")

	saturated := &model{knee: 3000, base: time.Millisecond, unsteady: map[float64]bool{4000: true}}
	probes, _, err = (&Search{Settings: settings(time.Second), Prober: saturated}).Run(context.Background())
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(probes), 4)
	assert.Equal(t, 4000.0, probes[2].Target)
	assert.True(t, probes[2].Saturated)
	assert.False(t, probes[2].Steady)
	assert.Equal(t, 3000.0, probes[3].Target, "a saturated probe fails whatever its trend: no repeat")
}

func TestSteady(t *testing.T) {
	obj := []Objective{{Op: measurement.Read, Percentile: 99, Bound: 10 * time.Millisecond}}
	pts := func(rates, lat []float64) []Point {
		var out []Point
		for i := range rates {
			s := int64(i) * 1e9
			out = append(out, Point{StartUnixNs: s, EndUnixNs: s + 1e9, Operations: int64(rates[i]), OpsPerSec: rates[i], Objectives: []float64{lat[i]}})
		}
		return out
	}
	ok, _ := steady(pts([]float64{1000, 1010, 990, 1000, 1005}, []float64{2000, 2100, 1900, 2050, 2000}), obj)
	assert.True(t, ok)
	ok, why := steady(pts([]float64{1000, 950, 900, 850, 800}, []float64{2000, 2000, 2000, 2000, 2000}), obj)
	assert.False(t, ok)
	assert.Contains(t, why, "throughput falls")
	// Jitter of a few hundred µs under a 10 ms bound is no trend.
	ok, _ = steady(pts([]float64{1000, 1000, 1000, 1000, 1000}, []float64{500, 600, 700, 800, 900}), obj)
	assert.True(t, ok)
	ok, why = steady(pts([]float64{1000, 1000, 1000, 1000, 1000}, []float64{2000, 4000, 6000, 8000, 10000}), obj)
	assert.False(t, ok)
	assert.Contains(t, why, "READ p99 rises by 8ms")
	// One interval's spike is no trend.
	ok, _ = steady(pts([]float64{1000, 1000, 1000, 1000, 1000, 1000}, []float64{2000, 2000, 2000, 2000, 2000, 9000}), obj)
	assert.True(t, ok)
	// A trailing sliver is left out.
	p := pts([]float64{1000, 1000, 1000, 1000}, []float64{2000, 2000, 2000, 2000})
	p = append(p, Point{StartUnixNs: 4e9, EndUnixNs: 4e9 + 1e7, OpsPerSec: 10, Objectives: []float64{40000}})
	ok, _ = steady(p, obj)
	assert.True(t, ok)
	// Too few intervals to judge.
	ok, _ = steady(pts([]float64{1000, 500}, []float64{1, 2}), obj)
	assert.True(t, ok)
	// Intervals of a few calls: one more or fewer is no trend of
	// throughput (a slow paced probe: 4, 3 and 2 calls a second)...
	ok, why = steady(pts([]float64{4, 4, 3, 3, 2}, []float64{2000, 2000, 2000, 2000, 2000}), obj)
	assert.True(t, ok, why)
	// ...but one of twenty calls or more is.
	ok, why = steady(pts([]float64{40, 40, 30, 30, 20}, []float64{2000, 2000, 2000, 2000, 2000}), obj)
	assert.False(t, ok)
	assert.Contains(t, why, "throughput falls")
}

// TestSaturatedAllowsOneCall: a probe one call short of its target over
// its window is not saturated (a paced schedule puts the floor of target ×
// window calls in it); two calls short, or a real shortfall, is.
func TestSaturatedAllowsOneCall(t *testing.T) {
	m := func(target float64, ops int64, ms float64) *Measured {
		return &Measured{Target: target, Operations: ops, RunTimeMs: ms, Achieved: float64(ops) / (ms / 1e3)}
	}
	assert.False(t, Saturated(m(7.7, 15, 2000)), "15 of 15.4 calls due")
	assert.False(t, Saturated(m(7.7, 14, 2000)), "one call short of 97%% of 15.4")
	assert.True(t, Saturated(m(7.7, 12, 2000)), "three calls short")
	assert.False(t, Saturated(m(2000, 3900, 2000)))
	assert.True(t, Saturated(m(2000, 3860, 2000)), "one call is no excuse for a shortfall of 3.5%%")
	assert.True(t, Saturated(&Measured{Target: 100, Achieved: 50}), "no window: the plain rule")
}

func TestNextTargetBisects(t *testing.T) {
	s := settings(time.Second)
	next, end := nextTarget(Bracket{Pass: 2000, Fail: 4000}, &s, 1)
	assert.Empty(t, end)
	assert.Equal(t, 3000.0, next)
	_, end = nextTarget(Bracket{Pass: 3900, Fail: 4000}, &s, 1)
	assert.Equal(t, EndConverged, end)
	next, _ = nextTarget(Bracket{Pass: 1.5, Fail: 2}, &s, 0.001)
	assert.InDelta(t, 1.75, next, 1e-9, "fractional targets where whole ones do not fit")
	assert.False(t, math.IsNaN(next))
}

// TestFormatRate: a whole rate below 100 keeps its zeros (50 read "5").
func TestFormatRate(t *testing.T) {
	for v, want := range map[float64]string{50: "50", 20: "20", 7.7: "7.7", 0.5: "0.5", 93.75: "93.8", 12.0: "12", 1500: "1500", 0.1: "0.1"} {
		assert.Equal(t, want, FormatRate(v), "%g", v)
	}
}

// TestPartialProbesAreNotVerdicts: a probe that lost an agent is tried
// again at its target (MaxPartialRetries times) and never moves the
// bracket, so a search with partial probes finds what a clean one finds;
// its probes say partial and their retries. A target partial in every
// try is left undecided: the search looks below it, never converges on
// it, and says why. Before, the partial probe was judged saturated (its
// survivors' share was half the target), and a passing target failed.
func TestPartialProbesAreNotVerdicts(t *testing.T) {
	clean := func(knee float64) Answer {
		_, a, err := (&Search{Settings: settings(time.Second), Prober: &model{knee: knee, base: time.Millisecond}}).Run(context.Background())
		require.NoError(t, err)
		return a
	}
	for _, tc := range []struct {
		knee    float64
		partial []int
	}{
		{2000, []int{1}}, {2000, []int{2}}, {2000, []int{1, 2}}, {2000, []int{3, 4}}, {3500, []int{2, 4, 6}}, {137000, []int{5, 6, 8}},
	} {
		t.Run(fmt.Sprintf("knee %g partial %v", tc.knee, tc.partial), func(t *testing.T) {
			m := &model{knee: tc.knee, base: time.Millisecond, partial: map[int]bool{}}
			for _, n := range tc.partial {
				m.partial[n] = true
			}
			s := settings(time.Second)
			probes, a, err := (&Search{Settings: s, Prober: m}).Run(context.Background())
			require.NoError(t, err)
			want := clean(tc.knee)
			assert.Equal(t, want.Capacity, a.Capacity, "the partial probes changed nothing")
			assert.Equal(t, want.Bracket, a.Bracket)
			assert.Equal(t, want.Ended, a.Ended)
			for i, p := range probes {
				if !m.partial[p.N] {
					assert.NotEqual(t, Partial, p.Verdict)
					continue
				}
				assert.Equal(t, Partial, p.Verdict, "probe %d", p.N)
				assert.False(t, p.Saturated, "a partial probe is not judged saturated")
				assert.Contains(t, p.Reasons, "agent 1 (127.0.0.1:1) lost: no heartbeat for 3s")
				require.Less(t, i+1, len(probes))
				assert.Equal(t, p.Target, probes[i+1].Target, "probe %d: tried again at its target", p.N)
				assert.Equal(t, p.Retry+1, probes[i+1].Retry)
			}
		})
	}
	t.Run("partial in every try", func(t *testing.T) {
		// Probe 2 (2000 ops/s, which passes when whole) and its two
		// retries lose an agent.
		m := &model{knee: 3000, base: time.Millisecond, partial: map[int]bool{2: true, 3: true, 4: true}}
		s := settings(time.Second)
		probes, a, err := (&Search{Settings: s, Prober: m}).Run(context.Background())
		require.NoError(t, err)
		for _, n := range []int{2, 3, 4} {
			assert.Equal(t, 2000.0, probes[n-1].Target)
			assert.Equal(t, n-2, probes[n-1].Retry)
		}
		assert.Equal(t, 2000.0, a.Bracket.Undecided)
		assert.Zero(t, a.Bracket.Fail, "never a failure")
		for _, p := range probes[4:] {
			assert.Less(t, p.Target, 2000.0, "the search looks below the undecided target")
		}
		assert.Equal(t, EndUndecided, a.Ended)
		assert.False(t, a.Converged)
		assert.True(t, a.Found)
		assert.GreaterOrEqual(t, a.Capacity, 2000*(1-s.Precision))
		text := (&Record{Settings: s, Answer: a}).AnswerText()
		assert.Contains(t, text, "not converged: the search cannot decide 2000 ops/s")
		assert.Contains(t, text, "probe 4 at 2000 ops/s was partial in 3 tries")
	})
}

// TestTooShortProbesAreNotVerdicts: a probe whose pass rests on the calls
// in flight at its end (a few calls due, each long) is undecided, not a
// pass: the search looks below it and says it could not decide. A probe
// with plenty of calls passes as before.
func TestTooShortProbesAreNotVerdicts(t *testing.T) {
	s := settings(time.Hour)
	s.Start, s.Precision = 4, 0.01
	// 2 ops/s, each call 2 s: about 4 calls in flight at any instant, of
	// 120 in the 60 s probe. Just above the knee a pass rests on them.
	m := &model{knee: 2, base: time.Millisecond, serviceMean: 2 * time.Second}
	probes, a, err := (&Search{Settings: s, Prober: m}).Run(context.Background())
	require.NoError(t, err)
	require.True(t, a.Found)
	assert.Equal(t, 2.0, a.Capacity, "never a pass above the knee")
	assert.Equal(t, EndUndecided, a.Ended)
	assert.False(t, a.Converged)
	undecided := 0
	for _, p := range probes {
		if p.Verdict == Undecided {
			undecided++
			assert.Greater(t, p.Target, 2.0)
			assert.Contains(t, p.Reasons[0], "too short to judge: about 4 calls were in flight at any instant")
			assert.Contains(t, p.Reasons[0], "lengthen --probe")
		}
	}
	assert.Positive(t, undecided)
	assert.Contains(t, (&Record{Settings: s, Answer: a}).AnswerText(), "too short to judge")
	// Plenty of calls: decided.
	assert.Empty(t, TooShort(&Measured{Target: 2000, Achieved: 2000, Operations: 120000, RunTimeMs: 60e3, ServiceMeanUs: 2000}))
	// Too few calls due, whatever they achieved.
	why := TooShort(&Measured{Target: 2.5, Achieved: 2.5, Operations: 5, RunTimeMs: 2e3, ServiceMeanUs: 500e3})
	assert.Contains(t, why, "5 calls due at 2.5 ops/s over 2s, fewer than 100")
	assert.Contains(t, why, "lengthen --probe to at least 40s")
	// The one call below a target: no calls due, one made in 0.1 ms.
	assert.Contains(t, TooShort(&Measured{Target: 0.008, Achieved: 1, Operations: 1, RunTimeMs: 1e3, ServiceMeanUs: 100}), "0.008 calls due")
}

// TestSettingsRefuseAStartTooShortToJudge: the first probe must hold
// MinProbeCalls calls; the message names --start and --probe and what
// would do.
func TestSettingsRefuseAStartTooShortToJudge(t *testing.T) {
	s := settings(time.Second)
	s.Start, s.Probe = 2.5, 2*time.Second
	err := s.Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--start 2.5: expected at least 50 ops/s with --probe 2s")
	assert.Contains(t, err.Error(), "lengthen --probe to at least 40s")
	s.Start = 50
	assert.NoError(t, s.Check())
}

// TestPartialProbesNeverMoveTheBracket is the class: over many seeded
// databases and starts, with probes losing an agent at random (never more
// than MaxPartialRetries in a row, so that every target is decided in the
// end), the search ends exactly where the clean search does.
func TestPartialProbesNeverMoveTheBracket(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 9))
	for i := range 300 {
		knee := math.Pow(10, 1+5*rng.Float64())
		s := settings(time.Duration(2+rng.IntN(50)) * time.Millisecond)
		s.Start = math.Round(math.Pow(10, 1+5*rng.Float64()))
		s.MaxProbes = 1000
		cleanProbes, want, err := (&Search{Settings: s, Prober: &model{knee: knee, base: time.Millisecond}}).Run(context.Background())
		require.NoError(t, err)
		m := &model{knee: knee, base: time.Millisecond, partial: map[int]bool{}}
		run := 0
		for n := 1; n <= 3*len(cleanProbes); n++ {
			if run < MaxPartialRetries && rng.Float64() < 0.3 {
				m.partial[n] = true
				run++
			} else {
				run = 0
			}
		}
		probes, a, err := (&Search{Settings: s, Prober: m}).Run(context.Background())
		require.NoError(t, err)
		if a.Found {
			require.Equal(t, Pass, probes[a.Probe-1].Verdict, "case %d: the answer's probe", i)
		}
		want.Probe, a.Probe = 0, 0 // numbered after the partial ones
		if !assert.Equal(t, want, a, "case %d: knee %g, start %g, %s; partial %v", i, knee, s.Start, s.Objectives[0], m.partial) {
			return
		}
		var judged []float64
		for _, p := range probes {
			if p.Verdict != Partial {
				judged = append(judged, p.Target)
			}
		}
		var clean []float64
		for _, p := range cleanProbes {
			clean = append(clean, p.Target)
		}
		assert.Equal(t, clean, judged, "case %d: the judged probes are the clean search's", i)
	}
}

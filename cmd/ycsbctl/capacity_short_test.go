package main_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/capacity"
)

// Capacity probes too short to judge, with real processes: a probe must
// hold enough calls, and its pass must not rest on the calls the window
// cannot place (capacity.TooShort); achieved throughput is over the
// probe's window, not over its calls' own span.

// minProbeCalls is capacity.MinProbeCalls, spelt out so that these tests
// also build against a tree without it (to show they fail there).
const minProbeCalls = 100

// TestCapacityRefusesAStartTooShortToJudge: basic sleeping 500 ms per
// call on one thread serves 2 ops/s; a 2 s probe at 2.5 ops/s holds 5
// calls, and its one call short passed ("Capacity: 2.5 ops/s"). The
// search now refuses the start before any load, naming --start and
// --probe and what would do.
func TestCapacityRefusesAStartTooShortToJudge(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cap")
	r := ycsbctl(t, "capacity", "basic", "-P", "workloadc", "-threads", "1", "-p", "basicdb.verbose=false",
		"-p", "basicdb.simulatedelay=500", "-p", "basicdb.randomizedelay=false",
		"--slo", "READ.p99<=10s", "--probe", "2s", "--warmup", "0s", "--start", "2.5", "--max", "2.5", "--results", dir)
	require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "--start 2.5: expected at least 50 ops/s with --probe 2s")
	assert.Contains(t, r.stderr, "at least 100 calls due")
	assert.Contains(t, r.stderr, "lengthen --probe to at least 40s")
	assert.NotContains(t, r.stdout, "Capacity: 2.5")
}

// TestCapacityEndsWhereProbesGetTooShort: an objective nothing meets
// (READ.p99<=1µs) ramps the search down; it stops at the lowest target
// a 1 s probe can judge instead of probing down to --start/1024, where
// one call made in 0.1 ms read as thousands of ops/s at a target below
// one (7,323 ops/s at 0.008). Every probe's achieved throughput is its
// calls over the probe's window.
func TestCapacityEndsWhereProbesGetTooShort(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cap")
	r := ycsbctl(t, "capacity", "basic", "-P", "workloadc", "-threads", "2", "-p", "basicdb.verbose=false",
		"--slo", "READ.p99<=1us", "--probe", "1s", "--warmup", "0s", "--start", "400", "--results", dir)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	rec, err := capacity.Read(dir)
	require.NoError(t, err)
	var targets []float64
	probe := time.Duration(rec.ProbeSeconds * float64(time.Second))
	for _, p := range rec.Probes {
		if !p.Repeat {
			targets = append(targets, p.Target)
		}
		assert.InDelta(t, 1000, p.RunTimeMs, 1e-6, "probe %d: the window is the probe", p.N)
		assert.LessOrEqual(t, p.Achieved, 1.1*p.Target+1, "probe %d at %g ops/s: achieved %g is its calls over the window", p.N, p.Target, p.Achieved)
		assert.GreaterOrEqual(t, p.Target*probe.Seconds(), float64(minProbeCalls), "probe %d could be judged", p.N)
	}
	assert.Equal(t, []float64{400, 200, 100}, targets, "down to what 1 s probes can judge, not to 400/1024 (unsteady ones repeated)")
	assert.False(t, rec.Answer.Found)
	assert.Equal(t, capacity.Ending("probes too short"), rec.Answer.Ended) // capacity.EndTooShort
	assert.Contains(t, r.stdout, "lengthen --probe to search lower")
}

// TestCapacityUndecidedWhenCallsInFlightDecide: 16 threads on one slot
// of 20 ms (50 ops/s) for 2 s at 55 ops/s: about 16 calls wait for the
// slot at any instant, each counted however late it completes, so the
// probe made every call due and passed 10% above the knee ("Capacity:
// 55 ops/s"). Without the calls in flight it falls short: the probe is
// undecided, the search says it is too short, and finds no capacity.
func TestCapacityUndecidedWhenCallsInFlightDecide(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cap")
	r := ycsbctl(t, "capacity", "basic", "-P", "workloadc", "-threads", "16", "-p", "basicdb.verbose=false",
		"-p", "basicdb.simulatedelay=20", "-p", "basicdb.randomizedelay=false", "-p", "basicdb.slots=1",
		"--slo", "READ.p99<=10s", "--probe", "2s", "--warmup", "1s", "--interval", "500ms", "--start", "55", "--max", "55", "--results", dir)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	rec, err := capacity.Read(dir)
	require.NoError(t, err)
	require.NotEmpty(t, rec.Probes)
	p := rec.Probes[0]
	assert.NotEqual(t, capacity.Pass, p.Verdict, "55 ops/s is above the 50 ops/s the server serves: %q", p.Reasons)
	if p.Verdict == "undecided" { // capacity.Undecided
		assert.Contains(t, strings.Join(p.Reasons, "\n"), "too short to judge: about")
		assert.Contains(t, r.stdout, "undecided")
	}
	assert.False(t, rec.Answer.Found, "no capacity above the knee: %s", rec.AnswerText())
	t.Logf("%s", r.stdout)
	assert.NotContains(t, r.stdout, "Capacity: 55 ops/s")
}

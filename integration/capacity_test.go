//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
)

// Capacity searches as real processes (bin/ycsbctl, agent processes for
// the distributed ones) against a database whose capacity is known: the
// basic adapter's simulated server (basicdb.slots) of 4 slots holding
// each call 2 ms serves at most 4/2 ms = 2000 calls a second per load
// generator, and exactly that however loaded the host is (it serves calls
// from their intended time, so the harness's stalls and late wake-ups
// cost latency, not throughput; adapters/basic/server.go). 16 threads
// per load generator keep its queue fed. So where the search lands is
// asserted: within the requested precision of the knee (nearKnee), and
// the record agrees with itself and the search's rules (checkSearch).

const (
	knownDelayMs = 2
	knownSlots   = 4
	knownThreads = 16
	// kneeMargin is how far above the knee the sanity bound lies: a
	// passing probe achieved 97% of its target, and the measured window's
	// edges may count a few calls more.
	kneeMargin = 1.10
)

// knownKneeArgs are the flags of a short search over basic's simulated
// server: 3 s probes of six intervals after 1 s of warm-up, at most
// eight (a host that stalls the harness at a probe's end leaves calls
// due unmade: 3 s keep a 90 ms stall under the 3% a probe may miss), an
// objective (p99 <= 1 s) far above the service time and what a
// loaded host adds to it, so that the knee is where the server saturates.
func knownKneeArgs(start float64, extra ...string) []string {
	return append([]string{"-P", "workloadc", "-threads", strconv.Itoa(knownThreads),
		"-p", "basicdb.verbose=false", "-p", "basicdb.simulatedelay=" + strconv.Itoa(knownDelayMs), "-p", "basicdb.randomizedelay=false",
		"-p", "basicdb.slots=" + strconv.Itoa(knownSlots),
		"-s", "--slo", "READ.p99<=1s", "--probe", "3s", "--warmup", "1s", "--interval", "500ms",
		"--start", strconv.FormatFloat(start, 'f', -1, 64), "--precision", "10%", "--max-probes", "8"}, extra...)
}

// kneeOf is the most basic's simulated servers serve: slots/delay per
// load generator.
func kneeOf(generators int) float64 {
	return float64(generators*knownSlots) * 1000 / knownDelayMs
}

// nearKnee requires the search to have found the knee within its
// precision.
func nearKnee(t *testing.T, rec *capacity.Record, knee float64) {
	t.Helper()
	nearKneeWithin(t, rec, knee, rec.Settings.Precision)
}

// nearKneeWithin requires the search to have found the knee within share
// of it.
func nearKneeWithin(t *testing.T, rec *capacity.Record, knee, share float64) {
	t.Helper()
	require.True(t, rec.Answer.Found, "no capacity found; the knee is %.0f ops/s", knee)
	assert.InDelta(t, knee, rec.Answer.Capacity, share*knee, "capacity %.0f ops/s, the knee %.0f ops/s (bracket %s)", rec.Answer.Capacity, knee, rec.Answer.Bracket)
}

// readCapacity reads the search's record and logs its table.
func readCapacity(t *testing.T, dir string) *capacity.Record {
	t.Helper()
	rec, err := capacity.Read(dir)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, rec.WriteTable(&b))
	t.Logf("%s", b.String())
	return rec
}

// checkSearch checks a complete search's record against the search's rules
// and its probes' bundles: every verdict is what the probe's own
// measurements say against the objectives and the error bound; an
// unsteady probe that was not saturated is repeated once at its target;
// every target is the one the ramp or the bisection gives from the
// verdicts before it; the search ended for the reason the bracket gives;
// the answer is the highest passing target with its probe's achieved
// throughput, below every failing target; each probe's bundle holds the
// run the search judged. agents is how many load generators each probe's
// bundle must show.
func checkSearch(t checkT, dir string, rec *capacity.Record, agents int) {
	t.Helper()
	s := rec.Settings
	require.Equal(t, capacity.StatusComplete, rec.Status, "%s", rec.Error)
	assert.Equal(t, 0, rec.ExitCode)
	require.NotEmpty(t, rec.Probes)
	require.LessOrEqual(t, len(rec.Probes), s.MaxProbes, "the probe budget")

	s.Probe = time.Duration(rec.ProbeSeconds * float64(time.Second))
	var (
		b        capacity.Bracket
		target   = s.Start
		repeat   = false
		retry    = 0
		ended    capacity.Ending
		counted  = map[int]bool{} // probes whose verdict moved the bracket
		failedAt []float64
	)
	for i, p := range rec.Probes {
		require.Empty(t, ended, "probe %d after the search ended (%s)", p.N, ended)
		assert.Equal(t, i+1, p.N)
		assert.Equal(t, repeat, p.Repeat, "probe %d: a repeat exactly after an unsteady, unsaturated first try", p.N)
		assert.Equal(t, retry, p.Retry, "probe %d: a retry exactly after a partial probe", p.N)
		assert.Equal(t, target, p.Target, "probe %d: the target the rules give (bracket %s)", p.N, b)
		want, saturated := verdictOf(&p, &s)
		assert.Equal(t, want, p.Verdict, "probe %d: achieved %.1f of %.1f ops/s, errors %d of %d, reasons %q", p.N, p.Achieved, p.Target, p.Failed, p.Calls, p.Reasons)
		assert.Equal(t, saturated, p.Saturated, "probe %d: saturated", p.N)
		assert.Equal(t, want != capacity.Pass, len(p.Reasons) > 0, "probe %d: reasons %q", p.N, p.Reasons)
		assert.Equal(t, p.Steady, p.Unsteady == "", "probe %d: unsteady says how (%q)", p.N, p.Unsteady)
		if p.RunTimeMs > 0 {
			assert.InDelta(t, float64(p.Operations)/(p.RunTimeMs/1e3), p.Achieved, 1e-6*p.Achieved+1e-9, "probe %d: achieved is operations over the window", p.N)
		}
		checkPercentiles(t, &p)

		// The bundle holds the run the search judged.
		assert.Equal(t, bundle.ProbeDir(p.N), p.Bundle)
		pb, err := bundle.Read(filepath.Join(dir, p.Bundle))
		if assert.NoError(t, err, "probe %d's bundle", p.N) {
			assert.Equal(t, 0, pb.Run.ExitCode, "probe %d", p.N)
			assert.Equal(t, strconv.FormatFloat(p.Target, 'g', -1, 64), pb.Run.Config.Properties["target"], "probe %d", p.N)
			assert.Equal(t, "both", pb.Run.Config.Properties["measurement.interval"], "probe %d", p.N)
			assert.Equal(t, p.Operations, pb.Run.Summary.Operations, "probe %d: the search judged what its bundle recorded", p.N)
			if agents > 1 {
				assert.Len(t, pb.Run.Agents, agents, "probe %d ran on every agent", p.N)
			}
		}

		// What the search does next: a partial probe again (at most
		// MaxPartialRetries times), an unsteady judged one repeated once.
		if p.Verdict == capacity.Partial && retry < capacity.MaxPartialRetries {
			retry++
			continue
		}
		judged := p.Verdict == capacity.Pass || p.Verdict == capacity.Fail
		if judged && !p.Steady && !p.Repeat && !p.Saturated {
			repeat, retry = true, 0
			continue
		}
		repeat, retry = false, 0
		counted[p.N] = true
		switch p.Verdict {
		case capacity.Pass:
			b.Pass = max(b.Pass, p.Target)
		case capacity.Fail:
			failedAt = append(failedAt, p.Target)
			if b.Fail == 0 || p.Target < b.Fail {
				b.Fail = p.Target
			}
		default:
			if b.Undecided == 0 || p.Target < b.Undecided {
				b.Undecided = p.Target
			}
		}
		target, ended = nextTarget(b, &s)
	}
	if ended == "" {
		ended = capacity.EndBudget
		assert.Len(t, rec.Probes, s.MaxProbes, "the search ended with budget left and no reason")
	}

	a := rec.Answer
	assert.Equal(t, ended, a.Ended)
	assert.Equal(t, b, a.Bracket)
	undecidedAbove := b.Undecided > 0 && (b.Fail == 0 || b.Undecided < b.Fail)
	assert.Equal(t, b.Pass > 0 && b.Fail > 0 && !undecidedAbove && b.Pass >= b.Fail*(1-s.Precision), a.Converged, "converged")
	assert.Equal(t, b.Pass > 0, a.Found)
	assert.Equal(t, b.Pass, a.Capacity, "the capacity is the highest passing target")
	for _, f := range failedAt {
		assert.Less(t, a.Capacity, f, "a failing target at or below the capacity")
	}
	if a.Found {
		at := rec.AtCapacity()
		require.NotNil(t, at, "probe %d of the answer", a.Probe)
		assert.True(t, counted[at.N], "the answer's probe %d was judged, not repeated", at.N)
		assert.Equal(t, capacity.Pass, at.Verdict)
		assert.Equal(t, a.Capacity, at.Target)
		assert.Equal(t, at.Achieved, a.Achieved, "the capacity's achieved throughput is its probe's")
		assert.Equal(t, at.Steady, a.Steady)
	}
}

// checkT is what checkSearch needs of a test, so that a recorder can
// stand in for one to show the check fails on a broken record.
type checkT interface {
	require.TestingT
	Helper()
}

// recorder counts the failures of a check instead of failing a test.
type recorder struct{ failures int }

func (r *recorder) Errorf(string, ...any) { r.failures++ }
func (r *recorder) FailNow()              { r.failures++; runtime.Goexit() }
func (r *recorder) Helper()               {}

// requireCheckFails breaks one rule at a time in copies of a record that
// passed checkSearch, and requires the check to fail on each.
func requireCheckFails(t *testing.T, dir string, rec *capacity.Record, agents int) {
	t.Helper()
	last := len(rec.Probes) - 1
	flip := map[capacity.Verdict]capacity.Verdict{capacity.Pass: capacity.Fail, capacity.Fail: capacity.Pass}
	for name, tamper := range map[string]func(r *capacity.Record){
		"a verdict its measurements do not give": func(r *capacity.Record) { r.Probes[0].Verdict = flip[r.Probes[0].Verdict] },
		"a target the rules do not give":         func(r *capacity.Record) { r.Probes[last].Target++ },
		"a capacity above the highest pass":      func(r *capacity.Record) { r.Answer.Capacity *= 1.01 },
		"an ending the bracket does not give":    func(r *capacity.Record) { r.Answer.Ended = capacity.EndInterrupted },
		"operations its bundle did not record":   func(r *capacity.Record) { r.Probes[last].Operations++ },
		"a probe beyond the budget":              func(r *capacity.Record) { r.Settings.MaxProbes = last },
	} {
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		var bad capacity.Record
		require.NoError(t, json.Unmarshal(b, &bad))
		tamper(&bad)
		var r recorder
		done := make(chan struct{})
		go func() {
			defer close(done)
			checkSearch(&r, dir, &bad, agents)
		}()
		<-done
		assert.Positive(t, r.failures, "the check passed a record with %s", name)
	}
}

// verdictOf is a probe's verdict from its own measurements, by the rules
// of docs/capacity.md: not judged when partial (an agent lost); failed
// when nothing was measured, saturated, an objective missed or too many
// errors; undecided when it would pass but is too short to tell
// (capacity.TooShort); else passed.
func verdictOf(p *capacity.Probe, s *capacity.Settings) (capacity.Verdict, bool) {
	if len(p.Partial) > 0 {
		return capacity.Partial, false
	}
	want, saturated := capacity.Pass, false
	if p.Operations == 0 {
		want = capacity.Fail
	}
	if capacity.Saturated(&p.Measured) {
		want, saturated = capacity.Fail, true
	}
	for _, o := range s.Objectives {
		if v, ok := p.Value(o); !ok || v > float64(o.Bound.Nanoseconds())/1e3 {
			want = capacity.Fail
		}
	}
	if p.ErrorRate() > s.MaxErrorRate {
		want = capacity.Fail
	}
	if want == capacity.Pass && capacity.TooShort(&p.Measured) != "" {
		want = capacity.Undecided
	}
	return want, saturated
}

// nextTarget is the search's rule for the next target from the bracket
// (docs/capacity.md): double while nothing failed or was left undecided,
// halve while nothing passed (not below --start/1024, nor below what a
// probe can judge), then bisect (to whole operations per second where the
// bracket leaves room) up to the lowest failing or undecided target until
// the precision.
func nextTarget(b capacity.Bracket, s *capacity.Settings) (float64, capacity.Ending) {
	up := b.Fail
	if b.Undecided > 0 && (up == 0 || b.Undecided < up) {
		up = b.Undecided
	}
	switch {
	case up == 0 && b.Pass >= s.Max:
		return 0, capacity.EndAtMax
	case up == 0:
		return min(b.Pass*capacity.Growth, s.Max), ""
	case b.Pass == 0 && up/capacity.Growth < s.Start/1024:
		return 0, capacity.EndNoPass
	case b.Pass == 0 && up/capacity.Growth*s.Probe.Seconds() < capacity.MinProbeCalls:
		return 0, capacity.EndTooShort
	case b.Pass == 0:
		return up / capacity.Growth, ""
	case b.Pass >= up*(1-s.Precision) && up == b.Fail:
		return 0, capacity.EndConverged
	case b.Pass >= up*(1-s.Precision):
		return 0, capacity.EndUndecided
	}
	mid := (b.Pass + up) / 2
	if r := math.Round(mid); r > b.Pass && r < up {
		mid = r
	}
	return mid, ""
}

// checkPercentiles: a probe's percentiles rise with the percentile, and
// no intended-time percentile is below the service-time one (a call's
// intended time includes its service time).
func checkPercentiles(t checkT, p *capacity.Probe) {
	t.Helper()
	for _, l := range p.Latency {
		if l.Count == 0 {
			continue
		}
		prev := map[string]float64{}
		for _, pc := range capacity.CurvePercentiles {
			k := capacity.PercentileKey(pc)
			in, sv := l.Intended[k], l.Service[k]
			assert.GreaterOrEqual(t, in, prev["in"], "probe %d %s intended %s", p.N, l.Op, k)
			assert.GreaterOrEqual(t, sv, prev["sv"], "probe %d %s service %s", p.N, l.Op, k)
			assert.GreaterOrEqual(t, in*1.01, sv, "probe %d %s %s: intended below service time", p.N, l.Op, k)
			prev["in"], prev["sv"] = in, sv
		}
	}
}

// belowKnee is the sanity bound: neither the capacity nor what its probe
// achieved is above the knee (kneeMargin over it).
func belowKnee(t *testing.T, rec *capacity.Record, knee float64) {
	t.Helper()
	assert.LessOrEqual(t, rec.Answer.Capacity, kneeMargin*knee, "capacity above the theoretical maximum %.0f ops/s", knee)
	for _, p := range rec.Probes {
		assert.LessOrEqual(t, p.Achieved, kneeMargin*knee, "probe %d achieved more than the theoretical maximum %.0f ops/s", p.N, knee)
	}
}

// shellWords is what a POSIX shell reads line as: the words of "set --".
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	out, err := exec.Command("sh", "-c", "set -- "+line+`; for w in "$@"; do printf '%s\0' "$w"; done`).CombinedOutput()
	require.NoError(t, err, "sh read %s: %s", line, out)
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// commandLine is the equivalent command a run printed to stderr.
func commandLine(t *testing.T, stderr string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if c, ok := strings.CutPrefix(l, "Command line: "); ok {
			return c
		}
	}
	require.Fail(t, "no command line printed", "%s", stderr)
	return ""
}

// TestCapacityKnownKnee: a search on one host of basic's simulated server
// (4 slots × 2 ms: 2000 ops/s) lands within its precision of the knee and
// keeps its rules; its stdout says the answer, its status lines name the
// probes, the command line it printed is one a shell reads back as given
// (--slo 'READ.p99<=1s' quoted), and the report draws the curve.
func TestCapacityKnownKnee(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cap")
	args := append([]string{"capacity", "basic", "--results", dir}, knownKneeArgs(1500)...)
	r := runCLI(t, 10*time.Minute, "", args...)
	requireExit(t, r, 0)
	rec := readCapacity(t, dir)
	assert.Equal(t, "single-host", rec.Mode)
	assert.Equal(t, args, rec.CommandLine[1:], "the command line as given")
	checkSearch(t, dir, rec, 1)
	nearKnee(t, rec, kneeOf(1))
	belowKnee(t, rec, kneeOf(1))
	requireCheckFails(t, dir, rec, 1)
	assert.Contains(t, r.stdout, rec.AnswerText())
	assert.Contains(t, r.stderr, "[probe 1, 1500 ops/s] ", "status lines name the probe")
	assert.Equal(t, append([]string{"ycsbctl"}, args...), shellWords(t, commandLine(t, r.stderr)), "the printed command, read by a shell")
	// The report draws the curve.
	r = runCLI(t, time.Minute, "", "report", dir)
	requireExit(t, r, 0)
	assert.FileExists(t, filepath.Join(dir, bundle.FileReport))
}

// TestCapacityTighterObjective: with service times drawn from 0 to 40 ms
// (20 ms on average) on one slot, the knee is 50 ops/s, and latency grows
// with load well before it (calls queue behind long ones): a search at a
// loose objective lands within its precision of the knee, one at a tight
// objective (p90 <= 50 ms: the service time's p90 is 36 ms) finds a lower
// capacity. The two searches run at once, each with its own server. They
// start at 35 ops/s, the first target a 3 s probe judges (100 calls).
// Eight threads queue on the one slot: near the knee about seven calls
// are in flight at any instant, 5% of a 3 s probe's 150, which the probe
// cannot place (capacity.TooShort): the loose search may stop that much
// below the knee, undecided, beyond its precision.
func TestCapacityTighterObjective(t *testing.T) {
	search := func(slo string) (*cliProc, string) {
		dir := filepath.Join(t.TempDir(), "cap")
		return startCLI(t, 10*time.Minute, "", "capacity", "basic", "--results", dir, "-P", "workloadc", "-threads", "8",
			"-p", "basicdb.verbose=false", "-p", "basicdb.simulatedelay=40", "-p", "basicdb.randomizedelay=true", "-p", "basicdb.slots=1",
			"--slo", slo, "--probe", "3s", "--warmup", "1s", "--interval", "500ms", "--start", "35", "--precision", "10%", "--max-probes", "8"), dir
	}
	lp, ldir := search("READ.p99<=1s")
	tp, tdir := search("READ.p90<=50ms")
	requireExit(t, lp.Wait(t), 0)
	requireExit(t, tp.Wait(t), 0)
	loose, tight := readCapacity(t, ldir), readCapacity(t, tdir)
	checkSearch(t, ldir, loose, 1)
	checkSearch(t, tdir, tight, 1)
	nearKneeWithin(t, loose, 50, loose.Settings.Precision+0.05)
	require.True(t, tight.Answer.Found, "the tight objective holds at low load")
	assert.Less(t, tight.Answer.Capacity, loose.Answer.Capacity, "a tighter objective, a lower capacity")
}

// TestCapacitySlowProbe: a probe of 16 threads at 51.3 ops/s for 2 s
// (102.6 calls due, each thread's calls 312 ms apart: six or seven each)
// achieves its target: a paced worker's first call after the warm-up is
// measured (a slow paced probe once lost every worker's first call), and
// one call short of 97% is the schedule's rounding, not saturation. The
// lowest target a 2 s probe judges is 50 ops/s: 7.7, as this test once
// ran, is refused before any load.
func TestCapacitySlowProbe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cap")
	r := runCLI(t, 5*time.Minute, "", "capacity", "basic", "--results", dir, "-P", "workloadc", "-threads", "16", "-p", "basicdb.verbose=false",
		"--slo", "READ.p99<=1s", "--probe", "2s", "--warmup", "1s", "--start", "51.3", "--max", "51.3")
	requireExit(t, r, 0)
	rec := readCapacity(t, dir)
	checkSearch(t, dir, rec, 1)
	require.Len(t, rec.Probes, 1)
	p := rec.Probes[0]
	assert.InDelta(t, 102.6, float64(p.Operations), 1.5, "the calls due in 2 s at 51.3 ops/s")
	assert.Equal(t, capacity.Pass, p.Verdict, "%q", p.Reasons)
	assert.Equal(t, capacity.EndAtMax, rec.Answer.Ended)
	r = runCLI(t, time.Minute, "", "capacity", "basic", "--results", filepath.Join(t.TempDir(), "short"), "-P", "workloadc", "-threads", "16",
		"--slo", "READ.p99<=1s", "--probe", "2s", "--start", "7.7")
	requireExit(t, r, 2)
	assert.Contains(t, r.stderr, "--start 7.7: expected at least 50 ops/s with --probe 2s")
}

// TestCapacityOverAgents: over two agent processes, each with its own
// simulated server (2000 ops/s each), the coordinator's search splits
// each probe's target across the agents, finds the capacities added up
// (4000 ops/s) within its precision and keeps the rules; then a suite's
// capacity step over the same agents runs the same search, records it in
// capacity.json and suite.json with its equivalent command, and the
// workbook's Capacity sheet says its answer.
func TestCapacityOverAgents(t *testing.T) {
	_, addrs := startAgents(t, 2)
	knee := kneeOf(2)

	dir := filepath.Join(t.TempDir(), "cap")
	args := append([]string{"coordinator", "capacity", "basic", "--agents", strings.Join(addrs, ","), "--results", dir}, knownKneeArgs(3000)...)
	r := runCLI(t, 10*time.Minute, "", args...)
	requireExit(t, r, 0)
	rec := readCapacity(t, dir)
	assert.Equal(t, "distributed", rec.Mode)
	assert.Equal(t, addrs, rec.Agents)
	checkSearch(t, dir, rec, 2)
	nearKnee(t, rec, knee)
	belowKnee(t, rec, knee)
	assert.Contains(t, r.stdout, rec.AnswerText())

	sdir := t.TempDir()
	file := filepath.Join(sdir, "cap.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`name: cap
properties: {basicdb.verbose: false, basicdb.simulatedelay: `+strconv.Itoa(knownDelayMs)+`, basicdb.randomizedelay: false, basicdb.slots: `+strconv.Itoa(knownSlots)+`, status.interval: 0.5}
databases: [basic]
steps:
  - capacity: workloadc
    threads: `+strconv.Itoa(knownThreads)+`
    slo: 'READ.p99<=1s'
    probe: 3s
    warmup: 1s
    start: 3000
    precision: 10%
    max_probes: 8
`), 0o644))
	res := filepath.Join(sdir, "results")
	r = runCLI(t, 10*time.Minute, "", "suite", file, "--agents", strings.Join(addrs, ","), "--results", res)
	requireExit(t, r, 0)
	step := filepath.Join(res, "basic", "01-capacity-workloadc")
	rec = readCapacity(t, step)
	assert.Equal(t, "distributed", rec.Mode)
	require.NotNil(t, rec.Suite)
	checkSearch(t, step, rec, 2)
	nearKnee(t, rec, knee)
	belowKnee(t, rec, knee)
	cmd := strings.Join(rec.CommandLine, " ")
	for _, w := range []string{"coordinator capacity basic", "--agents " + strings.Join(addrs, ","), "-p threadcount=16",
		"--slo READ.p99<=1s", "--probe 3s", "--warmup 1s", "--start 3000", "--precision 0.1", "--max-probes 8"} {
		assert.Contains(t, cmd, w, "the step's equivalent command")
	}
	assert.Contains(t, r.stdout, "basic 01-capacity-workloadc: "+rec.AnswerText())
	st, err := suite.ReadState(res)
	require.NoError(t, err)
	require.Len(t, st.Steps, 1)
	assert.Equal(t, suite.KindCapacity, st.Steps[0].Kind)
	assert.Equal(t, suite.StatusPassed, st.Steps[0].Status)
	assert.Equal(t, rec.Suite.Fingerprint, st.Steps[0].Fingerprint)
	x, err := excelize.OpenFile(filepath.Join(res, "summary.xlsx"))
	require.NoError(t, err)
	defer func() { _ = x.Close() }()
	rows, err := x.GetRows(workbook.SheetCapacity, excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Contains(t, rows[1], workbook.FormatCell(rec.Answer.Capacity))
}

// TestCapacityCassandra searches a real Cassandra with workload C, and
// requires what issue 24 asks of it: the search ends within its probe
// budget by its own rules (checkSearch) and reports a capacity, a target
// whose probe passed. What a loaded 2-core host lets a freshly started
// Cassandra do is not the question here (a run at load 13 passed nothing
// down to 62.5 ops/s against p99 <= 50 ms), so the objective is loose and
// the ramp starts low: p99 within 1 s and 1% errors, which only a stall of
// a second or a failing server breaks, from 200 ops/s, which the ramp
// halves while nothing passes. A short run of reads first warms the
// JVM's read path (the load only ran writes), so that the first probe
// does not pay for its compilation. Each probe is 3 s after 1 s of
// warm-up: a stall of the harness at a probe's end leaves calls due
// unmade, and 3 s keep a 90 ms one within the 3% a probe may miss.
// Capacities at p99 <= 10 ms are measured by hand, not asserted: they
// are figures of the machine (issue 24's closing note).
func TestCapacityCassandra(t *testing.T) {
	endpoint := startServer(t, "cassandra")
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err)
	conn := []string{"-p", "hosts=" + host, "-p", "port=" + port, "-p", "table=ycsbctl_capacity", "-p", "recordcount=1000"}
	for _, verb := range []string{"drop", "init"} {
		requireExit(t, runCLI(t, cmdTimeout, "", append([]string{verb, "cassandra"}, conn...)...), 0)
	}
	requireExit(t, runCLI(t, cmdTimeout, "", append([]string{"load", "cassandra", "-P", "workloadc", "-threads", "8"}, conn...)...), 0)
	requireExit(t, runCLI(t, cmdTimeout, "", append([]string{"run", "cassandra", "-P", "workloadc", "-threads", "8",
		"-p", "operationcount=2000", "--results", filepath.Join(t.TempDir(), "warm")}, conn...)...), 0)
	dir := filepath.Join(t.TempDir(), "cap")
	args := append([]string{"capacity", "cassandra", "-P", "workloadc", "-threads", "16", "--results", dir,
		"--slo", "READ.p99<=1s", "--max-error-rate", "0.01", "--probe", "3s", "--warmup", "1s", "--interval", "500ms",
		"--start", "200", "--precision", "10%", "--max-probes", "4"}, conn...)
	r := runCLI(t, 10*time.Minute, "", args...)
	requireExit(t, r, 0)
	rec := readCapacity(t, dir)
	checkSearch(t, dir, rec, 1)
	require.True(t, rec.Answer.Found, "no target passed in %d probes (%s); each probe's reasons are in the table above", len(rec.Probes), rec.Answer.Ended)
	at := rec.AtCapacity()
	require.NotNil(t, at)
	assert.Equal(t, capacity.Pass, at.Verdict)
	v, ok := at.Value(rec.Settings.Objectives[0])
	require.True(t, ok, "probe %d measured no READ", at.N)
	assert.LessOrEqual(t, v, 1e6, "READ p99 (intended) at the capacity, µs")
	assert.Contains(t, r.stdout, rec.AnswerText())
	t.Logf("cassandra capacity at READ.p99<=1s (workload C, 16 threads): %s ops/s (achieved %s, p99 %s), %s", capacity.FormatRate(rec.Answer.Capacity),
		capacity.FormatRate(at.Achieved), capacity.FormatMicros(v), rec.Answer.Ended)
}

package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/cli"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// quickCapacity is a capacity search against the no-op database that
// passes every probe: 1 s probes without warm-up, from 1000 up to --max
// 4000 ops/s, three probes.
func quickCapacity(extra ...string) []string {
	return append([]string{"capacity", "basic", "-P", "workloadc", "-p", "basicdb.verbose=false", "-threads", "2",
		"--slo", "READ.p99<=1s", "--probe", "1s", "--warmup", "0s", "--start", "1000", "--max", "4000"}, extra...)
}

// TestCapacityBadInput: every setting a search cannot honour is refused
// before any load (exit 2), naming the flag or property and what was
// expected, and leaves no results directory behind.
func TestCapacityBadInput(t *testing.T) {
	dir := t.TempDir()
	held := filepath.Join(dir, "held")
	require.NoError(t, os.MkdirAll(held, 0o755))
	writeFile(t, held, capacity.FileRecord, "{}")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no objective", []string{"capacity", "basic", "-P", "workloadc"}, []string{"--slo", "at least one objective"}},
		{"objective without bound", quickCapacity("--slo", "READ.p99"), []string{"--slo", `"READ.p99"`, "OPERATION.PERCENTILE<=DURATION"}},
		{"unknown operation", quickCapacity("--slo", "GET.p99<=1ms"), []string{"--slo", `unknown operation "GET"`}},
		{"bad percentile", quickCapacity("--slo", "READ.p100<=1ms"), []string{"--slo", "strictly between 0 and 100"}},
		{"bound without unit", quickCapacity("--slo", "READ.p99<=10"), []string{"--slo", `bound "10"`, "positive duration"}},
		{"operation not in the mix", quickCapacity("--slo", "UPDATE.p99<=1s"), []string{"UPDATE.p99<=1s", "never does UPDATE", "measures READ"}},
		{"precision not a share", quickCapacity("--precision", "fine"), []string{"--precision", `"fine"`, "0.05 or 5%"}},
		{"precision too coarse", quickCapacity("--precision", "60%"), []string{"--precision", "from 0.1% to 50%"}},
		{"error rate above 1", quickCapacity("--max-error-rate", "2"), []string{"--max-error-rate", "from 0 to 1"}},
		{"probe in fractions of a second", quickCapacity("--probe", "1500ms"), []string{"--probe 1.5s", "whole seconds"}},
		{"max below start", quickCapacity("--max", "10"), []string{"--max 10", "at least --start"}},
		{"start at zero", quickCapacity("--start", "0"), []string{"--start 0"}},
		{"no probes", quickCapacity("--max-probes", "0"), []string{"--max-probes 0", "from 1 to 1000"}},
		{"a target", quickCapacity("-p", "target=100"), []string{`"target"`, "--start", "--max"}},
		{"an exportfile", quickCapacity("-p", "exportfile="+filepath.Join(dir, "out.txt")), []string{`"exportfile"`, "summary.txt"}},
		{"an HdrHistogram file log", quickCapacity("-p", "hdrhistogram.fileoutput=true"), []string{`"hdrhistogram.fileoutput"`, "merged.hlog"}},
		{"too few intervals per probe", quickCapacity("--interval", "500ms", "--probe", "1s"), []string{`"status.interval"`, "at least 3 intervals"}},
		{"a results directory holding a search", quickCapacity("--results", held), []string{"--results", held, "capacity.json", "--overwrite"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := execute(t, "", tc.args...)
			require.Equal(t, int(exitcode.InvalidConfig), r.code, "stderr: %s", r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.NotContains(t, r.stderr, "Capacity probe", "refused before any probe")
			assert.Empty(t, r.stdout)
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing but the held directory: %v", entries)
}

// TestCapacityBundle runs a whole (short) search in this process and
// checks its record: the probes' table on stdout, capacity.json with
// every probe, each probe's run bundle at the probe's target with the
// intended-time latencies recorded, the ramp's next target from each
// verdict, and the notes on what was replaced. Only the pace can fail a
// probe here (no objective or error bound can), and whether a loaded
// host keeps it is not asserted: the record must agree with itself.
func TestCapacityBundle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cap")
	args := []string{"capacity", "basic", "-P", "workloadc", "-p", "basicdb.verbose=false", "-threads", "1",
		"--slo", "READ.p99<=1h", "--max-error-rate", "1", "--probe", "1s", "--warmup", "0s", "--start", "200", "--max", "800",
		"--max-probes", "3", "--results", dir, "-p", "measurement.interval=op", "-p", "maxexecutiontime=99"}
	r := execute(t, "", args...)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stderr, "measurement.interval=op replaced by both")
	assert.Contains(t, r.stderr, "maxexecutiontime=99 replaced")
	assert.Contains(t, r.stderr, "Capacity probe 1 of at most 3 at 200 ops/s; passed none yet, failed none yet")
	assert.NotContains(t, r.stdout, "[OVERALL]", "the probes' YCSB summaries go to stderr")
	assert.Contains(t, r.stderr, "[OVERALL], RunTime(ms)")

	rec, err := capacity.Read(dir)
	require.NoError(t, err)
	assert.Equal(t, capacity.StatusComplete, rec.Status)
	assert.Equal(t, "basic", rec.DB)
	assert.Equal(t, "workloadc", rec.Workload)
	require.NotEmpty(t, rec.Probes)
	require.LessOrEqual(t, len(rec.Probes), 3)
	assert.Contains(t, r.stdout, rec.AnswerText())
	for i, p := range rec.Probes {
		assert.Contains(t, r.stdout, "\n      "+strconv.Itoa(p.N), "the table lists probe %d", p.N)
		if i > 0 {
			// An unsteady probe that was not saturated is repeated at
			// its target; otherwise the second probe doubles a passing
			// first target or halves a failing one.
			prev := rec.Probes[i-1]
			assert.Equal(t, !prev.Steady && !prev.Saturated && !prev.Repeat, p.Repeat, "probe %d after probe %d", p.N, prev.N)
			switch {
			case p.Repeat:
				assert.Equal(t, prev.Target, p.Target)
			case i == 1 && prev.Verdict == capacity.Pass:
				assert.Equal(t, 400.0, p.Target)
			case i == 1:
				assert.Equal(t, 100.0, p.Target)
			}
		}
		assert.Equal(t, bundle.ProbeDir(i+1), p.Bundle)
		b, err := bundle.Read(filepath.Join(dir, p.Bundle))
		require.NoError(t, err)
		assert.Equal(t, 0, b.Run.ExitCode)
		assert.Equal(t, strconv.FormatFloat(p.Target, 'g', -1, 64), b.Run.Config.Properties["target"])
		assert.Equal(t, "both", b.Run.Config.Properties["measurement.interval"])
		assert.Equal(t, p.Operations, b.Run.Summary.Operations, "the search judged what the bundle recorded")
		read := p.Op("READ")
		require.NotNil(t, read)
		assert.Contains(t, read.Intended, "p99")
		assert.Contains(t, read.Service, "p99")
		assert.NotEmpty(t, p.Intervals)
	}
	if rec.Answer.Found {
		at := rec.AtCapacity()
		require.NotNil(t, at)
		assert.Equal(t, capacity.Pass, at.Verdict)
	}

	// A second search into the same directory is refused, and replaces
	// it with --overwrite.
	again := execute(t, "", args...)
	require.Equal(t, int(exitcode.InvalidConfig), again.code, again.stderr)
	assert.Contains(t, again.stderr, "probe-01")
	again = execute(t, "", append(args, "--overwrite", "--max-probes", "1")...)
	require.Equal(t, 0, again.code, again.stderr)
	rec, err = capacity.Read(dir)
	require.NoError(t, err)
	assert.Len(t, rec.Probes, 1)
	_, err = os.Stat(filepath.Join(dir, bundle.ProbeDir(2)))
	assert.True(t, os.IsNotExist(err), "the old search's probes went with --overwrite")
}

// TestCapacityInterrupted: the operator's signal during a probe stops
// that probe gracefully (its session hears it) and the search with it;
// between probes it keeps the next one from starting (without the
// search's own watch the signal would kill the process there). Either
// way: exit 6, capacity.json saying how the search ended, with every
// probe measured before it.
func TestCapacityInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name, after string
		probes      int
	}{
		{"during the first probe", "Starting test.", 1},
		{"after the first probe", "Probe 1 at 1000 ops/s: achieved", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cap")
			var stdout, stderr syncBuffer
			var mu sync.Mutex
			var chans []chan<- os.Signal
			notify := func(c chan<- os.Signal, _ ...os.Signal) {
				mu.Lock()
				chans = append(chans, c)
				mu.Unlock()
			}
			go func() {
				for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && !strings.Contains(stderr.String(), tc.after); {
					time.Sleep(5 * time.Millisecond)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, c := range chans {
					select {
					case c <- os.Interrupt:
					default:
					}
				}
			}()
			gs := &cli.GlobalState{Ctx: context.Background(), Args: quickCapacity("--results", dir, "--probe", "2s"),
				Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" },
				Clock: clock.NewReal(), ReadFile: properties.ReadFile, SignalNotify: notify, SignalStop: func(chan<- os.Signal) {}}
			code := cli.Execute(gs)
			require.Equal(t, int(exitcode.Stopped), code, "stderr: %s", stderr.String())
			rec, err := capacity.Read(dir)
			require.NoError(t, err)
			assert.Equal(t, capacity.StatusStopped, rec.Status)
			assert.Equal(t, int(exitcode.Stopped), rec.ExitCode)
			assert.Contains(t, rec.Error, "stopped")
			assert.Equal(t, capacity.EndInterrupted, rec.Answer.Ended)
			assert.False(t, rec.EndedAt.IsZero())
			assert.Contains(t, stdout.String(), "the search was interrupted")
			require.NotEmpty(t, rec.Probes)
			if tc.probes == 1 {
				require.Len(t, rec.Probes, 1)
				assert.Equal(t, capacity.Stopped, rec.Probes[0].Verdict)
				b, err := bundle.Read(filepath.Join(dir, rec.Probes[0].Bundle))
				require.NoError(t, err)
				assert.Equal(t, int(exitcode.Stopped), b.Run.ExitCode, "the probe's own bundle says it was stopped")
				return
			}
			// Judged (on a loaded host it may even fail); a second probe,
			// if the signal found one under way, was stopped.
			assert.NotEqual(t, capacity.Stopped, rec.Probes[0].Verdict)
			require.LessOrEqual(t, len(rec.Probes), 2, "no probe after the one the signal found under way")
			if len(rec.Probes) == 2 {
				assert.Equal(t, capacity.Stopped, rec.Probes[1].Verdict)
			}
			if rec.Answer.Found {
				assert.Equal(t, capacity.Pass, rec.AtCapacity().Verdict)
			}
		})
	}
}

//go:build integration

package integration

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

// TestBenchDBsIdleAgainstLoaded runs scripts/bench-dbs.sh on its database-
// free rows (ycsbctl's basic adapter beside Java YCSB's BasicDB) with two
// burner levels in one invocation, and reads its table back: a row per
// client and level with system calls counted per level (under strace, and
// untraced by perf's raw_syscalls tracepoint), and under it each
// client's idle-against-loaded line, whose figures must be the table's own
// medians and whose percentage must be their difference over the smaller.
// Nothing about the timings themselves is asserted.
func TestBenchDBsIdleAgainstLoaded(t *testing.T) {
	tools.Java17(t)
	tools.Maven(t) // javaycsb.sh fetches Java YCSB's core with mvn
	tools.Require(t, "strace")
	tools.Require(t, "perf")
	root := cliRoot()
	script := filepath.Join(root, "scripts", "bench-dbs.sh")

	run := func(busy, syscalls string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", script, "basic")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "BUSY="+busy, "THREADS=4", "REPEATS=1", "BASIC_OPS=20000", "LATTE=0", "SYSCALLS="+syscalls)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}

	// Bad input is refused before any run, naming the variable and what
	// was given.
	for _, bad := range []struct{ name, busy, syscalls, want, given string }{
		{"refuses-a-bad-level", "0 two", "1", "BUSY must be a number of busy processes", "0 two"},
		{"refuses-a-bad-count-of-counting-runs", "0", "three", "SYSCALLS must be a number of system call counting runs", "three"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, stderr, err := run(bad.busy, bad.syscalls)
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "stderr:\n%s", stderr)
			assert.Equal(t, 2, ee.ExitCode())
			assert.Contains(t, stderr, bad.want)
			assert.Contains(t, stderr, bad.given)
		})
	}

	t.Run("two-levels", func(t *testing.T) {
		out, stderr, err := run("0 1", "2")
		require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out, stderr)
		assert.Contains(t, out, "busy processes beside each run (BUSY): 0 1")
		assert.Contains(t, out, "syscalls/op: median of 2 runs [min-max] under strace -f -c")
		// perf can count the tracepoint on a machine ci-setup.sh prepared;
		// where it cannot, the script's table says why.
		assert.Contains(t, out, "untraced syscalls/op: median of 2 runs [min-max] counted by perf stat -e raw_syscalls:sys_enter", "stdout:\n%s", out)
		// Two runs per client and level under each counter, interleaved.
		assert.Equal(t, 8, strings.Count(stderr, " under strace, run "), "strace runs in:\n%s", stderr)
		assert.Equal(t, 8, strings.Count(stderr, " counted by perf, run "), "perf runs in:\n%s", stderr)

		// server (three words) client thr busy cpu/op [lo- hi] ... sysc/op [lo-hi] untraced [lo-hi] allocs/op
		row := regexp.MustCompile(`^none \(basic / BasicDB\)\s+(\S+)\s+(\d+)\s+(\d+)\s+([0-9.]+) \[\s*[0-9.]+-\s*[0-9.]+\]\s.*\s(\S+) \[([0-9.]+)-([0-9.]+)\]\s+(\S+) \[([0-9.]+)-([0-9.]+)\]\s+(\S+)$`)
		med := map[string]float64{}
		for _, l := range strings.Split(out, "\n") {
			m := row.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			assert.Equal(t, "4", m[2], "threads in %q", l)
			v, err := strconv.ParseFloat(m[4], 64)
			require.NoError(t, err, l)
			med[m[1]+" "+m[3]] = v
			for _, c := range [][]string{m[5:8], m[8:11]} {
				sc, err := strconv.ParseFloat(c[0], 64)
				assert.NoError(t, err, "system calls per operation measured for each level: %q", l)
				lo, _ := strconv.ParseFloat(c[1], 64)
				hi, _ := strconv.ParseFloat(c[2], 64)
				assert.True(t, sc > 0 && lo <= sc && sc <= hi, "syscalls/op median %v within its range [%v-%v]: %q", sc, lo, hi, l)
			}
		}
		for _, k := range []string{"ycsbctl 0", "ycsbctl 1", "java 0", "java 1"} {
			assert.Contains(t, med, k, "a table row for client and level %q in:\n%s", k, out)
		}
		assert.Contains(t, out, "cpu/op ratio, none (basic / BasicDB) at 4 threads, busy 0:")
		assert.Contains(t, out, "cpu/op ratio, none (basic / BasicDB) at 4 threads, busy 1:")

		// The table prints one decimal; the line's figures are the same
		// medians, so they agree to that precision.
		line := regexp.MustCompile(`(?m)^cpu/op busy 0 against busy 1, none \(basic / BasicDB\) at 4 threads, (\S+): ([0-9.]+) against ([0-9.]+) us, ([-+][0-9.]+) us, a difference of (\d+)%$`)
		found := line.FindAllStringSubmatch(out, -1)
		require.Len(t, found, 2, "one idle-against-loaded line per client in:\n%s", out)
		for _, m := range found {
			a, _ := strconv.ParseFloat(m[2], 64)
			b, _ := strconv.ParseFloat(m[3], 64)
			d, _ := strconv.ParseFloat(m[4], 64)
			pct, _ := strconv.Atoi(m[5])
			assert.InDelta(t, med[m[1]+" 0"], a, 0.051, "%s idle figure", m[1])
			assert.InDelta(t, med[m[1]+" 1"], b, 0.051, "%s loaded figure", m[1])
			assert.InDelta(t, a-b, d, 0.11, "%s difference", m[1])
			if lo := math.Min(a, b); lo >= 1 {
				// Rounded inputs: allow the percentage the rounding can move.
				want := 100 * math.Abs(a-b) / lo
				assert.InDelta(t, want, float64(pct), 100*0.1/lo+1, "%s percentage over the smaller", m[1])
			}
		}
	})
}

// TestBenchDBsWarmsTheServer runs scripts/bench-dbs.sh against a real
// server (FerretDB, the quickest of the three to start) and checks that
// one unmeasured ycsbctl run warms it after its load and before the first
// measured run: the first client of the first repeat used to meet a
// server fresh from its load (against Cassandra, 47.5 us/op at 4.2k ops/s
// where later runs cost 33-37 us/op at 11-13k) and carry that into the
// table. The warm-up's operations and throughput are printed above the
// table and are in none of its rows; WARMUP=0 says there was none, and a
// WARMUP that is not a number is refused before anything starts.
func TestBenchDBsWarmsTheServer(t *testing.T) {
	tools.Java17(t)
	tools.Maven(t) // javaycsb.sh fetches Java YCSB's core with mvn
	skipIfSkipped(t, "mongodb")
	// bench-dbs starts its own server and refuses one already running.
	stopServer(t, "mongodb")
	root := cliRoot()
	script := filepath.Join(root, "scripts", "bench-dbs.sh")

	run := func(warmup string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", script, "mongodb")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "WARMUP="+warmup, "THREADS=1 4", "REPEATS=1",
			"FERRET_RECORDS=300", "FERRET_OPS=300", "SYSCALLS=0", "LATTE=0", "BUSY=0")
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}

	t.Run("refuses-a-bad-warmup", func(t *testing.T) {
		_, stderr, err := run("some")
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "stderr:\n%s", stderr)
		assert.Equal(t, 2, ee.ExitCode())
		assert.Contains(t, stderr, "WARMUP must be a number of operations of the unmeasured warm-up run")
		assert.Contains(t, stderr, "'some'")
		assert.NotContains(t, stderr, "starting mongodb", "refused before any server started")
	})

	// rows returns the table's FerretDB rows: threads -> the cpu/op
	// median and its range, which for one run each must be that run's.
	row := regexp.MustCompile(`^FerretDB 1\.24/SQLite \(not MongoDB\)\s+ycsbctl\s+(\d+)\s+0\s+([0-9.]+) \[\s*([0-9.]+)-\s*([0-9.]+)\]`)
	rows := func(out string) map[string][3]string {
		got := map[string][3]string{}
		for _, l := range strings.Split(out, "\n") {
			if m := row.FindStringSubmatch(l); m != nil {
				got[m[1]] = [3]string{m[2], m[3], m[4]}
			}
		}
		return got
	}

	t.Run("warmed", func(t *testing.T) {
		out, stderr, err := run("")
		require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out, stderr)
		// The default warm-up: FERRET_OPS operations at the largest of
		// THREADS, after the load and before the first measured run.
		warm := strings.Index(stderr, "mongodb: warm-up, ycsbctl threads=4 ops=300 (not measured)")
		first := strings.Index(stderr, "mongodb: ycsbctl threads=1 ops=300 busy=0 run 1")
		created := strings.Index(stderr, "created collection")
		require.True(t, warm >= 0 && first >= 0 && created >= 0, "warm-up, load and first run in stderr:\n%s", stderr)
		assert.Less(t, created, warm, "the warm-up follows the schema and load")
		assert.Less(t, warm, first, "the warm-up precedes the first measured run")
		assert.Equal(t, 1, strings.Count(stderr, "warm-up, ycsbctl"), "one warm-up per server:\n%s", stderr)

		m := regexp.MustCompile(`(?m)^FerretDB 1\.24/SQLite \(not MongoDB\) was warmed after its load by one unmeasured ycsbctl run: (\d+) operations at (\d+) threads, ([0-9.]+) ops/s$`).FindStringSubmatch(out)
		require.NotNil(t, m, "the warm-up's line in:\n%s", out)
		assert.Equal(t, "300", m[1], "operations the warm-up reported")
		assert.Equal(t, "4", m[2])
		thr, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err)
		assert.Positive(t, thr, "the warm-up's throughput")

		// One measured run per thread count, none of them the warm-up:
		// each row's range is its one run.
		got := rows(out)
		require.Len(t, got, 2, "a row per thread count in:\n%s", out)
		for th, v := range got {
			assert.Equal(t, v[0], v[1], "threads %s: one run, its own minimum", th)
			assert.Equal(t, v[0], v[2], "threads %s: one run, its own maximum", th)
		}
		assert.Contains(t, out, "cpu/op = client user+sys (start-up included) / operations: one run;")
		// Why Java YCSB is missing, for the server measured and no other.
		assert.Contains(t, out, "\nMeasured without Java YCSB: mongodb, because Java YCSB's mongodb adapter (MongoDB Java driver 3.8) cannot connect to FerretDB, the only MongoDB-protocol server here.\n")
		assert.NotContains(t, out, "cassandra-cql", "a FerretDB-only run names no Cassandra adapter")
	})

	t.Run("no-warmup", func(t *testing.T) {
		out, stderr, err := run("0")
		require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out, stderr)
		assert.NotContains(t, stderr, "warm-up")
		assert.NotContains(t, out, "was warmed")
		assert.Contains(t, out, "No warm-up run (WARMUP=0): the first client of the first repeat met each server fresh from its load.")
		assert.Len(t, rows(out), 2, "a row per thread count in:\n%s", out)
	})
}

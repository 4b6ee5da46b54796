package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	ycsbrun "github.com/ycsbctl/ycsbctl/internal/run"
)

// readRunJSON returns dir's run.json, or nil when there is none.
func readRunJSON(t *testing.T, dir string) *bundle.Run {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, bundle.FileRunJSON))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var r bundle.Run
	require.NoError(t, json.Unmarshal(raw, &r))
	return &r
}

// TestRunJSONExitCode checks, for every way a single-host run can end,
// that run.json records the exit code the process returns: the bundle is
// written last, after every verdict. A run refused before it starts (exit
// 2) leaves no run.json at all, and no other file either.
func TestRunJSONExitCode(t *testing.T) {
	interruptAfter := func(d time.Duration) func(chan<- os.Signal, ...os.Signal) {
		return func(c chan<- os.Signal, _ ...os.Signal) {
			go func() {
				time.Sleep(d)
				c <- os.Interrupt
			}()
		}
	}
	none := func(chan<- os.Signal, ...os.Signal) {}
	cases := []struct {
		name   string
		code   exitcode.Code
		status ycsbrun.Status
		// args get --results DIR appended; setup may prepare the
		// environment and return extra args.
		args   []string
		setup  func(t *testing.T, dir string) []string
		notify func(chan<- os.Signal, ...os.Signal)
	}{
		{name: "ok", code: exitcode.OK, status: ycsbrun.StatusComplete,
			args: quiet("run", "basic", "-P", "workloada", "-p", "operationcount=2000")},
		{name: "invalid hdr output path", code: exitcode.InvalidConfig,
			args: quiet("run", "basic", "-P", "workloada", "-p", "operationcount=2000", "-p", "hdrhistogram.fileoutput=true"),
			setup: func(t *testing.T, dir string) []string {
				return []string{"-p", "hdrhistogram.output.path=" + filepath.Join(dir, "no", "such", "dir") + "/"}
			}},
		{name: "exportfile in a missing directory", code: exitcode.InvalidConfig,
			args: quiet("run", "basic", "-P", "workloada", "-p", "operationcount=2000"),
			setup: func(t *testing.T, dir string) []string {
				return []string{"-p", "exportfile=" + filepath.Join(dir, "missing", "out.txt")}
			}},
		{name: "interrupted", code: exitcode.Stopped, status: ycsbrun.StatusStopped, notify: interruptAfter(300 * time.Millisecond),
			args: quiet("run", "basic", "-P", "workloada", "-p", "operationcount=0", "-p", "maxexecutiontime=30", "-target", "2000")},
		{name: "errors above threshold", code: exitcode.DBErrors, status: ycsbrun.StatusComplete,
			args: quiet("run", "embedded", "-P", "workloadc", "-p", "operationcount=50", "-p", "ycsbctl.maxerrorrate=0.5"),
			setup: func(t *testing.T, dir string) []string {
				return []string{"-p", "embedded.dir=" + t.TempDir()} // never loaded: every read fails
			}},
		{name: "exportfile lost during the run", code: exitcode.Failure, status: ycsbrun.StatusComplete,
			args: quiet("run", "basic", "-P", "workloada", "-p", "operationcount=0", "-p", "maxexecutiontime=1", "-target", "1000"),
			setup: func(t *testing.T, dir string) []string {
				out := filepath.Join(t.TempDir(), "gone")
				require.NoError(t, os.Mkdir(out, 0o755))
				go func() {
					time.Sleep(300 * time.Millisecond)
					_ = os.RemoveAll(out)
				}()
				return []string{"-p", "exportfile=" + filepath.Join(out, "summary.txt")}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bundle")
			args := append([]string(nil), tc.args...)
			if tc.setup != nil {
				args = append(args, tc.setup(t, filepath.Dir(dir))...)
			}
			args = append(args, "--results", dir)
			notify := tc.notify
			if notify == nil {
				notify = none
			}
			r := executeWithSignals(t, "", notify, args...)
			require.Equal(t, int(tc.code), r.code, r.stderr)
			rj := readRunJSON(t, dir)
			if tc.code == exitcode.InvalidConfig {
				assert.Nil(t, rj, "a refused run writes no run.json")
				entries, _ := os.ReadDir(dir)
				assert.Empty(t, entries, "a refused run leaves nothing in the results directory")
				return
			}
			require.NotNil(t, rj, "no run.json\n%s", r.stderr)
			assert.Equal(t, int(tc.code), rj.ExitCode)
			assert.Equal(t, tc.code.String(), rj.ExitReason)
			assert.Equal(t, tc.status, rj.Status)
			if tc.code != exitcode.OK {
				assert.NotEmpty(t, rj.Error)
			}
			// The summary always reaches stdout, even when exportfile
			// could not be written.
			if tc.name == "exportfile lost during the run" {
				assert.Contains(t, r.stdout, "[OVERALL], RunTime(ms)")
				assert.Contains(t, r.stderr, "the summary went to stdout instead")
			}
		})
	}
}

// TestCoordinatorRunJSONExitCode covers the distributed exit paths: an
// agent lost under the abort policy (3), and the same loss under the
// continue policy (0, results partial), with run.json agreeing with the
// process each time.
func TestCoordinatorRunJSONExitCode(t *testing.T) {
	for _, tc := range []struct {
		policy string
		code   exitcode.Code
		status ycsbrun.Status
	}{
		{"abort", exitcode.AgentLost, ycsbrun.StatusAborted},
		{"continue", exitcode.OK, ycsbrun.StatusPartial},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			keep := startAgent(t, ctx)
			lostCtx, lose := context.WithCancel(ctx)
			doomed := startAgent(t, lostCtx)
			go func() {
				time.Sleep(1500 * time.Millisecond)
				lose() // the agent process goes away mid-run
			}()
			dir := filepath.Join(t.TempDir(), "bundle")
			r := execute(t, "", quiet("coordinator", "run", "basic", "--agents", keep+","+doomed, "--on-agent-loss", tc.policy,
				"--agent-timeout", "2s", "-P", "workloada", "-p", "operationcount=0", "-p", "maxexecutiontime=4", "-target", "400",
				"-p", "status.interval=0.5", "--results", dir)...)
			require.Equal(t, int(tc.code), r.code, r.stderr)
			rj := readRunJSON(t, dir)
			require.NotNil(t, rj, r.stderr)
			assert.Equal(t, int(tc.code), rj.ExitCode)
			assert.Equal(t, tc.status, rj.Status)
			assert.True(t, strings.Contains(strings.Join(rj.StatusReasons, ";"), "agent 1"), "reasons %v", rj.StatusReasons)
		})
	}
}

func startAgent(t *testing.T, ctx context.Context) string {
	t.Helper()
	ready := make(chan string, 1)
	go func() {
		_ = agent.Serve(ctx, agent.Config{Listen: "127.0.0.1:0", Ready: func(a string) { ready <- a }, Logf: func(string, ...any) {}})
	}()
	select {
	case a := <-ready:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not start")
	}
	return ""
}

// The operator's second Ctrl-C aborts: operations in flight are cancelled
// and counted under their own return code, never as OK with a cut-short
// latency; the run still reports and exits 4.
func TestSecondInterruptCountsCancelled(t *testing.T) {
	notify := func(c chan<- os.Signal, _ ...os.Signal) {
		go func() {
			time.Sleep(400 * time.Millisecond)
			c <- os.Interrupt
			time.Sleep(50 * time.Millisecond)
			c <- os.Interrupt
		}()
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	// Every call takes 300 ms, so 4 threads always have calls in flight.
	r := executeWithSignals(t, "", notify, quiet("run", "basic", "-P", "workloada", "-threads", "4", "-p", "operationcount=0",
		"-p", "maxexecutiontime=30", "-p", "basicdb.simulatedelay=300", "-p", "basicdb.randomizedelay=false", "--results", dir)...)
	require.Equal(t, int(exitcode.Aborted), r.code, r.stderr)
	cancelled := regexp.MustCompile(`\[(READ|UPDATE)\], Return=CANCELLED, (\d+)`).FindAllStringSubmatch(r.stdout, -1)
	var n int64
	for _, m := range cancelled {
		v, _ := strconv.ParseInt(m[2], 10, 64)
		n += v
	}
	assert.Equal(t, int64(4), n, "the four calls in flight at the abort are CANCELLED:\n%s", r.stdout)
	rj := readRunJSON(t, dir)
	require.NotNil(t, rj)
	assert.Equal(t, int(exitcode.Aborted), rj.ExitCode)
}

// `ycsbctl properties [db]` lists what is known, with defaults: the
// client's, the core workload's and the adapter's.
func TestPropertiesCommand(t *testing.T) {
	r := execute(t, "", "properties", "cassandra")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s+threadcount\s+1\s`),
		regexp.MustCompile(`(?m)^\s+recordcount\s+0\s`),
		regexp.MustCompile(`(?m)^\s+requestdistribution\s+uniform\s`),
		regexp.MustCompile(`(?m)^\s+cassandra\.readconsistencylevel\s+QUORUM\s`),
		regexp.MustCompile(`(?m)^\s+hdrhistogram\.percentiles\s+50,95,99\s`),
	} {
		assert.Regexp(t, want, r.stdout)
	}
	assert.NotContains(t, r.stdout, "hbase.zookeeper", "only the named adapter")
	r = execute(t, "", "properties", "nosuchdb")
	assert.Equal(t, int(exitcode.InvalidConfig), r.code)
	// A typo is warned about on a run, once, with the nearest name.
	r = execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=10", "-p", "recordcout=5")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, "nothing reads"), r.stderr)
	assert.Contains(t, r.stderr, "recordcout (did you mean recordcount?)")
}

package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitedRun runs the binary in dir with env added, under an address-space
// limit: an input that used to grow memory until the kernel killed it
// fails inside the limit instead of taking the machine down.
func limitedRun(t *testing.T, dir string, env []string, args ...string) run {
	t.Helper()
	const limitKiB = 8 << 20 // 8 GiB
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -v ` + strconv.Itoa(limitKiB) + ` && exec "$0" "$@"`, binary(t)}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return run{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// runJSONProps reads the merged properties a run recorded.
func runJSONProps(t *testing.T, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	var r struct {
		Config struct {
			Properties map[string]string `json:"properties"`
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal(b, &r))
	return r.Config.Properties
}

// TestInputsSayWhatWasTyped runs the real binary on each input of issue
// 21 that used to be accepted silently, answered with a raw parser error,
// or blamed on something else. A refused input exits 2 with a message
// naming the flag or property, the value typed and what was expected,
// before any load; a flag and a -p that disagree run with the later one
// and say so in one warning line.
func TestInputsSayWhatWasTyped(t *testing.T) {
	binary(t)
	quiet := []string{"-p", "basicdb.verbose=false"}
	// three agents nobody listens on: a row that reached them would
	// fail to connect (exit 1), so exit 2 shows it was refused first.
	const three = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"
	tests := []struct {
		name string
		args func(dir string) []string
		env  func(dir string) []string
		code int
		want []string // each appears in stderr
		not  []string // none appears in stderr
		// check inspects the run further; dir is its working directory.
		check func(t *testing.T, dir string, r run)
	}{
		{name: "a record of 62.5 GiB with 4 threads",
			args: func(string) []string {
				return []string{"run", "basic", "-p", "fieldlength=67108864", "-p", "fieldcount=1000", "-p", "writeallfields=true",
					"-p", "updateproportion=1", "-p", "readproportion=0", "-p", "ycsbctl.values=fresh", "-threads", "4", "-p", "operationcount=10"}
			},
			code: 2, want: []string{`"fieldlength"="67108864"`, "a record of 62.5 GiB", "fieldcount 1000 × fieldlength 64 MiB", "4 threads", "2 copies", "needs 500 GiB", "available"}},
		{name: "a batch of large records",
			args: func(string) []string {
				return []string{"load", "basic", "-p", "fieldlength=1000000", "-p", "fieldcount=10", "-p", "batchsize=100000", "-p", "recordcount=10"}
			},
			code: 2, want: []string{`"fieldlength"="1000000"`, "100000 records (batchsize)", "batchsize or -threads"}},
		{name: "certs for host:port",
			args: func(dir string) []string {
				return []string{"certs", "--dir", filepath.Join(dir, "certs"), "--hosts", "10.0.0.1,127.0.0.1:7420"}
			},
			code: 2, want: []string{"--hosts", `"127.0.0.1:7420"`, "without a port", "use 127.0.0.1"},
			check: func(t *testing.T, dir string, _ run) {
				assert.NoDirExists(t, filepath.Join(dir, "certs", "127.0.0.1:7420"), "no certificate for DNS:127.0.0.1:7420")
			}},
		{name: "-threads 1.5",
			args: func(string) []string { return []string{"run", "basic", "-P", "workloada", "-threads", "1.5"} },
			code: 2, want: []string{"-threads 1.5", "whole number of client threads", "threadcount"}, not: []string{"strconv"}},
		{name: "-target not a number",
			args: func(string) []string { return []string{"run", "basic", "-P", "workloada", "-target", "fast"} },
			code: 2, want: []string{"-target fast", "operations per second", "target"}, not: []string{"strconv"}},
		{name: "hotspotdatafraction=2",
			args: func(string) []string {
				return []string{"run", "basic", "-P", "workloada", "-p", "requestdistribution=hotspot", "-p", "hotspotdatafraction=2"}
			},
			code: 2, want: []string{`"hotspotdatafraction"="2"`, "between 0 and 1"}},
		{name: "--listen nonsense::::",
			args: func(string) []string { return []string{"agent", "--listen", "nonsense::::"} },
			code: 2, want: []string{`--listen "nonsense::::"`, "HOST:PORT"}, not: []string{"loopback"}},
		// A bare name that resolves to nothing (.invalid never does).
		{name: "--listen an unresolvable name",
			args: func(string) []string { return []string{"agent", "--listen", "nonsense.invalid"} },
			code: 2, want: []string{`--listen "nonsense.invalid"`, `host "nonsense.invalid" does not resolve`, "127.0.0.1:7420"}, not: []string{"loopback"}},
		{name: "--listen port out of range",
			args: func(string) []string { return []string{"agent", "--listen", "127.0.0.1:99999"} },
			code: 2, want: []string{`"127.0.0.1:99999"`, `port "99999"`, "0 to 65535"}},
		// A mistyped help topic used to print the root's help, exit 0.
		{name: "help exit-code",
			args: func(string) []string { return []string{"help", "exit-code"} },
			code: 2, want: []string{`unknown help topic "exit-code"`, `did you mean "exit-codes"?`},
			check: func(t *testing.T, _ string, r run) { assert.Empty(t, r.stdout, "no help printed as if it answered") }},
		{name: "run basic extra",
			args: func(string) []string { return []string{"run", "basic", "extra"} },
			code: 2, want: []string{`"basic" "extra"`, "at most one positional argument, the database"}, not: []string{"No database named"}},
		{name: "a terminal escape in a property name",
			args: func(string) []string {
				return append([]string{"run", "basic", "-P", "workloada", "-p", "operationcount=10", "-p", "x\x1b[31mred=1"}, quiet...)
			},
			code: 0, want: []string{`x\x1b[31mred`, "nothing reads"}, not: []string{"\x1b"}},
		// A value made impossible by the split among agents, or by other
		// properties, is refused in the terms the user typed: the flag or
		// the property set, never one derived from it.
		{name: "-target 0.002 on 3 agents",
			args: func(string) []string {
				return []string{"coordinator", "run", "basic", "--agents", three, "-P", "workloada", "-target", "0.002"}
			},
			code: 2, want: []string{"flag -target 0.002 (the target property)", "at least 0.003 ops/s with 3 agents"}, not: []string{"0.000666", "unreachable"}},
		{name: "-p target=0.002 on 3 agents",
			args: func(string) []string {
				return []string{"coordinator", "run", "basic", "--agents", three, "-P", "workloada", "-p", "target=0.002"}
			},
			code: 2, want: []string{`property "target"="0.002"`, "at least 0.003 ops/s with 3 agents"}, not: []string{"flag -target", "0.000666", "unreachable"}},
		{name: "coordinator load -p recordcount=2 on 3 agents",
			args: func(string) []string {
				return []string{"coordinator", "load", "basic", "--agents", three, "-P", "workloada", "-p", "recordcount=2"}
			},
			code: 2, want: []string{`property "recordcount"="2"`, "at least one record per agent to load (3 agents)"}, not: []string{"insertcount", "unreachable"}},
		{name: "coordinator load -p recordcount=10 -p insertstart=8 on 3 agents",
			args: func(string) []string {
				return []string{"coordinator", "load", "basic", "--agents", three, "-p", "recordcount=10", "-p", "insertstart=8"}
			},
			code: 2, want: []string{`property "recordcount"="10"`, "at least 11 with insertstart=8 and 3 agents"}, not: []string{"insertcount=", "unreachable"}},
		{name: "load -p recordcount=10 -p insertstart=5000",
			args: func(string) []string {
				return []string{"load", "basic", "-p", "recordcount=10", "-p", "insertstart=5000"}
			},
			code: 2, want: []string{`property "insertstart"="5000"`, "at most recordcount (10)"}, not: []string{"insertcount"}},
		// An untimed load of no records used to run without limit (a
		// count of 0 is the engine's "unlimited").
		{name: "load -p recordcount=10 -p insertstart=10",
			args: func(string) []string {
				return []string{"load", "basic", "-p", "recordcount=10", "-p", "insertstart=10"}
			},
			code: 2, want: []string{`property "insertstart"="10"`, "less than recordcount (10)", "leaves none"}},
		{name: "load -p insertcount larger than what recordcount leaves",
			args: func(string) []string {
				return []string{"load", "basic", "-p", "recordcount=10", "-p", "insertstart=4", "-p", "insertcount=7"}
			},
			code: 2, want: []string{`property "insertcount"="7"`, "at most recordcount - insertstart (10 - 4 = 6)"}},
		{name: "-P workloads/workloada outside the repository",
			args: func(string) []string { return append([]string{"run", "basic", "-P", "workloads/workloada"}, quiet...) },
			code: 0, want: []string{"-P workloads/workloada", "built-in workload workloada"},
			check: func(t *testing.T, _ string, r run) { assert.Contains(t, r.stdout, "[OVERALL], RunTime(ms)") }},
		{name: "the default embedded store is per user and named first",
			args: func(string) []string { return []string{"load", "-P", "workloada", "-p", "recordcount=10"} },
			env:  func(dir string) []string { return []string{"HOME=" + filepath.Join(dir, "home"), "XDG_CACHE_HOME="} },
			code: 0,
			check: func(t *testing.T, dir string, r run) {
				store := filepath.Join(dir, "home", ".cache", "ycsbctl", "embedded")
				first, _, _ := strings.Cut(r.stderr, "\n")
				assert.Contains(t, first, "the embedded store in "+store+" (embedded.dir)", "the first line says where the store is")
				assert.DirExists(t, store)
			}},
		// A flag and a -p of the same property: the later one wins, as in
		// Java YCSB's Client, with one warning line.
		{name: "-threads 2 then -p threadcount=4",
			args: func(dir string) []string {
				return append([]string{"run", "basic", "-P", "workloada", "-threads", "2", "-p", "threadcount=4", "--results", filepath.Join(dir, "r")}, quiet...)
			},
			code: 0, want: []string{"Warning: -threads 2 and -p threadcount=4 set threadcount differently; the later one on the command line wins, as in YCSB: threadcount=4"},
			check: func(t *testing.T, dir string, _ run) {
				assert.Equal(t, "4", runJSONProps(t, filepath.Join(dir, "r"))["threadcount"])
			}},
		{name: "-p target=5000 then -target 20000",
			args: func(dir string) []string {
				return append([]string{"run", "basic", "-P", "workloada", "-p", "target=5000", "-target", "20000", "--results", filepath.Join(dir, "r")}, quiet...)
			},
			code: 0, want: []string{"-p target=5000 and -target 20000 set target differently", "target=20000"},
			check: func(t *testing.T, dir string, _ run) {
				assert.Equal(t, "20000", runJSONProps(t, filepath.Join(dir, "r"))["target"])
			}},
		{name: "--results a then -p ycsbctl.results=b",
			args: func(dir string) []string {
				return append([]string{"run", "basic", "-P", "workloada", "--results", filepath.Join(dir, "a"), "-p", "ycsbctl.results=" + filepath.Join(dir, "b")}, quiet...)
			},
			code: 0, want: []string{"set ycsbctl.results differently", "ycsbctl.results="},
			check: func(t *testing.T, dir string, _ run) {
				assert.FileExists(t, filepath.Join(dir, "b", "run.json"))
				assert.NoDirExists(t, filepath.Join(dir, "a"))
			}},
		{name: "--interval 2s then -p status.interval=3",
			args: func(string) []string {
				return []string{"coordinator", "run", "basic", "--agents", "127.0.0.1:1", "-P", "workloada", "--interval", "2s", "-p", "status.interval=3"}
			},
			code: 1, want: []string{"Warning: --interval 2s and -p status.interval=3 set status.interval differently", "status.interval=3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var env []string
			if tc.env != nil {
				env = tc.env(dir)
			}
			r := limitedRun(t, dir, env, tc.args(dir)...)
			require.Equal(t, tc.code, r.code, "exit code; stderr:\n%s", r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, r.stderr, n)
			}
			if tc.code == 2 {
				assert.Equal(t, 1, strings.Count(r.stderr, "Error: "), "one message: %s", r.stderr)
				assert.NotContains(t, r.stderr, "Starting test", "refused before any load")
				assert.NotContains(t, r.stdout, "[OVERALL]")
			}
			if tc.check != nil {
				tc.check(t, dir, r)
			}
		})
	}
}

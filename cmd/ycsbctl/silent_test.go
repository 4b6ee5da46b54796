package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listTree lists every path under dir, for a before/after comparison.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	}))
	sort.Strings(out)
	return out
}

// TestEmptyLocationIsRefused runs the real binary with a results directory
// or an output file given as empty, as `--results "$DIR"` with DIR unset
// gives: each is refused (exit 2, naming the flag or property) before
// anything runs or is written, where `--results ""` used to run and write
// no bundle, and `report -o ""` the default file. Left out, they keep
// their defaults (the last rows).
func TestEmptyLocationIsRefused(t *testing.T) {
	binary(t)
	quiet := []string{"-P", "workloada", "-p", "basicdb.verbose=false", "-p", "recordcount=10", "-p", "operationcount=10"}
	suite := "name: s\ndbs: [basic]\nproperties:\n  basicdb.verbose: false\n  recordcount: 10\n  operationcount: 10\nsteps:\n  - workload: workloada\n"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"run --results", append([]string{"run", "basic", "--results", ""}, quiet...), "flag --results ''"},
		{"load --results", append([]string{"load", "basic", "--results", ""}, quiet...), "flag --results ''"},
		{"run --results=", append([]string{"run", "basic", "--results="}, quiet...), "flag --results ''"},
		{"a later empty --results wins", append([]string{"run", "basic", "--results", "r", "--results", ""}, quiet...), "flag --results ''"},
		{"-p ycsbctl.results=", append([]string{"run", "basic", "-p", "ycsbctl.results="}, quiet...), `property "ycsbctl.results"`},
		{"-p ycsbctl.results= after --results", append([]string{"run", "basic", "--results", "r", "-p", "ycsbctl.results="}, quiet...), `ycsbctl.results`},
		{"coordinator run --results", append([]string{"coordinator", "run", "basic", "--agents", "127.0.0.1:1", "--results", ""}, quiet...), "flag --results ''"},
		{"capacity --results", append([]string{"capacity", "basic", "--slo", "READ.p99<=10ms", "--probe", "1s", "--warmup", "0s", "--max-probes", "1", "--results", ""}, quiet...), "flag --results ''"},
		{"suite --results", []string{"suite", "s.yaml", "--results", ""}, "flag --results ''"},
		{"report -o", []string{"report", "b", "-o", ""}, "flag -o/--output ''"},
		{"report --output=", []string{"report", "b", "--output="}, "flag -o/--output ''"},
		{"compare -o", []string{"compare", "b", "b", "-o", ""}, "flag -o/--output ''"},
		// Empty security flags served or connected without the token or
		// TLS they name, silently.
		{"agent --token", []string{"agent", "--listen", "127.0.0.1:0", "--token", ""}, "flag --token ''"},
		{"agent --token-file", []string{"agent", "--listen", "127.0.0.1:0", "--token-file="}, "flag --token-file ''"},
		{"agent --tls-cert", []string{"agent", "--listen", "127.0.0.1:0", "--tls-cert", "", "--tls-key", "", "--tls-ca", ""}, "TLS would be off"},
		{"agent --listen", []string{"agent", "--listen", ""}, "flag --listen ''"},
		{"coordinator --token", append([]string{"coordinator", "run", "basic", "--agents", "127.0.0.1:1", "--token", ""}, quiet...), "flag --token ''"},
		{"coordinator --agents", append([]string{"coordinator", "run", "basic", "--agents", ""}, quiet...), "flag --agents ''"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(suite), 0o644))
			made := limitedRun(t, dir, nil, append([]string{"run", "basic", "--results", "b"}, quiet...)...)
			require.Equal(t, 0, made.code, made.stderr)
			before := listTree(t, dir)
			r := limitedRun(t, dir, nil, c.args...)
			assert.Equal(t, 2, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, c.want)
			assert.Contains(t, r.stderr, "expected a")
			assert.Equal(t, 1, strings.Count(r.stderr, "Error: "), r.stderr)
			assert.NotContains(t, r.stdout, "[OVERALL]", "nothing ran")
			assert.Equal(t, before, listTree(t, dir), "nothing was written")
		})
	}
	t.Run("left out, the defaults hold", func(t *testing.T) {
		dir := t.TempDir()
		r := limitedRun(t, dir, nil, append([]string{"run", "basic", "--results", "b"}, quiet...)...)
		require.Equal(t, 0, r.code, r.stderr)
		r = limitedRun(t, dir, nil, "report", "b")
		require.Equal(t, 0, r.code, r.stderr)
		assert.FileExists(t, filepath.Join(dir, "b", "report.html"))
		r = limitedRun(t, dir, nil, append([]string{"run", "basic"}, quiet...)...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "[OVERALL]")
	})
}

// keyLine finds the key of each INSERT basicdb.verbose prints.
var keyLine = regexp.MustCompile(`(?m)^INSERT usertable (\S+) `)

// TestValuesYCSBReadsAsAnotherAreWarned runs the real binary with each
// insertorder YCSB does not refuse but silently reads as ordered (any value
// but exactly hashed): the load and the run warn on stderr, naming the
// value, what YCSB does and what to set, and the keys are YCSB's ordered
// ones (user0, user1, ...), as Java YCSB's would be (the integration test
// TestJavaYCSBInterop compares them with Java YCSB's own). insertorder=random
// used to be ordered without a word. The known values and an unset one
// warn nothing; the properties whose text the parse cannot judge (db,
// ycsbctl.metrics.addr) are refused when they name nothing.
func TestValuesYCSBReadsAsAnotherAreWarned(t *testing.T) {
	binary(t)
	hashed0 := "user6284781860667377211" // key 0, hashed (FNV-1a 64)
	for _, c := range []struct {
		name  string
		set   []string
		warn  string // "": no warning
		first string // the first key loaded
	}{
		{name: "unset", first: hashed0},
		{name: "hashed", set: []string{"-p", "insertorder=hashed"}, first: hashed0},
		{name: "ordered", set: []string{"-p", "insertorder=ordered"}, first: "user0"},
		{name: "random", set: []string{"-p", "insertorder=random"}, warn: "Warning: insertorder=random is not one of hashed, ordered", first: "user0"},
		{name: "Hashed", set: []string{"-p", "insertorder=Hashed"}, warn: "Warning: insertorder=Hashed is not one of hashed, ordered", first: "user0"},
		{name: "trailing-blank", set: []string{"-p", "insertorder=hashed "}, warn: `Warning: insertorder="hashed " is not one of hashed, ordered`, first: "user0"},
		{name: "empty", set: []string{"-p", "insertorder="}, warn: `Warning: insertorder="" is not one of hashed, ordered`, first: "user0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			common := append([]string{"basic", "-P", "workloada", "-p", "recordcount=3", "-p", "operationcount=5"}, c.set...)
			load := limitedRun(t, dir, nil, append(append([]string{"load"}, common...), "-p", "basicdb.verbose=true")...)
			require.Equal(t, 0, load.code, load.stderr)
			var keys []string
			for _, m := range keyLine.FindAllStringSubmatch(load.stdout, -1) {
				keys = append(keys, m[1])
			}
			require.Len(t, keys, 3, load.stdout)
			assert.Equal(t, c.first, keys[0])
			if c.first == "user0" {
				assert.Equal(t, []string{"user0", "user1", "user2"}, keys, "YCSB's ordered keys")
			}
			run := limitedRun(t, dir, nil, append(append([]string{"run"}, common...), "-p", "basicdb.verbose=false")...)
			require.Equal(t, 0, run.code, run.stderr)
			for _, r := range []struct {
				phase, stderr string
			}{{"load", load.stderr}, {"run", run.stderr}} {
				if c.warn == "" {
					assert.NotContains(t, r.stderr, "Warning: insertorder", r.phase)
					continue
				}
				assert.Equal(t, 1, strings.Count(r.stderr, c.warn), "%s warns once:\n%s", r.phase, r.stderr)
				assert.Contains(t, r.stderr, "in YCSB any value but hashed (compared case-sensitively) means ordered", r.phase)
				assert.Contains(t, r.stderr, "set insertorder=ordered to say so, or insertorder=hashed", r.phase)
			}
		})
	}
	for _, c := range []struct {
		prop, want string
	}{
		{"db=zz-no-such-value", "zz-no-such-value"},
		{"ycsbctl.metrics.addr=zz-no-such-value", "zz-no-such-value"},
	} {
		t.Run(c.prop, func(t *testing.T) {
			r := limitedRun(t, t.TempDir(), nil, "run", "-P", "workloada", "-p", "operationcount=5", "-p", c.prop)
			assert.Equal(t, 2, r.code, r.stderr)
			assert.Contains(t, r.stderr, c.want)
			assert.NotContains(t, r.stdout, "[OVERALL]")
		})
	}
}

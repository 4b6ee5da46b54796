package main_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// suiteRecord is what a test reads of suite.json: the suite's outcome and
// each step's.
type suiteRecord struct {
	Status     string `json:"status"`
	ExitCode   *int   `json:"exit_code"`
	ExitReason string `json:"exit_reason"`
	Steps      []struct {
		Dir      string `json:"dir"`
		Status   string `json:"status"`
		ExitCode *int   `json:"exit_code"`
	} `json:"steps"`
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err, path)
	return rows
}

func readSuite(t *testing.T, dir string) suiteRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "suite.json"))
	require.NoError(t, err, "suite.json")
	var s suiteRecord
	require.NoError(t, json.Unmarshal(b, &s))
	return s
}

// writeSuite writes a suite file into dir.
func writeSuite(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// longStep is a suite of one long timed step on basic that prints a
// status line every 0.2 s; delay is basicdb.simulatedelay (ms).
func longStep(delay string) string {
	return `name: long
databases: [basic]
properties:
  basicdb.verbose: false
  basicdb.simulatedelay: ` + delay + `
  basicdb.randomizedelay: false
  status: true
  status.interval: 0.2
  recordcount: 10
steps:
  - run: workloada
    duration: 120s
`
}

// TestSuiteSignalsFollowTheExitCodeTable: one SIGTERM stops a suite as it
// stops a run (exit 6, stopped), two abort it (exit 4); the process, the
// suite's record and the step's bundle say the same. (A single SIGTERM
// used to exit 4 "aborted" while the step's bundle said stopped/6.)
func TestSuiteSignalsFollowTheExitCodeTable(t *testing.T) {
	cases := []struct {
		name    string
		signals int
		// delay keeps calls in flight long enough for the second
		// signal to find the graceful stop still waiting.
		delay      string
		code       int
		suite, run string
	}{
		{"one SIGTERM stops", 1, "1", 6, "stopped", "stopped"},
		{"two SIGTERMs abort", 2, "3000", 4, "aborted", "aborted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			file := writeSuite(t, work, "long.yaml", longStep(c.delay))
			res := filepath.Join(work, "res")
			p := startProc(t, work, "suite", file, "--results", res)
			p.waitLines(t, `sec: \d+ operations`, 1, 60*time.Second)
			p.signal(syscall.SIGTERM)
			if c.signals == 2 {
				p.waitLines(t, `interrupted: ending the current step`, 1, 30*time.Second)
				p.signal(syscall.SIGTERM)
			}
			code := p.wait(t, 60*time.Second)
			assert.Equal(t, c.code, code, "exit code\n%s", p.stderr())
			st := readSuite(t, res)
			assert.Equal(t, c.suite, st.Status, "suite.json status")
			require.NotNil(t, st.ExitCode, "suite.json exit_code")
			assert.Equal(t, code, *st.ExitCode, "suite.json exit_code is the process's")
			require.Len(t, st.Steps, 1)
			require.NotNil(t, st.Steps[0].ExitCode)
			assert.Equal(t, c.code, *st.Steps[0].ExitCode, "the step's exit code in suite.json")
			r := readRun(t, filepath.Join(res, st.Steps[0].Dir))
			assert.Equal(t, c.run, string(r.Status), "the step's run.json status")
			assert.Equal(t, c.code, r.ExitCode, "the step's run.json exit code")
			// The workbook's rows (summary.csv has the Overall sheet's)
			// and the comparison page say the same.
			rows := readCSV(t, filepath.Join(res, "summary.csv"))
			require.Len(t, rows, 2, "a header and the step's row")
			assert.Equal(t, c.run, rows[1][slices.Index(rows[0], "Status")], "summary.csv")
			page, err := os.ReadFile(filepath.Join(res, "compare.html"))
			require.NoError(t, err)
			assert.Contains(t, string(page), fmt.Sprintf("The suite %s: exit %d", c.suite, c.code), "compare.html")
		})
	}
}

// shortSuite is a suite of one one-second step on basic.
func shortSuite(name, step string) string {
	return "name: " + name + `
databases: [basic]
properties: {basicdb.verbose: false, recordcount: 10}
steps:
  - run: workloada
    name: ` + step + `
    duration: 1s
`
}

// snapshot reads every file under dir, by relative path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(b)
		return err
	}))
	return out
}

// TestSuiteResumeRefusesAnotherSuite: --resume continues the suite in its
// results directory and nothing else. Another suite's file (another name,
// or the same name planning other steps) is refused with exit 2 naming
// what is there and what was asked, and the directory is left as it was;
// a directory without a suite is "nothing to resume". (Suite B used to run
// in A's directory and replace its suite.json, suite.yaml and workbook,
// exit 0; --resume into a missing directory silently started afresh.)
func TestSuiteResumeRefusesAnotherSuite(t *testing.T) {
	work := t.TempDir()
	a := writeSuite(t, work, "a.yaml", shortSuite("a", "first"))
	resA := filepath.Join(work, "A")
	r := ycsbctl(t, "suite", a, "--results", resA)
	require.Equal(t, 0, r.code, r.stderr)
	before := snapshot(t, resA)
	require.Contains(t, before, "suite.json")
	require.Contains(t, before, "summary.xlsx")

	cases := []struct {
		name, file string
		want       []string
	}{
		{"another name", writeSuite(t, work, "b.yaml", shortSuite("b", "first")),
			[]string{`holds the results of suite "a"`, `not those of suite "b"`, "b.yaml"}},
		{"the same name, other steps", writeSuite(t, work, "a2.yaml", shortSuite("a", "second")),
			[]string{`suite "a"`, "basic/01-first (passed)", "a2.yaml", "does not plan"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ycsbctl(t, "suite", c.file, "--resume", "--results", resA)
			require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, w := range c.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.Equal(t, before, snapshot(t, resA), "the directory of suite a changed")
		})
	}
	// The suite that is there resumes (nothing left to run).
	r = ycsbctl(t, "suite", a, "--resume", "--results", resA)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "already complete, skipped")

	for _, c := range []struct{ name, dir, why string }{
		{"missing directory", filepath.Join(work, "missing"), "the directory does not exist"},
		{"directory without a suite", t.TempDir(), "the directory holds no suite"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range [][]string{{"suite", a}, {"suite"}} {
				r := ycsbctl(t, append(args, "--resume", "--results", c.dir)...)
				require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
				assert.Contains(t, r.stderr, "nothing to resume: "+c.why)
				assert.Contains(t, r.stderr, "drop --resume")
				entries, _ := os.ReadDir(c.dir)
				assert.Empty(t, entries, "%v wrote into %s", args, c.dir)
			}
		})
	}
}

// TestSuiteRefusesBeforeTheFirstStep: what a step would refuse when the
// suite reached it, the suite refuses before its first step, in its dry
// run and in a real run alike: exit 2 naming the step, the property and
// the value, and nothing written (no bundle, no suite.json). The dry run
// used to pass these, and the real run refused the second step after the
// first had run; a sweep over a property nothing reads ran identical
// steps.
func TestSuiteRefusesBeforeTheFirstStep(t *testing.T) {
	const head = "name: bad\ndatabases: [basic]\nproperties: {basicdb.verbose: false, recordcount: 10}\nsteps:\n  - run: workloada\n    duration: 1s\n"
	second := func(extra string) string {
		return head + "  - run: workloadc\n    name: second\n    duration: 1s\n" + extra
	}
	cases := []struct {
		name, file string
		args       []string
		want       []string
	}{
		{"an integer property given a fraction", second("    properties: {basicdb.simulatedelay: 1.5}\n"), nil,
			[]string{"line 10", "step second of basic", `"basicdb.simulatedelay"="1.5"`, "integer"}},
		{"a boolean property given a word", second("    properties: {basicdb.randomizedelay: nope}\n"), nil,
			[]string{"step second of basic", `"basicdb.randomizedelay"="nope"`, "true or false"}},
		{"values the adapter refuses together", second("    properties: {basicdb.slots: 4}\n"), nil,
			[]string{"step second of basic", `"basicdb.slots"="4"`, "basicdb.simulatedelay"}},
		{"a swept value", second("    sweep: {basicdb.simulatedelay: [0, 2, x]}\n"), nil,
			[]string{"line 10", `key "basicdb.simulatedelay"`, `"basicdb.simulatedelay"="x"`}},
		{"a sweep over a property nothing reads", second("    sweep: {readproportin: [0.1, 0.9]}\n"), nil,
			[]string{"line 10", "readproportin", "did you mean readproportion?", "2 identical runs"}},
		{"a step setting a property nothing reads", second("    properties: {readproportin: 0.9}\n"), nil,
			[]string{"line 10", `key "properties.readproportin"`, "did you mean readproportion?"}},
		{"another adapter's property given to one database", second("    per_database:\n      basic: {embedded.cachemb: 64}\n"), nil,
			[]string{`key "per_database.basic.embedded.cachemb"`, "read by the embedded adapter, not by basic"}},
		{"a schema option of a server's adapter", "name: bad\ndatabases:\n  - db: hbase\n    properties: {hbase.zookeeper.quorum: '127.0.0.1:1', columnfamily: f}\nsteps:\n  - load: workloada\n    properties: {hbase.compression: nope}\n", nil,
			[]string{"line 7", "step load-workloada of hbase", `"hbase.compression"="nope"`, "NONE, GZ"}},
		{"duplicate agents", head, []string{"--agents", "127.0.0.1:1,127.0.0.1:1"},
			[]string{"step 01-run-workloada of basic", "duplicate agent", "127.0.0.1:1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			file := writeSuite(t, work, "bad.yaml", c.file)
			res := filepath.Join(work, "res")
			var errs []string
			for _, mode := range [][]string{{"--dry-run"}, nil} {
				args := append(append([]string{"suite", file, "--results", res}, c.args...), mode...)
				r := ycsbctl(t, args...)
				require.Equal(t, 2, r.code, "%v\nstdout:\n%s\nstderr:\n%s", mode, r.stdout, r.stderr)
				for _, w := range c.want {
					assert.Contains(t, r.stderr, w, "%v", mode)
				}
				assert.NoDirExists(t, res, "%v: refused, yet it wrote results", mode)
				errs = append(errs, r.stderr)
			}
			assert.Equal(t, errs[0], errs[1], "the real run refuses as its dry run does")
		})
	}
}

// TestSuiteExitCodeIsItsRecord is the class of #18: on every path a suite
// can end by, the process's exit code is the one suite.json records for
// the suite, with the status that goes with it, and the last step's own
// record agrees; a suite refused before its first step (2) writes no
// suite.json at all.
func TestSuiteExitCodeIsItsRecord(t *testing.T) {
	type env struct {
		work, res string
		agents    []*agentProcess
	}
	cases := []struct {
		name   string
		file   func(e *env) string
		args   func(e *env) []string
		agents int
		// drive acts on the running suite (nil: let it end).
		drive        func(t *testing.T, e *env, p *proc)
		code         int
		status, step string
	}{
		{name: "every step passes", file: func(*env) string { return shortSuite("ok", "only") }, code: 0, status: "complete", step: "passed"},
		{name: "a step's database errors", code: 5, status: "failed", step: "failed", file: func(e *env) string {
			return "name: errors\ndatabases:\n  - db: embedded\n    properties: {embedded.dir: " + filepath.Join(e.work, "empty") +
				"}\nproperties: {recordcount: 10, ycsbctl.maxerrorrate: 0}\nsteps:\n  - run: workloadc\n    operations: 100\n"
		}},
		{name: "a step refused", code: 2, file: func(*env) string { return shortSuite("bad", "only") + "    properties: {basicdb.slots: x}\n" }},
		{name: "stopped", code: 6, status: "stopped", step: "incomplete", file: func(*env) string { return longStep("1") },
			drive: func(t *testing.T, _ *env, p *proc) {
				p.waitLines(t, `sec: \d+ operations`, 1, 60*time.Second)
				p.signal(syscall.SIGINT)
			}},
		{name: "aborted", code: 4, status: "aborted", step: "incomplete", file: func(*env) string { return longStep("3000") },
			drive: func(t *testing.T, _ *env, p *proc) {
				p.waitLines(t, `sec: \d+ operations`, 1, 60*time.Second)
				p.signal(syscall.SIGINT)
				p.waitLines(t, `interrupted: ending the current step`, 1, 30*time.Second)
				p.signal(syscall.SIGINT)
			}},
		{name: "an agent lost", code: 3, status: "failed", step: "failed", agents: 2, file: func(*env) string { return longStep("1") },
			args: func(e *env) []string {
				return []string{"--agents", e.agents[0].addr + "," + e.agents[1].addr, "--agent-timeout", "2s"}
			},
			drive: func(t *testing.T, e *env, p *proc) {
				p.waitLines(t, `sec: \d+ operations`, 1, 60*time.Second)
				require.NoError(t, e.agents[1].cmd.Process.Kill())
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &env{work: t.TempDir()}
			e.res = filepath.Join(e.work, "res")
			for i := 0; i < c.agents; i++ {
				e.agents = append(e.agents, startAgent(t))
			}
			args := []string{"suite", writeSuite(t, e.work, "s.yaml", c.file(e)), "--results", e.res}
			if c.args != nil {
				args = append(args, c.args(e)...)
			}
			p := startProc(t, e.work, args...)
			if c.drive != nil {
				c.drive(t, e, p)
			}
			code := p.wait(t, 120*time.Second)
			require.Equal(t, c.code, code, "exit code\n%s", p.stderr())
			if code == 2 {
				assert.NoFileExists(t, filepath.Join(e.res, "suite.json"), "refused before the first step")
				return
			}
			st := readSuite(t, e.res)
			require.NotNil(t, st.ExitCode, "suite.json has the suite's exit code")
			assert.Equal(t, code, *st.ExitCode, "suite.json's exit code is the process's")
			assert.Equal(t, c.status, st.Status)
			require.NotEmpty(t, st.Steps)
			last := st.Steps[len(st.Steps)-1]
			assert.Equal(t, c.step, last.Status)
			require.NotNil(t, last.ExitCode)
			assert.Equal(t, code, *last.ExitCode, "the step's exit code in suite.json")
			assert.Equal(t, code, readRun(t, filepath.Join(e.res, last.Dir)).ExitCode, "the step's run.json")
		})
	}
}

// TestKilledSuiteIsMarked: a suite killed outright leaves suite.json
// saying running; the next owner of its directory (suite report here,
// --resume likewise) marks it aborted with its exit code unknown, and the
// step it was running incomplete, as a killed run's bundle and a killed
// capacity search's record are marked. (It used to say running forever.)
func TestKilledSuiteIsMarked(t *testing.T) {
	work := t.TempDir()
	file := writeSuite(t, work, "long.yaml", longStep("1"))
	res := filepath.Join(work, "res")
	p := startProc(t, work, "suite", file, "--results", res)
	p.waitLines(t, `sec: \d+ operations`, 1, 60*time.Second)
	require.Equal(t, "running", readSuite(t, res).Status, "suite.json while the suite runs")
	p.signal(syscall.SIGKILL)
	p.wait(t, 60*time.Second)

	r := ycsbctl(t, "suite", "report", res)
	assert.Contains(t, r.stderr, "said the suite was running, but its process ended without finishing it", "suite report says what it marked\n%s", r.stderr)
	st := readSuite(t, res)
	assert.Equal(t, "aborted", st.Status, "suite.json status")
	require.NotNil(t, st.ExitCode, "suite.json exit_code")
	assert.Equal(t, -1, *st.ExitCode, "exit code unknown")
	assert.Contains(t, st.ExitReason, "killed or crashed")
	require.NotEmpty(t, st.Steps)
	assert.Equal(t, "incomplete", st.Steps[0].Status, "the step it was running")

	// A second owner finds nothing to mark.
	r = ycsbctl(t, "suite", "report", res)
	assert.NotContains(t, r.stderr, "said the suite was running", "marked once\n%s", r.stderr)
}

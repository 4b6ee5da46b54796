package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
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
		})
	}
}

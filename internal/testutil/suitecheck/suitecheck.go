// Package suitecheck holds what the two distributed-suite tests share: the
// loopback one (integration/suite_dist_test.go: three agents on 127.0.0.1,
// BasicDB) and the cluster one (integration/cluster: four agents deployed by
// the playbook, Cassandra and HBase). One body, two environments, as etcd
// tests do: the scaled comparison2014, the wait for a step that measures,
// the interruption's account, and the checks of every bundle, the workbook
// (read back with openpyxl, another implementation than the writer) and
// compare.html (in headless Chromium).
package suitecheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/environ"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// Database is one entry of the suite's databases: an adapter and the
// properties only it gets.
type Database struct {
	DB         string
	Properties map[string]string
	// Product is what the adapter reads from the server as its product
	// ("Apache Cassandra"); Roles how many nodes of each role the
	// description lists ({"node": 3}); nil checks no topology.
	Product string
	Roles   map[string]int
}

// Scale is comparison2014 at test size: the same steps and per-step
// settings, with fewer records, threads and seconds, a pause after the
// loads, status lines (the interruption waits for them) and warm-ups.
type Scale struct {
	Databases []Database
	Records   int64
	// Threads per agent: the single-record load, the bulk load, every
	// scenario.
	LoadThreads, BulkThreads, RunThreads int
	// Duration "" leaves the scenarios' end to RunProperties.
	Warmup, Duration, Pause string
	StatusInterval          string
	// Properties are added to the suite's own; RunProperties to every
	// scenario's (not the loads'): operationcount, target.
	Properties, RunProperties map[string]string
}

// MeasuredSteps are the scaled suite's measured steps of one database, in
// order (03 is the pause).
var MeasuredSteps = []string{"01-load", "02-bulkload", "04-read", "05-readmostly", "06-updateheavy", "07-readmodifywrite", "08-readlatest", "09-scan", "10-insertread"}

// Comparison2014 returns the built-in comparison2014 rewritten to s. It
// fails when the built-in suite no longer has what it rewrites.
func Comparison2014(t testing.TB, s Scale) string {
	t.Helper()
	st, ok := workloads.LookupSuite("comparison2014")
	require.True(t, ok)
	text := st.Text
	props := fmt.Sprintf("recordcount: %d\n  status: true\n", s.Records)
	for _, k := range sortedKeys(s.Properties) {
		props += fmt.Sprintf("  %s: %q\n", k, s.Properties[k])
	}
	var dbs strings.Builder
	for _, d := range s.Databases {
		fmt.Fprintf(&dbs, "  - db: %s\n", d.DB)
		if len(d.Properties) > 0 {
			dbs.WriteString("    properties:\n")
			for _, k := range sortedKeys(d.Properties) {
				fmt.Fprintf(&dbs, "      %s: %q\n", k, d.Properties[k])
			}
		}
	}
	// A duration makes a scenario timed (operationcount 0): without one,
	// RunProperties' operationcount ends it.
	duration := ""
	if s.Duration != "" {
		duration = "duration: " + s.Duration + "\n"
	}
	if len(s.RunProperties) > 0 {
		var kv []string
		for _, k := range sortedKeys(s.RunProperties) {
			kv = append(kv, fmt.Sprintf("%s: %q", k, s.RunProperties[k]))
		}
		if duration != "" {
			duration += "    "
		}
		duration += "properties: {" + strings.Join(kv, ", ") + "}\n"
	}
	for _, r := range [][2]string{
		{"recordcount: 100000\n", props},
		{"status.interval: 10\n", "status.interval: " + s.StatusInterval + "\n"},
		{"  - db: embedded\n", dbs.String()},
		{"threads: 24\n", fmt.Sprintf("threads: %d\n", s.LoadThreads)},
		{"threads: 8\n", fmt.Sprintf("threads: %d\n", s.BulkThreads)},
		{"threads: 36\n", fmt.Sprintf("threads: %d\n", s.RunThreads)},
		{"warmup: 30s\n", "warmup: " + s.Warmup + "\n"},
		{"duration: 5m\n", duration},
		{"  - run: comparison2014-read\n", "  - pause: " + s.Pause + "\n  - run: comparison2014-read\n"},
	} {
		require.Contains(t, text, r[0], "the built-in suite changed: update the scaling")
		text = strings.ReplaceAll(text, r[0], r[1])
	}
	return text
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var statusLine = regexp.MustCompile(`(?m) sec: \d+ operations;`)

// StepLog is the log the suite writes for db's step (the newest, should a
// resume have written another).
func StepLog(results, db, step string) string {
	logs, _ := filepath.Glob(filepath.Join(results, "logs", "*-"+db+"-"+step+".log"))
	if len(logs) == 0 {
		return ""
	}
	sort.Strings(logs)
	b, _ := os.ReadFile(logs[len(logs)-1])
	return string(b)
}

// WaitMeasuring waits until db's step measures (its log shows two status
// lines), following the suite's progress up to bound; ended reports that
// the suite process ended, diag what to print on failure.
func WaitMeasuring(t testing.TB, results, db, step string, bound time.Duration, ended func() bool, diag func() string) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for len(statusLine.FindAllString(StepLog(results, db, step), -1)) < 2 {
		if ended() {
			t.Fatalf("the suite ended before %s/%s measured:\n%s", db, step, diag())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s never measured within %s; its log:\n%s\n%s", db, step, bound, StepLog(results, db, step), diag())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Interrupted is the account of a suite killed during one step: the run
// ids of the measured steps that were complete, by directory.
type Interrupted struct {
	Results     string
	Step        string            // "db/NN-name", the step it was killed in
	Complete    map[string]string // dir -> run id
	logsAtKill  int
	measuredAll int
}

// ReadInterrupted reads suite.json after the kill during step ("db/NN-name"):
// no pending step has an exit code, and exactly the measured steps planned
// before step are complete.
func ReadInterrupted(t testing.TB, results, step string) *Interrupted {
	t.Helper()
	st, err := suite.ReadState(results)
	require.NoError(t, err)
	in := &Interrupted{Results: results, Step: step, Complete: map[string]string{}}
	var want []string
	reached := false
	for _, s := range st.Steps {
		if code, ok := s.Exit(); s.Status == suite.StatusPending {
			assert.False(t, ok, "pending %s recorded with exit code %d", s.Dir, code)
		}
		if !s.Measured() {
			continue
		}
		in.measuredAll++
		if s.Dir == step {
			reached = true
		}
		if !reached {
			want = append(want, s.Dir)
		}
		if s.Status == suite.StatusPassed {
			b, err := bundle.Read(filepath.Join(results, s.Dir))
			require.NoError(t, err, s.Dir)
			in.Complete[s.Dir] = b.Run.RunID
		}
	}
	require.True(t, reached, "%s is not a measured step of the plan", step)
	var got []string
	for d := range in.Complete {
		got = append(got, d)
	}
	assert.ElementsMatch(t, want, got, "complete when the coordinator died: the steps before %s", step)
	logs, _ := os.ReadDir(filepath.Join(results, "logs"))
	in.logsAtKill = len(logs)
	return in
}

// LogCount is how many step logs the results hold.
func LogCount(results string) int {
	logs, _ := os.ReadDir(filepath.Join(results, "logs"))
	return len(logs)
}

// CheckResumed checks a completed --resume (stderr is its output): every
// step complete at the kill was skipped, not run again (same run id, no new
// log); the interrupted step and those never reached ran once each; a pause
// before a complete step was not repeated.
func (in *Interrupted) CheckResumed(t testing.TB, stderr string) {
	t.Helper()
	assert.Equal(t, len(in.Complete), strings.Count(stderr, "already complete, skipped"), stderr)
	for d, id := range in.Complete {
		b, err := bundle.Read(filepath.Join(in.Results, d))
		require.NoError(t, err)
		assert.Equal(t, id, b.Run.RunID, "%s ran again", d)
	}
	assert.Equal(t, in.logsAtKill+in.measuredAll-len(in.Complete), LogCount(in.Results),
		"resumed: %s again, then the steps never reached, nothing else", in.Step)
	st, err := suite.ReadState(in.Results)
	require.NoError(t, err)
	for i, s := range st.Steps {
		switch {
		case s.Kind == suite.KindPause:
			next := ""
			if i+1 < len(st.Steps) {
				next = st.Steps[i+1].Dir
			}
			want := suite.StatusPassed
			if in.Complete[next] != "" {
				want = suite.StatusSkipped
			}
			assert.Equal(t, want, s.Status, "pause before %s", next)
		case in.Complete[s.Dir] != "":
			assert.Equal(t, suite.StatusResumed, s.Status, s.Dir)
		default:
			assert.Equal(t, suite.StatusPassed, s.Status, s.Dir)
		}
	}
}

// Expect is what every step's bundle must show.
type Expect struct {
	Agents []string // addresses, in order
	// Hostname is agent i's host name as it reports it.
	Hostname func(i int) string
	Records  int64
	// RunOps is each scenario's operationcount, exact; 0 for time-bound
	// scenarios (then only more than none).
	RunOps                               int64
	LoadThreads, BulkThreads, RunThreads int
}

// CheckBundle checks one step's bundle: complete, every agent over mutual
// TLS with a token, merged counts exact (the agents' own counts and the
// intervals' sum to the summary; the load's and the operationcount's
// plans honoured), the threads per agent, and the environment the agents
// and the adapter recorded.
func CheckBundle(t testing.TB, d Database, step string, r *bundle.Run, x Expect) {
	t.Helper()
	what := d.DB + "/" + step
	assert.True(t, r.Config.TLS, "%s: mutual TLS", what)
	assert.True(t, r.Config.Token, "%s: token", what)
	require.Len(t, r.Agents, len(x.Agents), what)
	for i, a := range r.Agents {
		assert.Equal(t, x.Agents[i], a.Address, what)
	}
	CheckCounts(t, what, r)
	threads := x.RunThreads
	switch step {
	case "01-load", "02-bulkload":
		assert.Equal(t, x.Records, r.Summary.Operations, "%s: every record loaded once", what)
		threads = map[string]int{"01-load": x.LoadThreads, "02-bulkload": x.BulkThreads}[step]
	default:
		if x.RunOps > 0 {
			assert.Equal(t, x.RunOps, r.Summary.Operations, "%s: operationcount honoured", what)
		} else {
			assert.Greater(t, r.Summary.Operations, int64(0), what)
		}
		assert.Greater(t, r.Summary.WarmupOps, int64(0), "%s warmed up", what)
	}
	for i, a := range r.Agents {
		assert.Equal(t, threads, a.Threads, "%s agent %d: threads", what, i)
	}
	e := r.Environment
	require.NotNil(t, e, what)
	require.Len(t, e.Hosts, len(x.Agents), what)
	for i, h := range e.Hosts {
		assert.Equal(t, x.Agents[i], h.Address, what)
		assert.Equal(t, x.Hostname(i), h.Hostname, what)
		assert.Greater(t, h.Cores, 0, what)
		assert.NotZero(t, h.FDLimit, what)
	}
	require.NotNil(t, e.Database, what)
	assert.Equal(t, d.DB, e.Database.Adapter, what)
	assert.Equal(t, x.Agents[0], e.Database.DescribedBy, "%s: agent 0 describes the database", what)
	assert.Contains(t, e.Database.Product, d.Product, what)
	assert.Empty(t, e.Database.Error, what)
	if d.Roles != nil {
		assert.Equal(t, d.Roles, roles(e.Database.Nodes), "%s: the database's nodes as the adapter read them", what)
	}
	require.NotEmpty(t, e.Command, what)
	assert.Equal(t, "suite", e.Command[1], what)
	require.NotNil(t, r.Suite, what)
	assert.Equal(t, "comparison2014", r.Suite.Suite, what)
}

// CheckCounts checks that a step's run is complete and its counts agree
// exactly: each load generator's (an agent's, or the single host's)
// operations as received = its own final count, and the summary = their
// sum = the intervals' sum. what names the step in failures.
func CheckCounts(t testing.TB, what string, r *bundle.Run) {
	t.Helper()
	assert.Equal(t, run.StatusComplete, r.Status, what)
	assert.Equal(t, 0, r.ExitCode, what)
	require.NotEmpty(t, r.Agents, what)
	var agentOps, intervalOps int64
	for i, a := range r.Agents {
		require.NotNil(t, a.Final, "%s agent %d", what, i)
		assert.Equal(t, a.Final.Operations, a.Operations, "%s agent %d: operations received = its own count", what, i)
		agentOps += a.Operations
	}
	for _, iv := range r.Intervals {
		intervalOps += iv.Operations
	}
	assert.Equal(t, r.Summary.Operations, agentOps, "%s: merged operations = the agents' sum", what)
	assert.Equal(t, r.Summary.Operations, intervalOps, "%s: merged operations = the intervals' sum", what)
}

func roles(nodes []environ.Node) map[string]int {
	m := map[string]int{}
	for _, n := range nodes {
		m[n.Role]++
	}
	return m
}

// CheckBundles checks every measured step's bundle of every database.
func CheckBundles(t testing.TB, results string, dbs []Database, x Expect) {
	t.Helper()
	for _, d := range dbs {
		for _, step := range MeasuredSteps {
			b, err := bundle.Read(filepath.Join(results, d.DB, step))
			require.NoError(t, err, d.DB+"/"+step)
			CheckBundle(t, d, step, b.Run, x)
		}
	}
}

// CheckWorkbook reads summary.xlsx back with openpyxl: its sheets, a row
// per step in Overall, operations and several periods per step, and an
// Environment that lists every agent's host and each database's product
// and topology.
func CheckWorkbook(t testing.TB, xlsx string, dbs []Database, agents []string) {
	t.Helper()
	wb := ReadWorkbook(t, xlsx, "Overall", "Operations", "Periods", "Environment")
	assert.Equal(t, []string{"Overall", "Operations", "Periods", "Hosts", "Environment", "Throughput chart"}, wb.Sheets)
	steps := len(dbs) * len(MeasuredSteps)
	require.Len(t, wb.Rows["Overall"], 1+steps)
	var want, got []string
	for _, d := range dbs {
		for _, s := range MeasuredSteps {
			want = append(want, d.DB+"/"+s)
		}
	}
	for _, row := range wb.Rows["Overall"][1:] {
		got = append(got, row[len(row)-1])
	}
	assert.ElementsMatch(t, want, got, "Overall: one row per step")
	assert.Greater(t, len(wb.Rows["Operations"]), steps)
	assert.Greater(t, len(wb.Rows["Periods"]), 2*steps, "several intervals per step")
	hosts := map[string]bool{}
	product := map[string]string{}
	topology := map[string]map[string]int{}
	for _, row := range wb.Rows["Environment"][1:] {
		switch {
		case row[0] == "host" && row[3] == "hostname":
			hosts[row[2]] = true
		case row[0] == "database" && row[3] == "product":
			product[row[1]] = row[4]
		case row[0] == "topology":
			if topology[row[1]] == nil {
				topology[row[1]] = map[string]int{}
			}
			topology[row[1]][row[3]]++
		}
	}
	wantHosts := map[string]bool{}
	for _, a := range agents {
		wantHosts[a] = true
	}
	assert.Equal(t, wantHosts, hosts, "the Environment sheet lists every agent's host")
	for _, d := range dbs {
		assert.Contains(t, product[d.DB], d.Product, "Environment: %s's product", d.DB)
		if d.Roles != nil {
			assert.Equal(t, d.Roles, topology[d.DB], "Environment: %s's topology", d.DB)
		}
	}
}

// Workbook is a workbook as openpyxl reads it: its sheets' names in
// order, and the rows of those asked for, every cell as text ("" for an
// empty one).
type Workbook struct {
	Sheets []string
	Rows   map[string][][]string
}

// ReadWorkbook reads xlsx back with openpyxl, another implementation than
// the writer's, with the rows of the named sheets.
func ReadWorkbook(t testing.TB, xlsx string, sheets ...string) Workbook {
	t.Helper()
	py := tools.Python(t, "openpyxl")
	script := `
import json, sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1])
out = {"sheets": wb.sheetnames, "rows": {}}
for name in sys.argv[2:]:
    out["rows"][name] = [[("" if c is None else str(c)) for c in row] for row in wb[name].iter_rows(values_only=True)]
print(json.dumps(out))
`
	out, err := exec.Command(py, append([]string{"-c", script, xlsx}, sheets...)...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var wb struct {
		Sheets []string              `json:"sheets"`
		Rows   map[string][][]string `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(out, &wb))
	return Workbook{Sheets: wb.Sheets, Rows: wb.Rows}
}

var consoleError = regexp.MustCompile(`(?i)(Uncaught|CONSOLE.*(error|exception)|SyntaxError|ReferenceError|TypeError)`)

// CheckCompare loads compare.html in headless Chromium: no console error,
// and every chart drew (the page's #charts-ready marker), none empty, at
// least minCharts of them.
func CheckCompare(t testing.TB, html string, minCharts int) {
	t.Helper()
	bin := tools.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(),
		"--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom", "file://"+html)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), errb.String())
	for _, line := range strings.Split(errb.String(), "\n") {
		assert.False(t, consoleError.MatchString(line), "console error: %s", line)
	}
	m := regexp.MustCompile(`<div id="charts-ready" data-count="(\d+)" data-total="(\d+)" data-empty="(\d+)">`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "no #charts-ready marker: the page's script did not run")
	assert.Equal(t, m[2], m[1], "charts drawn vs total")
	assert.Equal(t, "0", m[3], "empty charts")
	n, _ := strconv.Atoi(m[2])
	assert.GreaterOrEqual(t, n, minCharts, "charts on the page")
}

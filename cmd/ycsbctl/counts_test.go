package main_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
)

// countScenario is one run of the counts property test.
type countScenario struct {
	agents     int // 0: a single host
	threads    int
	seconds    int // a timed run; 0: operations
	operations int
	warmupOps  int
	warmupTime float64
	target     int
	loseAgent  bool
}

func (s countScenario) String() string {
	mode := "single host"
	if s.agents > 0 {
		mode = fmt.Sprintf("%d agents", s.agents)
	}
	return fmt.Sprintf("%s, %d threads, %ds/%d ops, warm-up %d ops/%gs, target %d, lose an agent %v",
		mode, s.threads, s.seconds, s.operations, s.warmupOps, s.warmupTime, s.target, s.loseAgent)
}

func randomScenario(r *rand.Rand, i int) countScenario {
	s := countScenario{threads: 1 + r.IntN(4)}
	if i%2 == 1 {
		s.agents = 2 + r.IntN(2)
		s.loseAgent = i%4 == 1
	}
	switch r.IntN(3) {
	case 0:
		s.warmupOps = 50 + r.IntN(300)
	case 1:
		s.warmupTime = 0.2 + 0.1*float64(r.IntN(4))
	}
	if r.IntN(3) > 0 {
		s.target = 500 + 100*r.IntN(16)
	}
	if s.loseAgent || r.IntN(2) == 0 {
		// Long enough that an agent is lost mid-run (maxexecutiontime
		// takes whole seconds).
		s.seconds = 2
		if s.target == 0 {
			s.target = 1000
		}
	} else {
		s.operations = 200 + 100*r.IntN(9)
	}
	return s
}

// TestCountsAgreeEverywhere runs random single-host and distributed runs
// (thread counts, durations or budgets, warm-ups, targets, agents killed
// mid-run) and checks on every one that every figure of the run agrees:
// the per-operation counts and return codes of the summary, the run's
// operations ([OVERALL]), each interval and their sum, the agents' own
// accounts, merged.hlog, the workbook's rows and the Prometheus totals of
// /metrics. Interval 1's histograms used to hold one call per thread more
// than its count, and a lost agent's for good (READ 20551 + UPDATE 20793
// = 41344 vs 41340 operations with 4 threads).
//
// YCSBCTL_COUNTS_RUNS sets the number of runs (default 6),
// YCSBCTL_COUNTS_SEED the seed.
func TestCountsAgreeEverywhere(t *testing.T) {
	runs := 6
	if v := os.Getenv("YCSBCTL_COUNTS_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "YCSBCTL_COUNTS_RUNS")
		runs = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("YCSBCTL_COUNTS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "YCSBCTL_COUNTS_SEED")
		seed = n
	}
	t.Logf("YCSBCTL_COUNTS_SEED=%d", seed)
	r := rand.New(rand.NewPCG(seed, 19))
	for i := 0; i < runs; i++ {
		s := randomScenario(r, i)
		t.Run(fmt.Sprintf("%d", i), func(t *testing.T) {
			t.Log(s)
			runCounted(t, s)
		})
	}
}

// runCounted runs one scenario and checks its figures.
func runCounted(t *testing.T, s countScenario) {
	work := t.TempDir()
	dir := filepath.Join(work, "r")
	args := []string{"run", "basic"}
	var agents []*agentProcess
	if s.agents > 0 {
		var addrs []string
		for range s.agents {
			a := startAgent(t)
			agents = append(agents, a)
			addrs = append(addrs, a.addr)
		}
		args = []string{"coordinator", "run", "basic", "--agents", strings.Join(addrs, ","), "--on-agent-loss", "continue", "--agent-timeout", "2s"}
	}
	args = append(args, "-P", "workloada", "-p", "basicdb.verbose=false", "-threads", strconv.Itoa(s.threads), "-p", "status.interval=0.3", "-s",
		"--results", dir, "--metrics-addr", "127.0.0.1:0", "-p", "ycsbctl.metrics.linger=2")
	if s.seconds > 0 {
		args = append(args, "-p", "operationcount=0", "-p", fmt.Sprintf("maxexecutiontime=%d", s.seconds))
	} else {
		args = append(args, "-p", fmt.Sprintf("operationcount=%d", s.operations))
	}
	if s.warmupOps > 0 {
		args = append(args, "-p", fmt.Sprintf("warmupops=%d", s.warmupOps))
	}
	if s.warmupTime > 0 {
		args = append(args, "-p", fmt.Sprintf("warmuptime=%g", s.warmupTime))
	}
	if s.target > 0 {
		args = append(args, "-target", strconv.Itoa(s.target))
	}
	p := startProc(t, work, args...)
	p.waitLines(t, `Prometheus metrics: http://`, 1, 30*time.Second)
	url := regexp.MustCompile(`Prometheus metrics: (http://\S+)`).FindStringSubmatch(p.stderr())[1]
	if s.loseAgent {
		p.waitLines(t, `current ops/sec`, 2, 30*time.Second)
		agents[len(agents)-1].cmd.Process.Signal(syscall.SIGKILL) //nolint:errcheck // it may be gone already
	}
	// /metrics stays up after the bundle is written (linger): scrape it then.
	p.waitLines(t, `^Keeping http://\S+ up for`, 1, 60*time.Second)
	prom := scrape(t, url)
	require.Equal(t, 0, p.wait(t, 30*time.Second), p.stderr())

	run := readRun(t, dir)
	if s.loseAgent {
		assert.Equal(t, "partial", string(run.Status), "%v", run.StatusReasons)
	} else {
		assert.Equal(t, "complete", string(run.Status), "%v", run.StatusReasons)
	}
	ops := run.Summary.Operations
	require.Positive(t, ops)
	if s.operations > 0 && !s.loseAgent {
		assert.Equal(t, int64(s.operations), ops, "the budget")
	}

	// The printed summary: per-operation counts and return codes.
	text := p.stdout()
	calls, returns := summaryCounts(t, text)
	assert.Equal(t, ops, calls, "sum of the per-operation counts vs the run's operations")
	assert.Equal(t, ops, returns, "sum of the return codes vs the run's operations")
	checkBundleCounts(t, run)
	for _, a := range run.Agents {
		if a.Final != nil && a.State != "lost" {
			assert.Equal(t, a.Final.Operations, a.Operations, "agent %d: its own count vs what arrived", a.Index)
		}
	}
	b, err := bundle.Read(dir)
	require.NoError(t, err)
	hs, err := b.Histograms()
	require.NoError(t, err)
	var hlogCalls int64
	for sr, h := range hs.All {
		if sr.Op() != measurement.Cleanup && sr.Kind() == measurement.Service {
			hlogCalls += h.TotalCount()
		}
	}
	assert.Equal(t, ops, hlogCalls, "merged.hlog's calls")
	wb := &workbook.Data{Steps: []*workbook.Step{{Bundle: b}}}
	assert.Equal(t, ops, sumColumn(wb.OperationRows(), workbook.OperationsHeader, "Count", "CLEANUP"), "workbook Operations rows")
	assert.Equal(t, ops, sumColumn(wb.PeriodRows(), workbook.PeriodsHeader, "Operations", ""), "workbook Periods rows")
	assert.Equal(t, ops, prom.transactions, "ycsbctl_transactions_total")
	assert.Equal(t, ops, prom.operations, "ycsbctl_operations_total (calls)")
}

// summaryCounts sums the summary's per-operation counts and return codes,
// CLEANUP aside.
func summaryCounts(t *testing.T, text string) (calls, returns int64) {
	t.Helper()
	for _, m := range regexp.MustCompile(`(?m)^\[([A-Za-z-]+)\], (Operations|Return=\w+), (\d+)$`).FindAllStringSubmatch(text, -1) {
		if m[1] == "CLEANUP" || m[1] == "OVERALL" || strings.HasPrefix(m[1], "Intended-") {
			continue
		}
		n, err := strconv.ParseInt(m[3], 10, 64)
		require.NoError(t, err)
		if m[2] == "Operations" {
			calls += n
		} else {
			returns += n
		}
	}
	return calls, returns
}

// sumColumn sums a column of workbook rows, leaving out rows whose
// operation is skip.
func sumColumn(rows [][]workbook.Cell, header []string, col, skip string) int64 {
	ci, oi := -1, -1
	for i, h := range header {
		switch h {
		case col:
			ci = i
		case "Operation":
			oi = i
		}
	}
	var n int64
	for _, r := range rows {
		if skip != "" && oi >= 0 && strings.HasPrefix(fmt.Sprint(r[oi]), skip) {
			continue
		}
		switch v := r[ci].(type) {
		case int64:
			n += v
		case int:
			n += int64(v)
		case float64:
			n += int64(v)
		}
	}
	return n
}

// promTotals are the run's totals as /metrics shows them, summed over
// agents.
type promTotals struct {
	transactions int64
	operations   int64
}

func scrape(t *testing.T, url string) promTotals {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	var out promTotals
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			break
		}
		for _, m := range mf.Metric {
			v := int64(m.GetCounter().GetValue())
			switch mf.GetName() {
			case "ycsbctl_transactions_total":
				out.transactions += v
			case "ycsbctl_operations_total":
				for _, l := range m.Label {
					if l.GetName() == "op" && l.GetValue() != "CLEANUP" && l.GetValue() != "VERIFY" {
						out.operations += v
					}
				}
			}
		}
	}
	return out
}

package cli_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/cli"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	ycsbrun "github.com/ycsbctl/ycsbctl/internal/run"
)

// lockedBuffer is safe for concurrent writes and reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runCLI runs ycsbctl in-process; terminal says whether stdout counts as
// a terminal (the live view's condition).
func runCLI(t *testing.T, terminal bool, stderr *lockedBuffer, args ...string) (code int, stdout string) {
	t.Helper()
	var out lockedBuffer
	if stderr == nil {
		stderr = &lockedBuffer{}
	}
	gs := &cli.GlobalState{
		Ctx: context.Background(), Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: stderr,
		Getenv: func(string) string { return "" }, Clock: clock.NewReal(), IsTerminal: terminal, ReadFile: os.ReadFile,
		SignalNotify: func(chan<- os.Signal, ...os.Signal) {}, SignalStop: func(chan<- os.Signal) {},
	}
	code = cli.Execute(gs)
	return code, out.String()
}

var quickRun = []string{"run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "basicdb.simulatedelay=1",
	"-p", "operationcount=3000", "-p", "status.interval=0.2", "-threads", "4"}

func TestResultsBundleReportCompare(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, dir := range []string{a, b} {
		var stderr lockedBuffer
		code, stdout := runCLI(t, false, &stderr, append(quickRun, "--results", dir)...)
		if code != 0 {
			t.Fatalf("run: exit %d\n%s", code, stderr.String())
		}
		for _, f := range []string{bundle.FileRunJSON, bundle.FileSummary, bundle.FileHlog} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Fatalf("bundle lacks %s", f)
			}
		}
		summary, err := os.ReadFile(filepath.Join(dir, bundle.FileSummary))
		if err != nil {
			t.Fatal(err)
		}
		// summary.txt is, line for line, the summary the run printed
		// (stdout carries nothing else when it is not a terminal).
		requireSameLines(t, stdout, string(summary), "printed summary", "summary.txt")
	}
	var run bundle.Run
	raw, _ := os.ReadFile(filepath.Join(a, bundle.FileRunJSON))
	if err := json.Unmarshal(raw, &run); err != nil {
		t.Fatal(err)
	}
	if run.Status != ycsbrun.StatusComplete || run.Mode != "single-host" || run.DB != "basic" || run.Phase != "run" ||
		len(run.Intervals) < 2 || len(run.Agents) != 1 || run.Summary.Operations != 3000 || run.RunID == "" {
		t.Fatalf("run.json: %+v", run)
	}
	summary, _ := os.ReadFile(filepath.Join(a, bundle.FileSummary))
	requireSameLines(t, strings.Join(run.Summary.Lines, "\n")+"\n", string(summary), "run.json ycsb_text", "summary.txt")
	checkSummaryAgainstRunJSON(t, string(summary), &run)

	code, _ := runCLI(t, false, nil, "report", a)
	page, err := os.ReadFile(filepath.Join(a, "report.html"))
	if code != 0 || err != nil || !strings.Contains(string(page), `id="distribution"`) {
		t.Fatalf("report: exit %d, %v", code, err)
	}
	checkReportAgainstRunJSON(t, string(page), &run, string(summary))
	code, csvOut := runCLI(t, false, nil, "report", a, "--format", "csv", "-o", "-")
	recs, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if code != 0 || err != nil || len(recs) != len(run.Intervals)+1 {
		t.Fatalf("report --format csv: exit %d, %v, %d records", code, err, len(recs))
	}
	checkCSVAgainstRunJSON(t, recs, &run)

	out := filepath.Join(root, "cmp.html")
	code, table := runCLI(t, false, nil, "compare", a, b, "-o", out)
	if code != 0 || !regexp.MustCompile(`workloada\s+a\s+basic`).MatchString(table) || !strings.Contains(table, "baseline") {
		t.Fatalf("compare: exit %d\n%s", code, table)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}

	if code, _ := runCLI(t, false, nil, "report", filepath.Join(root, "missing")); code != 2 {
		t.Errorf("report of a missing bundle: exit %d, want 2", code)
	}
	if code, _ := runCLI(t, false, nil, "report", a, "--format", "pdf"); code != 2 {
		t.Errorf("--format pdf: exit %d, want 2", code)
	}
}

func TestMetricsAddr(t *testing.T) {
	var stderr lockedBuffer
	done := make(chan int)
	go func() {
		code, _ := runCLI(t, false, &stderr, append(quickRun, "--metrics-addr", "127.0.0.1:0", "-p", "ycsbctl.metrics.linger=3")...)
		done <- code
	}()
	urlRe := regexp.MustCompile(`Prometheus metrics: (http://127\.0\.0\.1:\d+/metrics)`)
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(body, `op="READ"`) {
		time.Sleep(50 * time.Millisecond)
		m := urlRe.FindStringSubmatch(stderr.String())
		if m == nil {
			continue
		}
		resp, err := http.Get(m[1])
		if err != nil {
			continue
		}
		b, rerr := io.ReadAll(resp.Body)
		if err := errors.Join(rerr, resp.Body.Close()); err != nil {
			t.Errorf("reading the report: %v", err)
		}
		body = string(b)
	}
	for _, want := range []string{`ycsbctl_operations_total{agent="local",op="READ",run_id="`, `ycsbctl_operation_duration_seconds_bucket{`, `ycsbctl_run_info{db="basic",phase="run",run_id="`, `workload="workloada"`, "process_cpu_seconds_total"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if code, _ := runCLI(t, false, nil, append(quickRun, "--metrics-addr", "127.0.0.1:http2")...); code != 2 {
		t.Errorf("bad --metrics-addr: exit %d, want 2", code)
	}
}

// TestLiveViewGivesTerminalBack runs with stdout taken for a terminal:
// the view draws on the alternate screen and leaves it before the summary
// prints; --no-tui (and the property) keep the plain output.
func TestLiveViewGivesTerminalBack(t *testing.T) {
	code, out := runCLI(t, true, nil, quickRun...)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	enter, leave, sum := strings.Index(out, "\x1b[?1049h"), strings.LastIndex(out, "\x1b[?1049l"), strings.Index(out, "[OVERALL], RunTime(ms)")
	if enter < 0 || leave < enter || sum < leave {
		t.Fatalf("alternate screen at %d..%d, summary at %d", enter, leave, sum)
	}
	if !strings.Contains(out[enter:leave], "ycsbctl run") {
		t.Error("the view drew nothing")
	}
	for _, args := range [][]string{append(quickRun, "--no-tui"), append(quickRun, "-p", "ycsbctl.tui=false")} {
		code, out := runCLI(t, true, nil, args...)
		if code != 0 || strings.Contains(out, "\x1b[") || !strings.HasPrefix(out, "[OVERALL]") {
			t.Errorf("%v: exit %d, output %q", args[len(args)-2:], code, out[:min(len(out), 80)])
		}
	}
}

// requireSameLines compares two texts line by line, naming the first
// difference.
func requireSameLines(t *testing.T, want, got, wantName, gotName string) {
	t.Helper()
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Fatalf("%s and %s differ at line %d:\n%s: %q\n%s: %q", wantName, gotName, i+1, wantName, w, gotName, g)
		}
	}
	if len(wl) < 5 {
		t.Fatalf("%s has only %d lines", wantName, len(wl))
	}
}

// checkSummaryAgainstRunJSON: every number of the YCSB summary is the
// corresponding figure of run.json's structured summary.
func checkSummaryAgainstRunJSON(t *testing.T, summary string, run *bundle.Run) {
	t.Helper()
	series := map[string]bundle.SeriesStats{}
	for _, s := range run.Summary.Series {
		series[s.Series] = s
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(summary), "\n") {
		parts := strings.SplitN(line, ", ", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[0], "[") || !strings.HasSuffix(parts[0], "]") {
			t.Fatalf("malformed summary line %q", line)
		}
		metric, meas, val := strings.Trim(parts[0], "[]"), parts[1], parts[2]
		num, err := strconv.ParseFloat(val, 64)
		if err != nil {
			t.Fatalf("%q: value %q: %v", line, val, err)
		}
		var want float64
		if metric == "NOTE" {
			// The only notes of a complete run are telemetry's verdicts:
			// the summary and run.json must draw the same ones.
			if !slices.Contains(run.Telemetry.Lines(), meas) {
				t.Fatalf("%q: not a verdict of run.json's telemetry %v", line, run.Telemetry.Lines())
			}
			continue
		}
		if metric == "OVERALL" {
			switch meas {
			case "RunTime(ms)":
				want = float64(run.Summary.RunTimeMs)
			case "Throughput(ops/sec)":
				want = run.Summary.Throughput
				// Throughput is operations per run time.
				if got := float64(run.Summary.Operations) * 1000 / float64(run.Summary.RunTimeMs); math.Abs(got-num) > 1e-9*num {
					t.Errorf("throughput %v is not %d ops / %d ms", num, run.Summary.Operations, run.Summary.RunTimeMs)
				}
			default:
				t.Fatalf("unexpected line %q", line)
			}
		} else {
			s, ok := series[metric]
			if !ok {
				t.Fatalf("%q: series %s not in run.json", line, metric)
			}
			seen[metric] = true
			switch {
			case meas == "Operations":
				want = float64(s.Count)
			case meas == "AverageLatency(us)":
				want = s.MeanUs
			case meas == "MinLatency(us)":
				want = float64(s.MinUs)
			case meas == "MaxLatency(us)":
				want = float64(s.MaxUs)
			case meas == "50thPercentileLatency(us)":
				want = float64(s.P50Us)
			case meas == "95thPercentileLatency(us)":
				want = float64(s.P95Us)
			case meas == "99thPercentileLatency(us)":
				want = float64(s.P99Us)
			case strings.HasPrefix(meas, "Return="):
				want = float64(run.Summary.Returns[metric][strings.TrimPrefix(meas, "Return=")])
			default:
				t.Fatalf("unexpected line %q", line)
			}
		}
		if num != want {
			t.Errorf("%q: run.json has %v", line, want)
		}
	}
	for name := range series {
		if !seen[name] {
			t.Errorf("run.json series %s is missing from the summary", name)
		}
	}
}

var (
	cardRe    = regexp.MustCompile(`<div class="card"><div class="k">([^<]*)</div><div class="v">([^<]*)</div><div class="n">([^<]*)</div></div>`)
	opRowRe   = regexp.MustCompile(`<tr(?: class="bad")?><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td class="l">([^<]*)</td></tr>`)
	summaryRe = regexp.MustCompile(`(?s)<h2>YCSB summary</h2>\s*<pre>(.*?)</pre>`)
)

// parseGrouped reads an integer printed with thousands separators.
func parseGrouped(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatalf("number %q: %v", s, err)
	}
	return n
}

// parseLatency reads a latency as the report prints it ("850µs", "1.2ms",
// "3s", "420ns", "0") into microseconds.
func parseLatency(t *testing.T, s string) float64 {
	t.Helper()
	units := []struct {
		suffix string
		us     float64
	}{{"ns", 1e-3}, {"µs", 1}, {"ms", 1e3}, {"s", 1e6}}
	if s == "0" {
		return 0
	}
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("latency %q: %v", s, err)
			}
			return f * u.us
		}
	}
	t.Fatalf("latency %q has no unit", s)
	return 0
}

// requireLatency: the report rounds latencies to three significant
// digits, so a shown value is within 0.5% of the exact one.
func requireLatency(t *testing.T, shown string, wantUs float64, what string) {
	t.Helper()
	got := parseLatency(t, shown)
	if math.Abs(got-wantUs) > 0.005*wantUs+1e-9 {
		t.Errorf("report %s = %s (%g µs), run.json has %g µs", what, shown, got, wantUs)
	}
}

// checkReportAgainstRunJSON reads the numbers the HTML report shows (the
// cards, the operations table and the YCSB summary) and checks each
// against run.json.
func checkReportAgainstRunJSON(t *testing.T, page string, run *bundle.Run, summary string) {
	t.Helper()
	cards := map[string][2]string{}
	for _, m := range cardRe.FindAllStringSubmatch(page, -1) {
		cards[html.UnescapeString(m[1])] = [2]string{html.UnescapeString(m[2]), html.UnescapeString(m[3])}
	}
	tput, ok := strings.CutSuffix(cards["Throughput"][0], " ops/s")
	if !ok {
		t.Fatalf("throughput card %q", cards["Throughput"])
	}
	mult := 1.0
	for suffix, m := range map[string]float64{"k": 1e3, "M": 1e6, "G": 1e9} {
		if v, ok := strings.CutSuffix(tput, suffix); ok {
			tput, mult = v, m
		}
	}
	tv, err := strconv.ParseFloat(tput, 64)
	// Rounded to whole ops/s, then to three decimals of the unit.
	if err != nil || math.Abs(tv*mult-math.Round(run.Summary.Throughput)) > 0.0005*mult {
		t.Errorf("throughput card %q, run.json %v", cards["Throughput"][0], run.Summary.Throughput)
	}
	if got := parseGrouped(t, cards["Operations"][0]); got != run.Summary.Operations {
		t.Errorf("operations card %d, run.json %d", got, run.Summary.Operations)
	}
	if want := fmt.Sprintf("%d intervals", len(run.Intervals)); cards["Operations"][1] != want {
		t.Errorf("operations card note %q, want %q", cards["Operations"][1], want)
	}
	rt, ok := strings.CutSuffix(cards["Run time"][0], "s")
	rtv, err := strconv.ParseFloat(rt, 64)
	if !ok || err != nil || math.Round(rtv*1000) != float64(run.Summary.RunTimeMs) {
		t.Errorf("run time card %q, run.json %d ms", cards["Run time"][0], run.Summary.RunTimeMs)
	}
	var errs, all int64
	for _, m := range run.Summary.Returns {
		for st, n := range m {
			all += n
			if st != "OK" {
				errs += n
			}
		}
	}
	if got := parseGrouped(t, cards["Errors"][0]); got != errs || all != run.Summary.Operations {
		t.Errorf("errors card %d, run.json %d of %d returns", got, errs, all)
	}

	rows := opRowRe.FindAllStringSubmatch(page, -1)
	if len(rows) != len(run.Summary.Series) {
		t.Fatalf("operations table has %d rows, run.json %d series", len(rows), len(run.Summary.Series))
	}
	var main bundle.SeriesStats
	for _, row := range rows {
		name := html.UnescapeString(row[1])
		var s bundle.SeriesStats
		found := false
		for _, c := range run.Summary.Series {
			if c.Series == name {
				s, found = c, true
			}
		}
		if !found {
			t.Fatalf("report row %s is not in run.json", name)
		}
		if got := parseGrouped(t, row[2]); got != s.Count {
			t.Errorf("%s count %d, run.json %d", name, got, s.Count)
		}
		for i, want := range []float64{s.MeanUs, float64(s.MinUs), float64(s.P50Us), float64(s.P95Us), float64(s.P99Us), float64(s.P999Us), float64(s.MaxUs)} {
			requireLatency(t, html.UnescapeString(row[3+i]), want, name+" "+[]string{"mean", "min", "p50", "p95", "p99", "p99.9", "max"}[i])
		}
		var ret []string
		for st, n := range run.Summary.Returns[name] {
			ret = append(ret, fmt.Sprintf("%s %s", st, groupDigits(n)))
		}
		sort.Strings(ret)
		if got := html.UnescapeString(row[10]); got != strings.Join(ret, ", ") {
			t.Errorf("%s return codes %q, run.json %q", name, got, ret)
		}
		if s.Series == run.MainSeries() {
			main = s
		}
	}
	// The latency card is the p99 of the operation the workload's mix
	// weights most (workloada's 50/50 tie goes to READ, CoreWorkload's
	// order), with p50 and max: not the busiest one, which a random mix
	// decides run by run.
	if run.MainSeries() != "READ" || main.Series != "READ" {
		t.Fatalf("main series %q (run.json has %q), want READ for workloada", run.MainSeries(), main.Series)
	}
	lc, ok := cards[main.Series+" p99"]
	if !ok {
		t.Fatalf("no %s p99 card among %v", main.Series, cards)
	}
	requireLatency(t, lc[0], float64(main.P99Us), main.Series+" p99 card")
	p50, mx, ok := strings.Cut(strings.TrimPrefix(lc[1], "p50 "), " · max ")
	if !ok {
		t.Fatalf("latency card note %q", lc[1])
	}
	requireLatency(t, p50, float64(main.P50Us), "p50 card note")
	requireLatency(t, mx, float64(main.MaxUs), "max card note")

	m := summaryRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("report has no YCSB summary")
	}
	requireSameLines(t, summary, html.UnescapeString(m[1]), "summary.txt", "report's YCSB summary")
}

// groupDigits writes n with thousands separators.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// checkCSVAgainstRunJSON: one CSV row per interval of run.json, with its
// numbers.
func checkCSVAgainstRunJSON(t *testing.T, recs [][]string, run *bundle.Run) {
	t.Helper()
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var total int64
	for i, iv := range run.Intervals {
		row := recs[i+1]
		get := func(name string) string {
			c, ok := col[name]
			if !ok {
				t.Fatalf("CSV has no column %s: %v", name, recs[0])
			}
			return row[c]
		}
		want := map[string]string{
			"run_id": run.RunID, "db": run.DB, "phase": run.Phase, "scope": "all",
			"seq": fmt.Sprint(iv.Seq), "operations": fmt.Sprint(iv.Operations), "ops_per_sec": strconv.FormatFloat(iv.OpsPerSec, 'f', -1, 64),
		}
		for _, s := range iv.Series {
			want[s.Series+"_count"] = fmt.Sprint(s.Count)
			want[s.Series+"_p50_us"] = fmt.Sprint(s.P50Us)
			want[s.Series+"_p99_us"] = fmt.Sprint(s.P99Us)
			want[s.Series+"_max_us"] = fmt.Sprint(s.MaxUs)
		}
		for name, w := range want {
			if got := get(name); got != w {
				t.Errorf("CSV interval %d %s = %q, run.json %q", iv.Seq, name, got, w)
			}
		}
		total += iv.Operations
	}
	if total != run.Summary.Operations {
		t.Errorf("interval operations add up to %d, summary %d", total, run.Summary.Operations)
	}
}

package cli_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/cli"
	"github.com/ycsbctl/ycsbctl/internal/clock"
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
		summary, _ := os.ReadFile(filepath.Join(dir, bundle.FileSummary))
		// summary.txt is the summary the run printed.
		if !strings.Contains(stdout, strings.SplitN(string(summary), "\n", 2)[0]) {
			t.Errorf("summary.txt differs from the printed summary:\n%s\n---\n%s", summary, stdout)
		}
	}
	var run bundle.Run
	raw, _ := os.ReadFile(filepath.Join(a, bundle.FileRunJSON))
	if err := json.Unmarshal(raw, &run); err != nil {
		t.Fatal(err)
	}
	if run.Status != bundle.StatusComplete || run.Mode != "single-host" || run.DB != "basic" || run.Phase != "run" ||
		len(run.Intervals) < 2 || len(run.Agents) != 1 || run.Summary.Operations != 3000 || run.RunID == "" {
		t.Fatalf("run.json: %+v", run)
	}

	code, _ := runCLI(t, false, nil, "report", a)
	page, err := os.ReadFile(filepath.Join(a, "report.html"))
	if code != 0 || err != nil || !strings.Contains(string(page), `id="distribution"`) {
		t.Fatalf("report: exit %d, %v", code, err)
	}
	code, csvOut := runCLI(t, false, nil, "report", a, "--format", "csv", "-o", "-")
	recs, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if code != 0 || err != nil || len(recs) != len(run.Intervals)+1 {
		t.Fatalf("report --format csv: exit %d, %v, %d records", code, err, len(recs))
	}

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

package cli_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/coordinator"
	"github.com/ycsbctl/ycsbctl/internal/cli"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/report"
)

// TestCoordinatorViews runs a real coordinator against two in-process
// agents with the live view (stdout taken for a terminal) and /metrics
// attached, then reports on the bundle it wrote.
func TestCoordinatorViews(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var addrs []string
	for range 2 {
		ready := make(chan string, 1)
		go func() {
			_ = agent.Serve(ctx, agent.Config{Listen: "127.0.0.1:0", Ready: func(a string) { ready <- a }})
		}()
		select {
		case a := <-ready:
			addrs = append(addrs, a)
		case <-time.After(10 * time.Second):
			t.Fatal("agent did not start")
		}
	}
	props := properties.New()
	for k, v := range map[string]string{"basicdb.verbose": "false", "basicdb.simulatedelay": "1", "operationcount": "6000", "recordcount": "1000",
		"status.interval": "0.5", "threadcount": "2", "readproportion": "0.5", "updateproportion": "0.5", PropMetricsAddrForTest: "127.0.0.1:0"} {
		props.Set(k, v)
	}
	var stdout, stderr lockedBuffer
	results := filepath.Join(t.TempDir(), "bundle")
	// This test is about the views, not loss detection: under -race on
	// a loaded machine an in-process agent was seen silent for 4 s.
	cfg := coordinator.Config{DB: "basic", Phase: engine.Run, Props: props, Agents: addrs, ResultsDir: results, Stdout: &stdout, Stderr: &stderr,
		AgentTimeout: 30 * time.Second}
	gs := &cli.GlobalState{Ctx: ctx, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" },
		Clock: clock.NewReal(), IsTerminal: true, ReadFile: os.ReadFile}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	views, err := cli.AttachCoordinatorViews(gs, &cfg, func(bool) { stop() })
	if err != nil {
		t.Fatal(err)
	}
	// Every series the coordinator's /metrics must show. One update sets
	// the interval histograms before the agents' status, so a scrape may
	// fall between the two: the scraper waits for all of them.
	wants := []string{`ycsbctl_agent_state{agent="` + addrs[0] + `"`, `ycsbctl_agent_clock_offset_seconds{agent="` + addrs[1] + `"`,
		`ycsbctl_operations_total{agent="` + addrs[0] + `",op="READ"`, `ycsbctl_operations_total{agent="` + addrs[1] + `",op="READ"`,
		`ycsbctl_agents{`, `ycsbctl_operation_duration_seconds_bucket{agent="` + addrs[1] + `"`}
	hasAll := func(body string) bool {
		for _, w := range wants {
			if !strings.Contains(body, w) {
				return false
			}
		}
		return true
	}
	scraped := make(chan string, 1)
	go func() {
		urlRe := regexp.MustCompile(`Prometheus metrics: (\S+)`)
		body := ""
		for i := 0; i < 200 && !hasAll(body); i++ {
			time.Sleep(50 * time.Millisecond)
			if m := urlRe.FindStringSubmatch(stderr.String()); m != nil {
				if resp, err := http.Get(m[1]); err == nil {
					b, rerr := io.ReadAll(resp.Body)
					if err := errors.Join(rerr, resp.Body.Close()); err != nil {
						t.Errorf("reading %s: %v", m[1], err)
					}
					body = string(b)
				}
			}
		}
		scraped <- body
	}()
	code, err := coordinator.Run(runCtx, cfg)
	// /metrics stays up until Close: the scraper sees at least the final
	// state however slowly it started.
	body := <-scraped
	views.Close()
	if code != 0 || err != nil {
		t.Fatalf("coordinator: %d %v\n%s", code, err, stderr.String())
	}
	out := stdout.String()
	enter, leave, sum := strings.Index(out, "\x1b[?1049h"), strings.LastIndex(out, "\x1b[?1049l"), strings.Index(out, "[OVERALL], RunTime(ms)")
	if enter < 0 || leave < enter || sum < leave {
		t.Fatalf("alternate screen at %d..%d, summary at %d", enter, leave, sum)
	}
	if view := out[enter:leave]; !strings.Contains(view, "Agents (2)") || !strings.Contains(view, addrs[1]) {
		t.Errorf("the view never showed the agents")
	}
	for _, want := range wants {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	// The coordinator's bundle reads back and reports like a single host's.
	r, err := report.Load(results)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.B.Run.Agents) != 2 || r.B.Run.Summary.Operations != 6000 {
		t.Fatalf("bundle: %d agents, %d operations", len(r.B.Run.Agents), r.B.Run.Summary.Operations)
	}
	hs, err := r.B.Histograms()
	if err != nil || len(hs.Agents) != 2 {
		t.Fatalf("merged.hlog: %v, %d agents", err, len(hs.Agents))
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, r, report.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="agents-throughput"`, addrs[0], `id="distribution"`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// PropMetricsAddrForTest mirrors cli.PropMetricsAddr.
const PropMetricsAddrForTest = cli.PropMetricsAddr

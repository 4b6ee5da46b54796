package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
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
	"github.com/ycsbctl/ycsbctl/internal/cli"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/report"
)

// TestCoordinatorViews runs `ycsbctl coordinator run` against two
// in-process agents with the live view (stdout taken for a terminal) and
// /metrics attached, exactly as an operator would, then reports on the
// bundle it wrote. /metrics lingers after the run
// (ycsbctl.metrics.linger), so the scraper sees the final state.
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
	var stdout, stderr lockedBuffer
	results := filepath.Join(t.TempDir(), "bundle")
	args := []string{"coordinator", "run", "basic", "--agents", strings.Join(addrs, ","), "--results", results, "--metrics-addr", "127.0.0.1:0",
		"-threads", "2", "-p", "ycsbctl.metrics.linger=2"}
	for _, kv := range []string{"basicdb.verbose=false", "basicdb.simulatedelay=1", "operationcount=6000", "recordcount=1000",
		"status.interval=0.5", "readproportion=0.5", "updateproportion=0.5"} {
		args = append(args, "-p", kv)
	}
	gs := &cli.GlobalState{Ctx: ctx, Args: args, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" },
		Clock: clock.NewReal(), IsTerminal: true, ReadFile: os.ReadFile}
	// The scraper stops when /metrics shows agent 1 and a finished agent
	// (the linger keeps it up after the run for that), when the run has
	// ended (nothing serves /metrics then), or at a bound: a run that
	// fails must fail the test, not leave it waiting for a state that
	// never comes.
	final := func(body string) bool {
		return strings.Contains(body, `ycsbctl_agent_state{agent="`+addrs[1]+`",run_id=`) && strings.Contains(body, `state="finished"} 1`)
	}
	ended := make(chan struct{})
	scraped := make(chan string, 1)
	go func() {
		urlRe := regexp.MustCompile(`Prometheus metrics: (\S+)`)
		client := &http.Client{Timeout: 10 * time.Second}
		body := ""
		for deadline := time.Now().Add(3 * time.Minute); !final(body) && time.Now().Before(deadline); {
			select {
			case <-ended:
				scraped <- body
				return
			case <-time.After(25 * time.Millisecond):
			}
			if m := urlRe.FindStringSubmatch(stderr.String()); m != nil {
				if resp, err := client.Get(m[1]); err == nil {
					b, _ := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					body = string(b)
				}
			}
		}
		scraped <- body
	}()
	code := cli.Execute(gs)
	close(ended)
	body := <-scraped
	if code != 0 {
		t.Fatalf("coordinator: exit %d\n%s", code, stderr.String())
	}
	if !final(body) {
		t.Fatalf("/metrics never showed agent %s and a finished agent, during the run or its linger; last scrape:\n%s\nstderr:\n%s", addrs[1], body, stderr.String())
	}
	out := stdout.String()
	enter, leave, sum := strings.Index(out, "\x1b[?1049h"), strings.LastIndex(out, "\x1b[?1049l"), strings.Index(out, "[OVERALL], RunTime(ms)")
	if enter < 0 || leave < enter || sum < leave {
		t.Fatalf("alternate screen at %d..%d, summary at %d", enter, leave, sum)
	}
	if view := out[enter:leave]; !strings.Contains(view, "Agents (2)") || !strings.Contains(view, addrs[1]) {
		t.Errorf("the view never showed the agents")
	}
	for _, want := range []string{`ycsbctl_agent_state{agent="` + addrs[0] + `"`, `ycsbctl_agent_clock_offset_seconds{agent="` + addrs[1] + `"`, `ycsbctl_operations_total{agent="` + addrs[0] + `",op="READ"`, `ycsbctl_operations_total{agent="` + addrs[1] + `",op="READ"`, `ycsbctl_agents{`, `ycsbctl_operations_total{agent="` + addrs[1] + `",op="UPDATE",run_id=`} {
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
	// The environment: each agent's host from its Hello reply, and the
	// database as agent 0 described it.
	env := r.B.Run.Environment
	if env == nil || len(env.Hosts) != 2 || env.Hosts[0].Address != addrs[0] || env.Hosts[1].Address != addrs[1] || env.Hosts[0].Cores == 0 {
		t.Fatalf("environment hosts: %+v", env)
	}
	if db := env.Database; db == nil || db.DescribedBy != addrs[0] || !strings.Contains(db.Product, "BasicDB") {
		t.Errorf("environment database: %+v", env.Database)
	}
	if env.Version == "" || len(env.Command) == 0 || env.Command[1] != "coordinator" {
		t.Errorf("environment version %q, command %v", env.Version, env.Command)
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

// TestCoordinatorOutputsLikeSingleHost checks that a coordinator run
// honours the output settings a single-host run honours, because both are
// presented by the same session: timeseries buckets, the HdrHistogram file
// log and verbose buckets; and that BasicDB's per-operation printing on the
// agents does not switch the coordinator's live view off (agents print on
// their own stdout).
func TestCoordinatorOutputsLikeSingleHost(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agents := startAgent(t, ctx) + "," + startAgent(t, ctx)
	dir := t.TempDir()
	common := []string{"-P", "workloada", "-p", "recordcount=1000", "-p", "operationcount=0", "-p", "maxexecutiontime=2", "-target", "1000",
		"-p", "status.interval=1", "-p", "basicdb.verbose=false"}

	// Timeseries: one bucket line per op and granularity step, both agents'
	// operations merged into them.
	r := execute(t, "", append([]string{"coordinator", "run", "basic", "--agents", agents, "-p", "measurementtype=timeseries", "-p", "timeseries.granularity=500"}, common...)...)
	require.Equal(t, 0, r.code, r.stderr)
	buckets := regexp.MustCompile(`(?m)^\[READ\], (\d+), [0-9.]+$`).FindAllStringSubmatch(r.stdout, -1)
	require.GreaterOrEqual(t, len(buckets), 3, r.stdout)
	for i, b := range buckets {
		assert.Equal(t, strconv.Itoa(i*500), b[1], "bucket %d offset", i)
	}

	// hdrhistogram.fileoutput writes the tagged log; verbose buckets print.
	hdrPath := filepath.Join(dir, "cluster-")
	r = execute(t, "", append([]string{"coordinator", "run", "basic", "--agents", agents, "-p", "hdrhistogram.fileoutput=true",
		"-p", "hdrhistogram.output.path=" + hdrPath, "-p", "measurement.histogram.verbose=true"}, common...)...)
	require.Equal(t, 0, r.code, r.stderr)
	log, err := os.ReadFile(hdrPath + "ycsbctl.hlog")
	require.NoError(t, err, "the coordinator must write hdrhistogram.fileoutput")
	tags := regexp.MustCompile(`(?m)^Tag=(READ|UPDATE),`).FindAllString(string(log), -1)
	assert.GreaterOrEqual(t, len(tags), 4, "READ and UPDATE lines for each interval")
	assert.Regexp(t, `(?m)^\[READ\], \d+, [0-9.]+$`, r.stdout, "verbose buckets")

	// The live view stays on with basicdb.verbose on the agents.
	var stdout, stderr lockedBuffer
	args := append([]string{"coordinator", "run", "basic", "--agents", agents}, common...)
	args = append(args, "-p", "basicdb.verbose=true")
	gs := &cli.GlobalState{Ctx: ctx, Args: args, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(string) string { return "" }, Clock: clock.NewReal(), IsTerminal: true, ReadFile: os.ReadFile}
	require.Equal(t, 0, cli.Execute(gs), stderr.String())
	assert.NotContains(t, stderr.String(), "live view off")
	assert.Contains(t, stdout.String(), "\x1b[?1049h", "the live view took the screen")
}

//go:build cluster

package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Prometheus over the cluster: Debian's prometheus (2.42 here) on
// loopback with native histograms, configured by the playbook's
// prometheus-config.yml from the same inventory the agents were deployed
// with, scrapes the coordinator (on the bridge address) and every agent
// (each on its own address) every second during a workload A run against
// Cassandra. What it stored must add up to run.json.
const (
	metricsPort  = 9464
	promRunOps   = 8000
	coordMetrics = "10.77.0.1:9464"
)

type promServer struct{ base string }

type promSample struct{ ts, v float64 }

type promSeries struct {
	labels  map[string]string
	samples []promSample
}

func (p promServer) query(t testing.TB, q string, ts float64) []promSeries {
	t.Helper()
	v := url.Values{"query": {q}, "time": {strconv.FormatFloat(ts, 'f', 3, 64)}}
	resp, err := http.Get(p.base + "/api/v1/query?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
				Values [][]any           `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s %s", q, err, r.Error, body)
	}
	conv := func(pair []any) promSample {
		ts, _ := pair[0].(float64)
		s, _ := pair[1].(string)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("query %s: sample %v", q, pair)
		}
		return promSample{ts, f}
	}
	var out []promSeries
	for _, res := range r.Data.Result {
		s := promSeries{labels: res.Metric}
		if res.Value != nil {
			s.samples = append(s.samples, conv(res.Value))
		}
		for _, pair := range res.Values {
			s.samples = append(s.samples, conv(pair))
		}
		out = append(out, s)
	}
	return out
}

func (p promServer) scalar(t testing.TB, q string, ts float64) float64 {
	t.Helper()
	res := p.query(t, q, ts)
	if len(res) != 1 || len(res[0].samples) != 1 {
		t.Fatalf("query %s at %.3f: %d series, want one sample", q, ts, len(res))
	}
	return res[0].samples[0].v
}

// startPrometheus runs the server as this test's child on a free loopback
// port, with its own data directory; it is killed by its PID at the end.
func startPrometheus(t *testing.T, config string) promServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	log := filepath.Join(t.TempDir(), "prometheus.log")
	lf, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("/usr/bin/prometheus", "--config.file="+config, "--storage.tsdb.path="+t.TempDir(),
		"--web.listen-address="+addr, "--enable-feature=native-histograms", "--log.level=warn")
	c.Stdout, c.Stderr = lf, lf
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = c.Wait(); _ = lf.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = c.Process.Kill()
		<-exited
	})
	p := promServer{base: "http://" + addr}
	for deadline := time.Now().Add(time.Minute); ; {
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(log)
			t.Fatalf("prometheus exited:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("prometheus not ready after a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func testPrometheus(t *testing.T, e *env) {
	if _, err := os.Stat("/usr/bin/prometheus"); err != nil {
		t.Fatal("/usr/bin/prometheus missing: apt-get install prometheus (scripts/ci-setup.sh)")
	}
	config := filepath.Join(t.TempDir(), "prometheus.yml")
	c := e.cmd(t.Context(), e.playbook, "-i", e.dbInventory, "prometheus-config.yml",
		"-e", "ycsbctl_prometheus_config="+config, "-e", "ycsbctl_prometheus_coordinator="+coordMetrics,
		"-e", "ycsbctl_prometheus_scrape_interval=1s", "-e", "ycsbctl_prometheus_version=2.42",
		"-e", "ycsbctl_prometheus_promtool=/usr/bin/promtool")
	c.Dir = filepath.Join(e.root, "deploy/ansible")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("ansible-playbook prometheus-config.yml: %v\n%s", err, out)
	}
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= hosts; n++ {
		if want := fmt.Sprintf("%s:%d", addr(n), metricsPort); !strings.Contains(string(b), want) {
			t.Fatalf("generated config lacks agent target %s:\n%s", want, b)
		}
	}
	prom := startPrometheus(t, config)
	// Every target scraped once while idle.
	time.Sleep(2 * time.Second)

	before := float64(time.Now().UnixMilli()) / 1000
	r := coordinatorRun{phase: "run", db: "cassandra", results: filepath.Join(e.tmp, "prometheus-run"),
		props: e.cassProps(fmt.Sprintf("operationcount=%d", promRunOps), "status.interval=1",
			"ycsbctl.metrics.startdelay=4", "ycsbctl.metrics.linger=3"),
		flags: []string{"-P", "workloada", "--metrics-addr", coordMetrics}}
	res := e.coordinator(t, r)
	if res.code != 0 {
		t.Fatalf("coordinator run with metrics: exit %d\n%s", res.code, res.out)
	}
	rj := res.bundle(t)
	checkExact(t, rj, promRunOps)
	// The agents keep exposing the finished run: two more scrapes.
	time.Sleep(2500 * time.Millisecond)
	var exactP99 float64
	for _, s := range rj.Summary.Series {
		if s.Series == "READ" {
			exactP99 = float64(s.P99Us) / 1e6
		}
	}
	if exactP99 == 0 {
		t.Fatal("run.json has no READ p99")
	}
	now := float64(time.Now().UnixMilli()) / 1000
	window := fmt.Sprintf("%ds", int(math.Ceil(now-before))+2)
	for _, job := range []string{"ycsbctl", "ycsbctl-agents"} {
		sel := fmt.Sprintf(`ycsbctl_operations_total{job=%q,run_id=%q}`, job, rj.RunID)
		series := prom.query(t, sel+"["+window+"]", now)
		if len(series) == 0 {
			t.Fatalf("%s: no series %s", job, sel)
		}
		last := map[string]float64{}
		for _, s := range series {
			if s.samples[0].v != 0 {
				t.Errorf("%s %v: first scraped at %v, not 0", job, s.labels, s.samples[0].v)
			}
			inst := s.labels["instance"]
			last[inst] = max(last[inst], s.samples[len(s.samples)-1].ts)
		}
		// Each instance's increase() evaluated at its own last scrape
		// (nothing to extrapolate), the instances added.
		var sum float64
		for inst, ts := range last {
			sum += prom.scalar(t, fmt.Sprintf(`sum(increase(ycsbctl_operations_total{job=%q,run_id=%q,instance=%q}[%s]))`, job, rj.RunID, inst, window), ts)
		}
		hsel := fmt.Sprintf(`ycsbctl_operation_duration_seconds{job=%q,run_id=%q,op="READ",kind="service",outcome="ok"}`, job, rj.RunID)
		native := prom.scalar(t, fmt.Sprintf(`histogram_quantile(0.99, sum(rate(%s[%s])))`, hsel, window), now)
		figure(t, "prometheus %s: sum(increase(ycsbctl_operations_total)) %.0f over %d instances, run.json %d; READ p99 native %.3f ms, merged HDR %.3f ms (%+.1f%%)",
			job, sum, len(last), rj.Summary.Operations, native*1e3, exactP99*1e3, 100*(native-exactP99)/exactP99)
		if sum != float64(rj.Summary.Operations) {
			t.Errorf("%s: sum(increase(ycsbctl_operations_total)) %.0f, run.json %d", job, sum, rj.Summary.Operations)
		}
		if math.Abs(native-exactP99) > 0.05*exactP99 {
			t.Errorf("%s: native histogram_quantile(0.99) %.3f ms, merged p99 %.3f ms: beyond 5%%", job, native*1e3, exactP99*1e3)
		}
	}
}

//go:build cluster

package cluster

import (
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/testutil/promserver"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := ln.Addr().String()
	_ = ln.Close()
	prom := promserver.Start(t, "/usr/bin/prometheus", config, promAddr, "--enable-feature=native-histograms")
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
		series := prom.Query(t, sel+"["+window+"]", now)
		if len(series) == 0 {
			t.Fatalf("%s: no series %s", job, sel)
		}
		for _, s := range series {
			if s.Samples[0].V != 0 {
				t.Errorf("%s %v: first scraped at %v, not 0", job, s.Labels, s.Samples[0].V)
			}
		}
		sum, instances := prom.ExactIncrease(t, "ycsbctl_operations_total", fmt.Sprintf(`job=%q,run_id=%q`, job, rj.RunID), window, series)
		hsel := fmt.Sprintf(`ycsbctl_operation_duration_seconds{job=%q,run_id=%q,op="READ",kind="service",outcome="ok"}`, job, rj.RunID)
		native := prom.Scalar(t, fmt.Sprintf(`histogram_quantile(0.99, sum(rate(%s[%s])))`, hsel, window), now)
		figure(t, "prometheus %s: sum(increase(ycsbctl_operations_total)) %.0f over %d instances, run.json %d; READ p99 native %.3f ms, merged HDR %.3f ms (%+.1f%%)",
			job, sum, instances, rj.Summary.Operations, native*1e3, exactP99*1e3, 100*(native-exactP99)/exactP99)
		if sum != float64(rj.Summary.Operations) {
			t.Errorf("%s: sum(increase(ycsbctl_operations_total)) %.0f, run.json %d", job, sum, rj.Summary.Operations)
		}
		if math.Abs(native-exactP99) > 0.05*exactP99 {
			t.Errorf("%s: native histogram_quantile(0.99) %.3f ms, merged p99 %.3f ms: beyond 5%%", job, native*1e3, exactP99*1e3)
		}
	}
}

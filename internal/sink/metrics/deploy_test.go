package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
	"go.yaml.in/yaml/v3"

	"github.com/ycsbctl/ycsbctl/internal/run"
)

// The Grafana dashboard and the Prometheus example are checked against
// what the exporter really exposes, so a renamed metric cannot leave a
// dashboard panel silently empty.

type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Type    string `json:"type"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("../../../deploy/grafana/ycsbctl-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// exposedNames returns every sample name the exporter produces (with the
// _bucket/_sum/_count of histograms), the Go and process collectors' too.
func exposedNames(t *testing.T) map[string]bool {
	e := populated()
	e.SetAgentStatus("local", AgentStatus{State: run.AgentRunning})
	names := map[string]bool{}
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		n := mf.GetName()
		names[n] = true
		names[n+"_bucket"], names[n+"_sum"], names[n+"_count"] = true, true, true
	}
	return names
}

func dashboardExprs(d dashboard) []string {
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	return out
}

func TestDashboardMatchesExporter(t *testing.T) {
	d := loadDashboard(t)
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	for _, v := range []string{"datasource", "job", "run_id", "op", "agent"} {
		if !vars[v] {
			t.Errorf("dashboard has no $%s variable", v)
		}
	}
	names := exposedNames(t)
	metric := regexp.MustCompile(`\b(ycsbctl_[a-z0-9_]+|process_[a-z0-9_]+)\b`)
	exprs := dashboardExprs(d)
	if len(exprs) < 15 {
		t.Fatalf("only %d queries", len(exprs))
	}
	quantiles := 0
	for _, e := range exprs {
		for _, m := range metric.FindAllString(e, -1) {
			if !names[m] {
				t.Errorf("query uses %s, which the exporter does not expose: %s", m, e)
			}
		}
		if strings.Contains(e, "ycsbctl_") && !strings.Contains(e, `run_id="$run_id"`) {
			t.Errorf("query not keyed on $run_id: %s", e)
		}
		if strings.Contains(e, "histogram_quantile") {
			quantiles++
		}
	}
	if quantiles < 5 {
		t.Errorf("%d latency quantile queries", quantiles)
	}
	var titles []string
	for _, p := range d.Panels {
		titles = append(titles, p.Title)
	}
	all := strings.Join(titles, "|")
	for _, want := range []string{"Throughput", "p99 latency by operation", "Errors by operation", "Throughput per agent", "Agent CPU", "Clock offset", "Schedule lag"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q panel", want)
		}
	}
}

// TestDashboardPromQL has promtool parse every query, as recording rules
// with Grafana's variables substituted.
func TestDashboardPromQL(t *testing.T) {
	promtool := tools.Require(t, "promtool")
	repl := strings.NewReplacer("$__rate_interval", "1m", "$job", ".*", "$run_id", "r1", "$op", ".*", "$agent", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range dashboardExprs(loadDashboard(t)) {
		fmt.Fprintf(&b, "      - record: dashboard:query%d\n        expr: %s\n", i, strconv.Quote(repl.Replace(e)))
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

func TestPrometheusExample(t *testing.T) {
	b, err := os.ReadFile("../../../deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			Native        bool   `yaml:"scrape_native_histograms"`
			Classic       bool   `yaml:"always_scrape_classic_histograms"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]bool{}
	for _, sc := range cfg.ScrapeConfigs {
		jobs[sc.JobName] = true
		if !sc.Native {
			t.Errorf("job %s does not scrape native histograms", sc.JobName)
		}
		if !sc.Classic {
			t.Errorf("job %s drops the classic _bucket series the dashboard also queries", sc.JobName)
		}
		if len(sc.StaticConfigs) == 0 || len(sc.StaticConfigs[0].Targets) == 0 {
			t.Errorf("job %s has no targets", sc.JobName)
		}
	}
	if !jobs["ycsbctl"] || !jobs["ycsbctl-agents"] {
		t.Errorf("jobs %v", jobs)
	}
	// promtool checks the whole file. The scrape options for native
	// histograms need Prometheus 3.8, which an older promtool (Debian 12
	// ships 2.42) rejects as unknown fields; it then checks the file
	// without those two lines (their presence is asserted above).
	promtool := tools.Require(t, "promtool")
	path := "../../../deploy/prometheus/prometheus.yml"
	if v := promtoolVersion(promtool); v < 308 {
		t.Logf("promtool %d.%d predates Prometheus 3.8: checking the config without its native histogram options", v/100, v%100)
		var kept []string
		for _, l := range strings.Split(string(b), "\n") {
			k := strings.TrimSpace(l)
			if strings.HasPrefix(k, "scrape_native_histograms:") || strings.HasPrefix(k, "always_scrape_classic_histograms:") {
				continue
			}
			kept = append(kept, l)
		}
		path = filepath.Join(t.TempDir(), "prometheus.yml")
		if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(promtool, "check", "config", path).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}

// promtoolVersion returns major*100+minor, or 0.
func promtoolVersion(promtool string) int {
	out, err := exec.Command(promtool, "--version").CombinedOutput()
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`version (\d+)\.(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		return 0
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major*100 + minor
}

package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

// promInventory exercises every form of ycsbctl_metrics_addr: an address,
// every address (the target is then ansible_host), a bare port (loopback)
// and a bare host (the default port).
const promInventory = `[agents]
a1 ansible_host=127.0.0.1 ycsbctl_metrics_addr=127.0.0.1:19465
a2 ansible_host=10.1.2.3 ycsbctl_metrics_addr=0.0.0.0:19466
a3 ansible_host=db3.example.internal ycsbctl_metrics_addr=19467
a4 ansible_host=db4.example.internal ycsbctl_metrics_addr=db4.example.internal
[agents:vars]
ansible_connection=local
`

type promConfig struct {
	Global struct {
		ScrapeInterval string `yaml:"scrape_interval"`
	} `yaml:"global"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		Native        bool   `yaml:"scrape_native_histograms"`
		Classic       bool   `yaml:"always_scrape_classic_histograms"`
		StaticConfigs []struct {
			Targets []string          `yaml:"targets"`
			Labels  map[string]string `yaml:"labels"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// renderPrometheusConfig runs prometheus-config.yml against inventory and
// returns the file it wrote.
func renderPrometheusConfig(t *testing.T, inventory string, extra ...string) (string, error) {
	t.Helper()
	playbook := tools.Ansible(t, "ansible-playbook")
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.ini")
	require.NoError(t, os.WriteFile(inv, []byte(inventory), 0o644))
	out := filepath.Join(dir, "prometheus.yml")
	args := []string{"-i", inv, "prometheus-config.yml", "-e", "ycsbctl_prometheus_config=" + out}
	for _, e := range extra {
		args = append(args, "-e", e)
	}
	cmd := exec.Command(playbook, args...)
	cmd.Dir = "ansible"
	cmd.Env = append(venvEnv(playbook), "HOME="+dir, "ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, "tmp"))
	b, err := cmd.CombinedOutput()
	if err != nil {
		return string(b), err
	}
	return out, nil
}

func TestPrometheusConfigFromInventory(t *testing.T) {
	promtool := tools.Require(t, "promtool")
	path, err := renderPrometheusConfig(t, promInventory, "ycsbctl_prometheus_coordinator=127.0.0.1:19464",
		"ycsbctl_prometheus_scrape_interval=1s", "ycsbctl_prometheus_version=2.42", "ycsbctl_prometheus_promtool="+promtool)
	require.NoError(t, err, path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg promConfig
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	require.Equal(t, "1s", cfg.Global.ScrapeInterval)
	targets := map[string][]string{}
	hosts := map[string]string{}
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			targets[sc.JobName] = append(targets[sc.JobName], st.Targets...)
			if h := st.Labels["host"]; h != "" {
				hosts[st.Targets[0]] = h
			}
		}
	}
	require.Equal(t, []string{"127.0.0.1:19464"}, targets["ycsbctl"])
	require.Equal(t, []string{"127.0.0.1:19465", "10.1.2.3:19466", "127.0.0.1:19467", "db4.example.internal:9464"}, targets["ycsbctl-agents"])
	require.Equal(t, "a2", hosts["10.1.2.3:19466"])
	out, err := exec.Command(promtool, "check", "config", path).CombinedOutput()
	require.NoError(t, err, string(out))

	// For Prometheus 3.8 the jobs ask for native and classic histograms
	// (promtool 2.42 would reject those fields, so only their presence is
	// checked); without a coordinator there is only the agents job.
	path, err = renderPrometheusConfig(t, promInventory, "ycsbctl_prometheus_version=3.8")
	require.NoError(t, err, path)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	cfg = promConfig{}
	require.NoError(t, yaml.Unmarshal(b, &cfg))
	require.Len(t, cfg.ScrapeConfigs, 1)
	require.True(t, cfg.ScrapeConfigs[0].Native && cfg.ScrapeConfigs[0].Classic, "%s", b)
}

// An agent without ycsbctl_metrics_addr serves nothing to scrape: the
// play fails and names it.
func TestPrometheusConfigNamesHostWithoutMetrics(t *testing.T) {
	out, err := renderPrometheusConfig(t, "[agents]\ndb7 ansible_connection=local\n")
	require.Error(t, err)
	require.Contains(t, out, "db7: ycsbctl_metrics_addr is empty")
}

func TestPrometheusConfigLint(t *testing.T) {
	lint := tools.Ansible(t, "ansible-lint")
	cmd := exec.Command(lint, "--offline", "--nocolor", "prometheus-config.yml")
	cmd.Dir = "ansible"
	cmd.Env = append(venvEnv(lint), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

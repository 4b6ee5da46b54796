// Package deploy holds deployment material (Ansible, Prometheus, Grafana);
// its test checks that the playbook parses and that it wires the agent
// flags the binary actually has.
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAnsibleSyntax(t *testing.T) {
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Skip("ansible-playbook not installed (make setup installs ansible-core)")
	}
	inv := filepath.Join(t.TempDir(), "inventory.ini")
	b, err := os.ReadFile("ansible/inventory.example.ini")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(inv, b, 0o644))
	cmd := exec.Command("ansible-playbook", "-i", inv, "site.yml", "--syntax-check")
	cmd.Dir = "ansible"
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

// TestUnitFlagsExist checks every --flag the systemd unit passes to
// `ycsbctl agent` against the agent command's help text.
func TestUnitFlagsExist(t *testing.T) {
	unit, err := os.ReadFile("ansible/roles/ycsbctl/templates/ycsbctl-agent.service.j2")
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "ycsbctl")
	build := exec.Command("go", "build", "-o", bin, "../cmd/ycsbctl")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	help, err := exec.Command(bin, "agent", "--help").CombinedOutput()
	require.NoError(t, err, string(help))
	flags := regexp.MustCompile(`--[a-z][a-z-]+`).FindAllString(string(unit), -1)
	require.NotEmpty(t, flags)
	for _, f := range flags {
		require.Contains(t, string(help), f, "the unit uses %s, which `ycsbctl agent` lacks", f)
	}
}

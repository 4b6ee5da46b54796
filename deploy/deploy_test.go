// Package deploy holds deployment material (Ansible, Prometheus, Grafana);
// its tests check that the playbook parses and lints clean and that the
// systemd unit passes `ycsbctl agent` only flags the binary has.
package deploy

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

// venvEnv puts the directory of an Ansible command first on PATH: the
// commands run their siblings (ansible-lint runs ansible-playbook) and
// warn when those come from elsewhere.
func venvEnv(command string) []string {
	return append(os.Environ(), "PATH="+filepath.Dir(command)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestAnsibleSyntax(t *testing.T) {
	playbook := tools.Ansible(t, "ansible-playbook")
	inv := filepath.Join(t.TempDir(), "inventory.ini")
	b, err := os.ReadFile("ansible/inventory.example.ini")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(inv, b, 0o644))
	cmd := exec.Command(playbook, "-i", inv, "site.yml", "--syntax-check")
	cmd.Dir = "ansible"
	cmd.Env = venvEnv(playbook)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

// TestAnsibleLint runs ansible-lint (its rules and exceptions are in
// ansible/.ansible-lint) offline: it must not try to fetch collections.
func TestAnsibleLint(t *testing.T) {
	lint := tools.Ansible(t, "ansible-lint")
	cmd := exec.Command(lint, "--offline", "--nocolor", "site.yml")
	cmd.Dir = "ansible"
	cmd.Env = append(venvEnv(lint), "HOME="+t.TempDir()) // its cache stays out of the real home
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

// execStartFlags returns the flags the unit template's ExecStart passes,
// in order, each with the token after it (or "" at the end). Jinja
// conditionals are dropped so that the flags of every branch count, and
// each {{ expression }} stands for one value.
func execStartFlags(t *testing.T, unit string) (command []string, flags [][2]string) {
	t.Helper()
	var line string
	for _, l := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			require.Empty(t, line, "the unit has more than one ExecStart")
			line = v
		}
	}
	require.NotEmpty(t, line, "the unit has no ExecStart")
	line = regexp.MustCompile(`\{%.*?%\}`).ReplaceAllString(line, " ")
	line = regexp.MustCompile(`\{\{.*?\}\}`).ReplaceAllString(line, "VALUE")
	require.NotContains(t, line, `"`, "quoted ExecStart arguments are not parsed here")
	fields := strings.Fields(line)
	require.GreaterOrEqual(t, len(fields), 2, "ExecStart %q", line)
	command, args := fields[:2], fields[2:]
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		flags = append(flags, [2]string{a, next})
	}
	return command, flags
}

// helpFlags parses the Flags: section of a cobra --help into flag name
// (without dashes) -> value type ("" for a boolean flag), long and short
// names alike.
func helpFlags(t *testing.T, help string) map[string]string {
	t.Helper()
	_, section, ok := strings.Cut(help, "\nFlags:\n")
	require.True(t, ok, "no Flags: section in:\n%s", help)
	if i := strings.Index(section, "\n\n"); i >= 0 {
		section = section[:i] // Global Flags: or the end of the help
	}
	section = strings.TrimRight(section, "\n")
	re := regexp.MustCompile(`^\s+(?:-([a-zA-Z0-9]), )?--([a-z0-9][a-z0-9-]*)(?: ([a-zA-Z]+))?(?:\s{2,}|$)`)
	out := map[string]string{}
	for _, l := range strings.Split(section, "\n") {
		m := re.FindStringSubmatch(l)
		require.NotNil(t, m, "unparsed flag line %q", l)
		out[m[2]] = m[3]
		if m[1] != "" {
			out[m[1]] = m[3]
		}
	}
	return out
}

// TestUnitFlagsExist checks every flag the systemd unit passes to
// `ycsbctl agent` against the flags `ycsbctl agent --help` lists: each must
// be exactly one of them, and take a value exactly when the agent's flag
// does.
func TestUnitFlagsExist(t *testing.T) {
	unit, err := os.ReadFile("ansible/roles/ycsbctl/templates/ycsbctl-agent.service.j2")
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "ycsbctl")
	build := exec.Command("go", "build", "-o", bin, "../cmd/ycsbctl")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	help, err := exec.Command(bin, "agent", "--help").CombinedOutput()
	require.NoError(t, err, string(help))

	known := helpFlags(t, string(help))
	for _, f := range []string{"help", "listen", "lease"} {
		require.Contains(t, known, f, "the help parser missed --%s:\n%s", f, help)
	}
	require.Empty(t, known["help"], "--help parsed as taking a value")
	require.Equal(t, "duration", known["lease"])

	command, flags := execStartFlags(t, string(unit))
	require.True(t, strings.HasSuffix(command[0], "/ycsbctl") && command[1] == "agent", "ExecStart runs %q, want ycsbctl agent", command)
	seen := map[string]bool{}
	for _, fv := range flags {
		flag, next := fv[0], fv[1]
		name, inline, hasInline := strings.Cut(strings.TrimPrefix(flag, "--"), "=")
		require.True(t, strings.HasPrefix(flag, "--"), "the unit passes %q; use the long --name form", flag)
		typ, ok := known[name]
		require.True(t, ok, "the unit passes %s, which `ycsbctl agent` does not have (it has %v)", flag, slices.Sorted(maps.Keys(known)))
		switch {
		case typ == "" && hasInline:
			t.Errorf("the unit gives boolean %s a value", flag)
		case typ == "" && next != "" && !strings.HasPrefix(next, "-"):
			t.Errorf("the unit follows boolean --%s with %q, which the agent would take as an argument", name, next)
		case typ != "" && !hasInline && (next == "" || strings.HasPrefix(next, "-")):
			t.Errorf("the unit passes --%s (a %s) without a value", name, typ)
		case typ != "" && hasInline && inline == "":
			t.Errorf("the unit passes --%s= with an empty value", name)
		}
		seen[name] = true
	}
	// The unit must at least tell the agent where to listen and how long
	// its lease is; together with the TLS and token branches that makes
	// the list below, so an edit that drops one is caught too.
	for _, f := range []string{"listen", "lease", "tls-cert", "tls-key", "tls-ca", "token-file", "insecure-listen", "metrics-addr"} {
		require.True(t, seen[f], "the unit no longer passes --%s", f)
	}
}

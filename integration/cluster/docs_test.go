//go:build cluster

package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/doctest"
)

// docAddrPrefix is the network the documentation's many-hosts examples
// use (10.0.0.11 to 10.0.0.14); the cluster's hosts are the same numbers
// on its bridge (addr(n)).
const docAddrPrefix = "10.0.0."

// testDocs runs the documentation's blocks that need hosts (the README's
// ten lines for many hosts) as written, with the documentation's addresses
// replaced by the cluster's. What an operator configures outside the
// block, SSH access to the hosts, comes from group_vars beside the
// block's inventory, the way an operator would keep it: the cluster's
// user, SSH configuration and Python. The block deploys the agents again
// with certificates and a token of its own.
func testDocs(t *testing.T, e *env) {
	blocks, err := doctest.Blocks(e.root)
	if err != nil {
		t.Fatal(err)
	}
	goEnv, err := doctest.GoEnv()
	if err != nil {
		t.Fatal(err)
	}
	clusterPrefix := strings.TrimSuffix(addr(1), "11")
	ran := 0
	for _, b := range blocks {
		if !b.Has("hosts") {
			continue
		}
		ran++
		t.Run(b.Name(), func(t *testing.T) {
			dir := t.TempDir()
			// deploy/ is copied: Ansible finds the binary relative to the
			// playbook (../../bin/ycsbctl), which must be this scratch's.
			home, err := doctest.Scratch(e.root, e.bin, dir, "deploy")
			if err != nil {
				t.Fatal(err)
			}
			ssh := "ansible_user: root\nansible_python_interpreter: /usr/bin/python3\nansible_ssh_common_args: -F " + filepath.Join(e.work, "ssh_config") +
				"\n# Root logs in over SSH; the hosts have no sudo.\nansible_become: false\nansible_pipelining: true\n"
			if err := os.MkdirAll(filepath.Join(dir, "group_vars"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "group_vars", "all.yml"), []byte(ssh), 0o644); err != nil {
				t.Fatal(err)
			}
			script := strings.ReplaceAll(b.Text, docAddrPrefix, clusterPrefix)
			env := append(goEnv, "HOME="+home, "PATH="+filepath.Dir(e.playbook)+":"+os.Getenv("PATH"),
				"YCSBCTL_CLUSTER_DIR="+e.work, "ANSIBLE_HOST_KEY_CHECKING=True", "ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0", "ANSIBLE_RETRY_FILES_ENABLED=0")
			start := time.Now()
			out, err := doctest.Run(script, dir, env, 25*time.Minute)
			if err != nil {
				t.Fatalf("%s failed: %v\n--- block, as run\n%s--- output\n%s", b.Name(), err, script, out)
			}
			figure(t, "documentation block %s ran in %s", b.Name(), time.Since(start).Round(time.Second))
		})
	}
	if ran == 0 {
		t.Fatal("no documentation block needs hosts: the README's many-hosts lines lost their mark")
	}
}

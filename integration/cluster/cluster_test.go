//go:build cluster

// Package cluster tests ycsbctl on a cluster of hosts on one machine
// (cluster.sh): the Ansible playbook deploys the agents as systemd
// services over SSH, and a coordinator outside the hosts drives them over
// mutual TLS with a token. Run with `make cluster-test` (root needed).
package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const hosts = 4

func addr(n int) string { return fmt.Sprintf("10.77.0.%d", 10+n) }

type env struct {
	t        *testing.T
	root     string // repository root
	work     string // cluster.sh work dir
	bin      string // ycsbctl under test
	playbook string
	tls      string
	vars     string // token vars file
	token    string
}

func (e *env) cmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Env = append(os.Environ(), "YCSBCTL_CLUSTER_DIR="+e.work, "ANSIBLE_HOST_KEY_CHECKING=True", "ANSIBLE_NOCOLOR=1",
		"ANSIBLE_FORCE_COLOR=0", "ANSIBLE_RETRY_FILES_ENABLED=0")
	return c
}

func (e *env) cluster(args ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := e.cmd(ctx, filepath.Join(e.root, "integration/cluster/cluster.sh"), args...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// play runs site.yml against the cluster's inventory and returns its
// output, exit code and the recap per host.
func (e *env) play(inventory string, extra ...string) (string, int, map[string]map[string]int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	args := append([]string{"-i", inventory, "site.yml", "-e", "ycsbctl_tls_dir=" + e.tls, "-e", "@" + e.vars}, extra...)
	c := e.cmd(ctx, e.playbook, args...)
	c.Dir = filepath.Join(e.root, "deploy/ansible")
	start := time.Now()
	out, err := c.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("ansible-playbook: %v", err)
		}
		code = ee.ExitCode()
	}
	e.t.Logf("ansible-playbook %s: exit %d in %s", strings.Join(extra, " "), code, time.Since(start).Round(time.Second))
	return string(out), code, recap(string(out))
}

var recapRe = regexp.MustCompile(`(?m)^(\S+)\s+:\s+((?:\w+=\d+\s*)+)$`)

func recap(out string) map[string]map[string]int {
	r := map[string]map[string]int{}
	i := strings.LastIndex(out, "PLAY RECAP")
	if i < 0 {
		return r
	}
	for _, m := range recapRe.FindAllStringSubmatch(out[i:], -1) {
		r[m[1]] = map[string]int{}
		for _, kv := range strings.Fields(m[2]) {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.Atoi(v)
			r[m[1]][k] = n
		}
	}
	return r
}

func build(t *testing.T, root, out, version string) {
	t.Helper()
	c := exec.Command("go", "build", "-ldflags", "-X github.com/ycsbctl/ycsbctl/internal/version.Version="+version, "-o", out, "./cmd/ycsbctl")
	c.Dir = root
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
}

func findPlaybook(t *testing.T, root string) string {
	for _, p := range []string{os.Getenv("YCSBCTL_ANSIBLE_PLAYBOOK"), filepath.Join(root, ".venv/bin/ansible-playbook")} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("ansible-playbook"); err == nil {
		return p
	}
	t.Fatal("ansible-playbook not found: run scripts/ci-setup.sh (it creates .venv with ansible-core) or set YCSBCTL_ANSIBLE_PLAYBOOK")
	return ""
}

// leftovers lists what a cluster could leave on the machine.
func leftovers() string {
	var b strings.Builder
	if out, _ := exec.Command("ip", "netns", "list").Output(); bytes.Contains(out, []byte("ycsbctl-")) {
		fmt.Fprintf(&b, "netns: %s\n", out)
	}
	if out, _ := exec.Command("ip", "-o", "link", "show").Output(); bytes.Contains(out, []byte("ycsbctl-")) {
		fmt.Fprintf(&b, "links: %s\n", out)
	}
	if m, _ := os.ReadFile("/proc/mounts"); bytes.Contains(m, []byte("ycsbctl")) {
		fmt.Fprintf(&b, "mounts: %s\n", m)
	}
	for _, root := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if m, _ := filepath.Glob(filepath.Join(root, "ycsbctl-h*")); len(m) > 0 {
			fmt.Fprintf(&b, "cgroups: %v\n", m)
		}
	}
	return b.String()
}

// clusterMemory sums the resident memory of every process of the hosts
// (from their cgroups) and the tmpfs holding their upper layers.
func clusterMemory(t *testing.T, work string) (rssKiB, tmpfsKiB int64) {
	for n := 1; n <= hosts; n++ {
		for _, root := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
			_ = filepath.Walk(filepath.Join(root, fmt.Sprintf("ycsbctl-h%d", n)), func(p string, info os.FileInfo, err error) error {
				if err != nil || info.Name() != "cgroup.procs" {
					return nil
				}
				procs, _ := os.ReadFile(p)
				for _, pid := range strings.Fields(string(procs)) {
					st, err := os.Open("/proc/" + pid + "/status")
					if err != nil {
						continue
					}
					sc := bufio.NewScanner(st)
					for sc.Scan() {
						if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "VmRSS:" {
							v, _ := strconv.ParseInt(f[1], 10, 64)
							rssKiB += v
						}
					}
					_ = st.Close()
				}
				return nil
			})
		}
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(filepath.Join(work, "state"), &fs); err == nil {
		tmpfsKiB = int64(fs.Blocks-fs.Bfree) * fs.Bsize / 1024
	}
	return rssKiB, tmpfsKiB
}

type runJSON struct {
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	Summary  struct {
		Operations int64 `json:"operations"`
	} `json:"summary"`
	Agents []struct {
		Address       string `json:"address"`
		Hostname      string `json:"hostname"`
		State         string `json:"state"`
		ClockOffsetNs *int64 `json:"clock_offset_ns"`
		RTTNs         *int64 `json:"rtt_ns"`
		StartSkewNs   *int64 `json:"start_skew_ns"`
		Final         *struct {
			Operations int64 `json:"operations"`
		} `json:"final"`
	} `json:"agents"`
}

func TestClusterDeployAndRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the cluster test needs root (network namespaces, mounts)")
	}
	wd, _ := os.Getwd()
	root := filepath.Clean(filepath.Join(wd, "../.."))
	e := &env{t: t, root: root, work: filepath.Join(os.TempDir(), fmt.Sprintf("ycsbctl-cluster-test-%d", os.Getpid())), playbook: findPlaybook(t, root)}
	if l := leftovers(); l != "" {
		t.Fatalf("a cluster is already up on this machine; take it down first (integration/cluster/cluster.sh down):\n%s", l)
	}
	lint := filepath.Join(filepath.Dir(e.playbook), "ansible-lint")
	if _, err := os.Stat(lint); err != nil {
		if lint, err = exec.LookPath("ansible-lint"); err != nil {
			t.Fatal("ansible-lint not found beside ansible-playbook or on PATH: run scripts/ci-setup.sh")
		}
	}
	lintCmd := exec.Command(lint, "site.yml")
	lintCmd.Dir = filepath.Join(root, "deploy/ansible")
	lintCmd.Env = append(os.Environ(), "NO_COLOR=1")
	if out, err := lintCmd.CombinedOutput(); err != nil {
		t.Fatalf("ansible-lint site.yml: %v\n%s", err, out)
	}
	tmp := t.TempDir()
	e.bin = filepath.Join(tmp, "ycsbctl")
	build(t, root, e.bin, "cluster-test")
	other := filepath.Join(tmp, "ycsbctl-other")
	build(t, root, other, "cluster-test-other")

	start := time.Now()
	t.Cleanup(func() {
		out, err := e.cmd(context.Background(), filepath.Join(root, "integration/cluster/cluster.sh"), "down").CombinedOutput()
		if err != nil {
			t.Errorf("cluster.sh down: %v\n%s", err, out)
		}
		if l := leftovers(); l != "" {
			t.Errorf("cluster.sh down left things behind:\n%s", l)
		}
		if _, err := os.Stat(e.work); err == nil {
			t.Errorf("cluster.sh down left %s", e.work)
		}
		if out, _ := exec.Command("pgrep", "-f", e.work).Output(); len(out) > 0 {
			t.Errorf("processes left: %s", out)
		}
		t.Logf("whole test: %s", time.Since(start).Round(time.Second))
	})
	upStart := time.Now()
	e.cluster("up", strconv.Itoa(hosts))
	t.Logf("cluster up (%d hosts): %s", hosts, time.Since(upStart).Round(100*time.Millisecond))
	inventory := filepath.Join(e.work, "inventory.ini")

	var hostAddrs, agents []string
	for n := 1; n <= hosts; n++ {
		hostAddrs = append(hostAddrs, addr(n))
		agents = append(agents, addr(n)+":7420")
	}
	e.tls = filepath.Join(tmp, "tls")
	if out, err := exec.Command(e.bin, "certs", "--dir", e.tls, "--hosts", strings.Join(hostAddrs, ",")).CombinedOutput(); err != nil {
		t.Fatalf("ycsbctl certs: %v\n%s", err, out)
	}
	e.token = fmt.Sprintf("cluster-%d-%d", os.Getpid(), time.Now().UnixNano())
	e.vars = filepath.Join(tmp, "token.yml")
	if err := os.WriteFile(e.vars, []byte("ycsbctl_token: "+e.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// First run installs; the second must change nothing.
	out, code, rc := e.play(inventory, "-e", "ycsbctl_binary="+e.bin)
	if code != 0 {
		t.Fatalf("first playbook run: exit %d\n%s", code, out)
	}
	for n := 1; n <= hosts; n++ {
		h := fmt.Sprintf("h%d", n)
		if rc[h] == nil || rc[h]["changed"] == 0 || rc[h]["failed"] != 0 || rc[h]["unreachable"] != 0 {
			t.Fatalf("first run recap for %s: %v\n%s", h, rc[h], out)
		}
	}
	out, code, rc = e.play(inventory, "-e", "ycsbctl_binary="+e.bin)
	if code != 0 {
		t.Fatalf("second playbook run: exit %d\n%s", code, out)
	}
	for n := 1; n <= hosts; n++ {
		h := fmt.Sprintf("h%d", n)
		if rc[h] == nil || rc[h]["changed"] != 0 || rc[h]["failed"] != 0 || rc[h]["ok"] == 0 {
			t.Fatalf("second run is not idempotent for %s: %v\n%s", h, rc[h], out)
		}
	}
	// The agents run as the unit says: systemd's service, its user, TLS.
	for n := 1; n <= hosts; n++ {
		st := e.cluster("exec", fmt.Sprintf("h%d", n), "systemctl", "show", "-p", "ActiveState,User,ExecStart", "ycsbctl-agent")
		for _, want := range []string{"ActiveState=active", "User=ycsbctl", "--tls-cert /etc/ycsbctl/tls/agent.pem", "--token-file /etc/ycsbctl/token", "--listen " + addr(n) + ":7420"} {
			if !strings.Contains(st, want) {
				t.Fatalf("h%d: ycsbctl-agent lacks %q:\n%s", n, want, st)
			}
		}
	}

	// certDir names the directory of the client certificate; "" dials
	// without TLS at all.
	coordinator := func(phase, results string, certDir string, token string, props ...string) (int, string) {
		args := []string{"coordinator", phase, "basic", "--agents", strings.Join(agents, ","), "--results", results}
		if certDir != "" {
			args = append(args, "--tls-cert", filepath.Join(certDir, "coordinator.pem"), "--tls-key", filepath.Join(certDir, "coordinator-key.pem"),
				"--tls-ca", filepath.Join(e.tls, "ca.pem"))
		}
		for _, p := range props {
			args = append(args, "-p", p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, e.bin, args...)
		c.Env = append(os.Environ(), "YCSBCTL_TOKEN="+token)
		b, err := c.CombinedOutput()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode(), string(b)
			}
			t.Fatalf("coordinator: %v", err)
		}
		return 0, string(b)
	}
	props := []string{"recordcount=20000", "operationcount=200000", "basicdb.verbose=false", "basicdb.simulatedelay=0", "threadcount=2", "status.interval=1"}
	for _, phase := range []string{"load", "run"} {
		results := filepath.Join(tmp, phase)
		code, out := coordinator(phase, results, e.tls, e.token, props...)
		if code != 0 {
			t.Fatalf("coordinator %s: exit %d\n%s", phase, code, out)
		}
		b, err := os.ReadFile(filepath.Join(results, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rj runJSON
		if err := json.Unmarshal(b, &rj); err != nil {
			t.Fatal(err)
		}
		if rj.Status != "complete" || rj.ExitCode != 0 || len(rj.Agents) != hosts {
			t.Fatalf("%s run.json: status %q exit %d agents %d", phase, rj.Status, rj.ExitCode, len(rj.Agents))
		}
		var sum, maxSkew, maxOff, maxRTT int64
		for i, a := range rj.Agents {
			if a.State != "finished" || a.Final == nil || a.StartSkewNs == nil || a.ClockOffsetNs == nil || a.RTTNs == nil {
				t.Fatalf("%s agent %d (%s): state %q, final/skew/offset/rtt missing", phase, i, a.Address, a.State)
			}
			if a.Hostname != fmt.Sprintf("h%d", i+1) {
				t.Fatalf("%s agent %d reports host name %q: not the host's own", phase, i, a.Hostname)
			}
			sum += a.Final.Operations
			maxSkew = max(maxSkew, abs(*a.StartSkewNs))
			maxOff = max(maxOff, abs(*a.ClockOffsetNs))
			maxRTT = max(maxRTT, *a.RTTNs)
			t.Logf("%s %s (%s): ops %d, start skew %.3f ms, clock offset %.3f ms, rtt %.3f ms", phase, a.Hostname, a.Address,
				a.Final.Operations, ms(*a.StartSkewNs), ms(*a.ClockOffsetNs), ms(*a.RTTNs))
		}
		want := map[string]int64{"load": 20000, "run": 200000}[phase]
		if sum != rj.Summary.Operations || sum != want {
			t.Fatalf("%s: agents' finals sum to %d, summary says %d, planned %d", phase, sum, rj.Summary.Operations, want)
		}
		// One machine, one clock: offsets and round trips over the bridge
		// are sub-millisecond; bounds leave room for a loaded 2-core box.
		if maxSkew > int64(100*time.Millisecond) || maxOff > int64(20*time.Millisecond) || maxRTT > int64(50*time.Millisecond) {
			t.Fatalf("%s: max start skew %.3f ms, clock offset %.3f ms, rtt %.3f ms beyond bounds", phase, ms(maxSkew), ms(maxOff), ms(maxRTT))
		}
		t.Logf("%s: %d ops over %d agents; max start skew %.3f ms, max |clock offset| %.3f ms, max rtt %.3f ms",
			phase, sum, hosts, ms(maxSkew), ms(maxOff), ms(maxRTT))
	}
	rss, tmpfs := clusterMemory(t, e.work)
	t.Logf("cluster memory: %d MiB resident in the hosts' processes, %d MiB in their upper layers (tmpfs)", rss/1024, tmpfs/1024)

	// Refusals: every agent turns away a coordinator without the client
	// certificate, with one from another CA, without the token, or with a
	// wrong one.
	foreign := filepath.Join(tmp, "foreign-tls")
	if out, err := exec.Command(e.bin, "certs", "--dir", foreign, "--hosts", strings.Join(hostAddrs, ",")).CombinedOutput(); err != nil {
		t.Fatalf("ycsbctl certs: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name    string
		certDir string
		token   string
		want    string
	}{
		{"no client certificate", "", e.token, ""},
		{"client certificate of another CA", foreign, e.token, "TLS"},
		{"no token", e.tls, "", "token"},
		{"wrong token", e.tls, e.token + "x", "token"},
	} {
		code, out := coordinator("run", filepath.Join(tmp, "refused"), c.certDir, c.token, props...)
		if code == 0 {
			t.Fatalf("%s: the coordinator was let in:\n%s", c.name, out)
		}
		for _, a := range agents {
			if !strings.Contains(out, a) {
				t.Fatalf("%s: agent %s not named as refusing:\n%s", c.name, a, out)
			}
		}
		if c.want != "" && !strings.Contains(out, c.want) {
			t.Fatalf("%s: error does not say %q:\n%s", c.name, c.want, out)
		}
	}

	b, err := os.ReadFile(inventory)
	if err != nil {
		t.Fatal(err)
	}
	// The database-node check: h1 reaches a port that listens (h2's agent
	// stands in for a database node until the cluster runs Cassandra), h2
	// is given one where nothing listens and fails the play, named.
	invDB := filepath.Join(tmp, "inventory-db-nodes.ini")
	s := strings.Replace(string(b), "h1 ansible_host="+addr(1), "h1 ansible_host="+addr(1)+` ycsbctl_db_nodes='["`+addr(2)+`:7420"]'`, 1)
	s = strings.Replace(s, "h2 ansible_host="+addr(2), "h2 ansible_host="+addr(2)+` ycsbctl_db_nodes='["`+addr(1)+`:9999"]'`, 1)
	if err := os.WriteFile(invDB, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, _ = e.play(invDB, "-e", "ycsbctl_binary="+e.bin)
	if code == 0 || !strings.Contains(out, "h2 cannot reach database node "+addr(1)+":9999") || strings.Contains(out, "h1 cannot reach") ||
		!strings.Contains(out, "ok: [h1] => (item="+addr(2)+":7420)") {
		t.Fatalf("database nodes: exit %d; want h2 named as unable to reach %s:9999 and h1 reaching %s:7420:\n%s", code, addr(1), addr(2), out)
	}

	// Another ycsbctl version on h3 fails the play naming h3.
	inv2 := filepath.Join(tmp, "inventory-other-version.ini")
	s = strings.Replace(string(b), "h3 ansible_host="+addr(3), "h3 ansible_host="+addr(3)+" ycsbctl_binary="+other, 1)
	s = strings.Replace(s, "[agents:vars]\n", "[agents:vars]\nycsbctl_binary="+e.bin+"\n", 1)
	if err := os.WriteFile(inv2, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, _ = e.play(inv2)
	if code == 0 || !strings.Contains(out, "h3 runs 'ycsbctl version cluster-test-other'") {
		t.Fatalf("another version on h3: exit %d, output does not name h3:\n%s", code, out)
	}

	// A host that is down (powered off: its systemd and every process of
	// it gone, so also the SSH connection Ansible keeps open) fails the
	// play naming it.
	_ = e.cmd(context.Background(), filepath.Join(root, "integration/cluster/cluster.sh"), "exec", "h4", "systemctl", "poweroff").Run()
	for i := 0; i < 100 && strings.Contains(e.cluster("status"), "h4 "+addr(4)+" systemd"); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if st := e.cluster("status"); !strings.Contains(st, "h4 "+addr(4)+" down") {
		t.Fatalf("h4 did not power off:\n%s", st)
	}
	out, code, rc = e.play(inventory, "-e", "ycsbctl_binary="+e.bin)
	if code == 0 || rc["h4"] == nil || rc["h4"]["unreachable"] == 0 || !strings.Contains(out, "fatal: [h4]: UNREACHABLE!") {
		t.Fatalf("h4 down: exit %d, recap %v:\n%s", code, rc["h4"], out)
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

//go:build cluster

// Package cluster tests ycsbctl on a cluster of hosts on one machine
// (cluster.sh): the Ansible playbook deploys the agents as systemd
// services over SSH, and a coordinator outside the hosts drives them over
// mutual TLS with a token. Run with `make cluster-test` (root needed).
package cluster

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const hosts = 4

func addr(n int) string { return fmt.Sprintf("10.77.0.%d", 10+n) }

type env struct {
	root     string // repository root
	work     string // cluster.sh work dir
	tmp      string // the test's own files (binaries, certificates, bundles)
	bin      string // ycsbctl under test
	other    string // ycsbctl built as another version
	playbook string
	tls      string
	vars     string // token vars file
	token    string
	// inventory is cluster.sh's; dbInventory adds the Cassandra nodes each
	// agent host must reach and the per-agent contact point.
	inventory   string
	dbInventory string
	agents      []string // host:port of every agent, in order
	hostAddrs   []string
	lock        *os.File // the machine's cluster lock, held (cluster_lock_test.go)
	// hbasePids are the HBase units' main pids ("hN/hbase-ROLE"), taken
	// before stopHBaseCluster stops them: systemd forgets a stopped
	// unit's ExecMainPID (it reads 0), and the telemetry check runs after.
	hbasePids map[string]int
}

func (e *env) cmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Env = append(os.Environ(), "YCSBCTL_CLUSTER_DIR="+e.work, "ANSIBLE_HOST_KEY_CHECKING=True", "ANSIBLE_NOCOLOR=1",
		"ANSIBLE_FORCE_COLOR=0", "ANSIBLE_RETRY_FILES_ENABLED=0")
	return c
}

// cluster runs cluster.sh and fails the test on an error.
func (e *env) cluster(t testing.TB, args ...string) string {
	t.Helper()
	out, err := e.clusterErr(args...)
	if err != nil {
		t.Fatalf("cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (e *env) clusterErr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := e.cmd(ctx, filepath.Join(e.root, "integration/cluster/cluster.sh"), args...)
	if e.lock != nil && len(args) > 0 && (args[0] == "up" || args[0] == "down") {
		// cluster.sh up and down hold the lock this test holds.
		c.ExtraFiles = []*os.File{e.lock}
		c.Env = append(c.Env, lockFDEnv+"=3")
	}
	out, err := c.CombinedOutput()
	return string(out), err
}

// play runs site.yml against an inventory and returns its output, exit
// code and the recap per host.
func (e *env) play(t testing.TB, inventory string, extra ...string) (string, int, map[string]map[string]int) {
	t.Helper()
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
			t.Fatalf("ansible-playbook: %v", err)
		}
		code = ee.ExitCode()
	}
	t.Logf("ansible-playbook %s: exit %d in %s", strings.Join(extra, " "), code, time.Since(start).Round(time.Second))
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
	lines := func(what string, out []byte) {
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "ycsbctl") {
				fmt.Fprintf(&b, "%s: %s\n", what, strings.TrimSpace(l))
			}
		}
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	lines("netns", out)
	out, _ = exec.Command("ip", "-o", "link", "show").Output()
	lines("link", out)
	// The cluster's tmpfs wherever it is mounted, and the namespaces'
	// mounts; not any path that happens to contain the name.
	m, _ := os.ReadFile("/proc/self/mounts")
	for _, l := range strings.Split(string(m), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && (f[0] == "ycsbctl-cluster" || strings.HasPrefix(f[1], "/run/netns/ycsbctl-")) {
			fmt.Fprintf(&b, "mount: %s\n", l)
		}
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
		before := rssKiB
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
		figure(t, "memory h%d: %d MiB resident", n, (rssKiB-before)/1024)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(filepath.Join(work, "state"), &fs); err == nil {
		tmpfsKiB = int64(fs.Blocks-fs.Bfree) * fs.Bsize / 1024
	}
	return rssKiB, tmpfsKiB
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// figure logs a measured figure under one stable prefix, so that the
// closing numbers of a CI run are `grep cluster-figure: .cluster-test.log`.
func figure(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Logf("cluster-figure: "+format, args...)
}

// TestCluster brings the cluster up once and runs every step against it in
// order; a step that the later ones depend on stops the test when it fails.
func TestCluster(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the cluster test needs root (network namespaces, mounts)")
	}
	wd, _ := os.Getwd()
	root := filepath.Clean(filepath.Join(wd, "../.."))
	e := &env{root: root, work: filepath.Join(os.TempDir(), fmt.Sprintf("ycsbctl-cluster-test-%d", os.Getpid())),
		playbook: findPlaybook(t, root), tmp: t.TempDir()}
	e.lock = holdClusterLock(t)
	e.clearStale(t)
	start := time.Now()
	t.Cleanup(func() {
		out, err := e.clusterErr("down")
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
		figure(t, "whole cluster test %s", time.Since(start).Round(time.Second))
	})
	for n := 1; n <= hosts; n++ {
		e.hostAddrs = append(e.hostAddrs, addr(n))
		e.agents = append(e.agents, addr(n)+":7420")
	}
	run := stepRunner(t)
	if !run("deploy", func(t *testing.T) { testDeploy(t, e) }) {
		t.FailNow()
	}
	run("basic", func(t *testing.T) { testBasicRun(t, e) })
	run("refusals", func(t *testing.T) { testRefusals(t, e) })
	if !run("cassandra", func(t *testing.T) { testCassandra(t, e) }) {
		t.FailNow()
	}
	run("telemetry-cassandra", func(t *testing.T) { testTelemetryCassandra(t, e) })
	// Memory with every node up and loaded.
	rss, tmpfs := clusterMemory(t, e.work)
	figure(t, "cluster memory %d MiB resident in the hosts' processes, %d MiB in their upper layers (tmpfs)", rss/1024, tmpfs/1024)
	run("prometheus", func(t *testing.T) { testPrometheus(t, e) })
	run("faults", func(t *testing.T) { testFaults(t, e) })
	// HBase beside the (idle) Cassandra nodes: memory allows it, and the
	// playbook-failures step needs h2's Cassandra node. The suite step
	// needs both databases up; HBase's daemons are stopped after it, and
	// the telemetry check reads the pids stopHBaseCluster took.
	if selected(t, "hbase") {
		hbase := run("hbase", func(t *testing.T) { testHBase(t, e) })
		if hbase {
			run("suite", func(t *testing.T) { testSuite(t, e) })
		}
		t.Run("hbase-stop", func(t *testing.T) { stopHBaseCluster(t, e) })
		if hbase {
			run("telemetry-hbase", func(t *testing.T) { testTelemetryHBase(t, e) })
		}
	}
	// The documentation's many-hosts lines deploy the agents again, with
	// their own certificates and token; nothing after them uses the
	// earlier ones but the playbook runs, which bring their own.
	run("docs", func(t *testing.T) { testDocs(t, e) })
	// Last: these plays leave h4 powered off.
	run("playbook-failures", func(t *testing.T) { testPlaybookFailures(t, e) })
}

// stepsEnv names the steps to run, for development: YCSBCTL_CLUSTER_STEPS=suite
// runs deploy, cassandra, hbase and suite. Unset (CI), every step runs.
const stepsEnv = "YCSBCTL_CLUSTER_STEPS"

// stepNeeds is what each step needs run before it on the same cluster
// (deploy starts the agents and Cassandra's nodes).
var stepNeeds = map[string][]string{
	"deploy": nil, "basic": {"deploy"}, "refusals": {"deploy"}, "cassandra": {"deploy"},
	"telemetry-cassandra": {"cassandra"}, "prometheus": {"cassandra"}, "faults": {"cassandra"},
	"hbase": {"deploy"}, "suite": {"cassandra", "hbase"}, "telemetry-hbase": {"hbase"},
	"docs": {"deploy"}, "playbook-failures": {"deploy"},
}

// selectedSteps is the set stepsEnv asks for with what it needs, or nil
// for every step.
func selectedSteps(t *testing.T) map[string]bool {
	v := strings.TrimSpace(os.Getenv(stepsEnv))
	if v == "" {
		return nil
	}
	sel := map[string]bool{}
	var add func(string)
	add = func(s string) {
		needs, ok := stepNeeds[s]
		if !ok {
			t.Fatalf("%s: unknown step %q (steps: deploy, basic, refusals, cassandra, telemetry-cassandra, prometheus, faults, hbase, suite, telemetry-hbase, docs, playbook-failures)", stepsEnv, s)
		}
		sel[s] = true
		for _, n := range needs {
			add(n)
		}
	}
	for _, s := range strings.Split(v, ",") {
		add(strings.TrimSpace(s))
	}
	return sel
}

func selected(t *testing.T, step string) bool {
	sel := selectedSteps(t)
	return sel == nil || sel[step]
}

// stepRunner runs a step as a subtest, or, with stepsEnv set, leaves out
// the steps not asked for, saying so loudly at the start and the end: a
// partial run is for development, never a pass of the cluster test.
func stepRunner(t *testing.T) func(string, func(*testing.T)) bool {
	sel := selectedSteps(t)
	if sel == nil {
		return t.Run
	}
	var left []string
	for s := range stepNeeds {
		if !sel[s] {
			left = append(left, s)
		}
	}
	sort.Strings(left)
	msg := fmt.Sprintf("PARTIAL CLUSTER TEST: %s=%s; steps LEFT OUT: %s", stepsEnv, os.Getenv(stepsEnv), strings.Join(left, ", "))
	t.Log(msg)
	t.Cleanup(func() { t.Log(msg) })
	return func(name string, f func(*testing.T)) bool {
		if !sel[name] {
			return true
		}
		return t.Run(name, f)
	}
}

func runOut(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(b), err
}

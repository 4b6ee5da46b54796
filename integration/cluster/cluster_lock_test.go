//go:build cluster

package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// One cluster fits a machine (its bridge, addresses and host names are
// fixed), so the cluster test holds the machine's cluster lock for its whole
// life: a second run waits for the first instead of finding its hosts, and
// a cluster found while the lock is free belongs to a run that died (the
// kernel drops a flock with its holder) and is taken down. cluster.sh up
// and down hold the same lock.
const (
	lockEnv      = "YCSBCTL_CLUSTER_LOCK"      // the lock file; cluster.sh reads it too
	lockWaitEnv  = "YCSBCTL_CLUSTER_LOCK_WAIT" // how long to wait for another holder (a Go duration)
	lockFDEnv    = "YCSBCTL_CLUSTER_LOCK_FD"   // the descriptor cluster.sh inherits the held lock on
	lockHoldEnv  = "YCSBCTL_CLUSTER_LOCK_HOLD" // re-exec: hold this lock file until stdin closes
	lockDefault  = "/run/lock/ycsbctl-cluster.lock"
	lockWaitDflt = 40 * time.Minute
	lockLogEvery = time.Minute
)

func lockPath() string {
	if p := os.Getenv(lockEnv); p != "" {
		return p
	}
	return lockDefault
}

var machineLock struct {
	once sync.Once
	f    *os.File
	err  error
}

// holdClusterLock takes the machine's cluster lock the first time a test
// asks, waiting for another holder, and keeps it until the test binary
// exits.
func holdClusterLock(t *testing.T) *os.File {
	t.Helper()
	machineLock.once.Do(func() {
		wait := lockWaitDflt
		if s := os.Getenv(lockWaitEnv); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				machineLock.err = fmt.Errorf("%s=%q: expected a duration such as 40m", lockWaitEnv, s)
				return
			}
			wait = d
		}
		machineLock.f, machineLock.err = acquireLock(lockPath(), wait, lockLogEvery, t.Logf)
	})
	if machineLock.err != nil {
		t.Fatal(machineLock.err)
	}
	return machineLock.f
}

// acquireLock locks path exclusively and writes this process's PID into
// it. While another process holds it, it waits up to bound, logging the
// holder every interval, then fails naming the holder.
func acquireLock(path string, bound, every time.Duration, logf func(string, ...any)) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the cluster lock: %w", err)
	}
	start := time.Now()
	var logged time.Time
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("the cluster lock %s: %w", path, err)
		}
		waited := time.Since(start)
		if waited >= bound {
			_ = f.Close()
			return nil, fmt.Errorf("the cluster lock %s is still held by %s after %s: another cluster test or cluster.sh is using this machine's cluster; let it finish or stop that process (%s sets the wait)",
				path, lockHolder(path), bound, lockWaitEnv)
		}
		if logged.IsZero() || time.Since(logged) >= every {
			logf("waiting for the cluster lock %s, held by %s (waited %s of at most %s)", path, lockHolder(path), waited.Round(time.Second), bound)
			logged = time.Now()
		}
		time.Sleep(min(every/4, time.Second))
	}
	if err := f.Truncate(0); err != nil {
		_ = f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// lockHolder names the process whose PID the lock file holds.
func lockHolder(path string) string {
	b, _ := os.ReadFile(path)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return "a process that wrote no PID into it"
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return fmt.Sprintf("PID %d (gone)", pid)
	}
	return fmt.Sprintf("PID %d (%s)", pid, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")))
}

// lockHolderMain is the re-executed test binary holding a lock file until
// its stdin closes.
func lockHolderMain(path string) int {
	f, err := acquireLock(path, 0, time.Second, func(string, ...any) {})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = f.Close() }()
	fmt.Println("held")
	_, _ = bufio.NewReader(os.Stdin).ReadString(0)
	return 0
}

// clearStale runs with the machine's lock held: a cluster on the machine
// now was left by a run that died without taking it down (the lock went
// with it). It is logged and taken down; the test fails only if something
// is still left.
func (e *env) clearStale(t *testing.T) {
	t.Helper()
	l := leftovers()
	if l == "" {
		return
	}
	t.Logf("a stale cluster is on this machine (the cluster lock was free, so no run owns it); taking it down:\n%s", l)
	out, err := e.clusterErr("down")
	if l := leftovers(); l != "" {
		t.Fatalf("a stale cluster is still on this machine after cluster.sh down (%v); take it down by hand:\n%s\ncluster.sh down said:\n%s", err, l, out)
	}
	t.Logf("stale cluster taken down (cluster.sh down: %v)\n%s", err, out)
}

// TestStaleCluster runs before TestCluster: a cluster left by a run killed
// with another YCSBCTL_CLUSTER_DIR (a network namespace and a veth, a host
// cgroup with a process in it, the cluster's tmpfs mounted elsewhere) is
// taken down by the test's start-up, and a held lock is waited for, then
// refused naming its holder, by the test and by cluster.sh.
func TestStaleCluster(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the cluster test needs root (network namespaces, mounts)")
	}
	wd, _ := os.Getwd()
	e := &env{root: filepath.Clean(filepath.Join(wd, "../..")), work: filepath.Join(t.TempDir(), "work")}
	e.lock = holdClusterLock(t)
	e.clearStale(t) // a real one first, so that what follows sees only its own

	other := filepath.Join(t.TempDir(), "state") // the dead run's $YCSBCTL_CLUSTER_DIR/state
	cg := "/sys/fs/cgroup/unified"
	if _, err := os.Stat(cg); err != nil {
		cg = "/sys/fs/cgroup"
	}
	cg = filepath.Join(cg, "ycsbctl-h9")
	sleeper := exec.Command("sleep", "600")
	exited := make(chan struct{})
	t.Cleanup(func() { // only if the test failed half way
		_ = exec.Command("ip", "netns", "del", "ycsbctl-h9").Run()
		_ = exec.Command("ip", "link", "del", "ycsbctl-v9").Run()
		_ = exec.Command("umount", "-l", other).Run()
		if sleeper.Process != nil {
			_ = sleeper.Process.Kill()
			<-exited // a cgroup with a process in it cannot be removed
		}
		_ = os.Remove(cg)
	})
	must := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	must("ip", "netns", "add", "ycsbctl-h9")
	must("ip", "link", "add", "ycsbctl-v9", "type", "veth", "peer", "name", "eth0", "netns", "ycsbctl-h9")
	must("mkdir", "-p", other)
	must("mount", "-t", "tmpfs", "-o", "size=1m", "ycsbctl-cluster", other)
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = sleeper.Wait(); close(exited) }()
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := leftovers()
	for _, want := range []string{"ycsbctl-h9", "ycsbctl-v9", other, cg} {
		if !strings.Contains(before, want) {
			t.Fatalf("leftovers() misses %s:\n%s", want, before)
		}
	}

	// A held lock: cluster.sh down refuses at once and leaves the cluster
	// alone; the test's wait logs the holder, then gives up naming it.
	lock := filepath.Join(t.TempDir(), "lock")
	pid, release := holdLock(t, lock)
	c := exec.Command(filepath.Join(e.root, "integration/cluster/cluster.sh"), "down")
	c.Env = append(os.Environ(), lockEnv+"="+lock, "YCSBCTL_CLUSTER_DIR="+e.work)
	out, err := c.CombinedOutput()
	if err == nil || !strings.Contains(string(out), fmt.Sprintf("held by PID %d", pid)) {
		t.Fatalf("cluster.sh down with the lock held by PID %d: %v\n%s", pid, err, out)
	}
	if l := leftovers(); l != before {
		t.Fatalf("cluster.sh down refused but changed the machine:\nbefore:\n%s\nafter:\n%s", before, l)
	}
	var logs []string
	logf := func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }
	if _, err := acquireLock(lock, 1500*time.Millisecond, 500*time.Millisecond, logf); err == nil ||
		!strings.Contains(err.Error(), fmt.Sprintf("held by PID %d", pid)) {
		t.Fatalf("acquireLock with the lock held by PID %d: %v", pid, err)
	}
	if len(logs) < 2 || !strings.Contains(logs[0], fmt.Sprintf("held by PID %d", pid)) {
		t.Fatalf("the wait for a held lock did not log its holder each interval: %q", logs)
	}
	// Waited for: the holder lets go once the wait has started.
	got := make(chan error, 1)
	waiting := make(chan struct{})
	var once sync.Once
	go func() {
		f, err := acquireLock(lock, 2*time.Minute, 200*time.Millisecond, func(string, ...any) { once.Do(func() { close(waiting) }) })
		if f != nil {
			defer func() { _ = f.Close() }()
			if b, _ := os.ReadFile(lock); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
				err = fmt.Errorf("the lock file holds %q, not this process's PID %d", b, os.Getpid())
			}
		}
		got <- err
	}()
	<-waiting
	release()
	if err := <-got; err != nil {
		t.Fatalf("waiting for a lock its holder released: %v", err)
	}

	// The lock is free (it is this process's): the start-up takes the
	// stale cluster down.
	e.clearStale(t)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatalf("the process in the stale host's cgroup survived cluster.sh down")
	}
	if m, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(m), other) {
		t.Fatalf("the stale cluster's tmpfs at %s is still mounted", other)
	}
}

// holdLock starts the test binary holding lock; release lets it go.
func holdLock(t *testing.T, lock string) (pid int, release func()) {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), lockHoldEnv+"="+lock)
	c.Stderr = os.Stderr
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	release = func() { _ = in.Close() }
	t.Cleanup(func() { release(); _ = c.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("lock holder: %q, %v", line, err)
	}
	return c.Process.Pid, release
}

package resultsdir

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdEnv makes the test binary a holder: it takes the directory the
// variable names, says "held" and keeps it until its stdin closes.
const holdEnv = "RESULTSDIR_TEST_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		l, err := Take(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		fmt.Println("held")
		_, _ = io.Copy(io.Discard, os.Stdin)
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holder is another process owning a directory.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startHolder(t *testing.T, dir string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
	}()
	select {
	case l := <-line:
		if l != "held" {
			t.Fatalf("holder: %q", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the holder did not take the directory within 30 s")
	}
	return h
}

// kill ends the holder without its release, as SIGKILL does a run.
func (h *holder) kill(t *testing.T) {
	t.Helper()
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	_ = h.cmd.Wait()
}

func wantHeld(t *testing.T, err error, pid int, owned string) {
	t.Helper()
	var he *HeldError
	if !errors.As(err, &he) {
		t.Fatalf("want a HeldError, got %v", err)
	}
	if he.Holder == nil || he.Holder.PID != pid {
		t.Fatalf("holder %v, want PID %d", he.Holder, pid)
	}
	if he.Owned != owned {
		t.Fatalf("owned %s, want %s", he.Owned, owned)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("PID %d", pid)) || !strings.Contains(err.Error(), filepath.Base(os.Args[0])) {
		t.Fatalf("the refusal names neither the PID nor the command: %v", err)
	}
}

// A directory owned by a live process is refused at once, to Take, Open
// and Claim, to a directory inside it too, and while the holder is
// stopped (SIGSTOP); once the holder is killed its lock is taken over and
// the dead holder named; a released lock names nobody.
func TestLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	h := startHolder(t, dir)
	pid := h.cmd.Process.Pid

	start := time.Now()
	_, err := Take(dir)
	wantHeld(t, err, pid, dir)
	if d := time.Since(start); d > holderWait/2 {
		t.Fatalf("the refusal took %s: a live, named holder is refused at once", d)
	}
	_, err = Open(dir, Options{})
	wantHeld(t, err, pid, dir)
	_, err = Claim(filepath.Join(dir, "sub"), false, nil)
	wantHeld(t, err, pid, dir)
	if _, err := os.Stat(filepath.Join(dir, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Claim made a directory inside another's before it was refused: %v", err)
	}
	if he, ok := Owner(filepath.Join(dir, "out.html")); !ok || he.Holder.PID != pid {
		t.Fatalf("Owner: %v %v", he, ok)
	}
	if _, ok := Holding(dir); !ok {
		t.Fatal("Holding: not held")
	}

	if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	_, err = Take(dir)
	wantHeld(t, err, pid, dir)
	_ = h.cmd.Process.Signal(syscall.SIGCONT)

	h.kill(t)
	l, err := Take(dir)
	if err != nil {
		t.Fatal(err)
	}
	if prev := l.TookOver(); prev == nil || prev.PID != pid {
		t.Fatalf("took over %v, want PID %d", prev, pid)
	}
	l.Release()
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil || len(b) != 0 {
		t.Fatalf("a released lock file holds %q (%v)", b, err)
	}
	l, err = Take(dir)
	if err != nil {
		t.Fatal(err)
	}
	if prev := l.TookOver(); prev != nil {
		t.Fatalf("took over %v from a lock released", prev)
	}
	l.Release()
}

// This process' own nested ownerships are allowed (a suite's step inside
// its directory); the same directory twice is not; a directory inside
// another process' is refused, naming the outer one.
func TestNestedOwnership(t *testing.T) {
	root := t.TempDir()
	outer, err := Take(root)
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	inner, err := Take(sub)
	if err != nil {
		t.Fatalf("a nested ownership of this process: %v", err)
	}
	if _, err := Take(root); err == nil || !strings.Contains(err.Error(), "already owned by this process") {
		t.Fatalf("the same directory twice: %v", err)
	}
	inner.Release()
	outer.Release()

	other := t.TempDir()
	h := startHolder(t, other)
	deep := filepath.Join(other, "x", "y")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Take(deep)
	wantHeld(t, err, h.cmd.Process.Pid, other)
}

// A lock file whose holder has not written its name yet (or a prober's
// instant) is waited for, within holderWait; a holder that never names
// itself is still refused, as "a process that did not record itself".
func TestUnnamedHolderIsRefused(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := lockExclusive(f); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { holderWait = d }(holderWait)
	holderWait = 200 * time.Millisecond
	start := time.Now()
	_, err = Take(dir)
	var he *HeldError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "did not record itself") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d < holderWait || d > holderWait+5*time.Second {
		t.Fatalf("refused after %s, want about %s", d, holderWait)
	}
}

// An owner that has locked but not yet written its name (two runs
// started at once) is named all the same, by every check: Take, Open's
// look at the directory and the directories above it, Owner. (Open's
// look used to refuse at once as "a process that did not record itself".)
func TestLateNamedHolderIsNamed(t *testing.T) {
	for _, check := range []struct {
		name string
		do   func(dir string) error
	}{
		{"Take", func(dir string) error { _, err := Take(dir); return err }},
		{"Open", func(dir string) error { _, err := Open(dir, Options{}); return err }},
		{"Claim inside", func(dir string) error { _, err := Claim(filepath.Join(dir, "sub"), false, nil); return err }},
		{"Owner", func(dir string) error {
			if he, ok := Owner(filepath.Join(dir, "x.html")); ok {
				return he
			}
			return nil
		}},
	} {
		t.Run(check.name, func(t *testing.T) {
			dir := t.TempDir()
			f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			if err := lockExclusive(f); err != nil {
				t.Fatal(err)
			}
			named := make(chan struct{})
			go func() {
				defer close(named)
				// The owner writes its name a moment after it locked.
				time.Sleep(50 * time.Millisecond)
				_, _ = f.WriteAt([]byte(`{"pid":`+fmt.Sprint(os.Getpid())+`,"command":["ycsbctl","run"]}`), 0)
			}()
			err = check.do(dir)
			<-named
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("PID %d (ycsbctl run)", os.Getpid())) {
				t.Fatalf("the late-named owner is not named: %v", err)
			}
		})
	}
}

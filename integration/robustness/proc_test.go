//go:build robustness

package robustness

// The processes of a history: the ycsbctl binary built once from this
// checkout (its path, unique to this test process, tells its processes
// from any other ycsbctl on the machine), each command's output kept line
// by line with its status lines counted, and the history's agents.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"

	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// repoRoot is the checkout's top directory.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// buildBinary builds ./cmd/ycsbctl once into dir.
func buildBinary(dir string) (string, error) {
	buildOnce.Do(func() {
		bin := filepath.Join(dir, "ycsbctl")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/ycsbctl")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/ycsbctl: %v\n%s", err, out)
			return
		}
		binPath = bin
	})
	return binPath, buildErr
}

// statusMark is in every YCSB status line (-s), of a run, a load, a
// coordinator, a probe and a suite's step.
const statusMark = "current ops/sec"

// proc is one ycsbctl process of a history.
type proc struct {
	args  []string
	cmd   *exec.Cmd
	pid   int
	began time.Time

	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	part   []byte
	lines  int // status lines so far
	wake   chan struct{}

	done chan struct{}
	exit int // its exit code, 128+N when signal N ended it
	took time.Duration
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stderr.Write(b)
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			break
		}
		if bytes.Contains(p.part[:i], []byte(statusMark)) {
			p.lines++
			close(p.wake)
			p.wake = make(chan struct{})
		}
		p.part = p.part[i+1:]
	}
	return len(b), nil
}

type stdoutWriter struct{ p *proc }

func (w stdoutWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.stdout.Write(b)
}

// startProc starts bin with args in dir.
func startProc(bin, dir string, args ...string) (*proc, error) {
	p := &proc{args: args, wake: make(chan struct{}), done: make(chan struct{})}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TERM=dumb")
	cmd.Stdout = stdoutWriter{p}
	cmd.Stderr = p
	cmd.WaitDelay = 5 * time.Second
	p.cmd = cmd
	p.began = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.pid = cmd.Process.Pid
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.took = time.Since(p.began)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.exit = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.exit = 128 + int(ws.Signal())
			}
		} else if err != nil {
			p.exit = -1
		}
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) status() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lines
}

func (p *proc) errText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitStatus waits until p printed n status lines; false when it exited
// first or within did not suffice.
func (p *proc) waitStatus(n int, within time.Duration) bool {
	deadline := time.After(within)
	for {
		p.mu.Lock()
		got, wake := p.lines, p.wake
		p.mu.Unlock()
		if got >= n {
			return true
		}
		select {
		case <-wake:
		case <-p.done:
			return p.status() >= n
		case <-deadline:
			return false
		}
	}
}

func (p *proc) signal(s syscall.Signal) error {
	if p.exited() {
		return errors.New("already exited")
	}
	return p.cmd.Process.Signal(s)
}

// waitExit waits for p within d; false on a hang.
func (p *proc) waitExit(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// goroutines asks a hung Go process for its goroutines (SIGQUIT makes it
// print them and exit), then kills it.
func (p *proc) goroutines() string {
	before := len(p.errText())
	_ = p.signal(syscall.SIGQUIT)
	if !p.waitExit(5 * time.Second) {
		_ = p.signal(syscall.SIGKILL)
		p.waitExit(10 * time.Second)
	}
	return p.errText()[before:]
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// agent is one `ycsbctl agent` of a history, on a free port of 127.0.0.1.
type agent struct {
	addr string
	p    *proc
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// startAgent starts an agent and waits until it listens.
func startAgent(bin, dir string) (*agent, error) {
	var last error
	for try := 0; try < 3; try++ { // a free port can be taken between the probe and the bind
		addr, err := freePort()
		if err != nil {
			return nil, err
		}
		p, err := startProc(bin, dir, "agent", "--listen", addr, "--lease", strconv.Itoa(leaseMs)+"ms")
		if err != nil {
			return nil, err
		}
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && !p.exited() {
			if strings.Contains(p.errText(), "agent: listening on") {
				return &agent{addr: addr, p: p}, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = p.signal(syscall.SIGKILL)
		p.waitExit(10 * time.Second)
		last = fmt.Errorf("agent on %s did not listen: %s", addr, tail(p.errText(), 2000))
	}
	return nil, last
}

// idle waits until the agent holds no run, within d; it returns the run
// it still holds.
func (a *agent) idle(d time.Duration) string {
	cc, err := transport.Dial(a.addr, nil, "", transport.Identity{Version: version.Version, Protocol: version.Protocol})
	if err != nil {
		return "cannot dial: " + err.Error()
	}
	defer func() { _ = cc.Close() }()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		r, err := pb.NewAgentClient(cc).Ping(ctx, &pb.PingRequest{})
		cancel()
		if err == nil && r.BusyRun == "" {
			return ""
		}
		if time.Now().After(deadline) {
			if err != nil {
				return err.Error()
			}
			return r.BusyRun
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leftover is a live process of the test's binary.
type leftover struct {
	pid     int
	cmdline string
}

func (l leftover) String() string { return fmt.Sprintf("pid %d: %s", l.pid, l.cmdline) }

// ownProcesses lists the live processes running bin (other than those
// in except), read from /proc: what a history left behind.
func ownProcesses(bin string, except map[int]bool) []leftover {
	entries, _ := os.ReadDir("/proc")
	var out []leftover
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || except[pid] {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || strings.TrimSuffix(exe, " (deleted)") != bin {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, leftover{pid: pid, cmdline: strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")})
	}
	return out
}

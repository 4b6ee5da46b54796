package coordinator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/testutil/bridge"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// proc is a child process (agent or coordinator) with its output
// captured line by line.
type proc struct {
	cmd   *exec.Cmd
	name  string
	mu    sync.Mutex
	out   strings.Builder
	errb  strings.Builder
	lines chan string // stderr lines, for triggers
	done  chan struct{}
	code  int
}

func spawn(t *testing.T, name, role string, cfg any) *proc {
	t.Helper()
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRole+"="+role, envConfig+"="+string(b))
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	p := &proc{cmd: cmd, name: name, lines: make(chan string, 1024), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go p.copyLines(&wg, stdout, &p.out, nil)
	go p.copyLines(&wg, stderr, &p.errb, p.lines)
	go func() {
		wg.Wait()
		err := cmd.Wait()
		p.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		<-p.done
		if t.Failed() {
			t.Logf("--- %s stderr:\n%s\n--- %s stdout:\n%s", p.name, p.stderr(), p.name, p.stdout())
		}
	})
	return p
}

func (p *proc) copyLines(wg *sync.WaitGroup, r io.Reader, into *strings.Builder, lines chan string) {
	defer wg.Done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		p.mu.Lock()
		into.WriteString(sc.Text())
		into.WriteByte('\n')
		p.mu.Unlock()
		if lines != nil {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}
}

func (p *proc) stdout() string { p.mu.Lock(); defer p.mu.Unlock(); return p.out.String() }
func (p *proc) stderr() string { p.mu.Lock(); defer p.mu.Unlock(); return p.errb.String() }

func (p *proc) kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
}

func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		t.Fatalf("%s did not exit within %s", p.name, d)
		return -1
	}
}

// waitLine waits for a stderr line containing s, n times.
func (p *proc) waitLines(t *testing.T, s string, n int, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for n > 0 {
		select {
		case l := <-p.lines:
			if strings.Contains(l, s) {
				n--
			}
		case <-p.done:
			t.Fatalf("%s exited while waiting for %q", p.name, s)
		case <-deadline:
			t.Fatalf("%s: no %q within %s", p.name, s, d)
		}
	}
}

type agentProc struct {
	*proc
	addr string
}

func spawnAgent(t *testing.T, name string, cfg procAgentConfig) *agentProc {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	p := spawn(t, name, "agent", cfg)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if out := p.stdout(); strings.HasPrefix(out, "LISTENING ") {
			return &agentProc{proc: p, addr: strings.TrimSpace(strings.TrimPrefix(strings.SplitN(out, "\n", 2)[0], "LISTENING "))}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited: %s", name, p.stderr())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not start", name)
	return nil
}

// busyRun asks an agent which run it holds ("" when idle).
func busyRun(t *testing.T, addr string) string {
	t.Helper()
	cc, err := transport.Dial(addr, nil, "", transport.Identity{Version: version.Version, Protocol: version.Protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn(t, cc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := pb.NewAgentClient(cc).Ping(ctx, &pb.PingRequest{})
	if err != nil {
		t.Fatalf("ping %s: %v", addr, err)
	}
	return r.BusyRun
}

func waitIdle(t *testing.T, addr string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < d {
		if busyRun(t, addr) == "" {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("agent %s still busy after %s", addr, d)
	return 0
}

func coordProc(t *testing.T, name string, cfg procCoordConfig) *proc {
	t.Helper()
	if cfg.Results == "" {
		cfg.Results = t.TempDir()
	}
	cfg.Status = true
	return spawn(t, name, "coordinator", cfg)
}

func reportOps(rep *bundle.Run) (merged, agents, finals int64) {
	for _, a := range rep.Agents {
		agents += a.Operations
		if a.Final != nil {
			finals += a.Final.Operations
		}
	}
	return rep.Summary.Operations, agents, finals
}

func procProps(extra map[string]string) map[string]string {
	return baseProps(extra)
}

// TestProcesses runs coordinator and agents as separate processes on
// 127.0.0.1: the scenarios share one pool of three agent daemons, as a
// real deployment would, and replace the ones they kill.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const lease = 2 * time.Second
	dataDir := t.TempDir()
	pool := make([]*agentProc, 3)
	startAgent := func(i int) {
		pool[i] = spawnAgent(t, fmt.Sprintf("agent-%d", i), procAgentConfig{LeaseMs: lease.Milliseconds(),
			// Three agents share this host, so each gets its own
			// embedded store (on real hosts the same path is fine).
			Props: map[string]string{"embedded.dir": filepath.Join(dataDir, fmt.Sprintf("agent-%d", i))}})
	}
	for i := range pool {
		startAgent(i)
	}
	addrs := func() []string {
		out := make([]string, len(pool))
		for i, a := range pool {
			out[i] = a.addr
		}
		return out
	}

	runPhase := func(t *testing.T, db string, load bool, props map[string]string, agents []string) *bundle.Run {
		t.Helper()
		results := t.TempDir()
		c := coordProc(t, "coordinator", procCoordConfig{DB: db, Load: load, Props: props, Agents: agents, Results: results})
		if code := c.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("coordinator exit %d", code)
		}
		rep := readReport(t, results)
		merged, ag, fin := reportOps(rep)
		want := int64(3000)
		if merged != want || ag != want || fin != want || rep.Status != run.StatusComplete {
			t.Fatalf("status %s, ops merged %d agents %d finals %d, want %d", rep.Status, merged, ag, fin, want)
		}
		return rep
	}

	t.Run("basic", func(t *testing.T) {
		runPhase(t, "basic", true, procProps(nil), addrs())
		rep := runPhase(t, "basic", false, procProps(map[string]string{"target": "3000"}), addrs())
		var skews []string
		for _, a := range rep.Agents {
			skews = append(skews, time.Duration(*a.StartSkewNs).String())
			if sk := time.Duration(*a.StartSkewNs); sk < -50*time.Millisecond || sk > 150*time.Millisecond {
				t.Errorf("agent %d start skew %s", a.Index, sk)
			}
		}
		t.Logf("start skew across 3 agent processes: %s", strings.Join(skews, ", "))
	})

	t.Run("embedded", func(t *testing.T) {
		runPhase(t, "embedded", true, procProps(nil), addrs())
		// Every agent stored exactly its contiguous third of the keys.
		for i := range pool {
			n := countEmbedded(t, filepath.Join(dataDir, fmt.Sprintf("agent-%d", i)))
			if n != 1000 {
				t.Errorf("agent %d store holds %d records, want 1000", i, n)
			}
		}
		rep := runPhase(t, "embedded", false, procProps(map[string]string{"readproportion": "1", "updateproportion": "0"}), addrs())
		// Reads cover the whole key space, so with one store per agent
		// about two thirds of them miss; together they add up.
		ret := rep.Summary.Returns["READ"]
		if ret["OK"]+ret["NOT_FOUND"] != 3000 || ret["OK"] < 500 || ret["NOT_FOUND"] < 1000 {
			t.Errorf("read returns %v", ret)
		}
	})

	t.Run("connection cut and restored", func(t *testing.T) {
		bridges := make([]string, len(pool))
		var br *bridge.Bridge
		for i, a := range pool {
			b, err := bridge.New(a.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer closeBridge(t, b)
			bridges[i] = b.Addr()
			if i == 1 {
				br = b
			}
		}
		results := t.TempDir()
		c := coordProc(t, "coordinator", procCoordConfig{DB: "basic", Props: procProps(map[string]string{"target": "1500"}), Agents: bridges, Results: results})
		c.waitLines(t, "current ops/sec", 2, 20*time.Second)
		br.Cut()
		time.Sleep(800 * time.Millisecond)
		br.Restore()
		if code := c.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("coordinator exit %d", code)
		}
		rep := readReport(t, results)
		merged, ag, fin := reportOps(rep)
		if merged != 3000 || ag != 3000 || fin != 3000 || rep.Status != run.StatusComplete {
			t.Fatalf("status %s, ops merged %d agents %d finals %d, want 3000", rep.Status, merged, ag, fin)
		}
		if rep.Agents[1].Reconnects < 1 || br.Accepted() < 2 {
			t.Fatalf("agent 1 reconnects %d, bridge connections %d: the cut did not bite", rep.Agents[1].Reconnects, br.Accepted())
		}
		if !strings.Contains(c.stderr(), "stream re-established") {
			t.Error("no re-attach reported")
		}
	})

	t.Run("mTLS and token", func(t *testing.T) {
		cs := newCerts(t)
		a := spawnAgent(t, "tls-agent", procAgentConfig{Token: "tok-0123456789abcdef", TLS: &transport.TLSFiles{Cert: cs.server, Key: cs.serverKey, CA: cs.ca}})
		good := &transport.TLSFiles{Cert: cs.client, Key: cs.clientKey, CA: cs.ca}
		props := procProps(map[string]string{"recordcount": "300"})
		c := coordProc(t, "coordinator", procCoordConfig{DB: "basic", Load: true, Props: props, Agents: []string{a.addr}, TLS: good, Token: "tok-0123456789abcdef"})
		if code := c.wait(t, 20*time.Second); code != 0 {
			t.Fatalf("exit %d", code)
		}
		for _, bad := range []struct {
			tls   *transport.TLSFiles
			token string
			want  string
		}{
			{good, "nope", "rejected the token"},
			{&transport.TLSFiles{Cert: cs.rogue, Key: cs.rogueKey, CA: cs.ca}, "tok-0123456789abcdef", "TLS"},
			{nil, "tok-0123456789abcdef", "TLS mismatch"},
		} {
			c := coordProc(t, "coordinator", procCoordConfig{DB: "basic", Load: true, Props: props, Agents: []string{a.addr}, TLS: bad.tls, Token: bad.token})
			if code := c.wait(t, 20*time.Second); code != int(exitcode.Failure) || !strings.Contains(c.stderr(), bad.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, exitcode.Failure, bad.want, c.stderr())
			}
		}
	})

	t.Run("coordinator killed", func(t *testing.T) {
		c := coordProc(t, "coordinator", procCoordConfig{DB: "basic", Props: procProps(map[string]string{"operationcount": "0", "maxexecutiontime": "60", "target": "300"}), Agents: addrs()})
		c.waitLines(t, "current ops/sec", 2, 20*time.Second)
		c.kill()
		killed := time.Now()
		for i, a := range pool {
			waitIdle(t, a.addr, lease+2*time.Second)
			if d := time.Since(killed); d > lease+1500*time.Millisecond {
				t.Errorf("agent %d still busy %s after the coordinator died (lease %s)", i, d, lease)
			}
			a.waitLines(t, "load stopped", 1, 5*time.Second)
		}
		t.Logf("all agents stopped their load %s after the coordinator was killed (lease %s)", time.Since(killed).Round(time.Millisecond), lease)
	})

	killAgentMidRun := func(t *testing.T, policy string, props map[string]string) (*proc, *bundle.Run) {
		results := t.TempDir()
		c := coordProc(t, "coordinator", procCoordConfig{DB: "basic", Props: procProps(props), Agents: addrs(), Results: results, OnAgentLoss: policy})
		c.waitLines(t, "current ops/sec", 2, 20*time.Second)
		pool[2].kill()
		code := c.wait(t, 30*time.Second)
		startAgent(2)
		rep := readReport(t, results)
		c.code = code
		return c, rep
	}

	t.Run("agent killed, abort", func(t *testing.T) {
		// Timed, so that the survivors are still running when the loss is
		// declared (3 s of silence) and must be stopped by the coordinator.
		c, rep := killAgentMidRun(t, LossAbort, map[string]string{"target": "600", "operationcount": "0", "maxexecutiontime": "30"})
		if c.code != int(exitcode.AgentLost) || rep.Status != run.StatusAborted {
			t.Fatalf("exit %d status %s, want %d aborted", c.code, rep.Status, exitcode.AgentLost)
		}
		if rep.Agents[2].State != run.AgentLost {
			t.Errorf("agent 2 state %s", rep.Agents[2].State)
		}
		merged, ag, _ := reportOps(rep)
		if merged != ag || merged == 0 {
			t.Errorf("merged %d, agents %d", merged, ag)
		}
		if rep.Summary.RunTimeMs > 10000 {
			t.Errorf("survivors ran %d ms: not stopped after the loss", rep.Summary.RunTimeMs)
		}
		for i := 0; i < 2; i++ {
			if f := rep.Agents[i].Final; f == nil || !strings.Contains(f.Stopped, "lost") {
				t.Errorf("agent %d was not stopped for the loss: %+v", i, f)
			}
		}
	})

	t.Run("agent killed, continue", func(t *testing.T) {
		c, rep := killAgentMidRun(t, LossContinue, map[string]string{"target": "1000"})
		if c.code != int(exitcode.OK) || rep.Status != run.StatusPartial {
			t.Fatalf("exit %d status %s, want 0 partial", c.code, rep.Status)
		}
		merged, ag, _ := reportOps(rep)
		if merged != ag || rep.Agents[0].Operations != 1000 || rep.Agents[1].Operations != 1000 || rep.Agents[2].Operations >= 1000 {
			t.Errorf("merged %d agents %d: %d/%d/%d", merged, ag, rep.Agents[0].Operations, rep.Agents[1].Operations, rep.Agents[2].Operations)
		}
		if !strings.Contains(c.stdout(), "partial") {
			t.Error("summary does not say the results are partial")
		}
	})
}

func countEmbedded(t *testing.T, dir string) int64 {
	t.Helper()
	info, err := adapters.Lookup("embedded")
	if err != nil {
		t.Fatal(err)
	}
	db, err := info.Driver.Open(context.Background(), properties.FromMap(map[string]string{"embedded.dir": dir}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.(adapters.Closer).Close(); err != nil {
			t.Errorf("closing the embedded store: %v", err)
		}
	}()
	n, err := db.(adapters.RecordCounter).CountRecords(context.Background(), "usertable")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

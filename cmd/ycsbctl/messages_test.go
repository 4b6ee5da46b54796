package main_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	ycsbrun "github.com/ycsbctl/ycsbctl/internal/run"
)

// certsFor writes a CA, an agent certificate for 127.0.0.1 and the
// coordinator's, and returns the agent's and the coordinator's TLS flags.
func certsFor(t *testing.T) (agentTLS, coordTLS []string) {
	t.Helper()
	dir := t.TempDir()
	r := ycsbctl(t, "certs", "--dir", dir, "--hosts", "127.0.0.1")
	require.Equal(t, 0, r.code, r.stderr)
	ca := filepath.Join(dir, "ca.pem")
	return []string{"--tls-cert", filepath.Join(dir, "127.0.0.1", "agent.pem"), "--tls-key", filepath.Join(dir, "127.0.0.1", "agent-key.pem"), "--tls-ca", ca},
		[]string{"--tls-cert", filepath.Join(dir, "coordinator.pem"), "--tls-key", filepath.Join(dir, "coordinator-key.pem"), "--tls-ca", ca}
}

// waitFor polls cond until it holds or a generous bound passes.
func waitFor(t *testing.T, what string, cond func() bool, diag func() string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s:\n%s", what, diag())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConnectionFailuresNameTheCause runs real agents and coordinators
// that cannot work together and checks that the coordinator says why: a
// TLS mismatch in either direction (gRPC only says "error reading server
// preface: EOF" or "first record does not look like a TLS handshake"), a
// wrong token, whose message redaction used to eat ("rejected the token:
// REDACTED token"), and a peer that accepts the connection and never
// answers (a stopped agent, a port that is not an agent's), which was
// called a TLS mismatch, "the agent closed the connection", when nothing
// had closed it (issue 34 #15).
func TestConnectionFailuresNameTheCause(t *testing.T) {
	agentTLS, coordTLS := certsFor(t)
	tlsAgent := startAgent(t, agentTLS...)
	plainAgent := startAgent(t)
	tokenAgent := startAgent(t, "--token", "right-token-0123456789")
	frozenPlain, frozenTLS := startAgent(t), startAgent(t, agentTLS...)
	for _, a := range []*agentProcess{frozenPlain, frozenTLS} {
		require.NoError(t, a.cmd.Process.Signal(syscall.SIGSTOP))
		t.Cleanup(func() { _ = a.cmd.Process.Signal(syscall.SIGCONT) })
	}
	mute := silentListener(t)
	refused := freeAddr(t)
	silent := []string{"no answer: the agent accepted the connection but did not answer within 2s", "stopped (SIGSTOP), overloaded, or not a ycsbctl agent"}
	notSilent := []string{"TLS mismatch", "closed the connection", "TLS handshake failed", "unreachable"}
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"coordinator without TLS, agent with TLS", []string{"--agents", tlsAgent.addr},
			[]string{"TLS mismatch", "agent with TLS", "coordinator connects without it", "--tls-cert/--tls-key/--tls-ca"}, []string{"unreachable", "no answer"}},
		{"coordinator with TLS, agent without", append([]string{"--agents", plainAgent.addr}, coordTLS...),
			[]string{"TLS mismatch", "this coordinator uses TLS", "the agent does not"}, []string{"no answer"}},
		{"wrong token", []string{"--agents", tokenAgent.addr, "--token", "wrong-token-0123456789"},
			[]string{"rejected the token: wrong token (--token)"}, []string{"REDACTED", "right-token", "wrong-token"}},
		{"stopped agent (SIGSTOP), coordinator without TLS", []string{"--agents", frozenPlain.addr}, silent, notSilent},
		{"stopped TLS agent (SIGSTOP), coordinator with TLS", append([]string{"--agents", frozenTLS.addr}, coordTLS...), silent, notSilent},
		{"stopped TLS agent (SIGSTOP), coordinator without TLS", []string{"--agents", frozenTLS.addr}, silent, notSilent},
		{"a port that accepts and never answers", []string{"--agents", mute}, silent, notSilent},
		{"a port that accepts and never answers, coordinator with TLS", append([]string{"--agents", mute}, coordTLS...), silent, notSilent},
		{"nothing listens", []string{"--agents", refused}, []string{"unreachable", "connection refused"}, []string{"TLS", "no answer"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ycsbctl(t, append([]string{"coordinator", "run", "basic", "-P", "workloada", "-p", "operationcount=10"}, tc.args...)...)
			assert.Equal(t, 1, r.code, r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, r.stderr, n)
			}
		})
	}
}

// silentListener is a loopback port that accepts connections and never
// writes a byte: what a stopped process's kernel, or a service that is
// not an agent and waits for its client to speak first, looks like.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// freeAddr is a loopback address where nothing listens (a port just
// bound and released).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// TestWordingOfARun checks the cosmetic defects of issue 21 on real
// runs: plural agreement ("1 agents", "1 intervals"), the report's
// "ycsbctl ycsbctl" command line, an agent's "coordinator coordinator",
// and compare's bare "-" and empty "Throughput over time" section.
func TestWordingOfARun(t *testing.T) {
	t.Run("one agent, its log and its report", func(t *testing.T) {
		a := startAgent(t)
		dir := filepath.Join(t.TempDir(), "r")
		r := ycsbctl(t, "coordinator", "run", "basic", "--agents", a.addr, "-P", "workloada", "-p", "operationcount=20", "-p", "basicdb.verbose=false", "--results", dir)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stderr, "run basic on 1 agent, run ")
		assert.Contains(t, r.stderr, "Starting test on 1 agent at ")
		waitFor(t, "the agent's finished line", func() bool { return strings.Contains(a.stderr(), "finished: ") }, a.stderr)
		assert.Contains(t, a.stderr(), "20 operations in ")
		assert.Contains(t, a.stderr(), ", 1 interval")
		rep := ycsbctl(t, "report", dir)
		require.Equal(t, 0, rep.code, rep.stderr)
		html := readSink(t, filepath.Join(dir, "report.html"))
		assert.NotContains(t, html, "ycsbctl ycsbctl")
		assert.Contains(t, html, "ycsbctl coordinator run basic --agents")
		assert.Contains(t, html, "distributed, 1 agent<")
		for _, text := range []string{r.stderr, a.stderr(), html} {
			assert.NotContains(t, text, "1 agents")
			assert.NotContains(t, text, "1 intervals")
		}
	})
	t.Run("an agent whose coordinator went silent", func(t *testing.T) {
		a := startAgent(t, "--lease", "2s")
		cmd := exec.Command(binary(t), "coordinator", "run", "basic", "--agents", a.addr, "-P", "workloada", "-p", "operationcount=0",
			"-p", "maxexecutiontime=120", "-target", "50", "-p", "basicdb.verbose=false")
		cmd.Dir = t.TempDir()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitFor(t, "the agent to start the run", func() bool { return strings.Contains(a.stderr(), "starting at") }, a.stderr)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		waitFor(t, "the agent's lease to run out", func() bool { return strings.Contains(a.stderr(), "no word from") }, a.stderr)
		assert.Contains(t, a.stderr(), "no word from coordinator ")
		assert.NotContains(t, a.stderr(), "coordinator coordinator")
	})
	t.Run("compare", func(t *testing.T) {
		dir := t.TempDir()
		base, other := filepath.Join(dir, "reads"), filepath.Join(dir, "updates")
		for _, tc := range []struct {
			dir  string
			args []string
		}{
			{base, []string{"-p", "readproportion=1", "-p", "updateproportion=0"}},
			{other, []string{"-p", "readproportion=0", "-p", "updateproportion=1"}},
		} {
			r := ycsbctl(t, append([]string{"run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "--results", tc.dir}, tc.args...)...)
			require.Equal(t, 0, r.code, r.stderr)
		}
		out := filepath.Join(dir, "compare.html")
		r := ycsbctl(t, "compare", base, other, "-o", out)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "n/a: the baseline's main operation is READ")
		for _, line := range strings.Split(r.stdout, "\n") {
			assert.NotRegexp(t, `\s-\s+\S+\s*$`, line, "a bare - in P99 VS BASELINE")
		}
		html, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(html), "n/a: the baseline&#39;s main operation is READ")
		assert.NotContains(t, string(html), "<h2>Throughput over time</h2>", "an empty section")
		assert.Contains(t, string(html), "No throughput-over-time chart")
	})
}

// TestHelpListsExitCodes checks that the root --help and `ycsbctl help
// exit-codes` list every exit code and every status run.json can hold,
// from their tables (before, the codes were only in the README).
func TestHelpListsExitCodes(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help", "exit-codes"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := ycsbctl(t, args...)
			require.Equal(t, 0, r.code, r.stderr)
			for _, c := range exitcode.Table() {
				assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`(?m)^  %d  %s +%s`, int(c.Code), regexp.QuoteMeta(c.Name), regexp.QuoteMeta(strings.Fields(c.Meaning)[0]))), r.stdout)
			}
			for _, s := range ycsbrun.Statuses() {
				assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`(?m)^  %s +%s`, s.Status, regexp.QuoteMeta(strings.Fields(s.Meaning)[0]))), r.stdout)
			}
		})
	}
}

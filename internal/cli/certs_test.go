package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/internal/cli"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/transport"
)

func execCLI(ctx context.Context, args []string, env map[string]string) (int, string, string) {
	var stdout, stderr lockedBuffer
	gs := &cli.GlobalState{Ctx: ctx, Args: args, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return env[k] }, Clock: clock.NewReal(), ReadFile: os.ReadFile}
	code := cli.Execute(gs)
	return code, stdout.String(), stderr.String()
}

// TestCertsDriveMutualTLS issues certificates with `ycsbctl certs` and
// uses them as they are: a coordinator with the client certificate and the
// token runs against a TLS agent; one without the certificate, with a
// certificate of another CA, or without the token is refused.
func TestCertsDriveMutualTLS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := filepath.Join(t.TempDir(), "tls")
	code, out, errOut := execCLI(ctx, []string{"certs", "--dir", dir, "--hosts", "127.0.0.1"}, nil)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, filepath.Join(dir, "coordinator.pem"))
	other := filepath.Join(t.TempDir(), "other")
	code, _, errOut = execCLI(ctx, []string{"certs", "--dir", other, "--hosts", "127.0.0.1"}, nil)
	require.Equal(t, 0, code, errOut)

	ready := make(chan string, 1)
	go func() {
		_ = agent.Serve(ctx, agent.Config{Listen: "127.0.0.1:0", Token: "cluster-secret-0123456789", Ready: func(a string) { ready <- a },
			TLS: &transport.TLSFiles{Cert: filepath.Join(dir, "127.0.0.1", "agent.pem"), Key: filepath.Join(dir, "127.0.0.1", "agent-key.pem"), CA: filepath.Join(dir, "ca.pem")}})
	}()
	var addr string
	select {
	case addr = <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not start")
	}

	run := func(tlsDir string, token string) (int, string) {
		args := []string{"coordinator", "run", "basic", "--agents", addr, "--results", filepath.Join(t.TempDir(), "bundle"),
			"-p", "operationcount=200", "-p", "recordcount=100", "-p", "basicdb.verbose=false"}
		if tlsDir != "" {
			args = append(args, "--tls-cert", filepath.Join(tlsDir, "coordinator.pem"), "--tls-key", filepath.Join(tlsDir, "coordinator-key.pem"),
				"--tls-ca", filepath.Join(dir, "ca.pem"))
		}
		code, _, errOut := execCLI(ctx, args, map[string]string{"YCSBCTL_TOKEN": token})
		return code, errOut
	}

	code, errOut = run(dir, "cluster-secret-0123456789")
	require.Equal(t, 0, code, errOut)

	code, errOut = run("", "cluster-secret-0123456789")
	require.NotEqual(t, 0, code, "a coordinator without a client certificate was let in")
	require.Contains(t, errOut, addr)

	code, errOut = run(other, "cluster-secret-0123456789")
	require.NotEqual(t, 0, code, "a coordinator with another CA's certificate was let in")
	require.Contains(t, errOut, addr)
	require.Contains(t, errOut, "TLS") // TLS 1.3 reports the rejection as an alert or a dropped connection

	code, errOut = run(dir, "")
	require.NotEqual(t, 0, code, "a coordinator without the token was let in")
	require.Contains(t, errOut, "token")

	code, errOut = run(dir, "wrong-secret-0123456789")
	require.NotEqual(t, 0, code, "a coordinator with a wrong token was let in")
	require.Contains(t, errOut, "token")
}

func TestCertsBadInput(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		{"certs", "--hosts", "h1"},
		{"certs", "--dir", t.TempDir()},
		{"certs", "--dir", t.TempDir(), "--hosts", "../x"},
		{"certs", "--dir", t.TempDir(), "--hosts", "h1,h1"},
	} {
		code, _, errOut := execCLI(ctx, args, nil)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
		require.Regexp(t, `--(dir|hosts)`, errOut)
	}
}

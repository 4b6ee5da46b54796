//go:build cluster

package cluster

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the delaying relay of the latency fault: run
// inside a host's network namespace with YCSBCTL_CLUSTER_RELAY set, it
// relays TCP and exits with its parent.
const relayEnv = "YCSBCTL_CLUSTER_RELAY"

func TestMain(m *testing.M) {
	if path := os.Getenv(lockHoldEnv); path != "" {
		os.Exit(lockHolderMain(path))
	}
	if spec := os.Getenv(relayEnv); spec != "" {
		if err := relayMain(spec); err != nil {
			fmt.Fprintln(os.Stderr, "relay:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// relayMain serves "LISTEN TARGET TO_TARGET_DELAY FROM_TARGET_DELAY"
// until stdin closes (the test ends it by closing the pipe or killing it).
func relayMain(spec string) error {
	f := strings.Fields(spec)
	if len(f) != 4 {
		return fmt.Errorf("%s: want LISTEN TARGET DELAY_TO DELAY_FROM, got %q", relayEnv, spec)
	}
	to, err := time.ParseDuration(f[2])
	if err != nil {
		return err
	}
	from, err := time.ParseDuration(f[3])
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f[0])
	if err != nil {
		return err
	}
	fmt.Println("listening")
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			u, err := net.Dial("tcp", f[1])
			if err != nil {
				_ = c.Close()
				return
			}
			go delayCopy(u, c, to)
			delayCopy(c, u, from)
		}()
	}
}

// delayCopy forwards src to dst holding every chunk for d after it was
// read, in order: a link whose one-way latency is d.
func delayCopy(dst, src net.Conn, d time.Duration) {
	type chunk struct {
		due time.Time
		b   []byte
	}
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{time.Now().Add(d), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	_ = dst.Close()
	_ = src.Close()
}

// startRelay runs the relay in hN's network namespace on listen, towards
// target, and returns a function that stops it.
func (e *env) startRelay(t testing.TB, n int, listen, target string, toTarget, fromTarget time.Duration) func() {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("ip", "netns", "exec", fmt.Sprintf("ycsbctl-h%d", n), self)
	c.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s %s", relayEnv, listen, target, toTarget, fromTarget))
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 64)
	if k, err := stdout.Read(b); err != nil || !strings.Contains(string(b[:k]), "listening") {
		_ = c.Process.Kill()
		_ = c.Wait()
		t.Fatalf("relay in h%d did not start: %v %q", n, err, b[:k])
	}
	return func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}
}

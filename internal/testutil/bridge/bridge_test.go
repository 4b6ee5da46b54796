package bridge

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ln.Close(); err != nil {
			t.Errorf("closing the echo listener: %v", err)
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// The echo ends when the peer goes away; its close error
			// says nothing about the bridge.
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn) error {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err := bufio.NewReader(c).ReadString('\n')
	return err
}

func TestCutAndRestore(t *testing.T) {
	b, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing the bridge: %v", err)
		}
	}()
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(c); err != nil {
		t.Fatalf("through the bridge: %v", err)
	}
	b.Cut()
	if err := roundTrip(c); err == nil {
		t.Fatal("connection survived a cut")
	}
	// While cut, new connections are accepted by the kernel but dropped.
	if c2, err := net.Dial("tcp", b.Addr()); err == nil {
		if roundTrip(c2) == nil {
			t.Fatal("new connection worked while cut")
		}
		_ = c2.Close() // already dropped by the cut bridge
	}
	b.Restore()
	c3, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c3.Close(); err != nil {
			t.Errorf("closing the connection: %v", err)
		}
	}()
	if err := roundTrip(c3); err != nil {
		t.Fatalf("after restore: %v", err)
	}
	if b.Accepted() != 2 {
		t.Fatalf("accepted %d, want 2", b.Accepted())
	}
}

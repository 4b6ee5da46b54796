// Package tcppair gives tests both ends of a real loopback TCP
// connection, for code that must be tried on a kernel socket rather than
// on net.Pipe (partial reads and writes, deadlines, the socket's own
// system calls).
package tcppair

import (
	"net"
	"testing"
)

// New returns both ends of a loopback TCP connection, closed when the
// test ends.
func New(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(acc)
			return
		}
		acc <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-acc
	if server == nil {
		_ = client.Close()
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	return client, server
}

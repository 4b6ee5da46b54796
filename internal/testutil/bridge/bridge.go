// Package bridge is a loopback TCP proxy for tests that need to break and
// restore the network between a coordinator and an agent without stopping
// either process: Cut closes every proxied connection and refuses new ones
// until Restore. It plays the role etcd's integration bridge plays for
// its gRPC tests.
package bridge

import (
	"errors"
	"io"
	"net"
	"sync"
)

// Bridge forwards connections accepted on Addr to a target address.
type Bridge struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	// Accepted counts connections forwarded while up (tests assert that a
	// reconnect really happened).
	accepted int
}

// New listens on 127.0.0.1 (a free port) and forwards to target.
func New(target string) (*Bridge, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &Bridge{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	b.wg.Add(1)
	go b.serve()
	return b, nil
}

// Addr is the address clients should dial instead of the target.
func (b *Bridge) Addr() string { return b.ln.Addr().String() }

// Accepted returns how many connections were forwarded so far.
func (b *Bridge) Accepted() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.accepted
}

// Cut drops every open connection (both directions see a reset or EOF)
// and makes new connections fail until Restore.
func (b *Bridge) Cut() {
	b.mu.Lock()
	b.down = true
	conns := b.conns
	b.conns = map[net.Conn]struct{}{}
	b.mu.Unlock()
	for c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			// Linger 0 sends RST, as a crashed middlebox or peer would,
			// rather than an orderly FIN.
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
}

// Restore lets connections through again.
func (b *Bridge) Restore() {
	b.mu.Lock()
	b.down = false
	b.mu.Unlock()
}

// Close stops the bridge and drops every connection.
func (b *Bridge) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	err := b.ln.Close()
	b.Cut()
	b.wg.Wait()
	return err
}

func (b *Bridge) serve() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		b.mu.Lock()
		if b.down || b.closed {
			b.mu.Unlock()
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = c.Close()
			continue
		}
		b.mu.Unlock()
		up, err := net.Dial("tcp", b.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		b.mu.Lock()
		if b.down || b.closed {
			b.mu.Unlock()
			_ = c.Close()
			_ = up.Close()
			continue
		}
		b.accepted++
		b.conns[c] = struct{}{}
		b.conns[up] = struct{}{}
		b.mu.Unlock()
		b.wg.Add(2)
		go b.pipe(c, up)
		go b.pipe(up, c)
	}
}

func (b *Bridge) pipe(dst, src net.Conn) {
	defer b.wg.Done()
	_, _ = io.Copy(dst, src)
	// One direction ended: end the other too so neither side hangs on a
	// half-open connection.
	_ = dst.Close()
	_ = src.Close()
	b.mu.Lock()
	delete(b.conns, dst)
	delete(b.conns, src)
	b.mu.Unlock()
}

// Package bridge is a loopback TCP proxy for tests that need to break and
// restore the network between a coordinator and an agent without stopping
// either process: Cut closes every proxied connection and refuses new ones
// until Restore; Delay holds every byte back for a while, in both
// directions, as a slow network would. It plays the role etcd's
// integration bridge plays for its gRPC tests.
package bridge

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
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
	// delay is the one-way latency added to every byte, in ns.
	delay atomic.Int64
}

// Delay adds d of latency to every byte forwarded from now on, in each
// direction (0 removes it). Order is kept and nothing is dropped.
func (b *Bridge) Delay(d time.Duration) { b.delay.Store(int64(d)) }

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

// chunk is bytes read at a time, due to be written at due.
type chunk struct {
	b   []byte
	due time.Time
}

func (b *Bridge) pipe(dst, src net.Conn) {
	defer b.wg.Done()
	// The reader stamps what it reads with when it may go out; the writer
	// holds it back until then. Without a delay that is at once.
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{b: buf[:n], due: time.Now().Add(time.Duration(b.delay.Load()))}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if d := time.Until(c.due); d > 0 {
			time.Sleep(d)
		}
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	// One direction ended: end the other too so neither side hangs on a
	// half-open connection.
	_ = dst.Close()
	_ = src.Close()
	for range q {
		// The reader ends now that src is closed.
	}
	b.mu.Lock()
	delete(b.conns, dst)
	delete(b.conns, src)
	b.mu.Unlock()
}

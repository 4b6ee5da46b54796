package cassandra

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/netconn"
)

// Procs implements adapters.ProcsAdvisor. With 16 workers against one
// server, GOMAXPROCS=1 instead of 2 took the client from about 37 to 28 us
// of CPU per operation on this project's 2-core test machine (futex and
// nanosleep calls from waking the idle P fell from 0.8 to 0.35 per
// operation), and left the other core to the server.
func (d *DB) Procs(workers int) int { return adapters.NetworkProcs(workers) }

// hostDialer is gocql's HostDialer for ycsbctl: gocql's own dial (TCP,
// then TLS when configured) with every connection wrapped in a batchConn.
// It is the driver's public extension point for connections; nothing of
// gocql is copied or changed.
type hostDialer struct {
	dialer       net.Dialer
	tls          *tls.Config
	writeTimeout time.Duration
	// plain keeps gocql's own connection handling (writecoalescemicros > 0
	// selects gocql's timer-based coalescing, which needs the raw TCP
	// connection for writev).
	plain bool
}

// DialHost implements gocql.HostDialer.
func (h *hostDialer) DialHost(ctx context.Context, host *gocql.HostInfo) (*gocql.DialedHost, error) {
	ip, port := host.ConnectAddress(), host.Port()
	if len(ip) == 0 || ip.IsUnspecified() {
		return nil, fmt.Errorf("host missing connect ip address: %v", ip)
	}
	if port == 0 {
		return nil, fmt.Errorf("host missing port: %v", port)
	}
	conn, err := h.dialer.DialContext(ctx, "tcp", host.ConnectAddressAndPort())
	if err != nil {
		return nil, err
	}
	dh, err := gocql.WrapTLS(ctx, conn, host.HostnameAndPort(), h.tls)
	if err != nil || h.plain {
		return dh, err
	}
	dh.Conn = newBatchConn(dh.Conn, h.writeTimeout)
	// gocql's coalescer would hand every request to its flusher through a
	// channel and a timer; batchConn batches without either.
	dh.DisableCoalesce = true
	return dh, nil
}

// batchConn cuts the system calls of a CQL connection, which were most of
// the client's CPU per operation (each request its own write, each
// response read in 4 KiB pieces, and two to three read-deadline and one
// write-deadline updates per request, each a runtime timer change):
//
//   - Writes are batched without a timer. Write appends the frame to a
//     buffer and returns; the first writer into an empty buffer wakes the
//     connection's flusher, which yields once (so that every worker already
//     runnable adds its request) and then writes the whole buffer in one
//     system call. No request waits for a timer: the flush happens as soon
//     as the scheduler has run the writers that were ready, which is what
//     the ScyllaDB Rust driver under latte does by default.
//   - Reads go through 64 KiB buffers, so that one system call takes every
//     response the server has sent (gocql's own bufio.Reader is 4 KiB),
//     filled by a goroutine of the connection's own that, after a read
//     that drained the socket, waits for the next response without a read
//     that would find nothing (netconn.NewPumpReader): that read was one
//     system call in five per burst of responses.
//   - On Linux the socket's reads and writes are made as direct
//     non-blocking system calls (internal/netconn), which spares the Go
//     runtime's blocking-call bookkeeping and the wake-up of its monitor
//     thread after every idle moment.
//   - Deadlines are kept and applied only when a system call needs them:
//     gocql sets a write deadline before every request and a read deadline
//     before every piece of every response.
//
// What is measured does not change: each request is still sent before its
// caller waits for the response, one request per worker is in flight, and
// a write error fails every request of the connection (the connection is
// closed, so gocql's reader fails them all with the error).
type batchConn struct {
	// Reader is the socket with its pump, 64 KiB read buffers and lazy
	// read deadlines; its Write is the socket's, used by the flusher only.
	*netconn.Reader
	writeTimeout time.Duration

	mu      sync.Mutex
	pending []byte
	err     error

	kick      chan struct{}
	quit      chan struct{}
	closeOnce sync.Once
}

const batchReadBuffer = 64 << 10

func newBatchConn(c net.Conn, writeTimeout time.Duration) *batchConn {
	b := &batchConn{
		Reader:       netconn.NewPumpReader(c, batchReadBuffer),
		writeTimeout: writeTimeout,
		kick:         make(chan struct{}, 1),
		quit:         make(chan struct{}),
	}
	go b.flusher()
	return b
}

// errConnClosed is returned by Write after Close.
var errConnClosed = errors.New("cassandra: connection closed")

// Write queues p (copied) for the flusher. It never blocks on the network.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.err != nil {
		err := b.err
		b.mu.Unlock()
		return 0, err
	}
	first := len(b.pending) == 0
	b.pending = append(b.pending, p...)
	b.mu.Unlock()
	if first {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// flusher writes the queued requests, all that are queued at each wake-up
// in one system call.
func (b *batchConn) flusher() {
	var out []byte
	for {
		select {
		case <-b.kick:
		case <-b.quit:
			return
		}
		// Let the workers that are ready to send do so first: their
		// requests then share this write.
		runtime.Gosched()
		b.mu.Lock()
		out, b.pending = b.pending, out[:0]
		b.mu.Unlock()
		if len(out) == 0 {
			continue
		}
		if b.writeTimeout > 0 {
			_ = b.Conn.SetWriteDeadline(time.Now().Add(b.writeTimeout))
		}
		if _, err := b.Reader.Write(out); err != nil {
			// Closing the socket makes gocql's reader fail, which fails
			// every request in flight on this connection with the error.
			b.mu.Lock()
			b.err = err
			b.mu.Unlock()
			_ = b.Close()
			return
		}
		if cap(out) > 4<<20 {
			out = nil // a burst of huge requests: do not keep the buffer
		}
	}
}

// SetWriteDeadline does nothing: Write never blocks, and the flusher bounds
// each system call by the connection's write timeout.
func (b *batchConn) SetWriteDeadline(time.Time) error { return nil }

// SetDeadline sets the read deadline (see SetWriteDeadline).
func (b *batchConn) SetDeadline(t time.Time) error { return b.SetReadDeadline(t) }

// Close stops the flusher and closes the socket; requests still queued
// are dropped with the connection.
func (b *batchConn) Close() error {
	err := net.ErrClosed
	b.closeOnce.Do(func() {
		b.mu.Lock()
		if b.err == nil {
			b.err = errConnClosed
		}
		b.mu.Unlock()
		close(b.quit)
		err = b.Reader.Close()
	})
	return err
}

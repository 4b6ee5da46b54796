// Package netconn holds connection wrappers that cut the system calls of
// database drivers, plugged in through the drivers' own dial hooks.
//
// Drivers read a response in pieces (a length, then the body; gocql through
// a 4 KiB bufio.Reader), each piece a read system call, and set a deadline
// before each piece, each a change to a runtime timer. Reader serves the
// pieces from one buffer filled by one system call and applies the
// deadline only when a read has to wait on the socket.
//
// On Linux, for a plain TCP socket, Reader also makes its read and write
// system calls itself, through the socket's syscall.RawConn, as the
// runtime's network poller makes its own: the socket is non-blocking, so a
// call never blocks the thread, and waiting for the socket is still the
// poller's (RawConn's Read and Write park the goroutine on EAGAIN and
// honour the deadlines). What that skips is the runtime's bookkeeping
// around a system call that may block (entersyscall/exitsyscall) and,
// with it, the wake-up of the runtime's monitor thread (sysmon) that the
// first such call after an idle moment makes: a client that waits on the
// network goes idle between every burst of replies, and those wake-ups
// (a futex call, then sysmon's own sleeps) were a third of its system
// calls and a tenth of its CPU time.
//
// NewPumpReader goes one step further for a connection whose replies come
// in bursts: a goroutine of its own reads the socket (see pump), which
// spares the read that finds nothing before each wait.
package netconn

import (
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// Reader is a net.Conn whose reads go through a buffer. It must be read by
// one goroutine at a time (as every driver does: a connection has one
// reader); writes need not be, as on any net.Conn.
type Reader struct {
	net.Conn
	// raw is the socket for system calls made directly (see the package
	// comment), or nil: the connection's own Read and Write are used.
	raw      syscall.RawConn
	buf      []byte
	pos, end int
	// deadline is the read deadline asked for (UnixNano, 0 = none);
	// applied is the one set on the socket.
	deadline atomic.Int64
	applied  int64
	// pump, when set, reads the socket (see pump); buf is then the
	// chunk being served and err the error that ended the stream.
	pump *pump
	err  error
	// emptyReads counts the read system calls that found nothing
	// (EAGAIN), which the pump exists to spare; tests read it.
	emptyReads atomic.Int64
}

// NewReader wraps c with a read buffer of size bytes.
func NewReader(c net.Conn, size int) *Reader {
	return &Reader{Conn: c, raw: rawConn(c), buf: make([]byte, size)}
}

// Read serves p from the buffer, refilling it with one system call when it
// is empty. Reads at least as large as the buffer go straight to the socket.
func (r *Reader) Read(p []byte) (int, error) {
	if r.pump != nil {
		return r.pumpedRead(p)
	}
	if r.pos == r.end {
		if err := r.applyDeadline(); err != nil {
			return 0, err
		}
		if len(p) >= len(r.buf) {
			return r.read(p)
		}
		n, err := r.read(r.buf)
		r.pos, r.end = 0, n
		if n == 0 {
			return 0, err
		}
		// Bytes read with an error are delivered first; the error, if
		// it persists, comes with the next system call.
	}
	n := copy(p, r.buf[r.pos:r.end])
	r.pos += n
	return n, nil
}

// read is one read from the socket.
func (r *Reader) read(p []byte) (int, error) {
	if r.raw == nil || len(p) == 0 {
		return r.Conn.Read(p)
	}
	return r.rawRead(p)
}

// Write writes all of p to the socket (bounded by the write deadline, as
// the connection's own Write).
func (r *Reader) Write(p []byte) (int, error) {
	if r.raw == nil || len(p) == 0 {
		return r.Conn.Write(p)
	}
	return r.rawWrite(p)
}

func (r *Reader) applyDeadline() error {
	want := r.deadline.Load()
	if want == r.applied {
		return nil
	}
	var t time.Time
	if want != 0 {
		t = time.Unix(0, want)
	}
	if err := r.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	r.applied = want
	return nil
}

// SetReadDeadline records t; it reaches the socket before the next read
// that needs a system call, and bounds that read as it would have.
func (r *Reader) SetReadDeadline(t time.Time) error {
	var ns int64
	if !t.IsZero() {
		ns = t.UnixNano()
	}
	r.deadline.Store(ns)
	return nil
}

// SetDeadline sets the read deadline (recorded) and the write deadline.
func (r *Reader) SetDeadline(t time.Time) error {
	_ = r.SetReadDeadline(t)
	return r.SetWriteDeadline(t)
}

// opError is err as the connection's own Read or Write reports it: a
// *net.OpError naming the operation and both ends. RawConn's errors (the
// deadline, a closed connection) come as its own OpError, whose cause is
// kept.
func (r *Reader) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: r.LocalAddr(), Addr: r.RemoteAddr(), Err: err}
}

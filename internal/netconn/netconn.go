// Package netconn holds connection wrappers that cut the system calls of
// database drivers, plugged in through the drivers' own dial hooks.
//
// Drivers read a response in pieces (a length, then the body; gocql through
// a 4 KiB bufio.Reader), each piece a read system call, and set a deadline
// before each piece, each a change to a runtime timer. Reader serves the
// pieces from one buffer filled by one system call and applies the
// deadline only when a read has to wait on the socket.
package netconn

import (
	"net"
	"sync/atomic"
	"time"
)

// Reader is a net.Conn whose reads go through a buffer. It must be read by
// one goroutine at a time (as every driver does: a connection has one
// reader); writes pass through.
type Reader struct {
	net.Conn
	buf      []byte
	pos, end int
	// deadline is the read deadline asked for (UnixNano, 0 = none);
	// applied is the one set on the socket.
	deadline atomic.Int64
	applied  int64
}

// NewReader wraps c with a read buffer of size bytes.
func NewReader(c net.Conn, size int) *Reader {
	return &Reader{Conn: c, buf: make([]byte, size)}
}

// Read serves p from the buffer, refilling it with one system call when it
// is empty. Reads at least as large as the buffer go straight to the socket.
func (r *Reader) Read(p []byte) (int, error) {
	if r.pos == r.end {
		if err := r.applyDeadline(); err != nil {
			return 0, err
		}
		if len(p) >= len(r.buf) {
			return r.Conn.Read(p)
		}
		n, err := r.Conn.Read(r.buf)
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

// Buffered reports how many bytes were read from the socket but not yet
// from the Reader.
func (r *Reader) Buffered() int { return r.end - r.pos }

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

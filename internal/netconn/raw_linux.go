package netconn

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// rawConn returns the RawConn of a plain TCP socket, or nil (a TLS
// connection, a test double) for the connection's own Read and Write.
func rawConn(c net.Conn) syscall.RawConn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// rawRead is one read(2) on the non-blocking socket, made without the
// runtime's blocking-call bookkeeping; when nothing has arrived, RawConn
// parks the goroutine on the poller and calls again when the socket is
// readable (or fails at the read deadline, as the connection's Read
// would: a timeout error).
func (r *Reader) rawRead(p []byte) (int, error) {
	var (
		n     int
		errno syscall.Errno
	)
	err := r.raw.Read(func(fd uintptr) bool {
		var ready bool
		n, errno, ready = r.readFD(fd, p)
		return ready
	})
	switch {
	case err != nil:
		return 0, r.opError("read", err)
	case errno != 0:
		return 0, r.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readFD is one read(2) of p on the non-blocking socket fd, made again
// when a signal interrupts it; ready is false when nothing had arrived
// (EAGAIN: the caller waits for the poller), and such reads are counted.
func (r *Reader) readFD(fd uintptr, p []byte) (n int, errno syscall.Errno, ready bool) {
	for {
		m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			r.emptyReads.Add(1)
			return 0, 0, false
		}
		return int(m), e, true
	}
}

// rawWrite writes all of p with write(2) on the non-blocking socket,
// waiting on the poller whenever the socket's send buffer is full.
func (r *Reader) rawWrite(p []byte) (int, error) {
	var (
		n     int
		errno syscall.Errno
	)
	err := r.raw.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
			switch e {
			case 0:
				n += int(m)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, r.opError("write", err)
	case errno != 0:
		return n, r.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// runPump is the pump's loop (see pump): it reads into free buffers and
// sends what it read to the consumer, inside one RawConn.Read for as long
// as it has a buffer to read into.
func (r *Reader) runPump() {
	p := r.pump
	defer close(p.stopped)
	var buf []byte
	for {
		if buf == nil {
			select {
			case buf = <-p.free:
			case <-p.done:
				return
			}
		}
		var (
			errno   syscall.Errno
			eof     bool
			needBuf bool
		)
		// The pump's own read deadline bounds each wait without a read
		// (see pumpRecheck); the consumer's deadlines are its own.
		if err := r.Conn.SetReadDeadline(time.Now().Add(pumpRecheck)); err != nil {
			p.full <- chunk{err: r.opError("read", err)}
			return
		}
		err := r.raw.Read(func(fd uintptr) bool {
			for {
				if buf == nil {
					select {
					case buf = <-p.free:
					default:
						// Wait for a buffer outside RawConn.Read, so
						// that a Close of the socket never waits on
						// the consumer.
						needBuf = true
						return true
					}
				}
				m, e, ready := r.readFD(fd, buf)
				switch {
				case !ready:
					return false
				case e != 0:
					errno = e
					return true
				case m == 0:
					eof = true
					return true
				}
				drained := m < len(buf)
				p.full <- chunk{b: buf[:m]}
				buf = nil
				if drained {
					// Wait for the poller without reading again: its
					// mark is kept within this call (see pump).
					return false
				}
			}
		})
		var end error
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue // read again, then wait (see pumpRecheck)
		case err != nil:
			end = r.opError("read", err)
		case errno != 0:
			end = r.opError("read", os.NewSyscallError("read", errno))
		case eof:
			end = io.EOF
		case needBuf:
			continue
		}
		p.full <- chunk{err: end}
		return
	}
}

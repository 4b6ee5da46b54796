package netconn

import (
	"io"
	"net"
	"os"
	"syscall"
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
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = int(m), e
			return true
		}
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

//go:build !linux

package netconn

import (
	"net"
	"syscall"
)

// rawConn: direct system calls are made on Linux only; elsewhere the
// connection's own Read and Write serve.
func rawConn(net.Conn) syscall.RawConn { return nil }

func (r *Reader) rawRead(p []byte) (int, error)  { return r.Conn.Read(p) }
func (r *Reader) rawWrite(p []byte) (int, error) { return r.Conn.Write(p) }

// runPump is never called: there is no raw socket to pump.
func (r *Reader) runPump() {}

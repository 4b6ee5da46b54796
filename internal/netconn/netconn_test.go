package netconn

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/testutil/tcppair"
)

// constructors are the two ways of making a Reader; each behaviour test
// runs on both.
var constructors = []struct {
	name string
	new  func(net.Conn, int) *Reader
}{{"NewReader", NewReader}, {"NewPumpReader", NewPumpReader}}

// onlyConn hides every method but net.Conn's, as a TLS connection or a
// test double would: the Reader then uses the connection's Read and Write.
type onlyConn struct{ net.Conn }

func TestDirectSystemCallsOnPlainTCP(t *testing.T) {
	c, _ := tcppair.New(t)
	r := NewReader(c, 64)
	if (r.raw != nil) != (runtime.GOOS == "linux") {
		t.Fatalf("raw socket %v on %s", r.raw != nil, runtime.GOOS)
	}
	if NewReader(onlyConn{c}, 64).raw != nil {
		t.Fatal("a wrapped connection must be read through its own Read")
	}
}

// TestStreamArrivesWhole: what the peer writes in pieces of every size
// reads back byte for byte through reads of every size, some larger than
// the buffer (straight to the socket), for both the direct and the
// wrapped path.
func TestStreamArrivesWhole(t *testing.T) {
	for _, k := range constructors {
		t.Run(k.name, func(t *testing.T) { testStreamArrivesWhole(t, k.new) })
	}
}

func testStreamArrivesWhole(t *testing.T, newReader func(net.Conn, int) *Reader) {
	for _, wrap := range []bool{false, true} {
		c, s := tcppair.New(t)
		conn := c
		if wrap {
			conn = onlyConn{c}
		}
		r := newReader(conn, 1024)
		defer func() { _ = r.Close() }()
		rng := rand.New(rand.NewSource(1))
		want := make([]byte, 1<<20)
		rng.Read(want)
		go func() {
			for b := want; len(b) > 0; {
				n := min(len(b), 1+rng.Intn(5000))
				if _, err := s.Write(b[:n]); err != nil {
					return
				}
				b = b[n:]
			}
		}()
		got := make([]byte, 0, len(want))
		p := make([]byte, 3000)
		for len(got) < len(want) {
			n, err := r.Read(p[:1+len(got)%len(p)])
			if err != nil {
				t.Fatalf("wrapped %v: read after %d bytes: %v", wrap, len(got), err)
			}
			got = append(got, p[:n]...)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("wrapped %v: stream differs", wrap)
		}
	}
}

// TestWriteLargerThanTheSocketTakes: a write the socket cannot take at
// once (the peer reads slowly) waits for room and arrives whole.
func TestWriteLargerThanTheSocketTakes(t *testing.T) {
	c, s := tcppair.New(t)
	w := NewReader(c, 64)
	want := make([]byte, 16<<20)
	rand.New(rand.NewSource(2)).Read(want)
	got := make(chan []byte, 1)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 7000)
		for b.Len() < len(want) {
			n, err := s.Read(buf)
			if err != nil {
				break
			}
			b.Write(buf[:n])
		}
		got <- b.Bytes()
	}()
	n, err := w.Write(want)
	if err != nil || n != len(want) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(want))
	}
	if !bytes.Equal(<-got, want) {
		t.Fatal("the peer read different bytes")
	}
	if n, err := w.Write(nil); n != 0 || err != nil {
		t.Fatalf("empty Write = %d, %v", n, err)
	}
}

// TestDeadlinesAndEnds: errors look as the connection's own: a read or
// write past its deadline is a timeout (net.Error, os.ErrDeadlineExceeded),
// the peer's close is io.EOF, a read of a closed connection is
// net.ErrClosed, and a deadline cleared lets the next read wait for data.
func TestDeadlinesAndEnds(t *testing.T) {
	for _, k := range constructors {
		t.Run(k.name, func(t *testing.T) { testDeadlinesAndEnds(t, k.new) })
	}
}

func testDeadlinesAndEnds(t *testing.T, newReader func(net.Conn, int) *Reader) {
	c, s := tcppair.New(t)
	r := newReader(c, 64)
	p := make([]byte, 10)

	if err := r.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err := r.Read(p)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v (%T)", err, err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("read error %#v, want a *net.OpError of op read", err)
	}

	if err := r.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = s.Write([]byte("hello")) }()
	if n, err := io.ReadFull(r, p[:5]); err != nil || string(p[:n]) != "hello" {
		t.Fatalf("read after clearing the deadline: %q, %v", p[:n], err)
	}

	// Fill the peer's receive side until a write has to wait, then let
	// the write deadline end it.
	if err := r.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 64<<20)
	if _, err := r.Write(big); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past the deadline: %v", err)
	} else if !errors.As(err, &oe) || oe.Op != "write" {
		t.Fatalf("write error %#v, want a *net.OpError of op write", err)
	}

	_ = s.Close()
	for {
		// Whatever was in flight first, then the end of the stream.
		if _, err = r.Read(p); err != nil {
			break
		}
	}
	if err != io.EOF && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("read after the peer closed: %v", err)
	}

	_ = r.Close()
	if _, err := r.Read(p); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after Close: %v", err)
	}
}

// isReset: a peer that closes with unread data resets the connection.
func isReset(err error) bool {
	var se *os.SyscallError
	return errors.As(err, &se)
}

// TestPeerCloseIsEOF: a peer that closes cleanly ends the stream with
// io.EOF, as net.Conn's Read reports it.
func TestPeerCloseIsEOF(t *testing.T) {
	for _, k := range constructors {
		t.Run(k.name, func(t *testing.T) { testPeerCloseIsEOF(t, k.new) })
	}
}

func testPeerCloseIsEOF(t *testing.T, newReader func(net.Conn, int) *Reader) {
	c, s := tcppair.New(t)
	r := newReader(c, 64)
	defer func() { _ = r.Close() }()
	_, _ = s.Write([]byte("bye"))
	_ = s.Close()
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "bye" {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
	if _, err := r.Read(make([]byte, 4)); err != io.EOF {
		t.Fatalf("read at the end: %v, want io.EOF", err)
	}
}

package netconn

import (
	"net"
	"os"
	"sync"
	"time"
)

// A pump is a goroutine of a Reader's own that reads the socket and hands
// what it read to the Reader's consumer (the driver's reader goroutine) in
// chunks.
//
// Why a goroutine more: Go's RawConn.Read forgets the poller's "readable"
// mark each time it is called, so a reader that calls it per refill must
// make a read(2) that ends in EAGAIN before it may wait, or it could miss
// data that arrived since its last read and wait for good. Against a
// server that answers in bursts that read is one system call of every
// five per burst (read, read ending in EAGAIN, the scheduler's two
// epoll_pwait, write); clients on an event loop (latte's tokio) skip it,
// and it was the whole difference between their system calls per
// operation and ycsbctl's. The pump stays inside one RawConn.Read for the
// life of the connection, where the poller's mark is kept between waits:
// after a read that did not fill its buffer (the socket is drained) it
// waits for the poller without reading again, and a mark set meanwhile
// wakes it at once. The hand-off to the consumer is a channel operation
// and a goroutine switch, no system call.
//
// A read that did not fill its buffer has drained the socket of data, but
// not necessarily of its end: when the peer's last bytes and its FIN (or
// a reset) arrive before the pump wakes, the poller reports them once, the
// read returns the bytes and leaves the end for the next read, and no
// further mark comes. So the pump never waits longer than pumpRecheck
// without reading: its RawConn.Read carries a deadline of its own, and
// when that passes it reads again before waiting. A peer's close is then
// seen within pumpRecheck, and a busy connection pays one read per
// pumpRecheck for it.
type pump struct {
	full chan chunk  // read, in order; never blocks (room for every buffer and an error)
	free chan []byte // buffers the consumer has finished with
	done chan struct{}
	// stopped is closed when the pump's goroutine has returned.
	stopped chan struct{}
	// timer bounds the consumer's wait when it has a read deadline.
	timer *time.Timer
	once  sync.Once
}

// chunk is what one read(2) returned, or the error that ends the stream.
type chunk struct {
	b   []byte
	err error
}

// pumpRecheck bounds how long the pump waits without reading (see pump).
const pumpRecheck = 50 * time.Millisecond

// pumpBuffers is how many buffers circulate between pump and consumer:
// one the consumer is reading, one being filled, one spare so that the
// pump seldom waits for the consumer.
const pumpBuffers = 3

// NewPumpReader wraps c as NewReader does, with its socket read by a pump
// (see pump) when it is a plain TCP socket on Linux. Read deadlines bound
// the consumer's wait for the next chunk, as they would bound a read; as
// with NewReader, a deadline set takes effect at the next Read. The Reader
// must be closed with its own Close, which ends the pump.
func NewPumpReader(c net.Conn, size int) *Reader {
	r := NewReader(c, size)
	if r.raw == nil {
		return r
	}
	p := &pump{
		full:    make(chan chunk, pumpBuffers+1),
		free:    make(chan []byte, pumpBuffers),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	p.free <- r.buf
	for i := 1; i < pumpBuffers; i++ {
		p.free <- make([]byte, size)
	}
	r.buf = nil
	r.pump = p
	go r.runPump()
	return r
}

// pumpedRead serves p from the current chunk, waiting for the next one
// when it is used up.
func (r *Reader) pumpedRead(p []byte) (int, error) {
	if r.pos == r.end {
		select {
		case <-r.pump.done:
			return 0, r.opError("read", net.ErrClosed)
		default:
		}
		if r.err != nil {
			return 0, r.err
		}
		if r.buf != nil {
			r.pump.free <- r.buf[:cap(r.buf)]
			r.buf = nil
		}
		c, err := r.nextChunk()
		if err != nil {
			return 0, err
		}
		if c.err != nil {
			r.err = c.err
			return 0, c.err
		}
		r.buf, r.pos, r.end = c.b, 0, len(c.b)
	}
	n := copy(p, r.buf[r.pos:r.end])
	r.pos += n
	return n, nil
}

// nextChunk waits for the pump's next chunk until the read deadline (a
// timeout error, as a read past its deadline returns) or Close.
func (r *Reader) nextChunk() (chunk, error) {
	p := r.pump
	select {
	case c := <-p.full:
		return c, nil
	default:
	}
	want := r.deadline.Load()
	if want == 0 {
		select {
		case c := <-p.full:
			return c, nil
		case <-p.done:
			return chunk{}, r.opError("read", net.ErrClosed)
		}
	}
	wait := time.Until(time.Unix(0, want))
	if wait <= 0 {
		return chunk{}, r.opError("read", os.ErrDeadlineExceeded)
	}
	if p.timer == nil {
		p.timer = time.NewTimer(wait)
	} else {
		p.timer.Reset(wait)
	}
	defer p.timer.Stop()
	select {
	case c := <-p.full:
		return c, nil
	case <-p.done:
		return chunk{}, r.opError("read", net.ErrClosed)
	case <-p.timer.C:
		return chunk{}, r.opError("read", os.ErrDeadlineExceeded)
	}
}

// Close ends the pump, then closes the connection.
func (r *Reader) Close() error {
	if r.pump != nil {
		r.pump.once.Do(func() { close(r.pump.done) })
	}
	return r.Conn.Close()
}

//go:build linux

package netconn

import (
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

// pingPong has the peer send n messages of size bytes, each only after
// the reader has acknowledged the one before (one message in flight, as a
// database connection with one request outstanding), each in 1 to 3
// writes with a pause of up to 20 us between them when split. It fails
// the test if a message does not arrive within a generous bound: a
// reader that lost a wake-up would wait for good.
func pingPong(t *testing.T, r *Reader, peer net.Conn, n, size int, split bool) {
	t.Helper()
	rng := rand.New(rand.NewSource(int64(n)))
	msg := make([]byte, size)
	peerErr := make(chan error, 1)
	go func() {
		ack := make([]byte, 1)
		for i := 0; i < n; i++ {
			for j := range msg {
				msg[j] = byte(i + j)
			}
			parts := 1
			if split {
				parts = 1 + rng.Intn(3)
			}
			for b, k := msg, 0; len(b) > 0; k++ {
				m := len(b)
				if k < parts-1 {
					m = 1 + rng.Intn(len(b))
				}
				if _, err := peer.Write(b[:m]); err != nil {
					peerErr <- err
					return
				}
				b = b[m:]
				if len(b) > 0 {
					time.Sleep(time.Duration(rng.Intn(20)) * time.Microsecond)
				}
			}
			if _, err := io.ReadFull(peer, ack); err != nil {
				peerErr <- err
				return
			}
		}
		peerErr <- nil
	}()
	got := make([]byte, size)
	var slowest time.Duration
	defer func() { t.Logf("slowest message: %v", slowest) }()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		_ = r.SetReadDeadline(time.Now().Add(30 * time.Second))
		if k, err := io.ReadFull(r, got); err != nil {
			t.Fatalf("message %d of %d: %d of %d bytes, then %v (a wake-up lost would end so); %d reads found nothing", i+1, n, k, size, err, r.emptyReads.Load())
		}
		for j := range got {
			if got[j] != byte(i+j) {
				t.Fatalf("message %d: byte %d is %d, want %d", i+1, j, got[j], byte(i+j))
			}
		}
		if d := time.Since(t0); d > slowest {
			slowest = d
		}
		if _, err := r.Write([]byte{1}); err != nil {
			t.Fatalf("ack %d: %v", i+1, err)
		}
	}
	_ = r.SetReadDeadline(time.Time{})
	if err := <-peerErr; err != nil {
		t.Fatalf("peer: %v", err)
	}
}

// TestPumpWaitsWithoutEmptyReads: after a read that drained the socket the
// pump waits for the poller without another read, so a connection with
// one message in flight makes almost no read that finds nothing, where a
// plain Reader makes one per message (the read system call that tells it
// to wait).
func TestPumpWaitsWithoutEmptyReads(t *testing.T) {
	const n = 2000
	c, s := tcppair.New(t)
	plain := NewReader(c, 4096)
	pingPong(t, plain, s, n, 100, false)

	c2, s2 := tcppair.New(t)
	pumped := NewPumpReader(c2, 4096)
	defer func() { _ = pumped.Close() }()
	pingPong(t, pumped, s2, n, 100, false)

	t.Logf("reads that found nothing over %d messages: plain Reader %d, pump %d", n, plain.emptyReads.Load(), pumped.emptyReads.Load())
	if got := pumped.emptyReads.Load(); got > n/10 {
		t.Fatalf("the pump made %d reads that found nothing over %d messages; want at most %d (it must wait for the poller after a read that drained the socket)", got, n, n/10)
	}
}

// TestPumpLosesNoWakeUp: messages that arrive in pieces, at every moment
// relative to the pump's reads and waits, all arrive, on one P (as the
// Cassandra client runs) and on all.
func TestPumpLosesNoWakeUp(t *testing.T) {
	for _, procs := range []int{1, runtime.NumCPU()} {
		prev := runtime.GOMAXPROCS(procs)
		c, s := tcppair.New(t)
		r := NewPumpReader(c, 256)
		pingPong(t, r, s, 1500, 300, true)
		_ = r.Close()
		runtime.GOMAXPROCS(prev)
	}
}

// waitClosed fails the test unless ch is closed within a generous bound.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s: not within 30 s; goroutines:\n%s", what, buf[:runtime.Stack(buf, true)])
	}
}

// TestPumpCloseWhileWaiting: Close ends a Read waiting for data with
// net.ErrClosed, and the pump's goroutine returns.
func TestPumpCloseWhileWaiting(t *testing.T) {
	c, _ := tcppair.New(t)
	r := NewPumpReader(c, 64)
	errc := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 10))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the Read wait (it must end either way)
	done := make(chan struct{})
	go func() { _ = r.Close(); close(done) }()
	waitClosed(t, done, "Close")
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read ended with %v, want net.ErrClosed", err)
	}
	waitClosed(t, r.pump.stopped, "the pump's goroutine to return")
}

// TestPumpCloseWithBuffersFull: a consumer that stops reading leaves the
// pump with every buffer full; Close still returns and ends the pump, and
// a later Read is net.ErrClosed, not the data left unread.
func TestPumpCloseWithBuffersFull(t *testing.T) {
	c, s := tcppair.New(t)
	r := NewPumpReader(c, 64)
	go func() { _, _ = s.Write(make([]byte, 1<<20)) }()
	deadline := time.Now().Add(30 * time.Second)
	for len(r.pump.full) < pumpBuffers {
		if time.Now().After(deadline) {
			t.Fatalf("the pump filled %d of %d buffers in 30 s", len(r.pump.full), pumpBuffers)
		}
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { _ = r.Close(); close(done) }()
	waitClosed(t, done, "Close")
	waitClosed(t, r.pump.stopped, "the pump's goroutine to return")
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close: %v, want net.ErrClosed", err)
	}
}

// TestPumpDeadlineWhileWaiting: a read deadline that passes while the
// consumer waits ends that Read with a timeout, and the stream goes on
// afterwards (drivers retry a timed-out read, as gocql does).
func TestPumpDeadlineWhileWaiting(t *testing.T) {
	c, s := tcppair.New(t)
	r := NewPumpReader(c, 64)
	defer func() { _ = r.Close() }()
	_ = r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := r.Read(make([]byte, 10))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v (%T)", err, err)
	}
	_ = r.SetReadDeadline(time.Time{})
	go func() { _, _ = s.Write([]byte("after")) }()
	p := make([]byte, 5)
	if _, err := io.ReadFull(r, p); err != nil || string(p) != "after" {
		t.Fatalf("read after the timeout: %q, %v", p, err)
	}
}

// TestPumpSeesCloseAfterData: a peer that sends its last bytes and closes
// at once while the pump waits, has both reported by one wake-up (one P:
// the poller runs only once the test's goroutine blocks); the read after
// them, not the poller, finds the end. Each stream must still end in
// io.EOF, not wait for the connection's keepalive (15 s and more).
func TestPumpSeesCloseAfterData(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := 0; i < 20; i++ {
		c, s := tcppair.New(t)
		r := NewPumpReader(c, 64)
		// Let the pump find nothing and wait, as a busy connection's
		// pump does between replies.
		runtime.Gosched()
		if _, err := s.Write([]byte("bye")); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		_ = r.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(r)
		if err != nil || string(b) != "bye" {
			t.Fatalf(`stream %d: %q, %v; want "bye" and io.EOF (a timeout means the end was never read)`, i+1, b, err)
		}
		_ = r.Close()
	}
}

package cassandra

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/testutil/tcppair"
)

// countingConn counts the system calls batchConn makes on its socket; its
// writes can be held at a gate to see what queues meanwhile.
type countingConn struct {
	net.Conn
	writes, reads, readDeadlines atomic.Int64
	gate                         chan struct{} // nil: writes pass at once
	writeErr                     error
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	if c.gate != nil {
		<-c.gate
	}
	if c.writeErr != nil {
		return 0, c.writeErr
	}
	return c.Conn.Write(p)
}

func (c *countingConn) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.Conn.Read(p)
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	c.readDeadlines.Add(1)
	return c.Conn.SetReadDeadline(t)
}

// frame is a test request: writer id, sequence number, then a payload
// whose every byte is the writer id, so a torn or interleaved frame shows.
func frame(id, seq, size int) []byte {
	b := make([]byte, 12+size)
	binary.BigEndian.PutUint32(b, uint32(id))
	binary.BigEndian.PutUint32(b[4:], uint32(seq))
	binary.BigEndian.PutUint32(b[8:], uint32(size))
	for i := 12; i < len(b); i++ {
		b[i] = byte(id)
	}
	return b
}

// TestBatchConnKeepsFramesWholeAndOrdered: many writers at once; the server
// must see every frame intact and each writer's frames in order.
func TestBatchConnKeepsFramesWholeAndOrdered(t *testing.T) {
	raw, server := tcppair.New(t)
	cc := &countingConn{Conn: raw}
	bc := newBatchConn(cc, time.Minute)
	defer func() { _ = bc.Close() }()
	const writers, perWriter = 16, 200
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for s := 0; s < perWriter; s++ {
				buf := frame(w, s, 1+(w*37+s*11)%300)
				if n, err := bc.Write(buf); err != nil || n != len(buf) {
					t.Errorf("writer %d: Write = %d, %v", w, n, err)
					return
				}
				// The caller may reuse its buffer at once.
				for i := range buf {
					buf[i] = 0xEE
				}
			}
		}(w)
	}
	next := make([]int, writers)
	_ = server.SetReadDeadline(time.Now().Add(30 * time.Second))
	for got := 0; got < writers*perWriter; got++ {
		var h [12]byte
		if _, err := io.ReadFull(server, h[:]); err != nil {
			t.Fatalf("after %d frames: %v", got, err)
		}
		id, seq, size := int(binary.BigEndian.Uint32(h[:])), int(binary.BigEndian.Uint32(h[4:])), int(binary.BigEndian.Uint32(h[8:]))
		if id >= writers || seq != next[id] {
			t.Fatalf("frame %d: writer %d seq %d, expected seq %d", got, id, seq, next[id])
		}
		next[id]++
		body := make([]byte, size)
		if _, err := io.ReadFull(server, body); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(body, bytes.Repeat([]byte{byte(id)}, size)) {
			t.Fatalf("frame %d of writer %d is torn or was changed after Write returned", seq, id)
		}
	}
	wg.Wait()
	t.Logf("%d frames in %d socket writes", writers*perWriter, cc.writes.Load())
}

// TestBatchConnQueuesWhileSocketBusy: while one flush is stuck in the
// socket, writers do not block, and everything they queued goes out in the
// next single write.
func TestBatchConnQueuesWhileSocketBusy(t *testing.T) {
	raw, server := tcppair.New(t)
	cc := &countingConn{Conn: raw, gate: make(chan struct{})}
	bc := newBatchConn(cc, time.Minute)
	defer func() { _ = bc.Close() }()
	if _, err := bc.Write(frame(0, 0, 10)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first flush to reach the socket", func() bool { return cc.writes.Load() == 1 })
	const queued = 10
	for s := 1; s <= queued; s++ {
		done := make(chan error, 1)
		go func() { _, err := bc.Write(frame(0, s, 10)); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Write blocked while the socket was busy")
		}
	}
	cc.gate <- struct{}{} // the first flush
	waitFor(t, "the second flush", func() bool { return cc.writes.Load() == 2 })
	cc.gate <- struct{}{} // the second carries all ten
	want := (queued + 1) * 22
	got := make([]byte, want)
	_ = server.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatal(err)
	}
	if n := cc.writes.Load(); n != 2 {
		t.Errorf("%d socket writes for %d frames queued behind one, want 2", n, queued)
	}
}

// TestBatchConnWriteErrorFailsConnection: a failed flush closes the socket
// (so gocql's reader fails every request in flight) and fails later writes.
func TestBatchConnWriteErrorFailsConnection(t *testing.T) {
	raw, server := tcppair.New(t)
	boom := errors.New("boom")
	cc := &countingConn{Conn: raw, writeErr: boom}
	bc := newBatchConn(cc, time.Minute)
	defer func() { _ = bc.Close() }()
	if _, err := bc.Write(frame(1, 0, 5)); err != nil {
		t.Fatalf("first Write: %v (the error comes with the flush)", err)
	}
	waitFor(t, "later writes to fail", func() bool {
		_, err := bc.Write(frame(1, 1, 5))
		return errors.Is(err, boom)
	})
	// The peer sees the connection closed, and so does our reader.
	_ = server.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := server.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("peer read after failed flush: %v, want EOF", err)
	}
	if _, err := bc.Read(make([]byte, 1)); err == nil {
		t.Error("Read on a connection whose flush failed succeeded")
	}
}

// TestBatchConnReadsManyResponsesPerCall: responses that arrive together
// are read in one system call though the caller reads 4 KiB at a time, and
// deadlines reach the socket only when a read needs it.
func TestBatchConnReadsManyResponsesPerCall(t *testing.T) {
	raw, server := tcppair.New(t)
	cc := &countingConn{Conn: raw}
	bc := newBatchConn(cc, time.Minute)
	defer func() { _ = bc.Close() }()
	payload := bytes.Repeat([]byte("0123456789"), 3000) // 30 KB: seven 4 KiB reads
	if _, err := server.Write(payload); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 0, len(payload))
	buf := make([]byte, 4096)
	for len(got) < len(payload) {
		// gocql sets a deadline before every piece it reads.
		_ = bc.SetReadDeadline(time.Now().Add(time.Minute))
		n, err := bc.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, payload) {
		t.Fatal("bytes read differ from bytes sent")
	}
	// Loopback may split 30 KB; it never needs one call per 4 KiB piece.
	if r := cc.reads.Load(); r > 3 {
		t.Errorf("%d socket reads for 30 KB read 4 KiB at a time, want at most 3", r)
	}
	if d := cc.readDeadlines.Load(); d > cc.reads.Load() {
		t.Errorf("%d socket deadline changes for %d socket reads", d, cc.reads.Load())
	}
	// A deadline still bounds a read that has to wait.
	_ = bc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var ne net.Error
	if _, err := bc.Read(buf); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("read with a passed deadline: %v, want a timeout", err)
	}
}

// TestBatchConnCloseStopsWrites, on a plain TCP socket (the pumped
// reader's path): what the server sends back is read in order, and after
// Close, reads and writes fail.
func TestBatchConnCloseStopsWrites(t *testing.T) {
	raw, server := tcppair.New(t)
	go func() { _, _ = io.Copy(server, server) }()
	bc := newBatchConn(raw, time.Minute)
	for i := 0; i < 100; i++ {
		want := frame(1, i, 1+i*37)
		if _, err := bc.Write(want); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		if _, err := io.ReadFull(bc, got); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("echo %d: %v (equal %v)", i, err, bytes.Equal(got, want))
		}
	}
	if err := bc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := bc.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
	if _, err := bc.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after Close: %v, want net.ErrClosed", err)
	}
	if err := bc.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close: %v, want net.ErrClosed", err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkBatchConnWrite: 16 writers, one request each in flight as a CQL
// worker has, each waiting for the peer's echo of its frame before sending
// the next. Reports socket writes and reads per request.
func BenchmarkBatchConnWrite(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = c.Close() }()
		_, _ = io.Copy(c, c) // the "server" answers every frame at once
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	cc := &countingConn{Conn: raw}
	bc := newBatchConn(cc, time.Minute)
	defer func() { _ = bc.Close() }()
	const workers, size = 16, 64
	waiting := make([]chan struct{}, workers)
	for i := range waiting {
		waiting[i] = make(chan struct{}, 1)
	}
	// The reader hands each echoed frame to its writer, as gocql's does.
	go func() {
		var f [size]byte
		for {
			if _, err := io.ReadFull(bc, f[:]); err != nil {
				return
			}
			waiting[f[0]] <- struct{}{}
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var f [size]byte
			f[0] = byte(w)
			for i := w; i < b.N; i += workers {
				if _, err := bc.Write(f[:]); err != nil {
					b.Error(err)
					return
				}
				<-waiting[w]
			}
		}(w)
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(cc.writes.Load())/float64(b.N), "writes/op")
	b.ReportMetric(float64(cc.reads.Load())/float64(b.N), "reads/op")
}

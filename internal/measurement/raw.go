package measurement

import (
	"errors"
	"io"
	"math"
	"strconv"
	"sync"
	"time"
)

// The raw measurement type (YCSB measurementtype=raw) keeps every sample:
// the time it was recorded (Unix ms) and its latency (integer µs). Keeping
// them all in memory as YCSB does would grow without bound, so samples
// stream to one background writer instead:
//
//   - each worker fills chunks of its own (rawChunkLen samples) inside the
//     lock it already holds for its histograms; nothing else is shared;
//   - a full chunk goes to the writer through one channel (one send per
//     rawChunkLen samples) and the worker continues in a free chunk of its
//     own pool;
//   - a worker's pool grows on demand (one allocation per chunk, never per
//     sample) up to its share of a fixed memory budget (rawBudgetChunks,
//     64 MiB in all, at most rawMaxChunksPerBuf per worker), so that a
//     writer stalled for a moment loses nothing;
//   - when the writer has not handed any of the worker's chunks back and
//     its share is used up, the worker drops samples rather than wait, and
//     counts every one it dropped (Dropped), so a summary can say how many
//     are missing.
//
// The writer buffers whole lines and writes them in large blocks that end
// at a line, so several processes appending to one file (agents sharing a
// directory) never split a line.
const (
	rawChunkLen        = 4096
	rawBudgetChunks    = 1024 // × 64 KiB per chunk
	rawMinChunksPerBuf = 4
	rawMaxChunksPerBuf = 256
	rawFlushBytes      = 256 << 10
)

type rawSample struct {
	ms     int64
	us     int32
	series Series
}

type rawChunk struct {
	owner *rawBuffer
	n     int
	s     [rawChunkLen]rawSample
}

// rawBuffer is one worker's part of a RawLog: only that worker writes it
// until the log is closed.
type rawBuffer struct {
	log       *RawLog
	cur       *rawChunk
	free      chan *rawChunk
	allocated int
	dropped   int64
}

func (b *rawBuffer) add(s Series, ns int64) {
	c := b.cur
	if c == nil {
		select {
		case c = <-b.free:
			c.n = 0
		default:
			if b.allocated >= b.log.perBuf {
				b.dropped++
				return
			}
			b.allocated++
			c = &rawChunk{owner: b}
		}
		b.cur = c
	}
	us := ns / 1000
	if us > math.MaxInt32 {
		us = math.MaxInt32
	}
	c.s[c.n] = rawSample{ms: time.Now().UnixMilli(), us: int32(us), series: s}
	c.n++
	if c.n == rawChunkLen {
		// The channel holds every chunk there is, so the send only
		// fails after Close, when nobody should be recording.
		select {
		case b.log.full <- c:
			b.cur = nil
		default:
			b.dropped += int64(c.n)
			c.n = 0
		}
	}
}

// RawLog writes raw samples as YCSB's raw measurement prints them: a
// header line per measurement name, then "<NAME>,<timestamp ms>,<latency
// µs>" per sample.
type RawLog struct {
	w      io.Writer
	closer io.Closer
	names  [NumSeries]string
	headed [NumSeries]bool

	mu     sync.Mutex // guards bufs and closed against late KeepRaw calls
	bufs   []*rawBuffer
	closed bool
	// perBuf is each worker's chunk limit, fixed by Start.
	perBuf int

	full    chan *rawChunk
	started sync.Once
	done    chan struct{}
	out     []byte
	lastMs  int64
	msText  []byte
	// outSamples counts the samples in out.
	outSamples int64
	err        error
	// unwritten counts samples lost to a write error.
	unwritten int64
}

// NewRawLog returns a raw log writing to w; prefix goes in front of every
// measurement name (YCSB's hdrhistogram+raw names them Raw<OP>). closer,
// when not nil, is closed by Close.
func NewRawLog(w io.Writer, closer io.Closer, prefix string) *RawLog {
	l := &RawLog{w: w, closer: closer, done: make(chan struct{}), out: make([]byte, 0, rawFlushBytes+4096)}
	for s := Series(0); s < NumSeries; s++ {
		l.names[s] = prefix + s.Name()
	}
	return l
}

func (l *RawLog) newBuffer() *rawBuffer {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := &rawBuffer{log: l, free: make(chan *rawChunk, rawMaxChunksPerBuf)}
	l.bufs = append(l.bufs, b)
	return b
}

// Start fixes every worker's share of the memory budget and starts the
// writer; call it after every recorder has KeepRaw'd and before the run
// starts.
func (l *RawLog) Start() {
	l.started.Do(func() {
		l.mu.Lock()
		n := max(len(l.bufs), 1)
		l.perBuf = min(max(rawBudgetChunks/n, rawMinChunksPerBuf), rawMaxChunksPerBuf)
		// The channel holds every chunk there can be, so handing one
		// over never blocks.
		l.full = make(chan *rawChunk, l.perBuf*n)
		l.mu.Unlock()
		go l.loop()
	})
}

func (l *RawLog) loop() {
	defer close(l.done)
	for c := range l.full {
		l.writeChunk(c)
		c.n = 0
		c.owner.free <- c
	}
}

func (l *RawLog) writeChunk(c *rawChunk) {
	for i := 0; i < c.n; i++ {
		smp := &c.s[i]
		if !l.headed[smp.series] {
			l.headed[smp.series] = true
			l.out = append(l.out, l.names[smp.series]...)
			l.out = append(l.out, " latency raw data: op, timestamp(ms), latency(us)\n"...)
		}
		if smp.ms != l.lastMs || len(l.msText) == 0 {
			// Samples arrive in millisecond runs: format each once.
			l.lastMs = smp.ms
			l.msText = append(strconv.AppendInt(append(l.msText[:0], ','), smp.ms, 10), ',')
		}
		l.out = append(l.out, l.names[smp.series]...)
		l.out = append(l.out, l.msText...)
		l.out = strconv.AppendInt(l.out, int64(smp.us), 10)
		l.out = append(l.out, '\n')
		l.outSamples++
		if len(l.out) >= rawFlushBytes {
			l.flush()
		}
	}
}

// flush writes the buffered lines in one call; after a write error the
// samples they held are counted as unwritten.
func (l *RawLog) flush() {
	if len(l.out) == 0 {
		return
	}
	if l.err == nil {
		_, l.err = l.w.Write(l.out)
	}
	if l.err != nil {
		l.unwritten += l.outSamples
	}
	l.out = l.out[:0]
	l.outSamples = 0
}

// Close writes what every worker still holds, stops the writer and closes
// the output. Call it once, after every worker has finished recording.
func (l *RawLog) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return l.err
	}
	l.closed = true
	l.mu.Unlock()
	l.Start() // a run that recorded nothing still writes nothing, cleanly
	close(l.full)
	<-l.done
	for _, b := range l.bufs {
		if b.cur != nil && b.cur.n > 0 {
			l.writeChunk(b.cur)
			b.cur.n = 0
		}
	}
	l.flush()
	err := l.err
	if l.closer != nil {
		if cerr := l.closer.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return errors.Join(errors.New("raw measurement output"), err)
	}
	return nil
}

// Dropped is the number of samples that were measured but are not in the
// output: dropped because the writer could not keep up, or lost to a
// write error. It is exact after Close.
func (l *RawLog) Dropped() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.unwritten
	for _, b := range l.bufs {
		n += b.dropped
	}
	return n
}

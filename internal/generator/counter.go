package generator

import (
	"errors"
	"sync"
	"sync/atomic"
)

// Counter is YCSB's CounterGenerator: a shared atomic counter.
type Counter struct {
	next atomic.Int64
}

// NewCounter returns a counter whose first Next is start.
func NewCounter(start int64) *Counter {
	c := &Counter{}
	c.next.Store(start)
	return c
}

// Next returns the current value and increments it (getAndIncrement).
func (c *Counter) Next(*Rand) int64 { return c.next.Add(1) - 1 }

// Last returns the most recently handed out value (current-1).
func (c *Counter) Last() int64 { return c.next.Load() - 1 }

// Clone returns c itself: the counter is meant to be shared.
func (c *Counter) Clone() Long { return c }

// AckWindowSize is the number of insert keys that may be handed out but not
// yet acknowledged (YCSB's WINDOW_SIZE = 2^20).
const AckWindowSize = 1 << 20

const ackWindowMask = AckWindowSize - 1

var (
	// ErrTooManyUnacknowledged is returned by Acknowledge when more than
	// AckWindowSize keys are in flight (upstream throws the same message).
	ErrTooManyUnacknowledged = errors.New("too many unacknowledged insertion keys")
	// ErrAlreadyAcknowledged is returned when a key at or below the limit is
	// acknowledged again; upstream would silently corrupt its window.
	ErrAlreadyAcknowledged = errors.New("insertion key acknowledged twice")
)

// AcknowledgedCounter is YCSB's AcknowledgedCounterGenerator: a shared counter
// handing out insert keys plus a window recording which of them have been
// acknowledged. Last() only advances over a contiguous acknowledged prefix, so
// readers never pick a key whose insert may still be in flight.
type AcknowledgedCounter struct {
	next  atomic.Int64
	limit atomic.Int64
	// One bit per window slot (128 KiB instead of 1 MiB of bools); atomic
	// Or/And make set and clear race-free without a lock on the ack path.
	window [AckWindowSize / 64]atomic.Uint64
	mu     sync.Mutex
}

// NewAcknowledgedCounter returns a counter whose first Next is start and whose
// limit is start-1.
func NewAcknowledgedCounter(start int64) *AcknowledgedCounter {
	c := &AcknowledgedCounter{}
	c.next.Store(start)
	c.limit.Store(start - 1)
	return c
}

// Next hands out the next key number (getAndIncrement).
func (c *AcknowledgedCounter) Next(*Rand) int64 { return c.next.Add(1) - 1 }

// Last returns the acknowledged limit.
func (c *AcknowledgedCounter) Last() int64 { return c.limit.Load() }

// Clone returns c itself: the counter is meant to be shared.
func (c *AcknowledgedCounter) Clone() Long { return c }

func (c *AcknowledgedCounter) slot(v int64) (*atomic.Uint64, uint64) {
	s := uint64(v) & ackWindowMask
	return &c.window[s>>6], 1 << (s & 63)
}

// Acknowledge marks v as done and, if no other goroutine is doing so already
// (try-lock, never blocks), advances the limit over contiguous acknowledged
// keys.
func (c *AcknowledgedCounter) Acknowledge(v int64) error {
	lim := c.limit.Load()
	if v <= lim {
		return ErrAlreadyAcknowledged
	}
	// v's slot is shared with v-2^20, which is not yet behind the limit:
	// setting it would later be mistaken for that key's acknowledgement.
	if v-lim > AckWindowSize {
		return ErrTooManyUnacknowledged
	}
	w, bit := c.slot(v)
	if w.Or(bit)&bit != 0 {
		return ErrTooManyUnacknowledged
	}
	for c.mu.TryLock() {
		c.advance()
		c.mu.Unlock()
		// A goroutine that set the next slot while we held the lock failed
		// its TryLock and left; re-check so its acknowledgement is not
		// stranded until some later Acknowledge (upstream can stall here).
		w, bit := c.slot(c.limit.Load() + 1)
		if w.Load()&bit == 0 {
			break
		}
	}
	return nil
}

// advance moves the limit over set slots, clearing them, at most one lap of
// the window. Caller holds mu.
func (c *AcknowledgedCounter) advance() {
	lim := c.limit.Load()
	idx := lim + 1
	for end := idx + AckWindowSize; idx != end; idx++ {
		w, bit := c.slot(idx)
		if w.Load()&bit == 0 {
			break
		}
		w.And(^bit)
	}
	if idx-1 != lim {
		c.limit.Store(idx - 1)
	}
}

package basic

import (
	"sync"
	"time"
)

// maxSlots bounds basicdb.slots: a slot is eight bytes, and no simulated
// server needs more parallelism than a run has threads.
const maxSlots = 1 << 16

// server is the simulated server of basicdb.slots: slots parallel service
// slots, each call holding one for its service time. A call reserves the
// earliest free slot at an absolute time (it starts when the slot frees,
// or now if that is later) and then sleeps until its reserved end. When
// the sleeper wakes late, only its own latency grows: the next call's
// reservation depends on the slot's reserved end, not on when anyone woke.
// And a call of a paced run arrives when its schedule said it should
// start (adapters.Scheduled), not when the harness got round to making
// it: a host that stalls the harness for a while makes the calls due
// meanwhile late, and they find the slots that idled then, as they would
// had they been sent on time. So the server completes exactly
// slots/service time calls per second however loaded the host is, a
// knee a capacity search can be held to; what the host's stalls and late
// wake-ups cost is latency, which the intended-time latency shows.
//
// The reservation is state of the simulated server, shared by every
// worker as a real server's queue is, not state of the harness: one small
// mutex (a few nanoseconds held, a heap of slots to fix) is what it costs.
type server struct {
	base time.Time
	mu   sync.Mutex
	// free is a min-heap of the slots' free times, in nanoseconds since
	// base: free[0] is the earliest free slot.
	free []int64
}

func newServer(slots int) *server {
	return &server{base: time.Now(), free: make([]int64, slots)}
}

// reserve books the earliest free slot for d for a call that arrived at
// arrival (zero: now) and returns when the call ends.
func (s *server) reserve(arrival time.Time, d time.Duration) time.Time {
	at := time.Since(s.base)
	if !arrival.IsZero() {
		at = min(at, arrival.Sub(s.base))
	}
	s.mu.Lock()
	start := max(int64(at), s.free[0])
	end := start + int64(d)
	s.free[0] = end
	s.down()
	s.mu.Unlock()
	return s.base.Add(time.Duration(end))
}

// down restores the heap after the root grew.
func (s *server) down() {
	h, i := s.free, 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			c = r
		}
		if h[i] <= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

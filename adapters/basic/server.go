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
// So with calls waiting (more threads than slots) the server completes
// exactly slots/service time calls per second however loaded the host is,
// a knee a capacity search can be held to.
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

// reserve books the earliest free slot for d and returns when the call
// ends.
func (s *server) reserve(d time.Duration) time.Time {
	s.mu.Lock()
	start := max(int64(time.Since(s.base)), s.free[0])
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

package basic

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestServerReservesAbsoluteSlots: a call's slot starts when the earliest
// slot frees, not when the call is made, so a sleeper waking late does not
// delay the calls queued behind it: with two slots of 10 ms, the third and
// fourth calls end exactly one service time after the first and second
// whenever they were made, and a fifth made long after all ended starts
// at once.
func TestServerReservesAbsoluteSlots(t *testing.T) {
	const d = 10 * time.Millisecond
	s := newServer(2)
	e1, e2 := s.reserve(d), s.reserve(d)
	e3 := s.reserve(d)
	time.Sleep(2 * d) // a late waker: every slot is free again by now
	assert.Equal(t, e1.Add(d), e3, "the third call takes the first slot as it frees")
	before := time.Now()
	e4 := s.reserve(d)
	assert.False(t, e4.Before(before.Add(d)), "a call on an idle server starts now: %s", e4.Sub(before))
	assert.Less(t, e4.Sub(before), d+time.Second, "and ends one service time later")
	assert.False(t, e2.After(e3))
}

// TestServerEarliestSlot: with service times of different lengths the
// call takes whichever slot frees first.
func TestServerEarliestSlot(t *testing.T) {
	s := newServer(3)
	long := s.reserve(time.Hour)
	short := s.reserve(time.Millisecond)
	mid := s.reserve(time.Minute)
	assert.Equal(t, short.Add(time.Second), s.reserve(time.Second), "the slot that frees first")
	assert.Equal(t, short.Add(time.Second).Add(time.Second), s.reserve(time.Second), "then the same slot again")
	_, _ = long, mid
}

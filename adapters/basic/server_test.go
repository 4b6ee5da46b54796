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
	e1, e2 := s.reserve(time.Time{}, d), s.reserve(time.Time{}, d)
	e3 := s.reserve(time.Time{}, d)
	time.Sleep(2 * d) // a late waker: every slot is free again by now
	assert.Equal(t, e1.Add(d), e3, "the third call takes the first slot as it frees")
	before := time.Now()
	e4 := s.reserve(time.Time{}, d)
	assert.False(t, e4.Before(before.Add(d)), "a call on an idle server starts now: %s", e4.Sub(before))
	assert.Less(t, e4.Sub(before), d+time.Second, "and ends one service time later")
	assert.False(t, e2.After(e3))
}

// TestServerEarliestSlot: with service times of different lengths the
// call takes whichever slot frees first.
func TestServerEarliestSlot(t *testing.T) {
	s := newServer(3)
	long := s.reserve(time.Time{}, time.Hour)
	short := s.reserve(time.Time{}, time.Millisecond)
	mid := s.reserve(time.Time{}, time.Minute)
	assert.Equal(t, short.Add(time.Second), s.reserve(time.Time{}, time.Second), "the slot that frees first")
	assert.Equal(t, short.Add(time.Second).Add(time.Second), s.reserve(time.Time{}, time.Second), "then the same slot again")
	_, _ = long, mid
}

// TestServerServesTheSchedule: a call that arrives late (its intended
// time long past, the harness stalled) takes a slot from its intended
// time when the slot idled since, so the stall costs no throughput; a
// slot busy at the intended time is taken when it frees.
func TestServerServesTheSchedule(t *testing.T) {
	const d = 10 * time.Millisecond
	s := newServer(1)
	time.Sleep(5 * d) // the slot idles: the harness stalled
	intended := time.Now().Add(-4 * d)
	// Instants compare by their monotonic readings (Sub), as the server
	// keeps them: the wall clock may have been stepped meanwhile.
	assert.Zero(t, s.reserve(intended, d).Sub(intended.Add(d)), "the idle slot serves the call from its intended time")
	assert.Zero(t, s.reserve(intended.Add(time.Millisecond), d).Sub(intended.Add(2*d)), "the next waits for the slot")
	future := time.Now().Add(time.Hour)
	end := s.reserve(future, d)
	assert.True(t, end.Before(future), "a call cannot arrive after it is made: %s", end)
}

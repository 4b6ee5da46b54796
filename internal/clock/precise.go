package clock

import (
	"context"
	"time"
)

// Stages of a Sleeper's sleep. Go's timers wake up to a millisecond late
// on Linux (the runtime's poller waits in whole milliseconds), so a 2 ms
// sleep lasts about 2.2 ms. A kernel timer read through the poller (a
// timerfd) wakes within tens of microseconds without holding an OS thread
// or a processor while it waits (a plain nanosleep holds the processor:
// with more sleepers than GOMAXPROCS they take turns), and only spinning
// meets an instant to a few microseconds.
const (
	// timerMargin is how long before the end the Go timer stops, so that
	// its lateness never reaches the end.
	timerMargin = 2 * time.Millisecond
	// spinMargin is how long before the end the kernel timer fires; the
	// rest is spun, yielding the processor to other goroutines.
	spinMargin = 100 * time.Microsecond
)

// Sleeper sleeps precisely: one per goroutine (its kernel timer is its
// own), for simulated service times, where a sleep that overshoots by a
// tenth changes the capacity being simulated by a tenth. A nil Sleeper,
// or one without a kernel timer (other systems than Linux, no file
// descriptor left), sleeps on Go's timer instead and spins the same last
// stretch.
type Sleeper struct {
	kt *kernelTimer
}

// NewSleeper returns a sleeper with a kernel timer of its own where the
// system has one.
func NewSleeper() *Sleeper {
	kt, err := newKernelTimer()
	if err != nil {
		return &Sleeper{}
	}
	return &Sleeper{kt: kt}
}

// Close releases the kernel timer.
func (s *Sleeper) Close() error {
	if s == nil || s.kt == nil {
		return nil
	}
	return s.kt.close()
}

// Sleep blocks for d, or until ctx is done (noticed within timerMargin
// of the end at worst): on Go's timer until timerMargin before the end,
// on the kernel timer until spinMargin before it, spinning the rest.
func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	return s.SleepUntil(ctx, time.Now().Add(d))
}

// SleepUntil is Sleep to an instant (its monotonic reading), for a
// simulated server whose calls end at reserved times whenever they
// started sleeping.
func (s *Sleeper) SleepUntil(ctx context.Context, end time.Time) error {
	d := time.Until(end)
	if d <= 0 {
		return nil
	}
	coarse := d - timerMargin
	if s == nil || s.kt == nil {
		coarse = d - spinMargin
	}
	if coarse > 0 {
		tm := time.NewTimer(coarse)
		select {
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		case <-tm.C:
		}
	}
	if s != nil && s.kt != nil {
		if left := time.Until(end) - spinMargin; left > 0 {
			if err := s.kt.sleep(left); err != nil {
				// The kernel timer failed (closed?): Go's timer then.
				time.Sleep(left)
			}
		}
	}
	for time.Now().Before(end) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		yield()
	}
	return nil
}

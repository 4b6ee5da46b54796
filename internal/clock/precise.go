package clock

import (
	"context"
	"sync/atomic"
	"time"
)

// Stages of Sleep. Go's timers can wake a millisecond late on an idle
// Linux host (the runtime's poller waits in whole milliseconds), so a
// 2 ms sleep lasts about 2.2 ms; the kernel's own sleep wakes within its
// timer slack (50 µs by default) plus scheduling, and only spinning
// meets an instant to a few microseconds.
const (
	// timerMargin is how long before the end the Go timer stops.
	timerMargin = 2 * time.Millisecond
	// spinMargin is how long before the end the kernel sleep stops; the
	// rest is spun, yielding the processor to other goroutines.
	spinMargin = 100 * time.Microsecond
	// maxKernelSleepers bounds the goroutines sleeping in the kernel at
	// once: each holds an OS thread, and thousands of them would run
	// into the runtime's thread limit. The others wait on timers, less
	// precisely.
	maxKernelSleepers = 256
)

var kernelSleepers atomic.Int64

// Sleep blocks for d, to within tens of microseconds on an idle host, or
// until ctx is done (noticed within timerMargin of the end at worst). It
// is for simulated service times, where a sleep that overshoots by a
// tenth changes the capacity being simulated by a tenth: it sleeps on a
// timer until timerMargin before the end, in the kernel until spinMargin
// before it, and spins the rest.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	end := time.Now().Add(d)
	if t := d - timerMargin; t > 0 {
		tm := time.NewTimer(t)
		select {
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		case <-tm.C:
		}
	}
	if left := time.Until(end) - spinMargin; left > 0 {
		if kernelSleepers.Add(1) <= maxKernelSleepers {
			kernelSleep(left)
		} else {
			tm := time.NewTimer(left)
			select {
			case <-ctx.Done():
				tm.Stop()
			case <-tm.C:
			}
		}
		kernelSleepers.Add(-1)
	}
	for time.Now().Before(end) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		yield()
	}
	return nil
}

// Package clock abstracts time so that pacing, intervals, heartbeats and
// leases can be tested deterministically.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock is the time source every timing-sensitive component takes.
type Clock interface {
	// Now returns wall-clock time.
	Now() time.Time
	// Nanotime returns monotonic nanoseconds from an arbitrary origin; it
	// is what latencies are measured with.
	Nanotime() int64
	// SleepUntil blocks until Nanotime() >= ns or ctx is done.
	SleepUntil(ctx context.Context, ns int64) error
	// After is time.After on this clock.
	After(d time.Duration) <-chan time.Time
}

// Real is the system clock.
type Real struct {
	wall time.Time
	mono int64
}

// NewReal returns the system clock. The first call calibrates the TSC
// (about 20 ms, once per process).
func NewReal() *Real {
	tscOnce.Do(calibrate)
	return &Real{wall: time.Now(), mono: monoNow()}
}

// Now implements Clock.
func (r *Real) Now() time.Time { return time.Now() }

// Nanotime implements Clock: monotonic nanoseconds since the clock was
// created.
func (r *Real) Nanotime() int64 { return monoNow() - r.mono }

// SleepUntil implements Clock. Waits shorter than a timer's granularity
// are spun with Gosched so that fast paced workers keep their schedule.
func (r *Real) SleepUntil(ctx context.Context, ns int64) error {
	for {
		d := time.Duration(ns - r.Nanotime())
		if d <= 0 {
			return nil
		}
		if d < 50*time.Microsecond {
			for r.Nanotime() < ns {
				yield()
			}
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// After implements Clock.
func (r *Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// WallAt converts a wall-clock instant into this clock's Nanotime scale.
func WallAt(c Clock, t time.Time) int64 {
	return c.Nanotime() + int64(t.Sub(c.Now()))
}

// Fake is a manually advanced clock for tests.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	mono    int64
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at int64
	ch chan time.Time
}

// NewFake returns a fake clock at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now implements Clock.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Nanotime implements Clock.
func (f *Fake) Nanotime() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mono
}

// Advance moves time forward and wakes due waiters.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mono += int64(d)
	var keep []fakeWaiter
	var fire []fakeWaiter
	for _, w := range f.waiters {
		if w.at <= f.mono {
			fire = append(fire, w)
		} else {
			keep = append(keep, w)
		}
	}
	f.waiters = keep
	now := f.now
	f.mu.Unlock()
	for _, w := range fire {
		w.ch <- now
	}
}

// After implements Clock.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, fakeWaiter{at: f.mono + int64(d), ch: ch})
	return ch
}

// SleepUntil implements Clock.
func (f *Fake) SleepUntil(ctx context.Context, ns int64) error {
	f.mu.Lock()
	d := ns - f.mono
	f.mu.Unlock()
	if d <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-f.After(time.Duration(d)):
		return nil
	}
}

// SleepUntilPrecise is SleepUntil for instants that must be met closely,
// such as the common start of a distributed run: on the real clock it
// sleeps until 2 ms before ns and spins (yielding) for the rest, so that
// timer and scheduler latency do not make the start late. Other clocks
// just sleep.
func SleepUntilPrecise(ctx context.Context, c Clock, ns int64) error {
	r, ok := c.(*Real)
	if !ok {
		return c.SleepUntil(ctx, ns)
	}
	const spin = int64(2 * time.Millisecond)
	if err := r.SleepUntil(ctx, ns-spin); err != nil {
		return err
	}
	for r.Nanotime() < ns {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		yield()
	}
	return nil
}

package clock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/clock"
)

func TestRealNanotimeTracksWallTime(t *testing.T) {
	c := clock.NewReal()
	// Each Nanotime read sits between two time.Now reads, so the test
	// knows the span it must match however long the OS deschedules it;
	// the slack is the calibrated TSC ratio's error (1e-4) and more.
	wa0 := time.Now()
	n0 := c.Nanotime()
	wb0 := time.Now()
	time.Sleep(50 * time.Millisecond)
	wa1 := time.Now()
	n1 := c.Nanotime()
	wb1 := time.Now()
	dn := time.Duration(n1 - n0)
	slack := wb1.Sub(wa0)/1000 + 10*time.Microsecond
	assert.GreaterOrEqual(t, dn, wa1.Sub(wb0)-slack, "Nanotime runs slower than the wall clock")
	assert.LessOrEqual(t, dn, wb1.Sub(wa0)+slack, "Nanotime runs faster than the wall clock")
	// Monotonic: many reads never go backwards.
	last := c.Nanotime()
	for i := 0; i < 100000; i++ {
		n := c.Nanotime()
		require.GreaterOrEqual(t, n, last)
		last = n
	}
	assert.WithinDuration(t, time.Now(), c.Now(), time.Second)
}

func TestRealSleepUntil(t *testing.T) {
	c := clock.NewReal()
	for _, d := range []time.Duration{0, -time.Second, 20 * time.Microsecond, 2 * time.Millisecond, 30 * time.Millisecond} {
		start := c.Nanotime()
		require.NoError(t, c.SleepUntil(context.Background(), start+int64(d)))
		assert.GreaterOrEqual(t, c.Nanotime(), start+int64(d), "woke early for %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	err := c.SleepUntil(ctx, c.Nanotime()+int64(time.Hour))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestRealAfterAndWallAt(t *testing.T) {
	c := clock.NewReal()
	select {
	case <-c.After(10 * time.Millisecond):
	case <-time.After(5 * time.Second):
		t.Fatal("After did not fire")
	}
	// WallAt's own two reads fall between n0 and n1: its answer is the
	// instant 300 ms after some point in that window, less at most the
	// window itself (the time between its reads).
	n0 := c.Nanotime()
	ns := clock.WallAt(c, time.Now().Add(300*time.Millisecond))
	n1 := c.Nanotime()
	slack := int64(100 * time.Microsecond)
	assert.GreaterOrEqual(t, ns, n0-(n1-n0)+int64(300*time.Millisecond)-slack)
	assert.LessOrEqual(t, ns, n1+int64(300*time.Millisecond)+slack)
}

func TestFake(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := clock.NewFake(t0)
	assert.Equal(t, t0, f.Now())
	assert.Zero(t, f.Nanotime())

	ch := f.After(10 * time.Second)
	immediate := f.After(0)
	select {
	case <-immediate:
	default:
		t.Fatal("After(0) must fire at once")
	}
	f.Advance(5 * time.Second)
	select {
	case <-ch:
		t.Fatal("fired early")
	default:
	}
	f.Advance(5 * time.Second)
	select {
	case got := <-ch:
		assert.Equal(t, t0.Add(10*time.Second), got)
	default:
		t.Fatal("did not fire when due")
	}
	assert.Equal(t, int64(10*time.Second), f.Nanotime())
	assert.Equal(t, t0.Add(10*time.Second), f.Now())

	// SleepUntil wakes when the clock passes the deadline.
	var wg sync.WaitGroup
	wg.Add(1)
	woke := make(chan struct{})
	go func() {
		defer wg.Done()
		assert.NoError(t, f.SleepUntil(context.Background(), int64(12*time.Second)))
		close(woke)
	}()
	require.Eventually(t, func() bool {
		f.Advance(100 * time.Millisecond)
		select {
		case <-woke:
			return true
		default:
			return false
		}
	}, 5*time.Second, time.Millisecond)
	wg.Wait()
	assert.GreaterOrEqual(t, f.Nanotime(), int64(12*time.Second))
	assert.NoError(t, f.SleepUntil(context.Background(), 0), "a past deadline returns at once")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, f.SleepUntil(ctx, f.Nanotime()+int64(time.Hour)), context.Canceled)
	assert.Equal(t, f.Nanotime()+int64(time.Minute), clock.WallAt(f, f.Now().Add(time.Minute)))
}

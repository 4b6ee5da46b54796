package clock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ycsbctl/ycsbctl/internal/clock"
)

// TestSleepNeverEarly: however the stages fall (timer, kernel timer,
// spin), a Sleeper never returns before its duration, nor does a nil
// Sleeper, from many goroutines at once.
func TestSleepNeverEarly(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := clock.NewSleeper()
			if g%2 == 1 {
				s = nil
			}
			defer func() { _ = s.Close() }()
			for _, d := range []time.Duration{0, 50 * time.Microsecond, 700 * time.Microsecond, 2 * time.Millisecond, time.Duration(3+g%3) * time.Millisecond} {
				t0 := time.Now()
				if err := s.Sleep(context.Background(), d); err != nil {
					t.Error(err)
				}
				if got := time.Since(t0); got < d {
					t.Errorf("Sleep(%s) returned after %s", d, got)
				}
			}
		}()
	}
	wg.Wait()
}

// TestSleepCancelled: a cancelled context ends a long sleep at once.
func TestSleepCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	t0 := time.Now()
	s := clock.NewSleeper()
	defer func() { _ = s.Close() }()
	err := s.Sleep(ctx, time.Hour)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(t0), time.Minute)
}

// BenchmarkSleep reports how late a 2 ms sleep returns (µs) on a
// Sleeper, beside time.Sleep's lateness, with four sleepers per processor
// at once.
func BenchmarkSleep(b *testing.B) {
	for _, bc := range []struct {
		name  string
		sleep func(*clock.Sleeper, time.Duration)
	}{
		{"Sleeper", func(s *clock.Sleeper, d time.Duration) { _ = s.Sleep(context.Background(), d) }},
		{"time.Sleep", func(_ *clock.Sleeper, d time.Duration) { time.Sleep(d) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const d = 2 * time.Millisecond
			var mu sync.Mutex
			var late time.Duration
			var n int
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				var mine time.Duration
				var k int
				s := clock.NewSleeper()
				defer func() { _ = s.Close() }()
				for pb.Next() {
					t0 := time.Now()
					bc.sleep(s, d)
					mine += time.Since(t0) - d
					k++
				}
				mu.Lock()
				late += mine
				n += k
				mu.Unlock()
			})
			if n > 0 {
				b.ReportMetric(float64(late.Microseconds())/float64(n), "late-µs/op")
			}
		})
	}
}

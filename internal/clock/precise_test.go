package clock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ycsbctl/ycsbctl/internal/clock"
)

// TestSleepNeverEarly: however the stages fall (timer, kernel, spin),
// Sleep never returns before its duration, from many goroutines at once
// (more than may sleep in the kernel together).
func TestSleepNeverEarly(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, d := range []time.Duration{0, 50 * time.Microsecond, 700 * time.Microsecond, 2 * time.Millisecond, time.Duration(3+g%3) * time.Millisecond} {
				t0 := time.Now()
				if err := clock.Sleep(context.Background(), d); err != nil {
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
	err := clock.Sleep(ctx, time.Hour)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(t0), time.Minute)
}

// BenchmarkSleep reports how late a 2 ms Sleep returns (µs), beside
// time.Sleep's lateness, with four sleepers at once as the basic
// adapter's known-knee test has them.
func BenchmarkSleep(b *testing.B) {
	for _, bc := range []struct {
		name  string
		sleep func(time.Duration)
	}{
		{"clock.Sleep", func(d time.Duration) { _ = clock.Sleep(context.Background(), d) }},
		{"time.Sleep", time.Sleep},
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
				for pb.Next() {
					t0 := time.Now()
					bc.sleep(d)
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

package generator

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCounter(t *testing.T) {
	c := NewCounter(10)
	require.Equal(t, int64(9), c.Last())
	require.Equal(t, int64(10), c.Next(nil))
	require.Equal(t, int64(11), c.Next(nil))
	require.Equal(t, int64(11), c.Last())
	require.Same(t, c, c.Clone())
}

func TestCounterConcurrent(t *testing.T) {
	const start, workers, per = 100, 8, 10000
	c := NewCounter(start)
	seen := make([]bool, workers*per)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]int64, 0, per)
			for i := 0; i < per; i++ {
				got = append(got, c.Next(nil))
			}
			mu.Lock()
			defer mu.Unlock()
			for _, v := range got {
				i := v - start
				if i < 0 || i >= int64(len(seen)) || seen[i] {
					t.Errorf("value %d out of range or handed out twice", v)
					return
				}
				seen[i] = true
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int64(start+workers*per-1), c.Last())
}

func TestAcknowledgedCounterOrdering(t *testing.T) {
	c := NewAcknowledgedCounter(0)
	require.Equal(t, int64(-1), c.Last())
	for i := 0; i < 4; i++ {
		require.Equal(t, int64(i), c.Next(nil))
	}
	require.NoError(t, c.Acknowledge(1))
	require.NoError(t, c.Acknowledge(3))
	require.Equal(t, int64(-1), c.Last(), "0 is still in flight")
	require.NoError(t, c.Acknowledge(0))
	require.Equal(t, int64(1), c.Last(), "advances over 0,1 and stops at the gap")
	require.NoError(t, c.Acknowledge(2))
	require.Equal(t, int64(3), c.Last())
	require.ErrorIs(t, c.Acknowledge(2), ErrAlreadyAcknowledged)
	require.Same(t, c, c.Clone())
}

func TestAcknowledgedCounterConcurrent(t *testing.T) {
	const start, workers, per = 1000, 8, 64 * 320
	c := NewAcknowledgedCounter(start)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := NewRand(seed)
			// Hold a batch of keys and acknowledge them shuffled, so
			// acknowledgements arrive out of order within and across workers.
			batch := make([]int64, 64)
			for done := 0; done < per; done += len(batch) {
				for i := range batch {
					batch[i] = c.Next(nil)
				}
				for i := len(batch) - 1; i > 0; i-- {
					j := r.Int64n(int64(i + 1))
					batch[i], batch[j] = batch[j], batch[i]
				}
				for _, v := range batch {
					if err := c.Acknowledge(v); err != nil {
						t.Errorf("acknowledge %d: %v", v, err)
						return
					}
				}
				// Whatever the interleaving, the limit never passes a key
				// that has not been handed out.
				if l, n := c.Last(), c.next.Load(); l >= n {
					t.Errorf("limit %d passed next %d", l, n)
					return
				}
			}
		}(uint64(w))
	}
	wg.Wait()
	require.Equal(t, int64(start+workers*per-1), c.Last())
}

func TestAcknowledgedCounterWindowOverflow(t *testing.T) {
	c := NewAcknowledgedCounter(0)
	for i := 0; i <= AckWindowSize; i++ {
		c.Next(nil)
	}
	// Key 0 stays in flight while the rest of the window is acknowledged.
	for v := int64(1); v < AckWindowSize; v++ {
		if err := c.Acknowledge(v); err != nil {
			t.Fatalf("acknowledge %d: %v", v, err)
		}
	}
	require.Equal(t, int64(-1), c.Last())
	// Key 2^20 shares key 0's slot: one too many in flight.
	require.ErrorIs(t, c.Acknowledge(AckWindowSize), ErrTooManyUnacknowledged)
	require.EqualError(t, c.Acknowledge(AckWindowSize), "too many unacknowledged insertion keys")
	// Acknowledging a pending key twice hits an already-set slot.
	require.ErrorIs(t, c.Acknowledge(5), ErrTooManyUnacknowledged)
	require.NoError(t, c.Acknowledge(0))
	require.Equal(t, int64(AckWindowSize-1), c.Last(), "one full lap of the window")
	require.NoError(t, c.Acknowledge(AckWindowSize))
	require.Equal(t, int64(AckWindowSize), c.Last())
}

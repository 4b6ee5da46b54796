package adapters

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestForEachConcurrentlyVisitsEveryIndexOnce(t *testing.T) {
	var seen [1000]atomic.Int32
	var inFlight, peak atomic.Int32
	err := ForEachConcurrently(len(seen), 7, func(i int) error {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		seen[i].Add(1)
		inFlight.Add(-1)
		return nil
	})
	require.NoError(t, err)
	for i := range seen {
		require.Equal(t, int32(1), seen[i].Load(), "index %d", i)
	}
	require.LessOrEqual(t, peak.Load(), int32(7))
}

func TestForEachConcurrentlyStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int32
	err := ForEachConcurrently(10000, 1, func(i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, int32(4), calls.Load(), "no call starts after the error with one worker")
	require.NoError(t, ForEachConcurrently(0, 4, func(int) error { return boom }))
}

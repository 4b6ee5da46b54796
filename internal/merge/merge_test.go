package merge

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/wire"
)

// record is an agent's decoded record of n reads from [start, end] on its
// own clock; ref receives the same values.
func record(t *testing.T, r *rand.Rand, seq, start, end int64, n int, ref *measurement.Interval) *wire.Decoded {
	iv := measurement.NewInterval(seq, start, end)
	s := measurement.SeriesOf(measurement.Read, measurement.Service, false)
	iv.Hist[s] = measurement.NewHistogram()
	if ref.Hist[s] == nil {
		ref.Hist[s] = measurement.NewHistogram()
	}
	for range n {
		v := 1 + r.Int64N(5_000_000)
		require.NoError(t, iv.Hist[s].RecordValue(v))
		require.NoError(t, ref.Hist[s].RecordValue(v))
	}
	iv.Returns[measurement.Read][adapters.OK] = int64(n)
	iv.Ops = int64(n)
	ref.Returns[measurement.Read][adapters.OK] += int64(n)
	ref.Ops += int64(n)
	rec, err := wire.RecordFromInterval(0, iv)
	require.NoError(t, err)
	var d wire.Decoded
	require.NoError(t, wire.DecodeRecord(rec, &d))
	return &d
}

// An agent whose clock reads ahead of the run's has its record moved
// back by its offset; one behind, forward.
func TestOnRunClock(t *testing.T) {
	d := &wire.Decoded{StartNs: 10_000, EndNs: 20_000}
	for _, c := range []struct{ off, start, end int64 }{{0, 10_000, 20_000}, {300, 9_700, 19_700}, {-300, 10_300, 20_300}} {
		s, e := OnRunClock(d, c.off)
		require.Equal(t, [2]int64{c.start, c.end}, [2]int64{s, e}, "offset %d", c.off)
	}
}

// A merge reused after its seal, or reset before it, holds nothing of
// the records before: the builder reuses one merge for every interval,
// and the pool hands count arrays from one interval to the next.
func TestReuseHoldsNothingOfThePreviousInterval(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var pool Pool
	m := New(1, 2, true, &pool)
	first := measurement.NewInterval(0, 0, 0)
	require.NoError(t, m.Add(0, record(t, r, 1, 1000, 2000, 500, first), 1000, 2000))
	require.NoError(t, m.Add(1, record(t, r, 1, 900, 2100, 300, first), 900, 2100))
	iv, err := m.Seal()
	require.NoError(t, err)
	require.Equal(t, int64(800), iv.Ops)
	require.Equal(t, [2]int64{900, 2100}, [2]int64{iv.StartNs, iv.EndNs})
	s := measurement.SeriesOf(measurement.Read, measurement.Service, false)
	require.True(t, first.Hist[s].Equals(iv.Hist[s]))
	require.Len(t, m.Agents, 2)

	// Reset before a seal: the counts added are dropped with it.
	m.Reset(2)
	require.NoError(t, m.Add(0, record(t, r, 2, 3000, 4000, 200, measurement.NewInterval(0, 0, 0)), 3000, 4000))
	m.Reset(3)
	third := measurement.NewInterval(0, 0, 0)
	require.NoError(t, m.Add(1, record(t, r, 3, 5000, 6000, 100, third), 5000, 6000))
	iv, err = m.Seal()
	require.NoError(t, err)
	require.Equal(t, int64(3), iv.Seq)
	require.Equal(t, third.Ops, iv.Ops)
	require.Equal(t, third.Returns, iv.Returns)
	require.Equal(t, [2]int64{5000, 6000}, [2]int64{iv.StartNs, iv.EndNs})
	require.True(t, third.Hist[s].Equals(iv.Hist[s]), "the reused merge holds only interval 3's values")
	require.Nil(t, m.Agents[0], "agent 0 sent nothing of interval 3")
	for _, d := range pool.spare {
		for _, c := range d {
			require.Zero(t, c, "a pooled count array is empty")
		}
	}
}

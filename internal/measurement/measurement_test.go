package measurement_test

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

func TestSeriesNamesRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	unused := 0
	for s := measurement.Series(0); s < measurement.NumSeries; s++ {
		if st, ok := s.Status(); ok && st.IsOK() {
			unused++ // successes are never named by status
			continue
		}
		name := s.Name()
		assert.False(t, seen[name], "duplicate name %s", name)
		seen[name] = true
		got, ok := measurement.ParseSeries(name)
		require.True(t, ok, name)
		assert.Equal(t, s, got, name)
		if st, ok := s.Status(); ok {
			assert.Equal(t, s, measurement.SeriesOfStatus(s.Op(), s.Kind(), st))
		} else {
			assert.Equal(t, s, measurement.SeriesOf(s.Op(), s.Kind(), s.Failed()))
		}
	}
	assert.Len(t, seen, int(measurement.NumSeries)-unused)
}

func TestSeriesNames(t *testing.T) {
	tests := []struct {
		op     measurement.Op
		kind   measurement.Kind
		failed bool
		want   string
	}{
		{measurement.Read, measurement.Service, false, "READ"},
		{measurement.Read, measurement.Service, true, "READ-FAILED"},
		{measurement.Update, measurement.Intended, false, "Intended-UPDATE"},
		{measurement.Insert, measurement.Intended, true, "Intended-INSERT-FAILED"},
		{measurement.Scan, measurement.Service, false, "SCAN"},
		{measurement.Delete, measurement.Service, false, "DELETE"},
		{measurement.ReadModifyWrite, measurement.Service, false, "READ-MODIFY-WRITE"},
		{measurement.ReadModifyWrite, measurement.Intended, true, "Intended-READ-MODIFY-WRITE-FAILED"},
		{measurement.Verify, measurement.Service, false, "VERIFY"},
		{measurement.Cleanup, measurement.Service, false, "CLEANUP"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			s := measurement.SeriesOf(tc.op, tc.kind, tc.failed)
			assert.Equal(t, tc.want, s.Name())
			assert.Equal(t, tc.op, s.Op())
			assert.Equal(t, tc.kind, s.Kind())
			assert.Equal(t, tc.failed, s.Failed())
			got, ok := measurement.ParseSeries(tc.want)
			require.True(t, ok)
			assert.Equal(t, s, got)
		})
	}
	for _, bad := range []string{"", "read", "FOO", "Intended-", "-FAILED", "READ-FAILED-FAILED", "Intended-Intended-READ", "READ-MODIFY"} {
		_, ok := measurement.ParseSeries(bad)
		assert.False(t, ok, "ParseSeries(%q)", bad)
	}
	assert.Equal(t, "UNKNOWN", measurement.NumOps.String())
}

func TestParseMode(t *testing.T) {
	for s, want := range map[string]measurement.Mode{"op": measurement.ModeOp, "intended": measurement.ModeIntended, "both": measurement.ModeBoth} {
		m, ok := measurement.ParseMode(s)
		assert.True(t, ok)
		assert.Equal(t, want, m)
	}
	for _, s := range []string{"", "OP", "all", "10"} {
		_, ok := measurement.ParseMode(s)
		assert.False(t, ok, s)
	}
}

// distributions of latencies in ns, including heavy tails and values
// beyond the histogram's range (clamped).
var distributions = []struct {
	name string
	gen  func(r *rand.Rand) int64
}{
	{"uniform", func(r *rand.Rand) int64 { return 1 + r.Int64N(2_000_000) }},
	{"exponential", func(r *rand.Rand) int64 { return int64(r.ExpFloat64()*50_000) + 1 }},
	{"lognormal", func(r *rand.Rand) int64 { return int64(math.Exp(10 + 2*r.NormFloat64())) }},
	{"pareto heavy tail", func(r *rand.Rand) int64 {
		// alpha 0.8: infinite mean, values far beyond one hour get clamped.
		return int64(1000 / math.Pow(1-r.Float64(), 1/0.8))
	}},
	{"bimodal", func(r *rand.Rand) int64 {
		if r.IntN(100) == 0 {
			return 500_000_000 + r.Int64N(1_000_000_000)
		}
		return 100 + r.Int64N(900)
	}},
	{"tiny and zero", func(r *rand.Rand) int64 { return r.Int64N(3) - 1 }},
}

func clamp(v int64) int64 {
	if v < measurement.LowestNs {
		return measurement.LowestNs
	}
	if v > measurement.HighestNs {
		return measurement.HighestNs
	}
	return v
}

// TestMergedRecordersEqualOneHistogram records random latencies into
// per-worker recorders from concurrent goroutines, drains them while
// they record, and checks that the merged result is exactly one
// histogram of all the values.
func TestMergedRecordersEqualOneHistogram(t *testing.T) {
	const workers = 8
	const perWorker = 20_000
	for di, d := range distributions {
		t.Run(d.name, func(t *testing.T) {
			recs := make([]*measurement.Recorder, workers)
			values := make([][]int64, workers)
			for w := range recs {
				recs[w] = measurement.NewRecorder(measurement.ModeOp)
				r := rand.New(rand.NewPCG(uint64(di), uint64(w)))
				values[w] = make([]int64, perWorker)
				for i := range values[w] {
					values[w][i] = d.gen(r)
				}
			}
			total := measurement.NewInterval(0, 0, 0)
			var drained []*measurement.Interval
			stop := make(chan struct{})
			reporterDone := make(chan struct{})
			// The reporter drains every recorder repeatedly while the
			// workers record, as the engine's interval swap does.
			go func() {
				defer close(reporterDone)
				for seq := int64(1); ; seq++ {
					iv := measurement.NewInterval(seq, 0, 0)
					for _, r := range recs {
						r.Drain(iv)
					}
					drained = append(drained, iv)
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Microsecond):
					}
				}
			}()
			var wg sync.WaitGroup
			for w := range recs {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i, v := range values[w] {
						st := adapters.OK
						op := measurement.Read
						if i%3 == 0 {
							op = measurement.Update
						}
						recs[w].Measure(op, st, v, v)
						recs[w].Done(1)
					}
					recs[w].Flush()
				}(w)
			}
			wg.Wait()
			close(stop)
			<-reporterDone
			final := measurement.NewInterval(0, 0, 0)
			for _, r := range recs {
				r.Drain(final)
			}
			for _, iv := range drained {
				total.Add(iv)
			}
			total.Add(final)

			oneRead, oneUpdate, oneAll := measurement.NewHistogram(), measurement.NewHistogram(), measurement.NewHistogram()
			for w := range values {
				for i, v := range values[w] {
					if i%3 == 0 {
						require.NoError(t, oneUpdate.RecordValue(clamp(v)))
					} else {
						require.NoError(t, oneRead.RecordValue(clamp(v)))
					}
					require.NoError(t, oneAll.RecordValue(clamp(v)))
				}
			}
			assert.Equal(t, int64(workers*perWorker), total.Ops)
			readS := measurement.SeriesOf(measurement.Read, measurement.Service, false)
			updS := measurement.SeriesOf(measurement.Update, measurement.Service, false)
			sameHistogram(t, oneRead, total.Hist[readS])
			sameHistogram(t, oneUpdate, total.Hist[updS])
			merged := measurement.NewHistogram()
			merged.Merge(total.Hist[readS])
			merged.Merge(total.Hist[updS])
			sameHistogram(t, oneAll, merged)
			assert.Equal(t, oneRead.TotalCount(), total.Returns[measurement.Read][adapters.OK])
			assert.Equal(t, oneUpdate.TotalCount(), total.Returns[measurement.Update][adapters.OK])
			assert.Equal(t, oneRead.TotalCount(), total.OpCount(measurement.Read))
			assert.Zero(t, total.Errors())
		})
	}
}

func sameHistogram(t *testing.T, want, got *hdrhistogram.Histogram) {
	t.Helper()
	require.NotNil(t, got)
	assert.Equal(t, want.TotalCount(), got.TotalCount(), "count")
	assert.Equal(t, want.Min(), got.Min(), "min")
	assert.Equal(t, want.Max(), got.Max(), "max")
	assert.Equal(t, want.Mean(), got.Mean(), "mean")
	assert.Equal(t, want.StdDev(), got.StdDev(), "stddev")
	for _, p := range []float64{0, 1, 5, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 99.999, 100} {
		assert.Equal(t, want.ValueAtPercentile(p), got.ValueAtPercentile(p), "p%v", p)
	}
	assert.True(t, want.Equals(got), "histograms differ")
}

func TestRecorderModes(t *testing.T) {
	R := func(op measurement.Op, k measurement.Kind, failed bool) measurement.Series {
		return measurement.SeriesOf(op, k, failed)
	}
	tests := []struct {
		name string
		mode measurement.Mode
		st   adapters.Status
		// expected series -> the value recorded there
		want map[measurement.Series]int64
	}{
		{"op ok", measurement.ModeOp, adapters.OK, map[measurement.Series]int64{R(measurement.Read, measurement.Service, false): 1000}},
		{"op failed", measurement.ModeOp, adapters.Error, map[measurement.Series]int64{R(measurement.Read, measurement.Service, true): 1000}},
		{"intended ok", measurement.ModeIntended, adapters.OK, map[measurement.Series]int64{R(measurement.Read, measurement.Service, false): 5000}},
		{"intended batched ok", measurement.ModeIntended, adapters.BatchedOK, map[measurement.Series]int64{R(measurement.Read, measurement.Service, false): 5000}},
		{"both ok", measurement.ModeBoth, adapters.OK, map[measurement.Series]int64{
			R(measurement.Read, measurement.Service, false):  1000,
			R(measurement.Read, measurement.Intended, false): 5000}},
		{"both not found", measurement.ModeBoth, adapters.NotFound, map[measurement.Series]int64{
			R(measurement.Read, measurement.Service, true):  1000,
			R(measurement.Read, measurement.Intended, true): 5000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := measurement.NewRecorder(tc.mode)
			r.Measure(measurement.Read, tc.st, 1000, 5000)
			r.Done(1)
			r.Flush()
			iv := measurement.NewInterval(1, 0, 0)
			r.Drain(iv)
			for s := measurement.Series(0); s < measurement.NumSeries; s++ {
				if v, ok := tc.want[s]; ok {
					require.Equal(t, int64(1), iv.Count(s), s.Name())
					assert.True(t, iv.Hist[s].ValuesAreEquivalent(v, iv.Hist[s].Max()), "%s: max %d, want %d", s.Name(), iv.Hist[s].Max(), v)
				} else {
					assert.Zero(t, iv.Count(s), s.Name())
				}
			}
			assert.Equal(t, int64(1), iv.Returns[measurement.Read][tc.st])
			assert.Equal(t, int64(1), iv.ReturnTotal(measurement.Read))
			assert.Equal(t, int64(1), iv.OpCount(measurement.Read))
			assert.Equal(t, int64(1), iv.Ops)
			if tc.st.IsOK() {
				assert.Zero(t, iv.Errors())
			} else {
				assert.Equal(t, int64(1), iv.Errors())
			}
		})
	}
}

func TestMeasureLatencyAndStatus(t *testing.T) {
	r := measurement.NewRecorder(measurement.ModeBoth)
	r.MeasureLatency(measurement.ReadModifyWrite, 2000, 3000)
	r.CountStatus(measurement.Verify, adapters.UnexpectedState)
	iv := measurement.NewInterval(1, 0, 0)
	r.Drain(iv)
	assert.Nil(t, iv.Hist[measurement.SeriesOf(measurement.ReadModifyWrite, measurement.Service, false)], "held until the transaction ends")
	r.Flush()
	r.Drain(iv)
	assert.Equal(t, int64(1), iv.Count(measurement.SeriesOf(measurement.ReadModifyWrite, measurement.Service, false)))
	assert.Equal(t, int64(1), iv.Count(measurement.SeriesOf(measurement.ReadModifyWrite, measurement.Intended, false)))
	hi := iv.Hist[measurement.SeriesOf(measurement.ReadModifyWrite, measurement.Intended, false)]
	assert.True(t, hi.ValuesAreEquivalent(3000, hi.Max()), "intended latency recorded: %d", hi.Max())
	assert.Equal(t, int64(1), iv.Returns[measurement.Verify][adapters.UnexpectedState])
	assert.Zero(t, iv.Count(measurement.SeriesOf(measurement.Verify, measurement.Service, false)))
	assert.Zero(t, iv.Ops)
	assert.Equal(t, int64(1), iv.Errors())
}

func TestRecorderDisabled(t *testing.T) {
	r := measurement.NewRecorder(measurement.ModeOp)
	r.SetEnabled(false)
	assert.False(t, r.Enabled())
	r.Measure(measurement.Read, adapters.OK, 1, 1)
	r.MeasureLatency(measurement.Verify, 1, 1)
	r.CountStatus(measurement.Read, adapters.OK)
	r.Done(5)
	r.Flush()
	iv := measurement.NewInterval(1, 0, 0)
	r.Drain(iv)
	assert.Zero(t, iv.Ops)
	assert.Zero(t, iv.ReturnTotal(measurement.Read))
	for _, h := range iv.Hist {
		assert.Nil(t, h)
	}
	r.SetEnabled(true)
	assert.True(t, r.Enabled())
	r.Done(1)
	r.Flush()
	r.Drain(iv)
	assert.Equal(t, int64(1), iv.Ops)
}

func TestDrainResets(t *testing.T) {
	r := measurement.NewRecorder(measurement.ModeOp)
	s := measurement.SeriesOf(measurement.Update, measurement.Service, false)
	for round := 1; round <= 4; round++ {
		for i := 0; i < round; i++ {
			r.Measure(measurement.Update, adapters.OK, int64(1000*round), 0)
		}
		r.Done(int64(round))
		r.Flush()
		iv := measurement.NewInterval(int64(round), 0, 0)
		r.Drain(iv)
		assert.Equal(t, int64(round), iv.Count(s), "round %d", round)
		assert.Equal(t, int64(round), iv.Ops, "round %d", round)
		assert.Equal(t, int64(round), iv.Returns[measurement.Update][adapters.OK], "round %d", round)
		assert.Equal(t, int64(1000*round), iv.Hist[s].Min(), "round %d: values of an earlier interval leaked", round)
		// An immediate second drain sees nothing.
		empty := measurement.NewInterval(0, 0, 0)
		r.Drain(empty)
		assert.Zero(t, empty.Count(s))
		assert.Zero(t, empty.Ops)
		assert.Zero(t, empty.ReturnTotal(measurement.Update))
	}
}

func TestIntervalAddAndClone(t *testing.T) {
	s := measurement.SeriesOf(measurement.Read, measurement.Service, false)
	a := measurement.NewInterval(1, 2000, 3000)
	a.Hist[s] = measurement.NewHistogram()
	require.NoError(t, a.Hist[s].RecordValue(100))
	a.Returns[measurement.Read][adapters.OK] = 1
	a.Ops = 1
	b := measurement.NewInterval(2, 1000, 5000)
	b.Hist[s] = measurement.NewHistogram()
	require.NoError(t, b.Hist[s].RecordValue(300))
	b.Returns[measurement.Read][adapters.NotFound] = 2
	b.Ops = 2
	// An empty histogram in o must not create an entry.
	empty := measurement.SeriesOf(measurement.Scan, measurement.Service, false)
	b.Hist[empty] = measurement.NewHistogram()

	sum := measurement.NewInterval(0, 0, 0)
	sum.Add(a)
	sum.Add(b)
	sum.Add(nil)
	assert.Equal(t, int64(1000), sum.StartNs, "start widens to the earliest")
	assert.Equal(t, int64(5000), sum.EndNs, "end widens to the latest")
	assert.Equal(t, int64(3), sum.Ops)
	assert.Equal(t, int64(2), sum.Count(s))
	assert.Equal(t, int64(100), sum.Hist[s].Min())
	assert.Equal(t, int64(300), sum.Hist[s].Max())
	assert.Nil(t, sum.Hist[empty])
	assert.Equal(t, int64(3), sum.ReturnTotal(measurement.Read))
	assert.Equal(t, int64(2), sum.Errors())
	// The sources are unchanged.
	assert.Equal(t, int64(1), a.Count(s))
	assert.Equal(t, int64(1), b.Count(s))

	c := sum.Clone()
	assert.Equal(t, sum.Seq, c.Seq)
	assert.Equal(t, sum.StartNs, c.StartNs)
	assert.Equal(t, sum.EndNs, c.EndNs)
	assert.Equal(t, sum.Returns, c.Returns)
	assert.Equal(t, sum.Ops, c.Ops)
	assert.True(t, sum.Hist[s].Equals(c.Hist[s]))
	// Deep copy: changing the clone leaves the original alone.
	require.NoError(t, c.Hist[s].RecordValue(999))
	c.Returns[measurement.Read][adapters.OK]++
	c.Ops++
	assert.Equal(t, int64(2), sum.Count(s))
	assert.Equal(t, int64(1), sum.Returns[measurement.Read][adapters.OK])
	assert.Equal(t, int64(3), sum.Ops)

	sum.Reset()
	assert.Zero(t, sum.Count(s))
	assert.Zero(t, sum.Ops)
	assert.Zero(t, sum.StartNs)
	assert.Zero(t, sum.ReturnTotal(measurement.Read))
}

func TestOpCountFallsBackToIntended(t *testing.T) {
	iv := measurement.NewInterval(1, 0, 0)
	s := measurement.SeriesOf(measurement.Insert, measurement.Intended, true)
	iv.Hist[s] = measurement.NewHistogram()
	require.NoError(t, iv.Hist[s].RecordValue(10))
	assert.Equal(t, int64(1), iv.OpCount(measurement.Insert))
}

func TestHistogramClampsOutOfRange(t *testing.T) {
	r := measurement.NewRecorder(measurement.ModeOp)
	r.Measure(measurement.Read, adapters.OK, measurement.HighestNs*10, 0)
	r.Measure(measurement.Read, adapters.OK, -5, 0)
	r.Done(2)
	iv := measurement.NewInterval(1, 0, 0)
	r.Drain(iv)
	h := iv.Hist[measurement.SeriesOf(measurement.Read, measurement.Service, false)]
	require.Equal(t, int64(2), h.TotalCount(), "out-of-range values must be kept, not dropped")
	assert.True(t, h.ValuesAreEquivalent(measurement.HighestNs, h.Max()))
	assert.Equal(t, int64(measurement.LowestNs), h.Min())
}

// TestCutsNeverSplitATransaction drains a worker's recorder while it
// records, as the engine's reporter does, and checks that every interval
// counts exactly the transactions whose calls it holds: a transaction's
// measurements and its count reach the reporter together. A cut between a
// call's measurement and the transaction's Done used to leave the call in
// one interval and its count in the next (one extra operation per thread
// in an interval, and for good when the next never arrived: a lost agent).
func TestCutsNeverSplitATransaction(t *testing.T) {
	read := measurement.SeriesOf(measurement.Read, measurement.Service, false)
	update := measurement.SeriesOf(measurement.Update, measurement.Service, false)
	rmw := measurement.SeriesOf(measurement.ReadModifyWrite, measurement.Service, false)
	r := measurement.NewRecorder(measurement.ModeOp)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				r.Flush()
				return
			default:
			}
			// A read, or a read-modify-write: three measurements, one
			// transaction.
			r.Measure(measurement.Read, adapters.OK, 1000, 1000)
			if i%2 == 1 {
				r.Measure(measurement.Update, adapters.OK, 1000, 1000)
				r.MeasureLatency(measurement.ReadModifyWrite, 2000, 2000)
			}
			r.Done(1)
		}
	}()
	var cuts, split int
	var ops int64
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline) || ops == 0; cuts++ {
		iv := measurement.NewInterval(1, 0, 0)
		r.Drain(iv)
		ops += iv.Ops
		// Every transaction is one READ; an RMW adds an UPDATE and an RMW.
		if iv.Count(read) != iv.Ops || iv.Count(update) != iv.Count(rmw) || iv.ReturnTotal(measurement.Read) != iv.Ops {
			split++
		}
	}
	close(stop)
	<-done
	assert.Zero(t, split, "%d of %d intervals split a transaction (%d transactions)", split, cuts, ops)
}

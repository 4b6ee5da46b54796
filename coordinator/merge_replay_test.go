package coordinator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/merge"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/spool"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// The live view and the record are one merge: the same agents' records,
// merged by the coordinator as they arrive (in any order across agents,
// some intervals missing from some agents, clocks offset either way) and
// replayed from the spool by the bundle's builder, give the same figures:
// every merged and per-agent interval of run.json, merged.hlog byte for
// byte, and the whole run's summary. A property over many runs, so that a
// merge changed on one path only is caught whatever it changes.
func TestLiveMergeAndBuilderAgree(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 35))
			c := randomReplayCase(t, r)
			live := c.mergeLive(t, r)
			b := c.build(t)

			want, got := c.expectedIntervals(t), roundTrip(b.Run.Intervals)
			require.Len(t, got, len(want), "run.json's intervals")
			for i := range want {
				require.Equal(t, want[i], got[i], "run.json's interval %d differs from the live merge's", want[i].Seq)
			}

			hl, err := os.ReadFile(filepath.Join(b.Dir, bundle.FileHlog))
			require.NoError(t, err)
			require.Equal(t, string(c.expectedHlog(t)), string(hl), "merged.hlog differs from the live merge's intervals")

			cum := live.cum
			sum := b.Run.Summary
			require.Equal(t, cum.Ops, sum.Operations, "the run's operations")
			require.Equal(t, time.Duration(cum.EndNs-cum.StartNs).Milliseconds(), sum.RunTimeMs, "the run's time")
			require.Equal(t, roundTrip(bundle.IntervalStats(cum)), sum.Series, "the run's series")
			require.Equal(t, roundTrip(bundle.Returns(cum)), sum.Returns, "the run's return codes")
		})
	}
}

// replayCase is a run's agents and their records: recs[a][seq] is agent
// a's record of seq (nil when the agent sent none), its times on the
// agent's clock.
type replayCase struct {
	started time.Time
	offsets []int64
	seqs    int64
	recs    [][]*pb.IntervalRecord
	// sealed holds the live merge of each seq, as the sinks got it.
	sealed map[int64]*seqMerge
}

func randomReplayCase(t *testing.T, r *rand.Rand) *replayCase {
	n := 1 + r.IntN(4)
	c := &replayCase{started: time.Unix(1_700_000_000, 0).UTC(), offsets: make([]int64, n), seqs: 1 + r.Int64N(6), recs: make([][]*pb.IntervalRecord, n)}
	for a := range c.offsets {
		if a > 0 || r.IntN(2) == 0 {
			// Up to half a second either way, down to the nanosecond.
			c.offsets[a] = r.Int64N(int64(time.Second)) - int64(time.Second/2)
		}
		c.recs[a] = make([]*pb.IntervalRecord, c.seqs+1)
	}
	for seq := int64(1); seq <= c.seqs; seq++ {
		sent := false
		for a := range c.recs {
			// Every seq has a record of some agent: a seq none sent is
			// in neither view.
			if r.IntN(7) == 0 && (sent || a < n-1) {
				continue
			}
			sent = true
			c.recs[a][seq] = randomRecord(t, r, a, seq, c.started.UnixNano()+c.offsets[a])
		}
	}
	return c
}

// randomRecord is agent a's record of seq: an interval of about a second
// starting near the seq's second on the agent's clock (which starts at
// base), with a few series out of every kind, failures and their return
// codes, lag and CPU.
func randomRecord(t *testing.T, r *rand.Rand, a int, seq, base int64) *pb.IntervalRecord {
	start := base + (seq-1)*int64(time.Second) + r.Int64N(int64(20*time.Millisecond))
	iv := measurement.NewInterval(seq, start, start+int64(time.Second)-r.Int64N(int64(30*time.Millisecond)))
	statuses := []adapters.Status{adapters.OK, adapters.Error, adapters.NotFound, adapters.ServiceUnavailable}
	for range 1 + r.IntN(4) {
		op := measurement.Op(r.IntN(int(measurement.NumOps)))
		kind := measurement.Kind(r.IntN(int(measurement.NumKinds)))
		st := statuses[r.IntN(len(statuses))]
		s := measurement.SeriesOfStatus(op, kind, st)
		if st == adapters.OK {
			s = measurement.SeriesOf(op, kind, false)
		}
		if iv.Hist[s] == nil {
			iv.Hist[s] = measurement.NewHistogram()
		}
		calls := 1 + r.IntN(3000)
		scale := 7 + 3*r.Float64() + float64(a)
		for range calls {
			require.NoError(t, iv.Hist[s].RecordValue(int64(math.Exp(r.NormFloat64()*1.3+scale))+1))
		}
		iv.Returns[op][st] += int64(calls)
		iv.Ops += int64(calls)
	}
	rec, err := wire.RecordFromInterval(int32(a), iv)
	require.NoError(t, err)
	rec.CpuSeconds = float64(r.IntN(5000)) / 1000
	rec.LagNs = r.Int64N(int64(50 * time.Millisecond))
	return rec
}

// mergeLive delivers the records as agents stream them to a coordinator:
// each agent's in seq order, the agents interleaved at random, every
// record moved to the coordinator's clock as onRecord does; a seq is
// sealed when every agent that has a record of it delivered it.
func (c *replayCase) mergeLive(t *testing.T, r *rand.Rand) *merger {
	m := newMerger(len(c.recs))
	m.keepAgents = true
	c.sealed = map[int64]*seqMerge{}
	next := make([]int64, len(c.recs))
	pending := 0
	for a := range c.recs {
		next[a] = 1
		for _, rec := range c.recs[a] {
			if rec != nil {
				pending++
			}
		}
	}
	expect := func(a int, seq int64) bool { return seq <= c.seqs && c.recs[a][seq] != nil }
	var dec wire.Decoded
	for pending > 0 {
		a := r.IntN(len(c.recs))
		for next[a] <= c.seqs && c.recs[a][next[a]] == nil {
			next[a]++
		}
		if next[a] > c.seqs {
			continue
		}
		require.NoError(t, wire.DecodeRecord(c.recs[a][next[a]], &dec))
		start, end := merge.OnRunClock(&dec, c.offsets[a])
		ok, err := m.add(a, &dec, start, end)
		require.True(t, ok)
		require.NoError(t, err)
		next[a]++
		pending--
		for m.sealable(expect) {
			s := m.seal()
			c.sealed[s.iv.Seq] = s
		}
	}
	require.Len(t, c.sealed, int(c.seqs), "every seq sealed")
	require.Zero(t, m.late)
	return m
}

// build spools the records as the coordinator's record does and builds
// the bundle from the spool, as after a crash (no ending: the summary is
// the builder's own, from the merged intervals).
func (c *replayCase) build(t *testing.T) *bundle.Bundle {
	dir := t.TempDir()
	meta := bundle.Run{RunID: "replay", Mode: run.ModeDistributed, StartedAt: c.started}
	for a, off := range c.offsets {
		meta.Agents = append(meta.Agents, bundle.Agent{Address: fmt.Sprintf("10.0.0.%d:7400", a+1), ClockOffsetNs: off})
	}
	h, err := json.Marshal(&meta)
	require.NoError(t, err)
	w, err := spool.Create(spool.Path(dir, meta.RunID), h)
	require.NoError(t, err)
	for seq := int64(1); seq <= c.seqs; seq++ {
		for a := range c.recs {
			if rec := c.recs[a][seq]; rec != nil {
				require.NoError(t, w.Add(rec))
			}
		}
	}
	require.NoError(t, w.Close())
	_, err = bundle.Build(dir, spool.Path(dir, meta.RunID), nil)
	require.NoError(t, err)
	b, err := bundle.Read(dir)
	require.NoError(t, err)
	return b
}

// expectedIntervals is run.json's intervals as the live merge has them:
// the merged interval the sinks got, and each agent's own interval beside
// it with the lag and CPU its record carried.
func (c *replayCase) expectedIntervals(t *testing.T) []bundle.Interval {
	var out []bundle.Interval
	for seq := int64(1); seq <= c.seqs; seq++ {
		s := c.sealed[seq]
		iv := s.iv
		is := bundle.Interval{Seq: seq, StartUnixNs: iv.StartNs, EndUnixNs: iv.EndNs, Operations: iv.Ops,
			OpsPerSec: bundle.OpsPerSec(iv.Ops, iv.StartNs, iv.EndNs), Series: bundle.IntervalStats(iv), Returns: bundle.Returns(iv)}
		var lag int64
		for a, ai := range s.Agents {
			if ai == nil {
				continue
			}
			rec := c.recs[a][seq]
			lag = max(lag, rec.LagNs)
			is.Agents = append(is.Agents, bundle.AgentSlice{Index: a, Operations: ai.Ops, OpsPerSec: bundle.OpsPerSec(ai.Ops, ai.StartNs, ai.EndNs),
				CPUSeconds: rec.CpuSeconds, LagNs: rec.LagNs, Series: bundle.IntervalStats(ai)})
		}
		require.Equal(t, lag, s.LagNs, "seq %d: the live lag is the agents' worst", seq)
		out = append(out, is)
	}
	return roundTrip(out)
}

// expectedHlog is merged.hlog as the live merge's intervals write it: per
// seq, each agent's series, then the merged ones.
func (c *replayCase) expectedHlog(t *testing.T) []byte {
	var buf bytes.Buffer
	w := hlog.NewWriter(&buf, c.started)
	lines := func(agent int, iv *measurement.Interval) {
		for sr, h := range iv.Hist {
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			b, err := wire.EncodeHistogram(h)
			require.NoError(t, err)
			require.NoError(t, w.WriteEncoded(bundle.Tag(measurement.Series(sr), agent), iv.StartNs, iv.EndNs, measurement.Max(h), b))
		}
	}
	for seq := int64(1); seq <= c.seqs; seq++ {
		s := c.sealed[seq]
		for a, ai := range s.Agents {
			if ai != nil {
				lines(a, ai)
			}
		}
		lines(-1, s.iv)
	}
	require.NoError(t, w.Flush())
	return buf.Bytes()
}

// roundTrip gives v as run.json gives it back (JSON's nil and empty
// collections, floats as written).
func roundTrip[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

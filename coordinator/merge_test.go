package coordinator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/wire"
)

// agentInterval builds what an agent's engine would hand to its observer.
func agentInterval(r *rand.Rand, seq int64, n int, scale float64, into *measurement.Interval) *measurement.Interval {
	iv := measurement.NewInterval(seq, seq*1e9, (seq+1)*1e9)
	for i := 0; i < n; i++ {
		op := measurement.Op(r.IntN(3))
		v := int64(math.Exp(r.NormFloat64()*1.2+scale)) + 1
		s := measurement.SeriesOf(op, measurement.Service, false)
		if iv.Hist[s] == nil {
			iv.Hist[s] = measurement.NewHistogram()
		}
		if into.Hist[s] == nil {
			into.Hist[s] = measurement.NewHistogram()
		}
		_ = iv.Hist[s].RecordValue(v)
		_ = into.Hist[s].RecordValue(v)
		iv.Returns[op][adapters.OK]++
		into.Returns[op][adapters.OK]++
		iv.Ops++
	}
	into.Ops += iv.Ops
	return iv
}

// wire round-trips an interval through the record encoding, as the
// coordinator receives it.
func encodeForMerge(t testing.TB, agent int, iv *measurement.Interval) *wire.Decoded {
	rec, err := wire.RecordFromInterval(int32(agent), iv)
	if err != nil {
		t.Fatal(err)
	}
	var d wire.Decoded
	if err := wire.DecodeRecord(rec, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func TestMergeIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const agents, seqs = 3, 4
	m := newMerger(agents)
	// reference: one histogram per series of every value of every agent.
	ref := measurement.NewInterval(0, 0, 0)
	perSeqRef := make([]*measurement.Interval, seqs+1)
	for seq := int64(1); seq <= seqs; seq++ {
		perSeqRef[seq] = measurement.NewInterval(0, 0, 0)
		for a := 0; a < agents; a++ {
			// Agents with very different latency profiles, so that
			// averaging per-agent percentiles would be visibly wrong.
			iv := agentInterval(r, seq, 2000+r.IntN(2000), float64(8+3*a), perSeqRef[seq])
			if ok, err := m.add(a, encodeForMerge(t, a, iv), iv.StartNs, iv.EndNs); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		ref.Add(perSeqRef[seq])
		all := func(int, int64) bool { return true }
		if !m.sealable(all) {
			t.Fatalf("seq %d not sealable with every agent in", seq)
		}
		s := m.seal()
		for sr, h := range perSeqRef[seq].Hist {
			if h == nil {
				continue
			}
			got := s.iv.Hist[sr]
			if got == nil || !got.Equals(h) {
				t.Fatalf("seq %d series %s: merged histogram differs", seq, measurement.Series(sr).Name())
			}
			for _, p := range []float64{50, 90, 99, 99.9, 100} {
				if got.ValueAtPercentile(p) != h.ValueAtPercentile(p) {
					t.Fatalf("p%v differs", p)
				}
			}
		}
		if s.iv.Ops != perSeqRef[seq].Ops {
			t.Fatalf("ops %d vs %d", s.iv.Ops, perSeqRef[seq].Ops)
		}
	}
	for sr, h := range ref.Hist {
		if h != nil && !m.cum.Hist[sr].Equals(h) {
			t.Fatalf("cumulative %s differs", measurement.Series(sr).Name())
		}
	}
	if m.cum.Ops != ref.Ops || m.cum.Returns != ref.Returns {
		t.Fatalf("cumulative ops/returns differ")
	}
}

func TestMergeDeduplicatesBySeq(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	m := newMerger(2)
	ref := measurement.NewInterval(0, 0, 0)
	iv1 := agentInterval(r, 1, 100, 9, ref)
	iv2 := agentInterval(r, 1, 50, 9, ref)
	d1 := encodeForMerge(t, 0, iv1)
	if ok, _ := m.add(0, d1, 1, 2); !ok {
		t.Fatal("first delivery rejected")
	}
	// A resend after a reconnect (same agent, same seq) must not count.
	if ok, _ := m.add(0, encodeForMerge(t, 0, iv1), 1, 2); ok {
		t.Fatal("duplicate accepted")
	}
	// Agent 1 has not delivered: not sealable while it may still.
	expect := func(a int, _ int64) bool { return a == 1 }
	if m.sealable(expect) {
		t.Fatal("sealed without agent 1")
	}
	if ok, _ := m.add(1, encodeForMerge(t, 1, iv2), 1, 2); !ok {
		t.Fatal("agent 1 rejected")
	}
	if !m.sealable(expect) {
		t.Fatal("not sealable")
	}
	s := m.seal()
	if s.iv.Ops != 150 || m.cum.Ops != 150 {
		t.Fatalf("ops %d/%d, want 150", s.iv.Ops, m.cum.Ops)
	}
	// A duplicate after sealing still does not count, and a genuinely late
	// record goes into the cumulative view.
	if ok, _ := m.add(1, encodeForMerge(t, 1, iv2), 1, 2); ok {
		t.Fatal("duplicate after seal accepted")
	}
	m2 := newMerger(2)
	if ok, err := m2.add(0, encodeForMerge(t, 0, iv1), 1, 2); !ok || err != nil {
		t.Fatalf("first interval of agent 0: ok=%v err=%v", ok, err)
	}
	m2.seal() // agent 1 declared lost
	if ok, _ := m2.add(1, encodeForMerge(t, 1, iv2), 1, 2); !ok || m2.cum.Ops != 150 || m2.late != 1 {
		t.Fatalf("late record: ops %d late %d", m2.cum.Ops, m2.late)
	}
}

// BenchmarkMergeInterval merges one interval from 10 and from 100 agents
// running a 6-operation mix of 20 000 operations each (the decode of every
// histogram included): the coordinator's CPU per interval, without the
// network and without simulated agents competing for the same cores.
func BenchmarkMergeInterval(b *testing.B) {
	for _, agents := range []int{10, 100} {
		b.Run(fmt.Sprintf("agents=%d", agents), func(b *testing.B) {
			r := rand.New(rand.NewPCG(15, 16))
			encoded := make([]*pbRecord, agents)
			for a := range encoded {
				encoded[a] = mustRecord(b, a, sixOpInterval(r, 1, 20000))
			}
			var d wire.Decoded
			m := newMerger(agents)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				seq := int64(i + 1)
				for a := 0; a < agents; a++ {
					encoded[a].Seq = seq
					if err := wire.DecodeRecord(encoded[a], &d); err != nil {
						b.Fatal(err)
					}
					if _, err := m.add(a, &d, 1, 2); err != nil {
						b.Fatal(err)
					}
				}
				m.seal()
			}
		})
	}
}

package coordinator

import (
	"time"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/merge"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// merger combines agents' interval records into one global interval per
// sequence number and a cumulative view. Each seq's merge is package
// merge's, the same the bundle's builder replays the spool with; what is
// the live view's own is here: which seq is due, which record came late
// or was sent twice.
//
// Memory stays flat over long runs: a per-seq merge exists only until the
// seq is sealed (every live agent delivered it), then it is folded into
// the cumulative view and handed to observers. Per-agent detail for
// run.json and the .hlog is rebuilt from the spool at the end.
type merger struct {
	n   int
	cum *measurement.Interval
	// open holds unsealed seqs.
	open map[int64]*seqMerge
	// nextSeal is the lowest seq not yet sealed.
	nextSeal int64
	// seen de-duplicates by (agent, seq): a record resent after a
	// reconnect must count once.
	seen []map[int64]struct{}
	// late counts records that arrived after their seq was sealed; they
	// are in the cumulative view and the bundle, not in the printed line.
	late int
	// keepAgents keeps each agent's interval beside the merge.
	keepAgents bool
	// pool holds count arrays of sealed seqs for reuse.
	pool merge.Pool
}

// seqMerge is one open seq: its merge (whose worst lag and, when the
// merger keeps them, agents' own intervals the update presents) and who
// delivered it.
type seqMerge struct {
	*merge.Interval
	// iv is the merged interval; its histograms are built at seal time.
	iv  *measurement.Interval
	got []bool
	// runtime holds each agent's runtime sample for the seq
	// (ycsbctl.trackruntime), by index; nil when no agent sent one.
	runtime []*run.RuntimeSample
	// telemetry holds each agent's host for the seq, by index; nil when
	// no agent sent any.
	telemetry []*telemetry.Interval
}

func newMerger(n int) *merger {
	m := &merger{n: n, cum: measurement.NewInterval(0, 0, 0), open: map[int64]*seqMerge{}, nextSeal: 1, seen: make([]map[int64]struct{}, n)}
	for i := range m.seen {
		m.seen[i] = map[int64]struct{}{}
	}
	return m
}

// has reports whether agent already delivered seq.
func (m *merger) has(agent int, seq int64) bool {
	_, ok := m.seen[agent][seq]
	return ok
}

// add merges a decoded record whose times are already on the
// coordinator's clock (merge.OnRunClock). It returns false for a
// duplicate.
func (m *merger) add(agent int, d *wire.Decoded, startNs, endNs int64) (bool, error) {
	if m.has(agent, d.Seq) {
		return false, nil
	}
	if d.Seq < m.nextSeal {
		// Late: its seq was already printed; keep the totals exact.
		if err := merge.Into(m.cum, d, startNs, endNs); err != nil {
			return false, err
		}
		m.seen[agent][d.Seq] = struct{}{}
		m.late++
		return true, nil
	}
	s := m.open[d.Seq]
	if s == nil {
		mi := merge.New(d.Seq, m.n, m.keepAgents, &m.pool)
		s = &seqMerge{Interval: mi, iv: mi.Merged(), got: make([]bool, m.n)}
		m.open[d.Seq] = s
	}
	if err := s.Add(agent, d, startNs, endNs); err != nil {
		return false, err
	}
	s.got[agent] = true
	m.seen[agent][d.Seq] = struct{}{}
	return true, nil
}

// addRuntime keeps an agent's runtime sample beside the seq's merge, for
// the update that presents the seq. A sample whose seq is already sealed
// is left out: that interval has been presented, and the totals the
// agent's later samples carry include it.
func (m *merger) addRuntime(agent int, seq int64, rt *pb.RuntimeSample) {
	s := m.open[seq]
	if s == nil || rt == nil {
		return
	}
	if s.runtime == nil {
		s.runtime = make([]*run.RuntimeSample, m.n)
	}
	s.runtime[agent] = runtimeFromPB(rt)
}

// runtimeFromPB reads an agent's runtime sample; a negative figure (which
// no agent sends) reads as zero.
func runtimeFromPB(p *pb.RuntimeSample) *run.RuntimeSample {
	nn := func(v int64) int64 { return max(v, 0) }
	return &run.RuntimeSample{Goroutines: nn(p.Goroutines), HeapInUseMB: nn(p.HeapInUseMb), GCs: nn(p.Gcs), GCPause: time.Duration(nn(p.GcPauseNs)),
		TotalGCs: nn(p.TotalGcs), TotalGCPause: time.Duration(nn(p.TotalGcPauseNs))}
}

// addTelemetry keeps an agent's host telemetry beside the seq's merge,
// for the update that presents the seq (the bundle has it from the spool
// whether or not the seq was still open).
func (m *merger) addTelemetry(agent int, seq int64, t *telemetry.Interval) {
	s := m.open[seq]
	if s == nil || t == nil {
		return
	}
	if s.telemetry == nil {
		s.telemetry = make([]*telemetry.Interval, m.n)
	}
	s.telemetry[agent] = t
}

// sealable reports, for the next seq, whether it can be sealed: expect(a)
// says whether agent a may still deliver that seq.
func (m *merger) sealable(expect func(agent int, seq int64) bool) bool {
	s := m.open[m.nextSeal]
	for a := 0; a < m.n; a++ {
		if s != nil && s.got[a] {
			continue
		}
		if expect(a, m.nextSeal) {
			return false
		}
	}
	return s != nil
}

// seal folds the next seq into the cumulative view and returns it.
func (m *merger) seal() *seqMerge {
	s := m.open[m.nextSeal]
	delete(m.open, m.nextSeal)
	m.nextSeal++
	// Only fails on values outside the shared geometry, which the
	// decoder has already refused.
	_, _ = s.Seal()
	m.cum.Add(s.iv)
	m.cum.Seq = 0
	return s
}

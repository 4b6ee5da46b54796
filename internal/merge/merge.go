// Package merge combines the agents' records of one interval into the
// run's interval: the one merge behind both the coordinator's live view
// (each interval as the agents deliver it, for the sinks) and the bundle's
// builder (the spool replayed into merged.hlog and run.json), as
// CockroachDB's histogram.Registry.Tick is one merge for live and replay.
// The line printed during a run and the interval its record keeps are
// therefore the same sums, made by the same code.
//
// All histograms share one geometry, so the merge is exact: the merged
// percentiles are those of a single histogram of every agent's values.
// What happens around one interval's merge (which records are due, which
// came late, which were sent twice) is the caller's: the coordinator
// seals an interval when every live agent delivered it, the builder has
// every record at hand.
package merge

import (
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/wire"
)

// OnRunClock returns a record's span on the run's clock. An agent's clock
// offset is how far its clock reads ahead of the coordinator's (the
// coordinator's estimate, kept in run.json); a single host is its own
// agent 0 with offset 0.
func OnRunClock(d *wire.Decoded, offsetNs int64) (startNs, endNs int64) {
	return d.StartNs - offsetNs, d.EndNs - offsetNs
}

// Widen stretches iv to cover [startNs, endNs]; an interval without a
// start yet (0) takes startNs.
func Widen(iv *measurement.Interval, startNs, endNs int64) {
	if iv.StartNs == 0 || startNs < iv.StartNs {
		iv.StartNs = startNs
	}
	if endNs > iv.EndNs {
		iv.EndNs = endNs
	}
}

// Into adds one record, its span on the run's clock, straight into iv
// (histograms, return codes, operations and span): for a view that is
// never sealed, such as the coordinator's cumulative one taking a record
// whose interval was already presented.
func Into(iv *measurement.Interval, d *wire.Decoded, startNs, endNs int64) error {
	if err := d.AddTo(iv); err != nil {
		return err
	}
	Widen(iv, startNs, endNs)
	return nil
}

// Pool keeps the count arrays of sealed merges for the next ones: a merge
// holds one per series (270 KB each) only while it is open, and a run
// merges thousands of intervals.
type Pool struct{ spare []wire.Dense }

func (p *Pool) get() wire.Dense {
	if n := len(p.spare); n > 0 {
		d := p.spare[n-1]
		p.spare = p.spare[:n-1]
		return d
	}
	return wire.NewDense()
}

// put takes back d, whose counts are zero again (wire.Dense.AddTo clears
// them).
func (p *Pool) put(d wire.Dense) { p.spare = append(p.spare, d) }

// Interval is the merge of one interval's records, one per agent. Records
// add their histograms as bare counts by bucket (see wire.Dense); the
// merged histograms are built once, by Seal.
type Interval struct {
	iv   *measurement.Interval
	acc  [measurement.NumSeries]wire.Dense
	pool *Pool
	// LagNs is the worst lag an agent reported for the interval.
	LagNs int64
	// Agents holds each agent's own interval by index when the merge
	// keeps them (New's keepAgents: live observers want per-agent views);
	// nil otherwise, and nil for an agent that sent nothing.
	Agents []*measurement.Interval
	keep   int
}

// New begins the merge of interval seq of a run of n agents, taking its
// count arrays from pool. With keepAgents each agent's own interval is
// kept beside the merge (Agents).
func New(seq int64, n int, keepAgents bool, pool *Pool) *Interval {
	m := &Interval{iv: measurement.NewInterval(seq, 0, 0), pool: pool}
	if keepAgents {
		m.keep = n
	}
	return m
}

// Reset begins the merge of interval seq anew, keeping the merged
// interval's histograms for reuse: for a caller that is done with the
// previous seal's interval, such as the builder replaying one interval
// after another.
func (m *Interval) Reset(seq int64) {
	m.release()
	m.iv.Reset()
	m.iv.Seq = seq
	m.LagNs = 0
	m.Agents = nil
}

// Merged is the merged interval: its operations, return codes and span
// as records are added, its histograms once sealed.
func (m *Interval) Merged() *measurement.Interval { return m.iv }

// Add merges one agent's record of the interval; startNs and endNs are
// its span on the run's clock (OnRunClock). A record of the same agent
// must not be added twice: telling a resend from a new record is the
// caller's.
func (m *Interval) Add(agent int, d *wire.Decoded, startNs, endNs int64) error {
	for i, sr := range d.Series {
		if m.acc[sr] == nil {
			m.acc[sr] = m.pool.get()
		}
		m.acc[sr].Add(&d.Hist[i])
	}
	for op := range d.Returns {
		for st, n := range d.Returns[op] {
			m.iv.Returns[op][st] += n
		}
	}
	m.iv.Ops += d.Ops
	Widen(m.iv, startNs, endNs)
	if d.LagNs > m.LagNs {
		m.LagNs = d.LagNs
	}
	if m.keep > 0 {
		if m.Agents == nil {
			m.Agents = make([]*measurement.Interval, m.keep)
		}
		a := measurement.NewInterval(d.Seq, startNs, endNs)
		if err := d.AddTo(a); err != nil {
			return err
		}
		m.Agents[agent] = a
	}
	return nil
}

// Seal builds the merged histograms from the counts the records added
// (into the histograms the interval already has, else new ones), gives
// the count arrays back to the pool and returns the merged interval. The
// error can only be a value outside the shared geometry, which the
// decoder has already refused.
func (m *Interval) Seal() (*measurement.Interval, error) {
	var first error
	for sr, d := range m.acc {
		if d == nil {
			continue
		}
		h := m.iv.Hist[sr]
		if h == nil {
			h = measurement.NewHistogram()
			m.iv.Hist[sr] = h
		}
		if err := d.AddTo(h); err != nil {
			// AddTo stopped part-way: clear the rest for the next merge.
			clear(d)
			if first == nil {
				first = err
			}
		}
		m.pool.put(d)
		m.acc[sr] = nil
	}
	return m.iv, first
}

// release gives the count arrays of an unsealed merge back to the pool,
// cleared.
func (m *Interval) release() {
	for sr, d := range m.acc {
		if d == nil {
			continue
		}
		clear(d)
		m.pool.put(d)
		m.acc[sr] = nil
	}
}

package measurement

import (
	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// Interval holds what was measured between two instants: one histogram per
// non-empty series, return-code counts per operation and the number of
// completed transactions. Intervals add exactly: merging the intervals of
// many workers or agents gives the same percentiles as one histogram of all
// their values, because all histograms share one geometry.
type Interval struct {
	// Seq numbers the interval within a run, from 1; 0 means cumulative.
	Seq int64
	// StartNs and EndNs are Unix nanoseconds.
	StartNs, EndNs int64
	Hist           [NumSeries]*hdrhistogram.Histogram
	Returns        [NumOps][adapters.NumStatuses]int64
	// Ops counts completed transactions (YCSB's opsDone), which is not the
	// sum of Returns: a read-modify-write is one transaction but counts a
	// READ and an UPDATE return.
	Ops int64
}

// NewInterval returns an empty interval.
func NewInterval(seq, startNs, endNs int64) *Interval {
	return &Interval{Seq: seq, StartNs: startNs, EndNs: endNs}
}

// Add merges o into iv. Times widen to cover both.
func (iv *Interval) Add(o *Interval) {
	if o == nil {
		return
	}
	if iv.StartNs == 0 || (o.StartNs != 0 && o.StartNs < iv.StartNs) {
		iv.StartNs = o.StartNs
	}
	if o.EndNs > iv.EndNs {
		iv.EndNs = o.EndNs
	}
	for s, h := range o.Hist {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if iv.Hist[s] == nil {
			iv.Hist[s] = NewHistogram()
		}
		Merge(iv.Hist[s], h)
	}
	for op := range o.Returns {
		for st, n := range o.Returns[op] {
			iv.Returns[op][st] += n
		}
	}
	iv.Ops += o.Ops
}

// Reset empties the interval, keeping allocated histograms for reuse.
func (iv *Interval) Reset() {
	for _, h := range iv.Hist {
		if h != nil {
			h.Reset()
		}
	}
	iv.Returns = [NumOps][adapters.NumStatuses]int64{}
	iv.Ops = 0
	iv.StartNs, iv.EndNs = 0, 0
	iv.Seq = 0
}

// Clone returns a deep copy.
func (iv *Interval) Clone() *Interval {
	c := &Interval{Seq: iv.Seq, StartNs: iv.StartNs, EndNs: iv.EndNs, Returns: iv.Returns, Ops: iv.Ops}
	for s, h := range iv.Hist {
		if h != nil && h.TotalCount() > 0 {
			c.Hist[s] = NewHistogram()
			Merge(c.Hist[s], h)
		}
	}
	return c
}

// Count returns the number of values recorded in series s.
func (iv *Interval) Count(s Series) int64 {
	if h := iv.Hist[s]; h != nil {
		return h.TotalCount()
	}
	return 0
}

// OpCount returns the calls of op (successful and failed, under any
// failure name) recorded with service time; for ops recorded only as
// intended it falls back to those.
func (iv *Interval) OpCount(op Op) int64 {
	n := iv.KindCount(op, Service)
	if n == 0 {
		n = iv.KindCount(op, Intended)
	}
	return n
}

// KindCount returns the calls of op recorded as kind, successful and
// failed under any failure name.
func (iv *Interval) KindCount(op Op, kind Kind) int64 {
	var n int64
	for slot := 0; slot < NumSlots; slot++ {
		n += iv.Count(seriesAt(op, kind, slot))
	}
	return n
}

// ReturnTotal returns the number of return codes counted for op.
func (iv *Interval) ReturnTotal(op Op) int64 {
	var n int64
	for _, c := range iv.Returns[op] {
		n += c
	}
	return n
}

// Failures counts calls by their return codes: failed are those that did
// not succeed, all every call; calls cancelled by an abort are neither
// (the operator cut them short, the database did not fail them).
func (iv *Interval) Failures() (failed, all int64) {
	for op := range iv.Returns {
		for st, n := range iv.Returns[op] {
			if adapters.Status(st) == adapters.Cancelled {
				continue
			}
			all += n
			if !adapters.Status(st).IsOK() {
				failed += n
			}
		}
	}
	return failed, all
}

// Errors returns the number of non-OK returns over all operations.
func (iv *Interval) Errors() int64 {
	var n int64
	for op := range iv.Returns {
		for st, c := range iv.Returns[op] {
			if !adapters.Status(st).IsOK() {
				n += c
			}
		}
	}
	return n
}

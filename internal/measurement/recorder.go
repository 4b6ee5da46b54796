package measurement

import (
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// Mode selects which latencies are recorded (YCSB measurement.interval).
type Mode uint8

const (
	// ModeOp records service time under the plain op name.
	ModeOp Mode = iota
	// ModeIntended records latency from the intended start under the
	// plain op name.
	ModeIntended
	// ModeBoth records service time under the plain name and intended
	// latency under Intended-<OP>.
	ModeBoth
)

// ParseMode parses YCSB's measurement.interval values.
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "op":
		return ModeOp, true
	case "intended":
		return ModeIntended, true
	case "both":
		return ModeBoth, true
	}
	return 0, false
}

type recSet struct {
	hist    [NumSeries]*hdrhistogram.Histogram
	returns [NumOps][adapters.NumStatuses]int64
	ops     int64
}

// maxPending bounds the measurements one transaction holds back: a
// read-modify-write with verification makes five; an insert retried more
// often hands its earlier attempts over before its count.
const maxPending = 8

// pending is one measurement of the transaction under way, resolved to
// the series it goes to when it is taken, so that handing it over under
// the lock is a few stores.
type pending struct {
	// s1 and s2 are the series the latencies v1 and v2 go to; s2 is
	// noSeries when the mode records one latency.
	s1, s2 Series
	v1, v2 int64
	// op and st count a return status n times (n 0: none).
	op Op
	st adapters.Status
	n  int64
}

// noSeries marks an unused second latency.
const noSeries = Series(NumSeries)

// Recorder is one worker's measurement sink. The worker calls Measure (and
// MeasureLatency, CountStatus) for each call of a transaction and Done
// when the transaction ends; the reporter calls Drain once per interval.
//
// A transaction's measurements are held in the worker's own buffer and
// handed over together with its count, under the one lock Done takes: an
// interval cut can fall between two transactions but never inside one, so
// every interval's histograms and return codes hold exactly the calls of
// the transactions it counts. The lock is the worker's own and is only
// contended by the reporter's Drain: one uncontended lock per transaction.
type Recorder struct {
	mode Mode
	mu   sync.Mutex
	cur  *recSet
	// spare is the set Drain swaps in next.
	spare *recSet
	// off disables recording during warm-up; read by the worker only.
	off bool
	// pend holds the transaction under way; worker-only.
	pend  [maxPending]pending
	npend int
	// slot maps a return status to the slot its latency is recorded in:
	// SlotOK for successes, SlotFailed (<OP>-FAILED) or the status' own
	// slot (<OP>-<STATUS>) for failures. A table keeps the hot path free
	// of branches on the naming policy.
	slot [adapters.NumStatuses]uint8
	// raw, when set, also keeps every sample for the raw measurement
	// type's writer.
	raw *rawBuffer
}

// NewRecorder returns a recorder for one worker.
func NewRecorder(mode Mode) *Recorder {
	r := &Recorder{mode: mode, cur: &recSet{}, spare: &recSet{}}
	r.NameFailures(ErrorNaming{})
	return r
}

// ErrorNaming is how failed calls are named, as YCSB's DBWrapper names
// them: <OP>-FAILED, or <OP>-<STATUS> for every failure (EachError,
// reportlatencyforeacherror) or for the listed statuses (Tracked,
// latencytrackederrors).
type ErrorNaming struct {
	EachError bool
	Tracked   []adapters.Status
}

// NameFailures sets how failed calls are named; call it before the run.
func (r *Recorder) NameFailures(n ErrorNaming) {
	for st := adapters.Status(0); st < adapters.NumStatuses; st++ {
		switch {
		case st.IsOK():
			r.slot[st] = SlotOK
		case n.EachError:
			r.slot[st] = uint8(SlotStatus + int(st))
		default:
			r.slot[st] = SlotFailed
		}
	}
	if n.EachError {
		return
	}
	for _, st := range n.Tracked {
		if !st.IsOK() {
			r.slot[st] = uint8(SlotStatus + int(st))
		}
	}
}

// KeepRaw makes the recorder hand every sample to log as well; call it
// before the run.
func (r *Recorder) KeepRaw(log *RawLog) { r.raw = log.newBuffer() }

// SetEnabled turns recording on or off; the worker calls it (warm-up).
func (r *Recorder) SetEnabled(on bool) { r.off = !on }

// Enabled reports whether recording is on.
func (r *Recorder) Enabled() bool { return !r.off }

// Measure records one database call of the transaction under way: its
// return status and its latency from the actual start (serviceNs) and from
// the intended start (intendedNs, equal to serviceNs when the run is not
// paced). It reaches the reporter with the transaction's Done.
func (r *Recorder) Measure(op Op, st adapters.Status, serviceNs, intendedNs int64) {
	if r.off {
		return
	}
	p := r.next()
	r.latencies(p, seriesAt(op, Service, int(r.slot[st])), seriesAt(op, Intended, int(r.slot[st])), serviceNs, intendedNs)
	p.op, p.st, p.n = op, st, 1
}

// MeasureLatency records a latency with no return status (YCSB's
// workload-level measurements: READ-MODIFY-WRITE, VERIFY, CLEANUP).
func (r *Recorder) MeasureLatency(op Op, serviceNs, intendedNs int64) {
	if r.off {
		return
	}
	p := r.next()
	r.latencies(p, SeriesOf(op, Service, false), SeriesOf(op, Intended, false), serviceNs, intendedNs)
	p.n = 0
}

// latencies resolves the mode: which latencies go to which series.
func (r *Recorder) latencies(p *pending, service, intended Series, serviceNs, intendedNs int64) {
	switch r.mode {
	case ModeOp:
		p.s1, p.v1, p.s2 = service, serviceNs, noSeries
	case ModeIntended:
		p.s1, p.v1, p.s2 = service, intendedNs, noSeries
	default:
		p.s1, p.v1, p.s2, p.v2 = service, serviceNs, intended, intendedNs
	}
}

// CountStatus counts a return status without a latency (VERIFY's result).
func (r *Recorder) CountStatus(op Op, st adapters.Status) { r.CountStatusN(op, st, 1) }

// CountStatusN counts n return statuses without a latency (the records
// of a batch beyond the one that carried the call).
func (r *Recorder) CountStatusN(op Op, st adapters.Status, n int64) {
	if r.off || n <= 0 {
		return
	}
	p := r.next()
	p.s1, p.s2, p.op, p.st, p.n = noSeries, noSeries, op, st, n
}

// next is the slot for the transaction's next measurement, filled in
// place (a struct copied in costs more than the fields).
func (r *Recorder) next() *pending {
	if r.npend == maxPending {
		// An unusually long transaction: hand over what it measured so
		// far; its count follows with Done.
		r.commit(0)
	}
	p := &r.pend[r.npend]
	r.npend++
	return p
}

// Done ends the transaction under way, counting n completed transactions
// (a batch counts its records): its measurements and the count reach the
// reporter together.
func (r *Recorder) Done(n int64) {
	if r.off {
		return
	}
	r.commit(n)
}

// Flush hands over measurements made outside a transaction (CLEANUP);
// workers call it before they finish.
func (r *Recorder) Flush() { r.commit(0) }

// commit hands the held measurements and n transactions to the reporter.
func (r *Recorder) commit(n int64) {
	r.mu.Lock()
	c := r.cur
	for i := range r.pend[:r.npend] {
		p := &r.pend[i]
		if p.s1 != noSeries {
			r.record(c, p.s1, p.v1)
		}
		if p.s2 != noSeries {
			r.record(c, p.s2, p.v2)
		}
		c.returns[p.op][p.st] += p.n
	}
	c.ops += n
	r.mu.Unlock()
	r.npend = 0
}

func (r *Recorder) record(c *recSet, s Series, ns int64) {
	if r.raw != nil {
		r.raw.add(s, ns)
	}
	h := c.hist[s]
	if h == nil {
		h = NewHistogram()
		c.hist[s] = h
	}
	// RecordValue only fails out of range, which clampNs prevents.
	_ = h.RecordValue(clampNs(ns))
}

// Drain adds everything recorded since the last Drain into iv and resets
// the recorder. It swaps histogram sets under the worker's lock (a pointer
// swap) and merges outside it, so the worker is held up for nanoseconds.
// Only one goroutine may call Drain.
func (r *Recorder) Drain(iv *Interval) {
	r.mu.Lock()
	full := r.cur
	r.cur = r.spare
	r.mu.Unlock()
	for s, h := range full.hist {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if iv.Hist[s] == nil {
			iv.Hist[s] = NewHistogram()
		}
		Merge(iv.Hist[s], h)
		h.Reset()
	}
	for op := range full.returns {
		for st, n := range full.returns[op] {
			iv.Returns[op][st] += n
		}
	}
	iv.Ops += full.ops
	full.returns = [NumOps][adapters.NumStatuses]int64{}
	full.ops = 0
	r.spare = full
}

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

// Recorder is one worker's measurement sink. The worker calls Record and
// Done; the reporter calls Drain once per interval. Only those two ever
// touch the lock, so the hot path takes an uncontended lock.
type Recorder struct {
	mode Mode
	// TrackFailedLatency records failed calls' latency in <OP>-FAILED
	// (YCSB always does for non-OK statuses).
	mu    sync.Mutex
	cur   *recSet
	spare *recSet
	// off disables recording during warm-up; read by the worker only.
	off bool
	// pending counts transactions completed since the last locked call;
	// the worker folds it into the current set under the lock it takes
	// anyway for the next measurement, saving a lock per transaction.
	pending int64
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

// Measure records one database call: its return status and its latency
// from the actual start (serviceNs) and from the intended start
// (intendedNs, equal to serviceNs when the run is not paced).
func (r *Recorder) Measure(op Op, st adapters.Status, serviceNs, intendedNs int64) {
	if r.off {
		return
	}
	slot := int(r.slot[st])
	r.mu.Lock()
	c := r.cur
	c.ops += r.pending
	r.pending = 0
	switch r.mode {
	case ModeOp:
		r.record(c, seriesAt(op, Service, slot), serviceNs)
	case ModeIntended:
		r.record(c, seriesAt(op, Service, slot), intendedNs)
	case ModeBoth:
		r.record(c, seriesAt(op, Service, slot), serviceNs)
		r.record(c, seriesAt(op, Intended, slot), intendedNs)
	}
	c.returns[op][st]++
	r.mu.Unlock()
}

// MeasureLatency records a latency with no return status (YCSB's
// workload-level measurements: READ-MODIFY-WRITE, VERIFY, CLEANUP).
// Its body repeats Measure's on purpose: a shared helper is too large for
// the compiler to inline and cost about 10 ns per operation on the hot path.
func (r *Recorder) MeasureLatency(op Op, serviceNs, intendedNs int64) {
	if r.off {
		return
	}
	r.mu.Lock()
	c := r.cur
	c.ops += r.pending
	r.pending = 0
	switch r.mode {
	case ModeOp:
		r.record(c, SeriesOf(op, Service, false), serviceNs)
	case ModeIntended:
		r.record(c, SeriesOf(op, Service, false), intendedNs)
	case ModeBoth:
		r.record(c, SeriesOf(op, Service, false), serviceNs)
		r.record(c, SeriesOf(op, Intended, false), intendedNs)
	}
	r.mu.Unlock()
}

// CountStatus counts a return status without a latency (VERIFY's result).
func (r *Recorder) CountStatus(op Op, st adapters.Status) {
	if r.off {
		return
	}
	r.mu.Lock()
	r.cur.returns[op][st]++
	r.mu.Unlock()
}

// Done counts n completed transactions. The count reaches the reporter
// with the worker's next measurement or Flush.
func (r *Recorder) Done(n int64) {
	if r.off {
		return
	}
	r.pending += n
}

// Flush hands pending transaction counts to the reporter; workers call it
// before they finish.
func (r *Recorder) Flush() {
	r.mu.Lock()
	r.cur.ops += r.pending
	r.pending = 0
	r.mu.Unlock()
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
		iv.Hist[s].Merge(h)
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

// Package measurement records operation latencies into per-worker HDR
// histograms, hands them over in numbered intervals, and merges intervals
// exactly (per worker, per agent, per cluster).
//
// Latencies are recorded in nanoseconds; output converts to YCSB's
// microseconds. Each worker goroutine owns a Recorder: the only lock a
// worker takes is its own Recorder's, which the reporter touches once per
// interval to swap histogram sets, so workers never contend with each other.
package measurement

import (
	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// Op is a measured operation type.
type Op uint8

// Operation types, in YCSB's order of the core mix, then the measurements
// YCSB adds at the workload and client level.
const (
	Read Op = iota
	Update
	Insert
	Scan
	Delete
	ReadModifyWrite
	Verify
	Cleanup
	NumOps
)

var opNames = [NumOps]string{"READ", "UPDATE", "INSERT", "SCAN", "DELETE", "READ-MODIFY-WRITE", "VERIFY", "CLEANUP"}

func (o Op) String() string {
	if o < NumOps {
		return opNames[o]
	}
	return "UNKNOWN"
}

// ParseOp maps a YCSB measurement name to an Op.
func ParseOp(name string) (Op, bool) {
	for i, n := range opNames {
		if n == name {
			return Op(i), true
		}
	}
	return 0, false
}

// Kind says where a latency is measured from.
type Kind uint8

const (
	// Service is latency from the actual start of the call (YCSB "op").
	Service Kind = iota
	// Intended is latency from the scheduled start of the call (YCSB
	// "intended"), which corrects coordinated omission under -target.
	Intended
	NumKinds
)

// Series identifies one histogram: an operation, where latency is counted
// from, and how the call ended. YCSB records a failed call under
// <OP>-FAILED, or under <OP>-<STATUS> when reportlatencyforeacherror=true
// or the status is listed in latencytrackederrors; each of those names is
// a slot of its own, so that every name YCSB can print has one series.
type Series uint8

// Slots of a series: the call succeeded, failed (YCSB's <OP>-FAILED), or
// failed with a status tracked on its own (SlotStatus+status).
const (
	SlotOK     = 0
	SlotFailed = 1
	SlotStatus = 2
	NumSlots   = SlotStatus + int(adapters.NumStatuses)
)

// NumSeries is the number of distinct series.
const NumSeries = Series(int(NumOps) * int(NumKinds) * NumSlots)

// SeriesOf builds a Series; a failed call lands in <OP>-FAILED.
func SeriesOf(op Op, kind Kind, failed bool) Series {
	slot := SlotOK
	if failed {
		slot = SlotFailed
	}
	return seriesAt(op, kind, slot)
}

// SeriesOfStatus is the series of a failed call tracked under its own
// status name (<OP>-<STATUS>).
func SeriesOfStatus(op Op, kind Kind, st adapters.Status) Series {
	return seriesAt(op, kind, SlotStatus+int(st))
}

func seriesAt(op Op, kind Kind, slot int) Series {
	return Series((int(op)*int(NumKinds)+int(kind))*NumSlots + slot)
}

// Op returns the series' operation.
func (s Series) Op() Op { return Op(int(s) / (NumSlots * int(NumKinds))) }

// Kind returns the series' kind.
func (s Series) Kind() Kind { return Kind((int(s) / NumSlots) % int(NumKinds)) }

// Slot returns the series' slot (SlotOK, SlotFailed, SlotStatus+status).
func (s Series) Slot() int { return int(s) % NumSlots }

// Failed reports whether the series holds failed calls.
func (s Series) Failed() bool { return s.Slot() != SlotOK }

// Status returns the status a per-status failure series tracks.
func (s Series) Status() (adapters.Status, bool) {
	if sl := s.Slot(); sl >= SlotStatus {
		return adapters.Status(sl - SlotStatus), true
	}
	return 0, false
}

// Name is YCSB's measurement name: READ, READ-FAILED, READ-NOT_FOUND,
// Intended-READ, Intended-READ-FAILED.
func (s Series) Name() string {
	n := s.Op().String()
	if st, ok := s.Status(); ok {
		n += "-" + st.String()
	} else if s.Failed() {
		n += "-FAILED"
	}
	if s.Kind() == Intended {
		n = "Intended-" + n
	}
	return n
}

// ParseSeries is the inverse of Name.
func ParseSeries(name string) (Series, bool) {
	kind := Service
	if len(name) > 9 && name[:9] == "Intended-" {
		kind = Intended
		name = name[9:]
	}
	if op, ok := ParseOp(name); ok {
		return SeriesOf(op, kind, false), true
	}
	if len(name) > 7 && name[len(name)-7:] == "-FAILED" {
		if op, ok := ParseOp(name[:len(name)-7]); ok {
			return SeriesOf(op, kind, true), true
		}
	}
	for st := adapters.Status(0); st < adapters.NumStatuses; st++ {
		if st.IsOK() {
			// Successes are never named by status; their slots stay
			// unused.
			continue
		}
		suf := "-" + st.String()
		if len(name) > len(suf) && name[len(name)-len(suf):] == suf {
			if op, ok := ParseOp(name[:len(name)-len(suf)]); ok {
				return SeriesOfStatus(op, kind, st), true
			}
		}
	}
	return 0, false
}

// Histogram geometry shared by every recorder, so that any two histograms
// of a run merge exactly: 1 ns to 1 hour at 3 significant digits (YCSB's
// precision), values above the top clamped to it rather than dropped.
const (
	LowestNs        = 1
	HighestNs int64 = 3_600_000_000_000
	SigFigs         = 3
)

// NewHistogram returns an empty histogram with the shared geometry.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestNs, HighestNs, SigFigs)
}

func clampNs(ns int64) int64 {
	if ns < LowestNs {
		return LowestNs
	}
	if ns > HighestNs {
		return HighestNs
	}
	return ns
}

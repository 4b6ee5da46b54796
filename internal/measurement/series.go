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
// from, and whether the call failed (YCSB records failures under
// <OP>-FAILED).
type Series uint8

// NumSeries is the number of distinct series.
const NumSeries = Series(NumOps) * 4

// SeriesOf builds a Series.
func SeriesOf(op Op, kind Kind, failed bool) Series {
	s := Series(op)*4 + Series(kind)*2
	if failed {
		s++
	}
	return s
}

// Op returns the series' operation.
func (s Series) Op() Op { return Op(s / 4) }

// Kind returns the series' kind.
func (s Series) Kind() Kind { return Kind((s / 2) % 2) }

// Failed reports whether the series holds failed calls.
func (s Series) Failed() bool { return s%2 == 1 }

// Name is YCSB's measurement name: READ, READ-FAILED, Intended-READ,
// Intended-READ-FAILED.
func (s Series) Name() string {
	n := s.Op().String()
	if s.Failed() {
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
	failed := false
	if len(name) > 7 && name[len(name)-7:] == "-FAILED" {
		failed = true
		name = name[:len(name)-7]
	}
	op, ok := ParseOp(name)
	if !ok {
		return 0, false
	}
	return SeriesOf(op, kind, failed), true
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

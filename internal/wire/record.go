package wire

import (
	"fmt"
	"math"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Bounds on untrusted interval records, beyond the per-histogram ones.
const (
	// MaxCount bounds operation and return counts in one record.
	MaxCount = MaxHistogramTotal
	// MaxSeq bounds sequence numbers (a century of 1 ms intervals).
	MaxSeq = int64(1) << 42
)

// RecordFromInterval encodes an engine interval as a wire record. Only
// non-empty series and non-zero return counts are sent, so an idle op mix
// costs nothing.
func RecordFromInterval(agent int32, iv *measurement.Interval) (*pb.IntervalRecord, error) {
	rec := &pb.IntervalRecord{
		AgentIndex:  agent,
		Seq:         iv.Seq,
		StartUnixNs: iv.StartNs,
		EndUnixNs:   iv.EndNs,
		Operations:  iv.Ops,
	}
	for s, h := range iv.Hist {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		b, err := EncodeHistogram(h)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", measurement.Series(s).Name(), err)
		}
		rec.Histograms = append(rec.Histograms, &pb.SeriesHistogram{Series: measurement.Series(s).Name(), Hdr: b})
	}
	for op := range iv.Returns {
		for st, n := range iv.Returns[op] {
			if n != 0 {
				rec.Returns = append(rec.Returns, &pb.ReturnCount{Op: measurement.Op(op).String(), Status: adapters.Status(st).String(), Count: n})
			}
		}
	}
	return rec, nil
}

// Decoded is a validated record: histograms in sparse form, indexed by
// series, ready to be added into merges without further checks.
type Decoded struct {
	Seq            int64
	StartNs, EndNs int64
	Series         []measurement.Series
	Hist           []Sparse
	Returns        [measurement.NumOps][adapters.NumStatuses]int64
	Ops            int64
	CPUSeconds     float64
	LocalInserts   int64
	LagNs          int64
	Final          bool
	WireBytes      int
	// Telemetry is the agent's host in the interval, validated; nil when
	// the record carries none.
	Telemetry *telemetry.Interval
}

// Reset empties d for reuse, keeping its buffers.
func (d *Decoded) Reset() {
	hist := d.Hist[:0]
	*d = Decoded{Series: d.Series[:0], Hist: hist}
}

// DecodeRecord validates an untrusted record into d (reset first). The
// record's agent index is not checked here: the caller knows which stream
// it came from.
func DecodeRecord(rec *pb.IntervalRecord, d *Decoded) error {
	d.Reset()
	if rec.Seq < 1 || rec.Seq > MaxSeq {
		return fmt.Errorf("interval seq %d out of range", rec.Seq)
	}
	if rec.EndUnixNs < rec.StartUnixNs {
		return fmt.Errorf("interval %d ends before it starts", rec.Seq)
	}
	if rec.Operations < 0 || rec.Operations > MaxCount {
		return fmt.Errorf("interval %d: operation count %d out of range", rec.Seq, rec.Operations)
	}
	if rec.LocalInsertsAcknowledged < 0 || rec.LagNs < 0 {
		return fmt.Errorf("interval %d: negative counter", rec.Seq)
	}
	if c := rec.CpuSeconds; math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
		return fmt.Errorf("interval %d: cpu seconds %v", rec.Seq, c)
	}
	if len(rec.Histograms) > int(measurement.NumSeries) {
		return fmt.Errorf("interval %d: %d histograms, at most %d series exist", rec.Seq, len(rec.Histograms), measurement.NumSeries)
	}
	d.Seq, d.StartNs, d.EndNs, d.Ops = rec.Seq, rec.StartUnixNs, rec.EndUnixNs, rec.Operations
	d.CPUSeconds, d.LocalInserts, d.LagNs, d.Final = rec.CpuSeconds, rec.LocalInsertsAcknowledged, rec.LagNs, rec.Final
	if rec.Telemetry != nil {
		t, err := telemetry.FromPB(rec.Telemetry)
		if err != nil {
			return fmt.Errorf("interval %d: %w", rec.Seq, err)
		}
		d.Telemetry = t
	}
	var seen [measurement.NumSeries]bool
	for _, sh := range rec.Histograms {
		s, ok := measurement.ParseSeries(sh.Series)
		if !ok {
			return fmt.Errorf("interval %d: unknown series %q", rec.Seq, sh.Series)
		}
		if seen[s] {
			return fmt.Errorf("interval %d: series %s sent twice", rec.Seq, sh.Series)
		}
		seen[s] = true
		if len(d.Hist) < cap(d.Hist) {
			d.Hist = d.Hist[:len(d.Hist)+1]
		} else {
			d.Hist = append(d.Hist, Sparse{})
		}
		if err := DecodeSparse(sh.Hdr, &d.Hist[len(d.Hist)-1]); err != nil {
			return fmt.Errorf("interval %d series %s: %w", rec.Seq, sh.Series, err)
		}
		d.Series = append(d.Series, s)
	}
	for _, rc := range rec.Returns {
		op, ok := measurement.ParseOp(rc.Op)
		if !ok {
			return fmt.Errorf("interval %d: unknown operation %q", rec.Seq, rc.Op)
		}
		st, ok := adapters.ParseStatus(rc.Status)
		if !ok {
			return fmt.Errorf("interval %d: unknown status %q", rec.Seq, rc.Status)
		}
		if rc.Count < 0 || rc.Count > MaxCount-d.Returns[op][st] {
			return fmt.Errorf("interval %d: return count %d out of range", rec.Seq, rc.Count)
		}
		d.Returns[op][st] += rc.Count
	}
	return nil
}

// AddTo merges d into iv (histograms, returns, ops). Times are the
// caller's business: they need clock conversion first.
func (d *Decoded) AddTo(iv *measurement.Interval) error {
	for i, s := range d.Series {
		if iv.Hist[s] == nil {
			iv.Hist[s] = measurement.NewHistogram()
		}
		if err := d.Hist[i].AddTo(iv.Hist[s]); err != nil {
			return err
		}
	}
	for op := range d.Returns {
		for st, n := range d.Returns[op] {
			iv.Returns[op][st] += n
		}
	}
	iv.Ops += d.Ops
	return nil
}

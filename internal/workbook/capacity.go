package workbook

import (
	"path/filepath"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/suite"
)

// SheetCapacity is the capacity steps' sheet.
const SheetCapacity = "Capacity"

// Search is one capacity step with its record (capacity.json).
type Search struct {
	State  suite.StepState
	Record *capacity.Record
}

// Label is "NN-name[-sweep]", the step's directory name.
func (s *Search) Label() string { return filepath.Base(s.State.Dir) }

// StepName is "NN-name" without the sweep.
func (s *Search) StepName() string { return (&Step{State: s.State}).StepName() }

// SweepText is "threads=4" or "".
func (s *Search) SweepText() string { return (&Step{State: s.State}).SweepText() }

// CapacityHeader are the Capacity sheet's columns: one row per database ×
// capacity step × sweep value.
var CapacityHeader = []string{"Database", "Adapter", "Step", "Sweep", "Threads", "Objectives", "Max error rate", "Status",
	"Capacity (ops/s)", "Achieved (ops/s)", "Operation", "p99 intended at capacity (µs)", "p99 service at capacity (µs)",
	"Objectives at capacity", "Probes", "Ended", "Bundle"}

// CapacityRows returns the Capacity sheet's rows. The p99 columns are the
// first objective's operation's at the passing probe that is the answer;
// empty when no target passed.
func (d *Data) CapacityRows() [][]Cell {
	var rows [][]Cell
	for _, s := range d.Searches {
		rec := s.Record
		status := string(rec.Status)
		if code, ok := s.State.Exit(); ok && s.State.Status == suite.StatusFailed {
			status = "failed (exit " + FormatCell(int64(code)) + ")"
		}
		var capOps, achieved, p99i, p99s Cell = "", "", "", ""
		op, at := "", ""
		if len(rec.Settings.Objectives) > 0 {
			op = rec.Settings.Objectives[0].Op.String()
		}
		if p := rec.AtCapacity(); p != nil {
			capOps, achieved = rec.Answer.Capacity, rec.Answer.Achieved
			if l := p.Op(op); l != nil {
				p99i, p99s = cellOf(l.Intended), cellOf(l.Service)
			}
			var parts []string
			for _, o := range rec.Settings.Objectives {
				if v, ok := p.Value(o); ok {
					parts = append(parts, o.Op.String()+"."+o.Key()+" "+capacity.FormatMicros(v))
				}
			}
			at = strings.Join(parts, ", ")
		}
		rows = append(rows, []Cell{
			s.State.Database, rec.DB, s.StepName(), s.SweepText(), int64(rec.Threads), rec.Objectives(),
			capacity.FormatShare(rec.Settings.MaxErrorRate), status, capOps, achieved, op, p99i, p99s, at,
			int64(len(rec.Probes)), string(rec.Answer.Ended), s.State.Dir,
		})
	}
	return normalize(rows)
}

// cellOf is a percentile map's p99, or empty.
func cellOf(m map[string]float64) Cell {
	if v, ok := m[capacity.PercentileKey(99)]; ok {
		return v
	}
	return ""
}

// Package workbook summarises a suite's results directory: summary.xlsx
// (sheets Overall, Operations, Periods, Environment, Thread scans,
// Capacity and a throughput chart), written with excelize so that LibreOffice and Excel open it,
// and summary.csv with the Overall rows. Every number is read from the
// step bundles (run.json), so the workbook and the bundles never
// disagree.
package workbook

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/suite"
)

// Step is one measured step with its bundle.
type Step struct {
	State  suite.StepState
	Bundle *bundle.Bundle
}

// Label is "NN-name[-sweep]", the step's directory name.
func (s *Step) Label() string { return filepath.Base(s.State.Dir) }

// StepName is "NN-name" without the sweep: what sweeps share.
func (s *Step) StepName() string {
	if s.State.ScanOf != "" {
		return s.State.ScanOf
	}
	return fmt.Sprintf("%02d-%s", s.State.StepIndex, s.State.Step)
}

// SweepText is "threads=4, recordcount=1000" or "".
func (s *Step) SweepText() string {
	var parts []string
	for _, v := range s.State.Sweep {
		parts = append(parts, v.Key+"="+v.Value)
	}
	return strings.Join(parts, ", ")
}

// Data is what a results directory holds.
type Data struct {
	Dir   string
	State *suite.State
	Steps []*Step
	// Searches are the capacity steps with their records.
	Searches []*Search
	// Missing lists measured steps without a readable bundle (failed
	// before writing one, or not run yet).
	Missing []suite.StepState
}

// Collect reads DIR/suite.json and every measured step's bundle.
func Collect(dir string) (*Data, error) {
	st, err := suite.ReadState(dir)
	if err != nil {
		return nil, err
	}
	d := &Data{Dir: dir, State: st}
	for _, ss := range st.Steps {
		if ss.Searched() && ss.Dir != "" {
			rec, err := capacity.Read(filepath.Join(dir, ss.Dir))
			if err != nil {
				d.Missing = append(d.Missing, ss)
				continue
			}
			d.Searches = append(d.Searches, &Search{State: ss, Record: rec})
			continue
		}
		if !ss.Measured() || ss.Dir == "" {
			continue
		}
		b, err := bundle.Read(filepath.Join(dir, ss.Dir))
		if err != nil {
			d.Missing = append(d.Missing, ss)
			continue
		}
		d.Steps = append(d.Steps, &Step{State: ss, Bundle: b})
	}
	// Thread-scan tries are appended after the plan; show them in plan
	// order, each database's tries together.
	sort.SliceStable(d.Steps, func(i, j int) bool { return d.Steps[i].State.Seq < d.Steps[j].State.Seq })
	if len(d.Steps) == 0 && len(d.Searches) == 0 {
		return nil, fmt.Errorf("%s: no step has a bundle yet", dir)
	}
	return d, nil
}

// Overall columns; summary.csv has the same.
var OverallHeader = []string{"Database", "Adapter", "Step", "Kind", "Sweep", "Threads", "Target (ops/s)", "Record count",
	"Status", "Throughput (ops/s)", "Run time (ms)", "Operations", "Errors", "Bundle"}

// Cell is a typed value: float64, int64 or string.
type Cell = any

// OverallRows returns one row per database × step × sweep value.
func (d *Data) OverallRows() [][]Cell {
	var rows [][]Cell
	for _, s := range d.Steps {
		r := s.Bundle.Run
		props := r.Config.Properties
		status := string(r.Status)
		if code, ok := s.State.Exit(); ok && s.State.Status == suite.StatusFailed {
			status = "failed (exit " + strconv.Itoa(code) + ")"
		}
		rows = append(rows, []Cell{
			s.State.Database, r.DB, s.StepName(), string(s.State.Kind), s.SweepText(),
			intProp(props, "threadcount", 1), floatOrEmpty(props["target"]), intProp(props, "recordcount", 0),
			status, r.Summary.Throughput, r.Summary.RunTimeMs, r.Summary.Operations, Errors(r.Summary.Returns), s.State.Dir,
		})
	}
	return normalize(rows)
}

// Errors counts non-OK return codes.
func Errors(returns map[string]map[string]int64) int64 {
	var n int64
	for _, m := range returns {
		n += opErrors(m)
	}
	return n
}

func opErrors(m map[string]int64) int64 {
	var n int64
	for st, c := range m {
		if st != "OK" && st != "BATCHED_OK" {
			n += c
		}
	}
	return n
}

func errorText(m map[string]int64) string {
	var keys []string
	for st := range m {
		if st != "OK" && st != "BATCHED_OK" && m[st] > 0 {
			keys = append(keys, st)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, "; ")
}

func intProp(props map[string]string, k string, def int64) int64 {
	if v, err := strconv.ParseInt(props[k], 10, 64); err == nil {
		return v
	}
	return def
}

func floatOrEmpty(v string) Cell {
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		return x
	}
	return ""
}

// OperationsHeader are the Operations sheet's columns.
var OperationsHeader = []string{"Database", "Step", "Sweep", "Operation", "Count", "Average (µs)", "Min (µs)", "Max (µs)",
	"P50 (µs)", "P95 (µs)", "P99 (µs)", "P99.9 (µs)", "Errors", "Errors by return code"}

// OperationRows returns one row per database × step × measured series
// (READ, READ-FAILED, INTENDED-READ ... as in YCSB's summary).
func (d *Data) OperationRows() [][]Cell {
	var rows [][]Cell
	for _, s := range d.Steps {
		sum := s.Bundle.Run.Summary
		series := append([]bundle.SeriesStats(nil), sum.Series...)
		sort.SliceStable(series, func(i, j int) bool { return seriesRank(series[i].Series) < seriesRank(series[j].Series) })
		for _, st := range series {
			var errs int64
			var text string
			if ps, ok := measurement.ParseSeries(st.Series); ok && ps.Kind() == measurement.Service && !ps.Failed() {
				m := sum.Returns[ps.Op().String()]
				errs, text = opErrors(m), errorText(m)
			}
			rows = append(rows, []Cell{s.State.Database, s.StepName(), s.SweepText(), st.Series, st.Count, st.MeanUs, st.MinUs, st.MaxUs,
				st.P50Us, st.P95Us, st.P99Us, st.P999Us, errs, text})
		}
	}
	return normalize(rows)
}

func seriesRank(name string) int {
	s, ok := measurement.ParseSeries(name)
	if !ok {
		return 1 << 20
	}
	r := int(s.Kind())*1000 + int(s.Op())*2
	if s.Failed() {
		r++
	}
	return r
}

// PeriodsHeader are the Periods sheet's columns.
var PeriodsHeader = append([]string{"Database", "Step", "Sweep", "Interval", "Start (s)", "End (s)", "Operations", "Throughput (ops/s)",
	"Main operation", "Average (µs)", "P99 (µs)"}, periodHostsHeader...)

// PeriodRows returns one row per status interval of every step.
func (d *Data) PeriodRows() [][]Cell {
	var rows [][]Cell
	for _, s := range d.Steps {
		ivs := append([]bundle.Interval(nil), s.Bundle.Run.Intervals...)
		sort.Slice(ivs, func(i, j int) bool { return ivs[i].Seq < ivs[j].Seq })
		if len(ivs) == 0 {
			continue
		}
		main := s.Bundle.Run.MainSeries()
		t0 := ivs[0].StartUnixNs
		for _, iv := range ivs {
			var avg float64
			var p99 int64
			for _, st := range iv.Series {
				if st.Series == main {
					avg, p99 = st.MeanUs, st.P99Us
				}
			}
			rows = append(rows, append([]Cell{s.State.Database, s.StepName(), s.SweepText(), iv.Seq,
				float64(iv.StartUnixNs-t0) / 1e9, float64(iv.EndUnixNs-t0) / 1e9, iv.Operations, iv.OpsPerSec, main, avg, p99},
				periodHosts(s.Bundle.Run.Telemetry, iv.Seq)...))
		}
	}
	return normalize(rows)
}

// ScansHeader are the Thread scans sheet's columns.
var ScansHeader = []string{"Database", "Step", "Threads", "Throughput (ops/s)", "Gain vs half the threads", "Knee (threads)", "Why"}

// ScanRows returns one row per thread-scan try.
func (d *Data) ScanRows() [][]Cell {
	var rows [][]Cell
	for _, sc := range d.State.Scans {
		for i, th := range sc.Threads {
			var gain Cell = ""
			if i > 0 && sc.Throughput[i-1] > 0 {
				gain = sc.Throughput[i]/sc.Throughput[i-1] - 1
			}
			var knee Cell = ""
			why := ""
			if th == sc.Knee {
				knee, why = int64(sc.Knee), sc.Reason
			}
			rows = append(rows, []Cell{sc.Database, sc.Step, int64(th), sc.Throughput[i], gain, knee, why})
		}
	}
	return normalize(rows)
}

// Excel keeps 15 significant digits; floats are rounded to them before
// they are stored, so the workbook, the CSV and a reader's parse agree.
func round15(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// Round15 is the value a float becomes in the workbook.
func Round15(v float64) float64 { return round15(v) }

// normalize rounds every float of a row.
func normalize(rows [][]Cell) [][]Cell {
	for _, r := range rows {
		for i, c := range r {
			if f, ok := c.(float64); ok {
				r[i] = round15(f)
			}
		}
	}
	return rows
}

// FormatCell is how summary.csv writes a cell: the same text the
// workbook stores.
func FormatCell(c Cell) string {
	switch v := c.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case string:
		return v
	}
	return fmt.Sprint(c)
}

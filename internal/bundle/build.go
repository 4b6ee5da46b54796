package bundle

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/merge"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spool"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// RecoveredExitCode is what run.json says of a run whose process never
// returned an exit code (it was killed): no exit code is known.
const RecoveredExitCode = -1

// Build writes the bundle of the run spooled at spoolPath into dir:
// merged.hlog, summary.txt, and run.json last, so that a bundle whose
// run.json exists is complete. It is the one place a bundle is made: at
// the end of a run in either mode (with its ending), and after a crash
// (end nil: the run is marked aborted, its exit code unknown). The spool
// is removed once the bundle holds everything it did. A spool with parts
// that could not be read is never removed: the bundle holds every record
// outside them and says what was dropped and why (run.json's
// spool_damage and status reasons, the summary's notes), and the spool is
// kept beside it under a name that says so (spool.Reader.Keep), which a
// later report does not take for a crash's spool.
func Build(dir, spoolPath string, end *Ending) (*Run, error) {
	rd, err := spool.OpenChecked(spoolPath, recordCheck)
	if err != nil {
		return nil, err
	}
	var damage *SpoolDamage
	if len(rd.Damage) > 0 {
		damage = keepDamaged(rd)
	}
	r, err := build(dir, rd, end, damage)
	if cerr := rd.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil || damage != nil {
		return r, err
	}
	return r, os.Remove(spoolPath)
}

// SpoolDamage is run.json's account of the parts of the spool the bundle
// was built from that could not be read.
type SpoolDamage struct {
	// Kept is the damaged spool's file name in the bundle's directory.
	Kept string `json:"kept"`
	// KeptError says why it could not be given its kept name (it then
	// keeps its own).
	KeptError string `json:"kept_error,omitempty"`
	// Dropped says each unreadable part: its bytes, the records around
	// it, and why it could not be read.
	Dropped []string `json:"dropped"`
}

// Reasons are the damage as run.json's status reasons and the summary's
// notes say it.
func (d *SpoolDamage) Reasons() []string {
	if d == nil {
		return nil
	}
	kept := "it is kept as " + d.Kept
	if d.KeptError != "" {
		kept += " (not renamed: " + d.KeptError + ")"
	}
	out := []string{fmt.Sprintf("the spool could not be read in full (%s dropped); %s for inspection: remove it when no longer needed (--overwrite removes it with the bundle)",
		plural.Count(len(d.Dropped), "part"), kept)}
	for _, p := range d.Dropped {
		out = append(out, "dropped "+p)
	}
	return out
}

// keepDamaged gives a damaged spool its kept name and describes the
// damage.
func keepDamaged(rd *spool.Reader) *SpoolDamage {
	path, err := rd.Keep()
	d := &SpoolDamage{Kept: filepath.Base(path)}
	if err != nil {
		d.KeptError = err.Error()
	}
	for _, dm := range rd.Damage {
		d.Dropped = append(d.Dropped, dm.String())
	}
	return d
}

// recordCheck refuses, as damage, a spooled record no run could have
// sent: one of an agent the run's header does not have, or one the
// coordinator's own validation of an agent's records refuses.
func recordCheck(header []byte) (func(*pb.IntervalRecord) error, error) {
	var h struct {
		Agents []json.RawMessage `json:"agents"`
	}
	if err := json.Unmarshal(header, &h); err != nil {
		return nil, err
	}
	var dec wire.Decoded
	return func(rec *pb.IntervalRecord) error {
		if int(rec.AgentIndex) >= len(h.Agents) {
			return fmt.Errorf("the run had %s", plural.Count(len(h.Agents), "agent"))
		}
		return wire.DecodeRecord(rec, &dec)
	}, nil
}

func build(dir string, rd *spool.Reader, end *Ending, damage *SpoolDamage) (*Run, error) {
	var r Run
	if err := json.Unmarshal(rd.Header(), &r); err != nil {
		return nil, fmt.Errorf("%s: header: %w", rd.Path(), err)
	}
	r.SpoolDamage = damage
	if n := rd.Agents(); n > len(r.Agents) {
		return nil, fmt.Errorf("%s: records of agent %d, but the run had %s", rd.Path(), n-1, plural.Count(len(r.Agents), "agent"))
	}
	total := measurement.NewInterval(0, 0, 0)
	acc, err := writeIntervals(dir, &r, rd, total)
	if err != nil {
		return nil, err
	}
	for i := range r.Agents {
		a := &r.Agents[i]
		a.Index = i
		a.Intervals, a.Operations, a.CPUSeconds = acc[i].intervals, acc[i].ops, acc[i].cpu
		for sr, sp := range acc[i].hist {
			if sp != nil && sp.Total > 0 {
				a.Summary = append(a.Summary, sparseStats(measurement.Series(sr).Name(), sp))
			}
		}
	}
	var text string
	if end != nil {
		text = applyEnding(&r, end)
		r.StatusReasons = append(r.StatusReasons, damage.Reasons()...)
	} else if text, err = recovered(&r, rd, total, acc); err != nil {
		return nil, err
	}
	if err := WriteSummary(dir, text); err != nil {
		return nil, err
	}
	return &r, WriteRun(dir, &r)
}

// agentAcc is one agent's part of the spool.
type agentAcc struct {
	intervals int
	ops       int64
	cpu       float64
	// final says the agent's last interval arrived: its share was done.
	final bool
	// hist accumulates its whole run per series in sparse form (a dense
	// histogram per agent and series would cost 270 KB each).
	hist [measurement.NumSeries]*wire.Sparse
}

// writeIntervals replays the spool in interval order: run.json's
// per-interval statistics, merged and per agent, and merged.hlog, one line
// per series per agent (the agent's own V2 bytes, not re-encoded) plus a
// merged ".all" line. Agents' times are moved to the run's clock by their
// offsets, and each interval's records are merged by package merge, as
// the coordinator merged them live. total receives every merged interval.
func writeIntervals(dir string, r *Run, rd *spool.Reader, total *measurement.Interval) ([]agentAcc, error) {
	hf, err := outfile.Create(filepath.Join(dir, FileHlog), 0o644)
	if err != nil {
		return nil, err
	}
	defer hf.Discard()
	lw := hlog.NewWriter(hf, r.StartedAt)
	tel := newTelemetryOut(dir, r)
	defer tel.discard()
	var rec pb.IntervalRecord
	var dec wire.Decoded
	var spare wire.Sparse
	var pool merge.Pool
	mi := merge.New(0, len(r.Agents), false, &pool)
	acc := make([]agentAcc, len(r.Agents))
	r.Intervals = nil
	for _, seq := range rd.Seqs() {
		mi.Reset(seq)
		is := Interval{Seq: seq}
		for i := range r.Agents {
			ok, err := rd.Get(i, seq, &rec)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", rd.Path(), err)
			}
			if !ok {
				continue
			}
			if err := wire.DecodeRecord(&rec, &dec); err != nil {
				return nil, fmt.Errorf("%s: agent %d: %w", rd.Path(), i, err)
			}
			off := r.Agents[i].ClockOffsetNs
			s, e := merge.OnRunClock(&dec, off)
			if err := mi.Add(i, &dec, s, e); err != nil {
				return nil, err
			}
			a := &acc[i]
			a.final = a.final || rec.Final
			a.intervals++
			a.ops += dec.Ops
			a.cpu += dec.CPUSeconds
			if err := tel.add(i, seq, s, e, off, dec.Telemetry); err != nil {
				return nil, err
			}
			slice := AgentSlice{Index: i, Operations: dec.Ops, OpsPerSec: OpsPerSec(dec.Ops, s, e), CPUSeconds: dec.CPUSeconds, LagNs: dec.LagNs}
			for j, sr := range dec.Series {
				sp := &dec.Hist[j]
				slice.Series = append(slice.Series, sparseStats(sr.Name(), sp))
				if a.hist[sr] == nil {
					a.hist[sr] = &wire.Sparse{}
				}
				a.hist[sr].Add(sp, &spare)
				if err := lw.WriteEncoded(Tag(sr, i), s, e, sp.Max(), rec.Histograms[j].Hdr); err != nil {
					return nil, err
				}
			}
			is.Agents = append(is.Agents, slice)
		}
		merged, err := mi.Seal()
		if err != nil {
			return nil, err
		}
		is.StartUnixNs, is.EndUnixNs, is.Operations = merged.StartNs, merged.EndNs, merged.Ops
		is.OpsPerSec = OpsPerSec(merged.Ops, merged.StartNs, merged.EndNs)
		is.Series = IntervalStats(merged)
		is.Returns = Returns(merged)
		for sr, h := range merged.Hist {
			if h != nil && h.TotalCount() > 0 {
				b, err := wire.EncodeHistogram(h)
				if err != nil {
					return nil, err
				}
				if err := lw.WriteEncoded(Tag(measurement.Series(sr), -1), merged.StartNs, merged.EndNs, measurement.Max(h), b); err != nil {
					return nil, err
				}
			}
		}
		r.Intervals = append(r.Intervals, is)
		total.Add(merged)
	}
	total.Seq = 0
	if err := lw.Flush(); err != nil {
		return nil, err
	}
	if err := tel.finish(); err != nil {
		return nil, err
	}
	return acc, hf.Commit()
}

// telemetryOut is the telemetry part of a bundle as the spool is
// replayed: the hosts' intervals for run.json and their raw samples for
// telemetry.csv, created with the first record that carries any.
type telemetryOut struct {
	dir string
	r   *Run
	b   *telemetry.Builder
	f   *outfile.File
	buf *bufio.Writer
	raw *telemetry.RawWriter
}

func newTelemetryOut(dir string, r *Run) *telemetryOut {
	addrs, hosts := make([]string, len(r.Agents)), make([]string, len(r.Agents))
	for i, a := range r.Agents {
		addrs[i], hosts[i] = a.Address, a.Hostname
	}
	return &telemetryOut{dir: dir, r: r, b: telemetry.NewBuilder(addrs, hosts)}
}

func (t *telemetryOut) add(agent int, seq, startNs, endNs, offsetNs int64, iv *telemetry.Interval) error {
	if iv == nil {
		return nil
	}
	t.b.Add(agent, seq, startNs, endNs, iv)
	if len(iv.Points) == 0 {
		return nil
	}
	if t.raw == nil {
		f, err := outfile.Create(filepath.Join(t.dir, telemetry.RawFile), 0o644)
		if err != nil {
			return err
		}
		t.f, t.buf = f, bufio.NewWriterSize(f, 64<<10)
		if t.raw, err = telemetry.NewRawWriter(t.buf); err != nil {
			return err
		}
	}
	return t.raw.Add(agent, t.r.Agents[agent].Hostname, offsetNs, iv.Points)
}

// finish writes telemetry.csv and run.json's section.
func (t *telemetryOut) finish() error {
	t.r.Telemetry = t.b.Record()
	if t.raw == nil {
		return nil
	}
	if err := t.raw.Flush(); err != nil {
		return err
	}
	if err := t.buf.Flush(); err != nil {
		return err
	}
	if err := t.f.Commit(); err != nil {
		return err
	}
	if t.r.Telemetry != nil {
		t.r.Telemetry.RawFile = telemetry.RawFile
	}
	return nil
}

func (t *telemetryOut) discard() {
	if t.f != nil {
		t.f.Discard()
	}
}

// applyEnding adds the run's ending to r and returns the summary text.
func applyEnding(r *Run, end *Ending) string {
	r.EndedAt = end.EndedAt
	r.Status = end.Status
	r.StatusReasons = end.Reasons
	r.ExitCode, r.ExitReason, r.Error = end.ExitCode, end.ExitReason, end.Error
	if !end.PlannedStart.IsZero() {
		r.PlannedStart = end.PlannedStart
	}
	r.MergeSeconds, r.LateRecords = end.MergeSeconds, end.LateRecords
	if end.Hosts != nil || end.Database != nil {
		if r.Environment == nil {
			r.Environment = &Environment{}
		}
		if end.Hosts != nil {
			r.Environment.Hosts = end.Hosts
		}
		if end.Database != nil {
			r.Environment.Database = end.Database
		}
	}
	for i := range r.Agents {
		if i >= len(end.Agents) {
			break
		}
		a, e := &r.Agents[i], end.Agents[i]
		a.State, a.Error, a.Reconnects = e.State, e.Error, e.Reconnects
		a.StartSkewNs, a.MissingIntervals, a.Final, a.States = e.StartSkewNs, e.MissingIntervals, e.Final, e.States
		if e.Threads > 0 {
			a.Threads = e.Threads
		}
	}
	if end.Summary != nil {
		r.Summary = SummaryOf(end.Summary, end.SummaryText)
	}
	return end.SummaryText
}

// recovered marks r as the record of a run whose process was killed, and
// returns a summary computed from what was spooled. Of each agent only
// what the spool shows is said: that its last interval arrived (it
// finished its share), or that how it ended is not known; never that it
// was lost, which is the coordinator's verdict on an agent that stopped
// answering, and the coordinator is what ended.
func recovered(r *Run, rd *spool.Reader, total *measurement.Interval, acc []agentAcc) (string, error) {
	who := "the coordinator"
	if r.Mode == run.ModeSingleHost {
		who = "ycsbctl"
	}
	r.Status = run.StatusAborted
	r.ExitCode = RecoveredExitCode
	r.ExitReason = "unknown: " + who + " ended without an exit code (killed or crashed)"
	if st, err := os.Stat(rd.Path()); err == nil {
		r.EndedAt = st.ModTime()
	}
	for i := range r.Agents {
		a := &r.Agents[i]
		switch {
		case acc[i].final:
			a.State = run.AgentFinished
			a.Error = ""
		case r.Mode == run.ModeSingleHost:
			a.State = run.AgentUnknown
			a.Error = "ycsbctl ended before the run's end was known"
		default:
			a.State = run.AgentUnknown
			a.Error = "state unknown: the coordinator ended before this agent's end was known"
		}
	}
	reason := fmt.Sprintf("recovered from the spool of a run that did not finish (%s was killed or crashed): %s measured before it ended", who, plural.Count(len(rd.Seqs()), "interval"))
	if r.Mode != run.ModeSingleHost {
		reason = fmt.Sprintf("recovered from the spool of a coordinator that did not finish: %s merged before it ended", plural.Count(len(rd.Seqs()), "interval"))
	}
	r.StatusReasons = []string{reason}
	if rd.Cut {
		r.StatusReasons = append(r.StatusReasons, "the record being written when it ended was lost")
	}
	r.StatusReasons = append(r.StatusReasons, r.SpoolDamage.Reasons()...)
	pcts := r.Config.Percentiles
	if len(pcts) == 0 {
		pcts = []float64{50, 95, 99}
	}
	sum := &ycsbtext.Summary{RunTime: time.Duration(total.EndNs - total.StartNs), Total: total, Percentiles: pcts,
		Notes: append(append([]string{"Results are " + string(r.Status)}, r.StatusReasons...), r.Telemetry.Lines()...)}
	var text strings.Builder
	if err := ycsbtext.Export(&text, ycsbtext.TextExporter, sum); err != nil {
		return "", err
	}
	r.Summary = SummaryOf(sum, text.String())
	return text.String(), nil
}

// Recover rebuilds the bundle of a run that ended without writing one
// (killed, crashed) from the spool it left in dir: every interval it had
// accepted, with the run marked aborted and the reason said. It returns
// the spool it used, or "" when dir holds none or already a finished
// bundle. A directory holding several spools is refused: which run is
// meant is the operator's to say.
func Recover(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, FileRunJSON)); err == nil {
		return "", nil
	}
	paths, err := spool.Find(dir)
	if err != nil || len(paths) == 0 {
		return "", nil
	}
	if len(paths) > 1 {
		sort.Strings(paths)
		return "", &SpoolsError{Dir: dir, Spools: paths}
	}
	if _, err := Build(dir, paths[0], nil); err != nil {
		return "", err
	}
	return paths[0], nil
}

// SpoolsError says a directory holds the spools of several runs.
type SpoolsError struct {
	Dir    string
	Spools []string
}

func (e *SpoolsError) Error() string {
	names := make([]string, len(e.Spools))
	for i, p := range e.Spools {
		names[i] = filepath.Base(p)
	}
	return fmt.Sprintf("%s holds the spools of %d unfinished runs (%s): move all but one into directories of their own, then run report on each", e.Dir, len(e.Spools), strings.Join(names, ", "))
}

// IsSpools reports whether err is a SpoolsError.
func IsSpools(err error) bool {
	var se *SpoolsError
	return errors.As(err, &se)
}

func sparseStats(name string, s *wire.Sparse) SeriesStats {
	v := s.Percentiles([]float64{50, 95, 99, 99.9})
	return SeriesStats{Series: name, Count: s.Total, MeanUs: s.Mean() / 1000, MinUs: s.Min() / 1000,
		P50Us: v[0] / 1000, P95Us: v[1] / 1000, P99Us: v[2] / 1000, P999Us: v[3] / 1000, MaxUs: s.Max() / 1000}
}

// SummaryOf is run.json's summary of a YCSB summary and its text form.
func SummaryOf(sum *ycsbtext.Summary, text string) Summary {
	s := Summary{RunTimeMs: sum.RunTime.Milliseconds(), Operations: sum.Total.Ops, WarmupOps: sum.Warmup,
		Series: IntervalStats(sum.Total), Returns: Returns(sum.Total),
		Lines: strings.Split(strings.TrimRight(text, "\n"), "\n")}
	switch ms := sum.RunTime.Milliseconds(); {
	case ms > 0:
		s.Throughput = float64(sum.Total.Ops) * 1000 / float64(ms)
	case sum.RunTime > 0:
		// A sub-millisecond run: YCSB's formula divides by zero (the
		// text summary says Infinity, as YCSB's does); run.json, which
		// charts and workbooks read, keeps the rate over the real time.
		s.Throughput = float64(sum.Total.Ops) / sum.RunTime.Seconds()
	}
	return s
}

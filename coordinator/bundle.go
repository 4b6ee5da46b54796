package coordinator

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Bundle file names inside --results (package bundle's layout).
const (
	FileRunJSON = bundle.FileRunJSON
	FileSummary = bundle.FileSummary
	FileHlog    = bundle.FileHlog
)

// Record adds what only the coordinator knows to the run bundle: the plan,
// the agents (offsets, round trips, start skew, finals), the per-interval
// merged and per-agent statistics, and merged.hlog, all rebuilt from the
// spool so that late records are included. The session writes run.json.
func (c *Coordinator) Record(rep *bundle.Run) error {
	if c.spool == nil {
		return fmt.Errorf("no results were recorded")
	}
	defer c.spool.close()
	start, _ := c.window()
	if c.plannedStart != 0 {
		rep.PlannedStart = time.Unix(0, c.plannedStart)
	}
	rep.Config.OnAgentLoss = c.s.OnAgentLoss
	rep.Config.TLS = c.s.TLS.Enabled()
	rep.Config.Token = c.s.Token != ""
	rep.Config.MaxClockOffsetNs = int64(c.s.MaxClockOffset)
	rep.Config.AgentTimeoutNs = int64(c.s.AgentTimeout)
	rep.Plan = c.s.plan
	rep.MergeSeconds = float64(c.mergeNs) / 1e9
	rep.LateRecords = c.m.late

	summaries, err := c.writeIntervals(c.s.Spec.Output.ResultsDir, rep, start, nil)
	if err != nil {
		return err
	}
	for _, a := range c.agents {
		ar := bundle.Agent{Index: a.idx, Address: a.addr, Hostname: a.hostname, Version: a.version, Protocol: a.protocol,
			State: a.state, Error: a.failed, ClockOffsetNs: int64(a.offset), RTTNs: int64(a.rtt), Threads: a.threads,
			Reconnects: a.reconnects, Intervals: a.intervals, Operations: a.ops, CPUSeconds: a.cpuTotal,
			Summary: summaries[a.idx]}
		if a.lost {
			ar.Error = "lost: " + a.lostFor
		}
		if a.idx < len(c.missing) {
			ar.MissingIntervals = c.missing[a.idx]
		}
		if a.hasStarted {
			sk := int64(c.skew(a))
			ar.StartSkewNs = &sk
		}
		if f := a.final; f != nil {
			ar.Final = &bundle.Final{StartUnixNs: f.StartUnixNs - int64(a.offset), EndUnixNs: f.EndUnixNs - int64(a.offset),
				RunTimeMs: float64(f.RuntimeNs) / 1e6, Operations: f.Operations, WarmupOps: f.WarmupOps, Intervals: f.Intervals,
				Stopped: f.Stopped, CPUSeconds: f.CpuSeconds}
		}
		rep.Agents = append(rep.Agents, ar)
	}
	return nil
}

// writeIntervals replays the spool in seq order: per-interval statistics
// for run.json and merged.hlog, one line per series per agent (the
// agent's own V2 bytes, not re-encoded) plus a merged ".all" line. It
// returns each agent's whole-run statistics, accumulated in sparse form
// (a dense histogram per agent and series would cost 270 KB each). When
// total is not nil every merged interval is also added to it (recovery,
// which has no merger's cumulative view).
func (c *Coordinator) writeIntervals(dir string, rep *bundle.Run, start int64, total *measurement.Interval) ([][]bundle.SeriesStats, error) {
	hf, err := os.Create(filepath.Join(dir, FileHlog))
	if err != nil {
		return nil, err
	}
	defer func() { _ = hf.Close() }()
	if start == 0 {
		start = c.startedWall.UnixNano()
	}
	lw := hlog.NewWriter(hf, time.Unix(0, start))
	var rec pb.IntervalRecord
	var dec wire.Decoded
	merged := measurement.NewInterval(0, 0, 0)
	acc := make([][measurement.NumSeries]*wire.Sparse, len(c.agents))
	var spare wire.Sparse
	for _, seq := range c.spool.sortedSeqs() {
		merged.Reset()
		is := bundle.Interval{Seq: seq}
		for _, a := range c.agents {
			ok, err := c.spool.get(a.idx, seq, &rec)
			if err != nil {
				return nil, fmt.Errorf("reading spool: %w", err)
			}
			if !ok {
				continue
			}
			if err := wire.DecodeRecord(&rec, &dec); err != nil {
				return nil, err
			}
			off := int64(a.offset)
			s, e := dec.StartNs-off, dec.EndNs-off
			widen(merged, s, e)
			if err := dec.AddTo(merged); err != nil {
				return nil, err
			}
			slice := bundle.AgentSlice{Index: a.idx, Operations: dec.Ops, OpsPerSec: bundle.OpsPerSec(dec.Ops, s, e), CPUSeconds: dec.CPUSeconds, LagNs: dec.LagNs}
			for i, sr := range dec.Series {
				name := sr.Name()
				sp := &dec.Hist[i]
				slice.Series = append(slice.Series, sparseStats(name, sp))
				if acc[a.idx][sr] == nil {
					acc[a.idx][sr] = &wire.Sparse{}
				}
				acc[a.idx][sr].Add(sp, &spare)
				// The agent's own bytes go to the log as received.
				if err := lw.WriteEncoded(bundle.Tag(sr, a.idx), s, e, sp.Max(), rec.Histograms[i].Hdr); err != nil {
					return nil, err
				}
			}
			is.Agents = append(is.Agents, slice)
		}
		is.StartUnixNs, is.EndUnixNs, is.Operations = merged.StartNs, merged.EndNs, merged.Ops
		is.OpsPerSec = bundle.OpsPerSec(merged.Ops, merged.StartNs, merged.EndNs)
		is.Series = bundle.IntervalStats(merged)
		is.Returns = bundle.Returns(merged)
		for sr, h := range merged.Hist {
			if h != nil && h.TotalCount() > 0 {
				b, err := wire.EncodeHistogram(h)
				if err != nil {
					return nil, err
				}
				if err := lw.WriteEncoded(bundle.Tag(measurement.Series(sr), -1), merged.StartNs, merged.EndNs, h.Max(), b); err != nil {
					return nil, err
				}
			}
		}
		rep.Intervals = append(rep.Intervals, is)
		if total != nil {
			total.Add(merged)
		}
	}
	if err := lw.Flush(); err != nil {
		return nil, err
	}
	out := make([][]bundle.SeriesStats, len(c.agents))
	for i := range acc {
		for sr, sp := range acc[i] {
			if sp != nil && sp.Total > 0 {
				out[i] = append(out[i], sparseStats(measurement.Series(sr).Name(), sp))
			}
		}
	}
	return out, hf.Close()
}

func sparseStats(name string, s *wire.Sparse) bundle.SeriesStats {
	v := s.Percentiles([]float64{50, 95, 99, 99.9})
	return bundle.SeriesStats{Series: name, Count: s.Total, MeanUs: s.Mean() / 1000, MinUs: s.Min() / 1000,
		P50Us: v[0] / 1000, P95Us: v[1] / 1000, P99Us: v[2] / 1000, P999Us: v[3] / 1000, MaxUs: s.Max() / 1000}
}

package coordinator

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// RecoveredExitCode is what run.json says of a coordinator that never
// returned an exit code (it was killed): no exit code is known.
const RecoveredExitCode = -1

// Recover rebuilds the run bundle of a coordinator that ended without
// writing one (killed, crashed) from the spool it left in dir: every
// interval it had accepted, merged as the coordinator would have, with
// the run marked aborted and the reason said. It returns false when dir
// holds no spool or already holds a finished bundle.
func Recover(dir string) (bool, error) {
	if _, err := os.Stat(dir + "/" + bundle.FileRunJSON); err == nil {
		return false, nil
	}
	paths, err := FindSpools(dir)
	if err != nil || len(paths) == 0 {
		return false, nil
	}
	// The newest spool is the run that ended last.
	sort.Slice(paths, func(i, j int) bool { return modTime(paths[i]).After(modTime(paths[j])) })
	sp, h, err := readSpool(paths[0])
	if err != nil {
		return false, err
	}
	defer func() { _ = sp.f.Close() }()

	c := &Coordinator{spool: sp, runID: h.RunID, startedWall: h.StartedAt}
	for i, a := range h.Agents {
		c.agents = append(c.agents, &agentRun{idx: i, addr: a.Address, hostname: a.Hostname, version: a.Version,
			offset: time.Duration(a.OffsetNs), rtt: time.Duration(a.RTTNs), state: run.AgentLost})
	}
	rep := &bundle.Run{RunID: h.RunID, Tool: "ycsbctl", DB: h.DB, Phase: h.Phase, Label: h.Label, Mode: run.ModeDistributed,
		StartedAt: h.StartedAt, EndedAt: modTime(paths[0]), Status: run.StatusAborted,
		ExitCode: RecoveredExitCode, ExitReason: "unknown: the coordinator ended without an exit code (killed or crashed)",
		Config: bundle.Config{Properties: h.Properties, IntervalNs: h.IntervalNs}}
	for _, a := range h.Agents {
		rep.Config.Agents = append(rep.Config.Agents, a.Address)
	}
	// One pass over the spool: the interval lines, the per-agent
	// statistics and the run's total, as the merger would have built it.
	total := measurement.NewInterval(0, 0, 0)
	summaries, err := c.writeIntervals(dir, rep, 0, total)
	if err != nil {
		return false, err
	}
	total.Seq = 0
	perAgent := make([]struct {
		ops       int64
		intervals int
	}, len(c.agents))
	for _, is := range rep.Intervals {
		for _, sl := range is.Agents {
			perAgent[sl.Index].ops += sl.Operations
			perAgent[sl.Index].intervals++
		}
	}
	last := int64(len(sp.seqs))
	for _, a := range c.agents {
		rep.Agents = append(rep.Agents, bundle.Agent{Index: a.idx, Address: a.addr, Hostname: a.hostname, Version: a.version,
			State: run.AgentLost, Error: "the coordinator ended before this agent's end arrived", ClockOffsetNs: int64(a.offset),
			RTTNs: int64(a.rtt), Intervals: perAgent[a.idx].intervals, Operations: perAgent[a.idx].ops, Summary: summaries[a.idx]})
	}
	reason := fmt.Sprintf("recovered from the spool of a coordinator that did not finish: %d intervals merged before it ended", last)
	rep.StatusReasons = []string{reason}
	pcts, err := spec.ParsePercentiles(properties.FromMap(h.Properties).String(spec.PropPercentiles, "50,95,99"))
	if err != nil {
		pcts = []float64{50, 95, 99}
	}
	sum := &ycsbtext.Summary{RunTime: time.Duration(total.EndNs - total.StartNs), Total: total, Percentiles: pcts,
		Notes: []string{"Results are aborted", reason}}
	var text strings.Builder
	if err := ycsbtext.Export(&text, ycsbtext.TextExporter, sum); err != nil {
		return false, err
	}
	rep.Summary = bundle.SummaryOf(sum, text.String())
	if err := bundle.Write(dir, rep, text.String()); err != nil {
		return false, err
	}
	// The bundle now holds everything the spool did.
	_ = os.Remove(paths[0])
	return true, nil
}

func modTime(path string) time.Time {
	if st, err := os.Stat(path); err == nil {
		return st.ModTime()
	}
	return time.Time{}
}

package coordinator

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// finish seals what is left and decides how the run ended.
func (c *Coordinator) finish() *run.Outcome {
	// Seal everything that arrived, even from agents that were lost.
	for len(c.m.open) > 0 {
		if _, ok := c.m.open[c.m.nextSeal]; !ok {
			c.m.nextSeal++
			continue
		}
		c.emit(c.m.seal())
	}
	// partial means exactly: some agent's share was not measured for the
	// whole run. An agent that stopped its own load (a signal on its host,
	// its lease ran out while it was cut off) or whose intervals never
	// arrived makes the run partial; one that was slow but delivered
	// everything does not.
	status := run.StatusComplete
	var reasons []string
	var stalled []string
	c.missing = make([]string, len(c.agents))
	last := c.lastClusterSeq()
	for _, a := range c.agents {
		miss := c.missingIntervals(a, last)
		c.missing[a.idx] = formatSeqs(miss)
		name := fmt.Sprintf("agent %d (%s)", a.idx, a.addr)
		switch {
		case a.state == stLost || a.state == stGone:
			reasons = append(reasons, fmt.Sprintf("%s lost: %s", name, a.why))
		case a.state == stFailed:
			reasons = append(reasons, fmt.Sprintf("%s failed: %s", name, a.why))
		case a.state == stStopped:
			reasons = append(reasons, fmt.Sprintf("%s stopped its own load: %s", name, a.why))
			if c.stallExcuses(a, a.final == nil) {
				stalled = append(stalled, name)
			}
		case a.final == nil:
			reasons = append(reasons, fmt.Sprintf("%s did not report its end", name))
		case len(miss) > 0:
			reasons = append(reasons, fmt.Sprintf("%s: intervals missing", name))
		case a.final.Operations != a.ops:
			reasons = append(reasons, fmt.Sprintf("%s measured %s but %d arrived", name, plural.Count(a.final.Operations, "operation"), a.ops))
		}
		if len(miss) > 0 && (a.state != stFinished || a.final == nil) {
			reasons[len(reasons)-1] += fmt.Sprintf(" (intervals %s not measured)", c.missing[a.idx])
		}
	}
	if len(reasons) > 0 {
		status = run.StatusPartial
	}
	var err error
	switch {
	case c.ending == endOperatorAbort:
		status = run.StatusAborted
		err = exitcode.Wrap(exitcode.Aborted, fmt.Errorf("run aborted: %s", c.stopReason))
	case len(stalled) > 0:
		status = run.StatusStalled
		err = exitcode.Wrap(exitcode.Failure, fmt.Errorf("the coordinator was stalled for %s (paused or starved of CPU), too long for its agents: %s stopped their load on their lease (or did not start it) as they must; what they measured until then is counted",
			c.longestStall.Round(time.Millisecond), strings.Join(stalled, ", ")))
	case c.ending == endLossPolicy:
		status = run.StatusAborted
		err = exitcode.Wrap(exitcode.AgentLost, fmt.Errorf("%s, run stopped (--on-agent-loss=abort): %s", c.departures(), strings.Join(reasons, "; ")))
	case c.runFailure != nil:
		status = run.StatusAborted
		err = exitcode.WithCodeIfNone(exitcode.Failure, c.runFailure)
	case c.noneCompleted():
		// --on-agent-loss=continue, but nothing is left to continue with.
		status = run.StatusAborted
		err = exitcode.Wrap(exitcode.AgentLost, fmt.Errorf("every agent was lost: %s", strings.Join(reasons, "; ")))
	case c.ending == endOperatorStop:
		// Every agent ended its calls in flight and reported them: a
		// whole measurement of a shorter run.
		status = run.StatusStopped
		reasons = append(reasons, "Stopped early: "+c.stopReason)
		err = exitcode.Wrap(exitcode.Stopped, fmt.Errorf("run stopped: %s", c.stopReason))
	}
	start, end := c.window()
	var warm int64
	for _, a := range c.agents {
		if a.final != nil {
			warm += a.final.WarmupOps
		}
	}
	return &run.Outcome{RunTime: time.Duration(end - start), Total: c.m.cum, WarmupOps: warm, Status: status,
		Reasons: reasons, Notes: append(c.notes, c.rawNotes()...), Err: err}
}

// departures names how agents left the run, for the loss policy's verdict:
// lost (silent, gone) or stopped on their host.
func (c *Coordinator) departures() string {
	var lost, stopped bool
	for _, a := range c.agents {
		lost = lost || a.state == stLost || a.state == stGone
		stopped = stopped || a.state == stStopped
	}
	switch {
	case lost && stopped:
		return "agents lost and stopped"
	case stopped:
		return "agent stopped on its host"
	}
	return "agent lost"
}

// rawNotes report the raw samples the agents measured but could not write
// (measurementtype raw, hdrhistogram+raw), summed, in the note a single
// host prints. An agent that ended without a count (an older agent, or one
// lost before its end) is named rather than counted as zero.
func (c *Coordinator) rawNotes() []string {
	if !c.s.Spec.Measure.Format.Kind.HasRaw() {
		return nil
	}
	var dropped int64
	var counted int
	var unknown []string
	for _, a := range c.agents {
		if a.final != nil && a.final.RawSamplesDropped != nil {
			dropped += max(a.final.GetRawSamplesDropped(), 0)
			counted++
		} else if a.reached(stReady) {
			unknown = append(unknown, fmt.Sprintf("agent %d (%s)", a.idx, a.addr))
		}
	}
	var notes []string
	if counted > 0 {
		notes = append(notes, spec.RawNote(dropped))
	}
	if len(unknown) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s did not report how many raw samples it could not write (older agent?); no count covers them", spec.PropMeasurementType, strings.Join(unknown, " and ")))
	}
	return notes
}

// lastClusterSeq is the last interval of the run: the highest any agent
// reported in its final account or delivered.
func (c *Coordinator) lastClusterSeq() int64 {
	var last int64
	for _, a := range c.agents {
		last = max(last, a.lastSeq)
		if a.final != nil {
			last = max(last, a.final.Intervals)
		}
	}
	return last
}

// missingIntervals lists the seqs of agent a's share that were not
// measured: gaps among what it reported, and, when it did not run to the
// end with the others (lost, failed, stopped by itself), every interval
// after its last.
func (c *Coordinator) missingIntervals(a *agentRun, last int64) []int64 {
	upTo := last
	if a.state == stFinished && a.final != nil {
		// It ran to its own end: a budget share can end an interval
		// earlier than another agent's, which is not a gap.
		upTo = a.final.Intervals
	}
	var miss []int64
	for seq := int64(1); seq <= upTo; seq++ {
		if !c.m.has(a.idx, seq) {
			miss = append(miss, seq)
		}
	}
	return miss
}

// formatSeqs writes sequence numbers as ranges: "3, 7-16".
func formatSeqs(seqs []int64) string {
	var parts []string
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.FormatInt(seqs[i], 10))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", seqs[i], seqs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func (c *Coordinator) noneCompleted() bool {
	for _, a := range c.agents {
		if a.final != nil && (a.state == stFinished || a.state == stStopped) {
			return false
		}
	}
	return true
}

// window returns the measured window on the coordinator's clock: from the
// earliest agent start to the latest agent end.
func (c *Coordinator) window() (start, end int64) {
	for _, a := range c.agents {
		if a.final == nil || a.final.Intervals == 0 {
			continue
		}
		s, e := a.final.StartUnixNs-int64(a.offset), a.final.EndUnixNs-int64(a.offset)
		if start == 0 || s < start {
			start = s
		}
		if e > end {
			end = e
		}
	}
	if start == 0 {
		start, end = c.m.cum.StartNs, c.m.cum.EndNs
	}
	return start, end
}

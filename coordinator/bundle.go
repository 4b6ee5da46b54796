package coordinator

import (
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/redact"
)

// Bundle file names inside --results (package bundle's layout).
const (
	FileRunJSON = bundle.FileRunJSON
	FileSummary = bundle.FileSummary
	FileHlog    = bundle.FileHlog
)

// describe adds what the coordinator knows when the run starts to the
// run's metadata: the plan, the limits it runs under and its agents, with
// their clock offsets, round trips and the properties each adds to the
// run, so that a bundle rebuilt after the coordinator was killed carries
// them.
func (c *Coordinator) describe(m *bundle.Run) {
	m.Plan = c.s.plan
	m.Config.OnAgentLoss = c.s.OnAgentLoss
	m.Config.TLS = c.s.TLS.Enabled()
	m.Config.Token = c.s.Token != ""
	m.Config.MaxClockOffsetNs = int64(c.s.MaxClockOffset)
	m.Config.AgentTimeoutNs = int64(c.s.AgentTimeout)
	m.AgentPropertyDifferences = c.propDiffs
	m.Agents = m.Agents[:0]
	for _, a := range c.agents {
		m.Agents = append(m.Agents, bundle.Agent{Index: a.idx, Address: a.addr, Hostname: a.hostname, Version: a.version, Protocol: a.protocol,
			State: a.state.public(), ClockOffsetNs: int64(a.offset), RTTNs: int64(a.rtt), Threads: c.s.plan.ThreadsPerAgent, Properties: a.props})
	}
}

// End adds what only the coordinator knows of how the run ended: each
// agent's state, its own final account, start skew and missing intervals,
// the planned start and the cost of merging. Everything measured comes
// from the spool.
func (c *Coordinator) End(e *bundle.Ending) {
	if c.plannedStart != 0 {
		e.PlannedStart = time.Unix(0, c.plannedStart)
	}
	e.MergeSeconds = float64(c.mergeNs) / 1e9
	e.Hosts, e.Database = c.environment()
	if c.m != nil {
		e.LateRecords = c.m.late
	}
	for _, a := range c.agents {
		ae := bundle.AgentEnding{State: a.state.public(), Error: a.errorText(), Threads: a.threads, Reconnects: a.reconnects, States: a.states()}
		if a.idx < len(c.missing) {
			ae.MissingIntervals = c.missing[a.idx]
		}
		if a.startedAt != 0 {
			sk := int64(c.skew(a))
			ae.StartSkewNs = &sk
		}
		if f := a.final; f != nil {
			ae.Final = &bundle.Final{StartUnixNs: f.StartUnixNs - int64(a.offset), EndUnixNs: f.EndUnixNs - int64(a.offset),
				RunTimeMs: float64(f.RuntimeNs) / 1e6, Operations: f.Operations, WarmupOps: f.WarmupOps, Intervals: f.Intervals,
				Stopped: f.Stopped, CPUSeconds: f.CpuSeconds}
		}
		e.Agents = append(e.Agents, ae)
	}
}

// comparePropertiesOfAgents finds the properties the agents do not all
// run with, from the properties each adds (agent -p, reported by its
// Ping) over the run's, and says each before any load: an agent's own
// basicdb.simulatedelay or connection setting changes what it measures,
// which neither the run's properties nor the database as agent 0
// describes it show. The same lines go to the summary's notes, and
// run.json lists the values (agent_property_differences).
func (c *Coordinator) comparePropertiesOfAgents() {
	own := make([]map[string]string, len(c.agents))
	addrs := make([]string, len(c.agents))
	for i, a := range c.agents {
		own[i], addrs[i] = a.props, a.addr
	}
	c.propDiffs = bundle.AgentPropertyDifferences(redact.Properties(c.s.Spec.Props.Map()), addrs, own)
	for _, d := range c.propDiffs {
		line := "the agents run with different properties (agent -p): " + d.Text()
		c.logf("%s", line)
		c.notes = append(c.notes, line)
	}
}

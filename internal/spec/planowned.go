package spec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// planOwned lists the properties a distributed run's plan owns, with why:
// the coordinator sets them for every agent (its share of the work, or
// one value every agent must share for the merge to be exact), so an
// agent's own properties (`agent -p`, the Ansible role's
// ycsbctl_agent_properties) must not set them. An agent refuses them at
// start-up and a coordinator refuses a run when an agent reports one
// (AgentPropertyError): both read this one list.
//
// What a host may set is how it reaches its database (hosts, connection
// and TLS settings, a local store's directory) and where its local files
// go: an adapter's properties and measurement.raw.output_file.
var planOwned = map[string]string{
	// Each agent's share of the work.
	workload.PropInsertStart:            "the load phase gives each agent its own slice of the key range",
	workload.PropInsertCount:            "the load phase gives each agent its own slice of the key range",
	workload.PropRecordCount:            "every agent reads and inserts within the same key space",
	workload.PropOperationCount:         "the run's operation budget is split among the agents",
	workload.PropKeyspaceOperationCount: "the zipfian key space is sized from the whole run's budget",
	workload.PropInsertStripeIndex:      "run-phase inserts are striped so that no two agents insert the same key",
	workload.PropInsertStripeCount:      "run-phase inserts are striped so that no two agents insert the same key",
	PropTarget:                          "the run's target rate is split among the agents",
	PropThreads:                         "the plan runs this many threads on every agent",
	// The phase's budget: every agent starts, warms up and stops together.
	PropMaxExecution: "every agent runs for the same time",
	PropWarmupTime:   "every agent switches from warm-up to measuring at the same instant",
	PropWarmupOps:    "the warm-up budget is split among the agents",
	// Measurement settings the merge depends on: intervals are merged by
	// sequence number, so every agent must cut them at the same instants
	// (status.interval, timeseries.granularity), and merged series must
	// mean the same on every agent: the same histograms
	// (measurementtype), the same latency kinds (measurement.interval:
	// service, intended or both) and the same failure series
	// (reportlatencyforeacherror, latencytrackederrors).
	PropStatusInterval:  "every agent must cut its intervals at the same instants for the merge",
	PropTimeseriesGran:  "every agent must cut its intervals at the same instants for the merge",
	PropMeasurementType: "every agent must record the same histograms for the merge",
	PropMeasurementMode: "every agent must record the same latency series for the merge",
	PropReportEachError: "every agent must name its failure series alike for the merge",
	PropTrackedErrors:   "every agent must name its failure series alike for the merge",
}

// PlanOwned says whether the plan of a distributed run owns key, and why.
// Besides the list above, every property of the core workload is the
// plan's: each agent runs the same workload, and a share that ran another
// mix or other records would be merged as if it had not.
func PlanOwned(key string) (why string, owned bool) {
	if why, ok := planOwned[key]; ok {
		return why, true
	}
	if _, ok := properties.FindKnown(workload.Known(), key); ok {
		return "every agent runs the same workload", true
	}
	return "", false
}

// AgentPropertyError refuses an agent's own properties that the plan
// owns, or that an agent would never read (AgentIgnored).
type AgentPropertyError struct {
	// Agent names the agent for a coordinator's message ("agent 1
	// (10.0.0.2:7420)"); empty when the agent refuses them itself.
	Agent string
	// Keys are the plan-owned properties, Ignored the ones an agent does
	// not read; sorted.
	Keys    []string
	Ignored []string
}

func (e *AgentPropertyError) Error() string {
	var parts []string
	if len(e.Keys) > 0 {
		parts = append(parts, refusals(e.Keys, "the coordinator's plan owns", func(k string) string { why, _ := PlanOwned(k); return why }))
	}
	if len(e.Ignored) > 0 {
		parts = append(parts, refusals(e.Ignored, "an agent does not read", func(k string) string { why, _ := AgentIgnored(k); return why }))
	}
	who, how := "agent -p", "remove it from the agent's command line (-p) or from the Ansible role's ycsbctl_agent_properties"
	if e.Agent != "" {
		who = e.Agent + ": its own properties (agent -p)"
		how = "remove it from that agent's command line (-p) or the Ansible role's ycsbctl_agent_properties, and set it on the coordinator"
	}
	return fmt.Sprintf("%s set %s; expected only per-host settings (hosts, connection and TLS settings, a local store's directory, measurement.raw.output_file): %s",
		who, strings.Join(parts, "; and "), how)
}

// ExitCode makes the refusal a usage error (exit 2): nothing has run.
func (e *AgentPropertyError) ExitCode() exitcode.Code { return exitcode.InvalidConfig }

// CheckAgentProperties refuses, naming them, the properties among an
// agent's own that the plan owns or that an agent would not read; agent
// names the agent when a coordinator checks what an agent reported.
func CheckAgentProperties(agent string, props map[string]string) error {
	e := &AgentPropertyError{Agent: agent}
	for k := range props {
		if _, owned := PlanOwned(k); owned {
			e.Keys = append(e.Keys, k)
		} else if _, ignored := AgentIgnored(k); ignored {
			e.Ignored = append(e.Ignored, k)
		}
	}
	if len(e.Keys) == 0 && len(e.Ignored) == 0 {
		return nil
	}
	sort.Strings(e.Keys)
	sort.Strings(e.Ignored)
	return e
}

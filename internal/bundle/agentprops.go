package bundle

import (
	"fmt"
	"sort"
	"strings"
)

// PropertyDifference is a property that is not the same on every agent
// of a distributed run: some agent's own properties (`agent -p`, the
// Ansible role's ycsbctl_agent_properties) set it, so the agents measured
// with different settings. Values are redacted.
type PropertyDifference struct {
	Property string `json:"property"`
	// Values holds each agent's value, in agent order.
	Values []AgentValue `json:"values"`
}

// AgentValue is one agent's value of a property and where it came from:
// FromAgent (its own agent -p), FromCoordinator (the run's properties)
// or FromDefault (nobody set it: the adapter's or ycsbctl's default).
type AgentValue struct {
	Agent   int    `json:"agent"`
	Address string `json:"address"`
	Value   string `json:"value,omitempty"`
	From    string `json:"from"`
}

// Where an agent's value comes from.
const (
	FromAgent       = "agent"
	FromCoordinator = "coordinator"
	FromDefault     = "default"
)

// Text says the difference in one line, for the coordinator's log, the
// summary's notes and the report: `basicdb.simulatedelay: agent 0
// (h1:7420) has "0" (the coordinator's), agent 1 (h2:7420) has "50" (its
// own agent -p)`.
func (d PropertyDifference) Text() string {
	parts := make([]string, len(d.Values))
	for i, v := range d.Values {
		who := fmt.Sprintf("agent %d (%s)", v.Agent, v.Address)
		switch v.From {
		case FromAgent:
			parts[i] = fmt.Sprintf("%s has %q (its own agent -p)", who, v.Value)
		case FromCoordinator:
			parts[i] = fmt.Sprintf("%s has %q (the coordinator's)", who, v.Value)
		default:
			parts[i] = who + " has the default (nobody set it)"
		}
	}
	return d.Property + ": " + strings.Join(parts, ", ")
}

// AgentPropertyDifferences compares what every agent runs with: for each
// property some agent sets itself (own[i], redacted; the agent at
// addrs[i]), that agent's value, and for the others the run's (run,
// redacted) or the default. A property
// is listed when two agents' values differ, or when a secret (shown
// REDACTED, so not comparable) comes from different places.
func AgentPropertyDifferences(run map[string]string, addrs []string, own []map[string]string) []PropertyDifference {
	keys := map[string]bool{}
	for _, o := range own {
		for k := range o {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []PropertyDifference
	for _, k := range sorted {
		d := PropertyDifference{Property: k}
		for i, o := range own {
			v := AgentValue{Agent: i, Address: addrs[i], From: FromDefault}
			if x, ok := o[k]; ok {
				v.Value, v.From = x, FromAgent
			} else if x, ok := run[k]; ok {
				v.Value, v.From = x, FromCoordinator
			}
			d.Values = append(d.Values, v)
		}
		if differ(d.Values) {
			out = append(out, d)
		}
	}
	return out
}

// differ says whether the agents' values are not all one: by value, or
// by origin for a default or a redacted secret.
func differ(vs []AgentValue) bool {
	for _, v := range vs[1:] {
		first := vs[0]
		opaque := first.From == FromDefault || v.From == FromDefault || strings.Contains(first.Value, "REDACTED") || strings.Contains(v.Value, "REDACTED")
		if v.Value != first.Value || opaque && v.From != first.From {
			return true
		}
	}
	return false
}

package spec

import (
	"fmt"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// agentIgnored lists the properties an agent would take and never read,
// with what reads them instead: in a distributed run the coordinator's
// run session presents the run (summary, export, status lines, live view,
// /metrics, the HdrHistogram log, the bundle, the verdicts) and decides
// what it tracks, so the same property given to one agent (`agent -p`,
// the Ansible role's ycsbctl_agent_properties) would change nothing and
// say nothing. An agent refuses them at start-up, and a coordinator
// refuses a run when an agent reports one.
var agentIgnored = map[string]string{
	PropDB:                "the coordinator names the database",
	PropWorkload:          "every agent runs the coordinator's workload class",
	PropExporter:          "the coordinator writes the run's summary",
	PropExportFile:        "the coordinator writes the run's summary",
	PropHistogramVerbose:  "the coordinator writes the run's summary",
	PropPercentiles:       "the coordinator's summary reports the percentiles",
	PropHistogramBuckets:  "the coordinator's summary draws the histogram",
	PropRawNoSummary:      "the coordinator writes the run's summary",
	PropHdrFileOutput:     "the coordinator writes the merged run's HdrHistogram log",
	PropHdrOutputPath:     "the coordinator writes the merged run's HdrHistogram log",
	PropStatus:            "the coordinator prints the status lines",
	PropLabel:             "the coordinator prints the status lines",
	PropMaxErrorRate:      "the coordinator judges the merged run's error rate",
	PropTUI:               "the coordinator shows the live view",
	PropMetricsAddr:       "an agent serves /metrics with its --metrics-addr flag",
	PropMetricsLinger:     "an agent's /metrics (--metrics-addr) stays up between runs",
	PropMetricsStartDelay: "the coordinator holds the start of every agent",
	PropResults:           "the coordinator writes the run's bundle",
	PropOverwrite:         "the coordinator writes the run's bundle",
	PropStopGrace:         "the coordinator decides how long a stopping run waits",
	PropTrackRuntime:      "the coordinator asks every agent for its runtime figures and shows them",
	PropTrackJVM:          "the coordinator asks every agent for its runtime figures and shows them",
}

// agentHonoured are the client's and the measurements' properties an
// agent reads for itself, besides every adapter's: where its raw samples
// go and what its telemetry samples on its host. A test holds every
// property of Known to one of planOwned, agentIgnored and these.
var agentHonoured = map[string]bool{
	PropRawOutputFile:         true,
	telemetry.PropEnabled:     true,
	telemetry.PropPids:        true,
	telemetry.PropHostMetrics: true,
}

// AgentIgnored says whether an agent would take key and never read it,
// and what reads it instead.
func AgentIgnored(key string) (why string, ignored bool) {
	why, ignored = agentIgnored[key]
	return why, ignored
}

// refusals words the keys of one kind for AgentPropertyError: "property
// what: k (why)" or "properties what: k1 (why), k2 (why)".
func refusals(keys []string, what string, why func(string) string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%s)", k, why(k))
	}
	noun := "property"
	if len(keys) > 1 {
		noun = "properties"
	}
	return fmt.Sprintf("%s %s: %s", noun, what, strings.Join(parts, ", "))
}

package spec

import (
	"strings"
	"testing"
)

// TestEveryPropertyHasAnAgentRule (issue 34 #12): every property the
// client, the measurements and the output read is, for an agent's own
// properties (agent -p), either the plan's (refused), one an agent does
// not read (refused: `agent -p exportfile=...` used to be accepted and
// ignored), or one it reads for itself. A new property must be put in one
// of the three, so that none is accepted and ignored again.
func TestEveryPropertyHasAnAgentRule(t *testing.T) {
	for _, k := range Known() {
		_, owned := PlanOwned(k.Name)
		_, ignored := AgentIgnored(k.Name)
		n := 0
		for _, b := range []bool{owned, ignored, agentHonoured[k.Name]} {
			if b {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: plan-owned %v, ignored by agents %v, honoured by agents %v: expected exactly one", k.Name, owned, ignored, agentHonoured[k.Name])
		}
	}
	for k := range agentIgnored {
		if _, known := findKnown(k); !known {
			t.Errorf("%s is listed as ignored by agents but is no known property", k)
		}
	}
}

func findKnown(name string) (string, bool) {
	for _, k := range Known() {
		if k.Name == name {
			return k.Help, true
		}
	}
	return "", false
}

// An agent's refusal names each property, why, and what to do; plan-owned
// and ignored ones are told apart.
func TestAgentPropertyRefusal(t *testing.T) {
	err := CheckAgentProperties("", map[string]string{"exportfile": "/tmp/x", "target": "5", "hosts": "db1"})
	if err == nil {
		t.Fatal("exportfile and target accepted")
	}
	for _, want := range []string{
		"agent -p set property the coordinator's plan owns: target (",
		"; and property an agent does not read: exportfile (the coordinator writes the run's summary)",
		"remove it from the agent's command line (-p)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "hosts (") {
		t.Errorf("a per-host property is refused: %v", err)
	}
	if err := CheckAgentProperties("", map[string]string{PropRawOutputFile: "/tmp/raw", "hosts": "db1", "ycsbctl.telemetry.pids": "1"}); err != nil {
		t.Errorf("per-host properties refused: %v", err)
	}
}

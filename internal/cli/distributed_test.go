package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
)

// Every duration flag of agent and coordinator is bounded, and an agent's
// own properties may not rewrite the coordinator's plan: refused before
// anything is contacted, naming the flag or property, the value and what
// was expected (exit 2).
func TestDistributedInputBounds(t *testing.T) {
	coord := func(extra ...string) []string {
		return append([]string{"coordinator", "run", "basic", "--agents", "127.0.0.1:1", "-p", "operationcount=10"}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"agent-timeout of 1000h", coord("--agent-timeout", "1000h"), []string{"--agent-timeout 1000h0m0s", "at least 2s and at most 1m0s"}},
		{"agent-timeout of 200ms", coord("--agent-timeout", "200ms"), []string{"--agent-timeout 200ms", "at least 2s"}},
		{"max-clock-offset of 1000h", coord("--max-clock-offset", "1000h"), []string{"--max-clock-offset", "at most 10m0s"}},
		{"max-clock-offset of -1000h", coord("--max-clock-offset", "-1000h"), []string{"--max-clock-offset", "at most 10m0s"}},
		{"interval of 1ns", coord("--interval", "1ns"), []string{"--interval 1ns", "from 10ms to 1h0m0s"}},
		{"interval of 1000h", coord("--interval", "1000h"), []string{"--interval 1000h", "from 10ms to 1h0m0s"}},
		{"lease of 1000h", []string{"agent", "--lease", "1000h"}, []string{"--lease 1000h0m0s", "at least 2s and at most 5m0s"}},
		{"agent -p operationcount", []string{"agent", "-p", "operationcount=50", "-p", "hosts=db1"},
			[]string{"agent -p set property the coordinator's plan owns: operationcount (the run's operation budget is split among the agents)", "ycsbctl_agent_properties"}},
		{"agent -p insertstart and target", []string{"agent", "-p", "insertstart=0", "-p", "target=50"},
			[]string{"properties the coordinator's plan owns: insertstart", "target (the run's target rate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := execute(t, "", tc.args...)
			assert.Equal(t, int(exitcode.InvalidConfig), r.code, "exit code; stderr:\n%s", r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.Equal(t, 1, strings.Count(r.stderr, "Error: "), "one message: %s", r.stderr)
			assert.NotContains(t, r.stderr, "listening on")
			assert.NotContains(t, r.stderr, "unreachable")
		})
	}
}

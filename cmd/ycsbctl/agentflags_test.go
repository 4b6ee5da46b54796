package main_test

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoordinatorAgentFlagsMeanWhatTheySay (issue 34 #20): an agent given
// twice under two spellings is refused before anything is contacted,
// naming both (127.0.0.1:P and localhost:P passed, and the run then failed
// blaming itself as busy), and --max-clock-offset accepts only what its
// message says (0 silently meant 1 s, and -1s switched the check off
// though the refusal said "at least 0s").
func TestCoordinatorAgentFlagsMeanWhatTheySay(t *testing.T) {
	a, b := startAgent(t), startAgent(t)
	_, port, err := net.SplitHostPort(a.addr)
	require.NoError(t, err)
	_, portB, err := net.SplitHostPort(b.addr)
	require.NoError(t, err)
	coord := func(extra ...string) []string {
		return append([]string{"coordinator", "run", "basic", "-P", "workloada", "-p", "operationcount=10", "-p", "basicdb.verbose=false"}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"127.0.0.1 and localhost", coord("--agents", "127.0.0.1:"+port+",localhost:"+port), 2,
			[]string{`"127.0.0.1:` + port + `" and "localhost:` + port + `" are the same agent`, "loopback"}},
		{"localhost in capitals", coord("--agents", "localhost:"+port+",LOCALHOST:"+port), 2, []string{"are the same agent"}},
		{"two loopback aliases", coord("--agents", "127.0.0.1:"+port+",127.0.0.2:"+port), 2, []string{`"127.0.0.2:` + port + `"`, "are the same agent"}},
		{"IPv6 loopback", coord("--agents", "[::1]:"+port+",127.0.0.1:"+port), 2, []string{`"[::1]:` + port + `"`, "are the same agent"}},
		{"an address and itself with spaces", coord("--agents", a.addr+", "+a.addr), 2, []string{"are the same agent"}},
		{"the default port spelled out", coord("--agents", "127.0.0.1,localhost:7420"), 2, []string{"are the same agent"}},
		{"one host, two ports: two agents", coord("--agents", "127.0.0.1:"+port+",localhost:"+portB), 0, nil},
		{"max-clock-offset 0", coord("--agents", a.addr, "--max-clock-offset", "0"), 2,
			[]string{"flag --max-clock-offset 0s: expected at least 1ms and at most 10m0s", "cannot be switched off"}},
		{"max-clock-offset -1s", coord("--agents", a.addr, "--max-clock-offset", "-1s"), 2,
			[]string{"flag --max-clock-offset -1s: expected at least 1ms and at most 10m0s"}},
		{"max-clock-offset 11m", coord("--agents", a.addr, "--max-clock-offset", "11m"), 2,
			[]string{"flag --max-clock-offset 11m0s: expected at least 1ms and at most 10m0s"}},
		{"max-clock-offset 10m", coord("--agents", a.addr, "--max-clock-offset", "10m"), 0, nil},
		{"max-clock-offset 50ms", coord("--agents", a.addr, "--max-clock-offset", "50ms"), 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ycsbctl(t, tc.args...)
			require.Equal(t, tc.code, r.code, "stderr:\n%s", r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w)
			}
			if tc.code == 2 {
				assert.Equal(t, 1, strings.Count(r.stderr, "Error: "), "one message: %s", r.stderr)
				assert.NotContains(t, r.stderr, "busy", "refused before any agent is contacted")
				assert.NotContains(t, r.stderr, "clock offset", "refused before any agent is contacted")
			}
		})
	}
	help := ycsbctl(t, "coordinator", "run", "--help")
	require.Equal(t, 0, help.code)
	assert.Contains(t, help.stdout, "from 1ms to 10m; the check cannot be switched off")
	assert.NotContains(t, help.stdout, "negative disables")
}

//go:build integration

package integration

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/capacity"
)

// TestCapacityAgentLostIsNotAVerdict: a coordinator's capacity search
// over two agent processes, each with its own simulated server (2000
// ops/s each: 4000 in all), with --on-agent-loss=continue. One agent is
// killed (SIGKILL) while the first probe, at 3000 ops/s, runs, and
// started again at its address for the probes after it. The probe that
// lost it measured the survivor's half and was judged "saturated", and
// the search found 1,823 ops/s where the clean one finds the knee; now
// the probe is partial, said so, tried again at its target, and the
// search lands within its precision of the knee as a clean one does.
func TestCapacityAgentLostIsNotAVerdict(t *testing.T) {
	procs, addrs := startAgents(t, 2)
	knee := kneeOf(2)
	dir := t.TempDir() + "/cap"
	args := append([]string{"coordinator", "capacity", "basic", "--agents", strings.Join(addrs, ","), "--on-agent-loss", "continue",
		"--results", dir}, knownKneeArgs(3000)...)
	c := startCLI(t, 10*time.Minute, "", args...)

	// The first probe's status lines say it is under way: kill agent 1
	// then, and start it again where the next probes will look for it.
	waitLine(t, c, "[probe 1, 3000 ops/s] ", time.Time{}, 3*time.Minute)
	signal(t, procs[1], syscall.SIGKILL)
	<-procs[1].done
	again := startCLI(t, 20*time.Minute, "", "agent", "--listen", addrs[1])
	waitListening(t, addrs[1], again, time.Minute)

	r := c.Wait(t)
	requireExit(t, r, 0)
	rec := readCapacity(t, dir)
	checkSearch(t, dir, rec, 2)
	nearKnee(t, rec, knee)
	belowKnee(t, rec, knee)

	first := rec.Probes[0]
	require.Equal(t, capacity.Partial, first.Verdict, "the probe that lost an agent: %q", first.Reasons)
	assert.False(t, first.Saturated, "a partial probe is not the database saturated")
	assert.Contains(t, strings.Join(first.Partial, "\n"), addrs[1], "the record names the agent lost")
	require.Greater(t, len(rec.Probes), 1)
	assert.Equal(t, 3000.0, rec.Probes[1].Target, "tried again at its target")
	assert.Equal(t, 1, rec.Probes[1].Retry)
	assert.NotEqual(t, 3000.0, rec.Answer.Bracket.Fail, "3000 ops/s is no failure")
	assert.Contains(t, r.stderr, "Probe 1 was partial (")
	assert.Contains(t, r.stderr, "trying 3000 ops/s again (retry 1 of 2)")
	assert.Contains(t, r.stdout, "partial", "the table says which probe was partial")
	assert.Contains(t, r.stdout, rec.AnswerText())
}

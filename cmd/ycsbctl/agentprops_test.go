package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
)

// TestAgentPropertiesThatDifferAreSaid (issue 34 #12): an agent's own
// property that the other agents do not share changes what it measures;
// it was mentioned nowhere but agents[1].properties in run.json (and
// environment.database, described by agent 0, said otherwise). Now the
// coordinator says it before the start, naming the agents and values, and
// the bundle says it: run.json's agent_property_differences, the
// summary's notes, the report.
func TestAgentPropertiesThatDifferAreSaid(t *testing.T) {
	plain := startAgent(t, "-p", "basicdb.verbose=false")
	slow := startAgent(t, "-p", "basicdb.verbose=false", "-p", "basicdb.simulatedelay=5", "-p", "basicdb.randomizedelay=false")
	dir := filepath.Join(t.TempDir(), "r")
	r := ycsbctl(t, "coordinator", "run", "basic", "--agents", plain.addr+","+slow.addr, "-P", "workloada", "-p", "operationcount=40",
		"-p", "recordcount=100", "-p", "basicdb.randomizedelay=true", "--results", dir)
	require.Equal(t, 0, r.code, r.stderr)

	delay := `basicdb.simulatedelay: agent 0 (` + plain.addr + `) has the default (nobody set it), agent 1 (` + slow.addr + `) has "5" (its own agent -p)`
	random := `basicdb.randomizedelay: agent 0 (` + plain.addr + `) has "true" (the coordinator's), agent 1 (` + slow.addr + `) has "false" (its own agent -p)`
	for _, want := range []string{delay, random} {
		line := "the agents run with different properties (agent -p): " + want
		require.Contains(t, r.stderr, line)
		assert.Less(t, strings.Index(r.stderr, line), strings.Index(r.stderr, "Starting test on 2 agents"), "said before the start")
		summary := readSink(t, filepath.Join(dir, "summary.txt"))
		assert.Contains(t, summary, want, "summary.txt")
	}
	assert.NotContains(t, r.stderr, "basicdb.verbose:", "a property every agent sets alike is no difference")

	var run bundle.Run
	require.NoError(t, json.Unmarshal([]byte(readSink(t, filepath.Join(dir, "run.json"))), &run))
	require.Len(t, run.AgentPropertyDifferences, 2, "run.json agent_property_differences")
	d := run.AgentPropertyDifferences[1]
	assert.Equal(t, "basicdb.simulatedelay", d.Property)
	assert.Equal(t, []bundle.AgentValue{{Agent: 0, Address: plain.addr, From: bundle.FromDefault}, {Agent: 1, Address: slow.addr, Value: "5", From: bundle.FromAgent}}, d.Values)

	rep := ycsbctl(t, "report", dir)
	require.Equal(t, 0, rep.code, rep.stderr)
	assert.Contains(t, readSink(t, filepath.Join(dir, "report.html")), "Differs between agents")
}

// TestAgentRefusesPropertiesItWouldIgnore (issue 34 #12): `agent -p
// exportfile=...` was accepted and ignored (the coordinator writes the
// run's summary); every output or operator property an agent cannot
// honour is refused at start, naming it and why (exit 2), while those it
// reads for itself (its raw samples' file, its telemetry) are taken.
func TestAgentRefusesPropertiesItWouldIgnore(t *testing.T) {
	for _, tc := range []struct{ prop, why string }{
		{"exportfile=/tmp/x.json", "exportfile (the coordinator writes the run's summary)"},
		{"exporter=site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter", "exporter (the coordinator writes the run's summary)"},
		{"hdrhistogram.fileoutput=true", "hdrhistogram.fileoutput (the coordinator writes the merged run's HdrHistogram log)"},
		{"hdrhistogram.output.path=/tmp/h", "hdrhistogram.output.path ("},
		{"measurement.histogram.verbose=true", "measurement.histogram.verbose ("},
		{"hdrhistogram.percentiles=99.9", "hdrhistogram.percentiles ("},
		{"status=true", "status (the coordinator prints the status lines)"},
		{"ycsbctl.results=/tmp/r", "ycsbctl.results (the coordinator writes the run's bundle)"},
		{"ycsbctl.metrics.addr=127.0.0.1:9999", "ycsbctl.metrics.addr (an agent serves /metrics with its --metrics-addr flag)"},
		{"ycsbctl.maxerrorrate=0.1", "ycsbctl.maxerrorrate ("},
		{"measurement.trackjvm=true", "measurement.trackjvm (the coordinator asks every agent"},
		{"db=cassandra", "db (the coordinator names the database)"},
	} {
		t.Run(tc.prop, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary(t), "agent", "--listen", "127.0.0.1:0", "-p", tc.prop, "-p", "hosts=db1")
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			require.NoError(t, ctx.Err(), "still running after 30s: the agent took -p %s:\n%s", tc.prop, out)
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", out)
			assert.Equal(t, 2, ee.ExitCode(), "%s", out)
			assert.Contains(t, string(out), "agent -p set property an agent does not read: "+tc.why)
			assert.NotContains(t, string(out), "hosts (")
		})
	}
	raw := filepath.Join(t.TempDir(), "raw.txt")
	a := startAgent(t, "-p", "measurement.raw.output_file="+raw, "-p", "ycsbctl.telemetry.pids=1")
	assert.Contains(t, a.stderr(), "listening on")
	_, err := os.Stat(raw)
	assert.True(t, os.IsNotExist(err), "nothing written before a run")
}

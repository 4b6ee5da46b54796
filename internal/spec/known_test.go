package spec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/ycsbctl/ycsbctl/adapters/all"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// Every property Parse reads (client, output, core workload) is declared,
// over property sets that take every branch that reads something more.
func TestEveryReadPropertyIsDeclared(t *testing.T) {
	known := append(spec.Known(), workload.Known()...)
	sets := [][]string{
		{"operationcount", "10"},
		{"operationcount", "0", "maxexecutiontime", "5", "measurementtype", "timeseries", "hdrhistogram.fileoutput", "true",
			"ycsbctl.maxerrorrate", "0.1", "requestdistribution", "zipfian", "fieldlengthdistribution", "uniform", "insertorder", "ordered",
			"scanlengthdistribution", "zipfian", "requestdistribution", "hotspot"},
		{"operationcount", "10", "requestdistribution", "exponential", "dataintegrity", "true"},
		{"operationcount", "10", "recordcount", "100", "insertstart", "10", "insertcount", "20"},
	}
	for _, phase := range []run.Phase{run.Load, run.Run} {
		for _, kv := range sets {
			p := properties.New()
			p.SetPairs(kv...)
			p.SetPairs("recordcount", "100")
			p.TrackReads()
			_, err := spec.Parse("basic", p, phase)
			require.NoError(t, err, "%v", kv)
			for _, k := range p.ReadKeys() {
				if _, ok := properties.FindKnown(known, k); ok {
					continue
				}
				// The adapter's own properties are declared by the
				// adapter (checked in package adapters).
				if k == "basicdb.verbose" || k == "basicdb.simulatedelay" || k == "basicdb.randomizedelay" {
					continue
				}
				t.Errorf("%s phase reads %q, which no declaration lists", phase, k)
			}
		}
	}
}

// Typos do not pass silently: one warning line names each property that
// nothing reads, with the nearest known name; a property of another
// adapter is named as such; known properties never appear in it.
func TestUnknownPropertiesWarning(t *testing.T) {
	p := properties.New()
	p.SetPairs("operationcount", "10", "recordcout", "5", "cassandra.readconsistencylevl", "ONE", "hosts", "h1",
		"readproportion", "1", "updateproportion", "0", "zzz.nothing.like.it", "1")
	sp, err := spec.Parse("basic", p, run.Run)
	require.NoError(t, err)
	var lines []string
	for _, w := range sp.Warnings {
		if len(w) > 0 && w[:len("Warning: properties that nothing reads")] == "Warning: properties that nothing reads" {
			lines = append(lines, w)
		}
	}
	require.Len(t, lines, 1, "%v", sp.Warnings)
	w := lines[0]
	assert.Contains(t, w, "recordcout (did you mean recordcount?)")
	assert.Contains(t, w, "cassandra.readconsistencylevl (did you mean cassandra.readconsistencylevel, read by the cassandra adapter?)")
	assert.Contains(t, w, "hosts (read by the cassandra adapter, not by basic)")
	assert.Contains(t, w, "zzz.nothing.like.it")
	assert.NotContains(t, w, "readproportion")
	assert.NotContains(t, w, "operationcount")

	clean := properties.New()
	clean.SetPairs("operationcount", "10", "recordcount", "5", "basicdb.verbose", "false")
	sp, err = spec.Parse("basic", clean, run.Run)
	require.NoError(t, err)
	for _, w := range sp.Warnings {
		assert.NotContains(t, w, "nothing reads")
	}
}

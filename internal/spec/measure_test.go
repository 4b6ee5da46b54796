package spec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

func TestParseMeasurement(t *testing.T) {
	parse := func(kv ...string) spec.Measurement {
		t.Helper()
		sp, err := spec.Parse("basic", props(append([]string{"operationcount", "10"}, kv...)...), run.Run)
		require.NoError(t, err)
		return sp.Measure
	}
	m := parse()
	assert.Equal(t, ycsbtext.KindHdr, m.Format.Kind)
	assert.Equal(t, 1000, m.Format.Buckets)
	assert.False(t, m.TrackRuntime)
	assert.Empty(t, m.HdrLogPrefix, "no .hdr logs without hdrhistogram.fileoutput")

	m = parse("measurementtype", "hdrhistogram+raw", "measurement.raw.output_file", "/tmp/x.csv", "measurement.raw.no_summary", "true",
		"histogram.buckets", "20", "measurement.trackjvm", "true")
	assert.Equal(t, ycsbtext.KindHdrRaw, m.Format.Kind)
	assert.True(t, m.Format.RawNoSummary)
	assert.Equal(t, 20, m.Format.Buckets)
	assert.Equal(t, "/tmp/x.csv", m.RawFile)
	assert.True(t, m.TrackRuntime, "measurement.trackjvm is ycsbctl.trackruntime's alias")

	m = parse("latencytrackederrors", "NOT_FOUND, ERROR,")
	assert.Equal(t, []adapters.Status{adapters.NotFound, adapters.Error}, m.Errors.Tracked)
	assert.False(t, m.Errors.EachError)
	assert.True(t, parse("reportlatencyforeacherror", "true").Errors.EachError)

	assert.Equal(t, "/data/run1-", parse("hdrhistogram.fileoutput", "true", "hdrhistogram.output.path", "/data/run1-").HdrLogPrefix)
	assert.Empty(t, parse("hdrhistogram.fileoutput", "true", "hdrhistogram.output.path", "/data/all.hlog").HdrLogPrefix,
		"a .hlog path names ycsbctl's combined log only")
	assert.Empty(t, parse("hdrhistogram.fileoutput", "true", "hdrhistogram.output.path", "/d/", "measurementtype", "histogram").HdrLogPrefix,
		"YCSB logs only HdrHistogram measurements")
	assert.Equal(t, "/d/", parse("hdrhistogram.fileoutput", "true", "hdrhistogram.output.path", "/d/", "measurementtype", "hdrhistogram+histogram").HdrLogPrefix)
}

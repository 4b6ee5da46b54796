package ycsbtext_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
)

// TestMeasurementTypesGolden fixes each measurement type's summary of the
// shared fixture (checked against Java YCSB 0.17.0's layout by
// integration/javaycsb_measurement_test.go).
func TestMeasurementTypesGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		format  ycsbtext.Format
		verbose bool
	}{
		{"histogram", ycsbtext.Format{Kind: ycsbtext.KindHistogram}, false},
		{"histogram_verbose", ycsbtext.Format{Kind: ycsbtext.KindHistogram, Buckets: 4}, true},
		{"raw", ycsbtext.Format{Kind: ycsbtext.KindRaw}, false},
		{"raw_no_summary", ycsbtext.Format{Kind: ycsbtext.KindRaw, RawNoSummary: true}, false},
		{"hdrhistogram_histogram", ycsbtext.Format{Kind: ycsbtext.KindHdrHistogram, Buckets: 300}, false},
		{"hdrhistogram_raw", ycsbtext.Format{Kind: ycsbtext.KindHdrRaw}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fixtureSummary()
			s.Format, s.Verbose = tc.format, tc.verbose
			golden(t, "type_"+tc.name, export(t, ycsbtext.TextExporter, s))
		})
	}
}

func lineMap(t *testing.T, s *ycsbtext.Summary) map[string]any {
	t.Helper()
	m := map[string]any{}
	for _, l := range ycsbtext.Lines(s) {
		m["["+l.Metric+"], "+l.Measurement] = l.Value
	}
	return m
}

// TestHistogramTypeFigures checks the histogram type's figures against
// what YCSB's OneMeasurementHistogram computes from the same values in
// whole microseconds.
func TestHistogramTypeFigures(t *testing.T) {
	iv := measurement.NewInterval(0, t0, t0+1e9)
	us := []int64{500, 1_500, 2_500, 10_000}
	for _, v := range us {
		record(iv, ser(measurement.Read, measurement.Service, false), v*1000+999) // sub-µs parts are truncated
	}
	iv.Returns[measurement.Read][adapters.OK] = 4
	s := &ycsbtext.Summary{RunTime: time.Second, Total: iv, Format: ycsbtext.Format{Kind: ycsbtext.KindHistogram, Buckets: 3}, Verbose: true}
	m := lineMap(t, s)
	mean := (500.0 + 1500 + 2500 + 10000) / 4
	variance := (500.0*500+1500*1500+2500*2500+10000*10000)/4 - mean*mean
	assert.Equal(t, int64(4), m["[READ], Operations"])
	assert.InEpsilon(t, mean, m["[READ], AverageLatency(us)"], 0.0005)
	assert.InEpsilon(t, variance, m["[READ], LatencyVariance(us)"], 0.002)
	assert.Equal(t, int64(500), m["[READ], MinLatency(us)"])
	assert.InEpsilon(t, 10_000, m["[READ], MaxLatency(us)"], 0.001)
	for i, want := range []int64{1, 1, 1} {
		assert.Equal(t, want, m["[READ], "+string(rune('0'+i))], "bucket %d", i)
	}
	assert.Equal(t, int64(1), m["[READ], >3"])
	// A quarter overflows, so 95% is never reached within the buckets and
	// YCSB prints neither percentile.
	assert.NotContains(t, m, "[READ], 95thPercentileLatency(us)")
	assert.NotContains(t, m, "[READ], 99thPercentileLatency(us)")
	assert.Equal(t, int64(4), m["[READ], Return=OK"])

	// Mostly fast calls: the percentiles are bucket indexes in ms × 1000.
	iv = measurement.NewInterval(0, t0, t0+1e9)
	for i := 0; i < 96; i++ {
		record(iv, ser(measurement.Update, measurement.Service, false), 200_000)
	}
	record(iv, ser(measurement.Update, measurement.Service, false), 1_200_000, 1_300_000, 1_400_000, 2_100_000)
	s = &ycsbtext.Summary{RunTime: time.Second, Total: iv, Format: ycsbtext.Format{Kind: ycsbtext.KindHistogram}}
	m = lineMap(t, s)
	assert.Equal(t, int64(0), m["[UPDATE], 95thPercentileLatency(us)"])
	assert.Equal(t, int64(1000), m["[UPDATE], 99thPercentileLatency(us)"])
}

// TestRawTypeRanks: YCSB prints the element at index (int)(n × p) of the
// sorted samples; values well inside a microsecond give exact figures.
func TestRawTypeRanks(t *testing.T) {
	iv := measurement.NewInterval(0, t0, t0+1e9)
	for v := int64(100); v >= 1; v-- {
		record(iv, ser(measurement.Scan, measurement.Service, false), v*1000+500)
	}
	m := lineMap(t, &ycsbtext.Summary{RunTime: time.Second, Total: iv, Format: ycsbtext.Format{Kind: ycsbtext.KindRaw}})
	assert.Equal(t, int64(100), m["[SCAN], Total Operations"])
	assert.Equal(t, int64(-1), m["[SCAN], Below is a summary of latency in microseconds:"])
	assert.InEpsilon(t, 50.5, m["[SCAN], Average"], 1e-9)
	want := map[string]int64{"Min": 1, "Max": 100, "p1": 2, "p5": 6, "p50": 51, "p90": 91, "p95": 96, "p99": 100, "p99.9": 100, "p99.99": 100}
	for k, v := range want {
		assert.Equal(t, v, m["[SCAN], "+k], k)
	}
}

// TestErrorSeriesNames: per-status failure series print under YCSB's
// <OP>-<STATUS> names, after <OP>-FAILED, in every type.
func TestErrorSeriesNames(t *testing.T) {
	iv := measurement.NewInterval(0, t0, t0+1e9)
	record(iv, measurement.SeriesOfStatus(measurement.Read, measurement.Service, adapters.NotFound), 1000, 2000)
	record(iv, measurement.SeriesOfStatus(measurement.Read, measurement.Intended, adapters.Error), 3000)
	record(iv, ser(measurement.Read, measurement.Service, true), 4000)
	iv.Returns[measurement.Read][adapters.NotFound] = 2
	iv.Returns[measurement.Read][adapters.Error] = 2
	for _, f := range []ycsbtext.Format{{}, {Kind: ycsbtext.KindHistogram}, {Kind: ycsbtext.KindRaw}} {
		out := string(export(t, ycsbtext.TextExporter, &ycsbtext.Summary{RunTime: time.Second, Total: iv, Format: f, Percentiles: []float64{50}}))
		failed := strings.Index(out, "[READ-FAILED], ")
		notFound := strings.Index(out, "[READ-NOT_FOUND], ")
		intended := strings.Index(out, "[Intended-READ-ERROR], ")
		require.True(t, failed > 0 && notFound > failed && intended > notFound, "%s:\n%s", f.Kind, out)
		assert.Contains(t, out, "[READ], Return=NOT_FOUND, 2\n", f.Kind.String())
	}
}

// TestStatusLineTypes: the status line shows each measurement in its
// type's style, as YCSB's getSummary does.
func TestStatusLineTypes(t *testing.T) {
	iv := measurement.NewInterval(1, t0, t0+1e9)
	record(iv, ser(measurement.Read, measurement.Service, false), 1000, 2000, 4000)
	iv.Ops = 3
	now := time.Date(2024, 5, 6, 7, 8, 9, 10_000_000, time.UTC)
	p := run.Progress{Elapsed: 10 * time.Second}
	line := func(k ycsbtext.Kind) string {
		return ycsbtext.StatusLineFormat("", now, p, iv, iv, ycsbtext.Format{Kind: k}, "")
	}
	assert.True(t, strings.HasSuffix(line(ycsbtext.KindHistogram), "[READ AverageLatency(us)=2.33] "), line(ycsbtext.KindHistogram))
	assert.True(t, strings.HasSuffix(line(ycsbtext.KindRaw), "READ count: 3, average latency(us): 2.33 "), line(ycsbtext.KindRaw))
	assert.Regexp(t, `\[HdrREAD: Count=3, Max=4, Min=1, Avg=2\.33, [^\]]*\]\n\[BucketREAD AverageLatency\(us\)=2\.33\] $`, line(ycsbtext.KindHdrHistogram))
	assert.Regexp(t, `\[HdrREAD: Count=3, [^\]]*\]\nRawREAD count: 3, average latency\(us\): 2\.33 $`, line(ycsbtext.KindHdrRaw))
	assert.Equal(t, ycsbtext.StatusLine("", now, p, iv, iv), line(ycsbtext.KindHdr), "hdrhistogram is the default")
	assert.True(t, strings.HasSuffix(ycsbtext.StatusLineFormat("", now, p, iv, iv, ycsbtext.Format{}, "[X: Count=1] "), "] [X: Count=1] "))
}

// TestRuntimeTracker: the summary lines are YCSB's JVM lines in Go terms.
func TestRuntimeTracker(t *testing.T) {
	var rt ycsbtext.RuntimeTracker
	rt.Begin()
	rt.OnInterval(&run.Update{})
	assert.Regexp(t, `^\[GOROUTINES: Count=1, Max=(\d+), Min=\d+, Avg=\d+, 90=\d+, 99=\d+, 99\.9=\d+, 99\.99=\d+\] \[HEAP_IN_USE_MB: .*\] \[GCS: .*\] \[GCS_TIME: .*\] $`, rt.Status())
	var names []string
	for _, l := range rt.Lines(time.Second) {
		names = append(names, "["+l.Metric+"], "+l.Measurement)
	}
	assert.Equal(t, []string{"[TOTAL_GCs], Count", "[TOTAL_GC_TIME], Time(ms)", "[TOTAL_GC_TIME_%], Time(%)", "[MAX_HEAP_IN_USE_MB], MBs",
		"[MIN_HEAP_IN_USE_MB], MBs", "[MAX_GOROUTINES], Count", "[MIN_GOROUTINES], Count"}, names)
}

func TestParseKind(t *testing.T) {
	for _, n := range ycsbtext.KindNames() {
		k, ok := ycsbtext.ParseKind(n)
		require.True(t, ok, n)
		assert.Equal(t, n, k.String())
	}
	_, ok := ycsbtext.ParseKind("histo")
	assert.False(t, ok)
	assert.True(t, ycsbtext.KindHdrRaw.HasRaw() && ycsbtext.KindHdrRaw.HasHdr())
	assert.False(t, ycsbtext.KindHistogram.HasHdr())
}

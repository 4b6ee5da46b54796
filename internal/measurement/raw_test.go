package measurement_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// gateWriter blocks every write until opened, like a disk that cannot
// keep up.
type gateWriter struct {
	mu   sync.Mutex
	open chan struct{}
	b    bytes.Buffer
}

func (g *gateWriter) Write(p []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Write(p)
}

func countSamples(t *testing.T, out string) (map[string]int64, int) {
	t.Helper()
	sample := regexp.MustCompile(`^([A-Za-z-]+),\d{13},\d+$`)
	counts := map[string]int64{}
	headers := 0
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		if strings.HasSuffix(line, " latency raw data: op, timestamp(ms), latency(us)") {
			headers++
			continue
		}
		g := sample.FindStringSubmatch(line)
		require.NotNil(t, g, "line %q", line)
		counts[g[1]]++
	}
	return counts, headers
}

func TestRawLogWritesEverySample(t *testing.T) {
	var out bytes.Buffer
	log := measurement.NewRawLog(&out, nil, "Raw")
	var recs []*measurement.Recorder
	for range 3 {
		r := measurement.NewRecorder(measurement.ModeBoth)
		r.KeepRaw(log)
		recs = append(recs, r)
	}
	log.Start()
	var wg sync.WaitGroup
	for i, r := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10_000+i; j++ {
				r.Measure(measurement.Read, adapters.OK, 1500, 2500)
				r.Done(1)
			}
			r.MeasureLatency(measurement.Cleanup, 7000, 7000)
			r.Flush()
		}()
	}
	wg.Wait()
	require.NoError(t, log.Close())
	assert.Zero(t, log.Dropped())
	counts, headers := countSamples(t, out.String())
	assert.Equal(t, map[string]int64{"RawREAD": 30_003, "RawIntended-READ": 30_003, "RawCLEANUP": 3, "RawIntended-CLEANUP": 3}, counts)
	assert.Equal(t, 4, headers)
	assert.Contains(t, out.String(), "RawREAD latency raw data: op, timestamp(ms), latency(us)\nRawREAD,")
	assert.Regexp(t, `(?m)^RawREAD,\d{13},1$`, out.String(), "latency in whole µs")
	assert.Regexp(t, `(?m)^RawIntended-READ,\d{13},2$`, out.String())
}

// TestRawLogCountsWhatItDrops: a writer that cannot keep up makes the
// workers drop samples instead of waiting, and every one is counted.
func TestRawLogCountsWhatItDrops(t *testing.T) {
	g := &gateWriter{open: make(chan struct{})}
	log := measurement.NewRawLog(g, nil, "")
	r := measurement.NewRecorder(measurement.ModeOp)
	r.KeepRaw(log)
	// Many workers share the memory budget: this one's share is 16
	// chunks of 4096 samples.
	for range 63 {
		measurement.NewRecorder(measurement.ModeOp).KeepRaw(log)
	}
	log.Start()
	const n = 200_000
	for i := 0; i < n; i++ {
		r.Measure(measurement.Update, adapters.OK, 3000, 3000)
		r.Done(1)
	}
	close(g.open)
	require.NoError(t, log.Close())
	counts, _ := countSamples(t, g.b.String())
	assert.Positive(t, log.Dropped(), "the blocked writer made the worker drop samples")
	assert.Equal(t, int64(n), counts["UPDATE"]+log.Dropped(), "written + dropped = measured")
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRawLogCountsWriteFailures(t *testing.T) {
	log := measurement.NewRawLog(failWriter{}, nil, "")
	r := measurement.NewRecorder(measurement.ModeOp)
	r.KeepRaw(log)
	log.Start()
	for i := 0; i < 5000; i++ {
		r.Measure(measurement.Insert, adapters.OK, 3000, 3000)
		r.Done(1)
	}
	err := log.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk full")
	assert.Equal(t, int64(5000), log.Dropped())
}

func TestRawLogEmpty(t *testing.T) {
	var out bytes.Buffer
	log := measurement.NewRawLog(&out, nil, "")
	require.NoError(t, log.Close())
	assert.Empty(t, out.String())
	assert.Zero(t, log.Dropped())
}

// TestErrorNaming: failures land in <OP>-FAILED by default, in
// <OP>-<STATUS> for every failure with EachError, or for listed statuses.
func TestErrorNaming(t *testing.T) {
	measure := func(n measurement.ErrorNaming) *measurement.Interval {
		r := measurement.NewRecorder(measurement.ModeOp)
		r.NameFailures(n)
		r.Measure(measurement.Read, adapters.OK, 1000, 1000)
		r.Measure(measurement.Read, adapters.BatchedOK, 1000, 1000)
		r.Measure(measurement.Read, adapters.NotFound, 1000, 1000)
		r.Measure(measurement.Read, adapters.Error, 1000, 1000)
		r.Done(4)
		iv := measurement.NewInterval(1, 0, 0)
		r.Drain(iv)
		return iv
	}
	names := func(iv *measurement.Interval) map[string]int64 {
		m := map[string]int64{}
		for s := measurement.Series(0); s < measurement.NumSeries; s++ {
			if n := iv.Count(s); n > 0 {
				m[s.Name()] = n
			}
		}
		return m
	}
	iv := measure(measurement.ErrorNaming{})
	assert.Equal(t, map[string]int64{"READ": 2, "READ-FAILED": 2}, names(iv))
	assert.Equal(t, int64(4), iv.OpCount(measurement.Read))
	assert.Equal(t, map[string]int64{"READ": 2, "READ-NOT_FOUND": 1, "READ-ERROR": 1}, names(measure(measurement.ErrorNaming{EachError: true})))
	iv = measure(measurement.ErrorNaming{Tracked: []adapters.Status{adapters.NotFound}})
	assert.Equal(t, map[string]int64{"READ": 2, "READ-NOT_FOUND": 1, "READ-FAILED": 1}, names(iv))
	assert.Equal(t, int64(4), iv.OpCount(measurement.Read), "every failure name counts")
}

func TestParseSeriesStatusNames(t *testing.T) {
	for _, name := range []string{"READ-MODIFY-WRITE-NOT_FOUND", "Intended-READ-MODIFY-WRITE-FAILED", "SCAN-SERVICE_UNAVAILABLE", "READ-MODIFY-WRITE"} {
		s, ok := measurement.ParseSeries(name)
		require.True(t, ok, name)
		assert.Equal(t, name, s.Name())
	}
	for _, bad := range []string{"READ-OK", "READ-", "READ-BOGUS", "Intended-"} {
		_, ok := measurement.ParseSeries(bad)
		assert.False(t, ok, bad)
	}
}

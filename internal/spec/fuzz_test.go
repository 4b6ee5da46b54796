package spec_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/ycsbctl/ycsbctl/adapters/all"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/testutil/fuzzbound"
)

// durationProps are the run's durations and rates written as numbers
// (YCSB's seconds, milliseconds for the timeseries granularity).
var durationProps = []string{spec.PropMaxExecution, spec.PropWarmupTime, spec.PropStatusInterval, spec.PropTimeseriesGran,
	spec.PropStopGrace, spec.PropMetricsLinger, spec.PropMetricsStartDelay, spec.PropTarget}

// maxDuration is the longest a run's duration may be: ten years (spec's
// bound), far below where nanoseconds overflow.
const maxDuration = 10 * 365 * 24 * time.Hour

// FuzzDurations gives the run's duration properties any text, as -p or a
// workload file may, and parses the whole run specification. Invariants:
// a refusal names one of them (exit 2, before any load); an accepted
// value is the duration written, never negative, never beyond ten years
// (an overflowed duration stops at once or never), and the interval the
// engine cuts is positive.
func FuzzDurations(f *testing.F) {
	f.Add("120", "10", "0.5", "1000", "10", "0", "0", "0", "timeseries")
	f.Add("0", "0.001", "0.01", "1", "0.001", "3600", "600", "1e9", "hdrhistogram")
	f.Add("315360000", "1e300", "-1", "9223372036855", "nan", "inf", "0x10", "1_000", "timeseries")
	f.Add("60", "1", "10", "100000000000", "5", "1", "1", "100", "timeseries")
	f.Fuzz(func(t *testing.T, maxexec, warmup, status, gran, grace, linger, delay, target, mtype string) {
		vals := []string{maxexec, warmup, status, gran, grace, linger, delay, target}
		if len(strings.Join(vals, ""))+len(mtype) > 1024 {
			return
		}
		defer fuzzbound.Start(vals)()
		p := properties.New()
		p.SetPairs("operationcount", "10", spec.PropMeasurementType, mtype)
		for i, k := range durationProps {
			p.Set(k, vals[i])
		}
		sp, err := spec.Parse("basic", p, run.Run)
		if err != nil {
			var pe *properties.Error
			if !errors.As(err, &pe) {
				t.Fatalf("refused without naming a property: %v", err)
			}
			return
		}
		o := sp.Output
		for name, d := range map[string]time.Duration{"maxexecutiontime": sp.MaxExecution, "warmuptime": sp.WarmupTime,
			"status.interval": sp.StatusInterval, "timeseries.granularity": o.Granularity, "stopgrace": o.StopGrace,
			"metrics.linger": o.MetricsLinger, "metrics.startdelay": o.MetricsStartDelay} {
			if d < 0 || d > maxDuration {
				t.Fatalf("%s accepted as %s (from %q)", name, d, vals)
			}
		}
		if sp.CutInterval <= 0 || sp.StatusEvery < 1 {
			t.Fatalf("intervals cut every %s, status every %d (from %q)", sp.CutInterval, sp.StatusEvery, vals)
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(maxexec), 10, 64); err == nil && sp.MaxExecution != time.Duration(n)*time.Second {
			t.Fatalf("maxexecutiontime=%q is %s", maxexec, sp.MaxExecution)
		}
		for _, c := range []struct {
			text string
			unit time.Duration
			got  time.Duration
		}{{warmup, time.Second, sp.WarmupTime}, {status, time.Second, sp.StatusInterval}, {grace, time.Second, o.StopGrace}} {
			v, err := strconv.ParseFloat(strings.TrimSpace(c.text), 64)
			if err == nil && math.Abs(float64(c.got)-v*float64(c.unit)) > 1 {
				t.Fatalf("%q seconds is %s", c.text, c.got)
			}
		}
	})
}

package main_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFuzzFindingsRefused runs the real binary on what the fuzz targets
// found accepted that should not be (issue 34's fuzzing): each is refused
// with exit 2, naming the property and what was expected, before any
// load.
func TestFuzzFindingsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		// FuzzDurations: 9223372036855 ms overflows nanoseconds into a
		// negative interval; the run went on, cutting intervals every
		// -2562047h (exit 0).
		{"timeseries.granularity overflowing", []string{"run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=10",
			"-p", "measurementtype=timeseries", "-p", "timeseries.granularity=9223372036855"},
			[]string{`"timeseries.granularity"="9223372036855"`, "milliseconds from 1 to", "ten years"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ycsbctl(t, tc.args...)
			assert.Equal(t, 2, r.code, r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.NotContains(t, r.stdout, "[OVERALL]")
		})
	}
}

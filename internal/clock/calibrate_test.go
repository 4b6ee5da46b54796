package clock

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timeline is a fake machine: true time advances 30 ns per clock read,
// the TSC ticks 3 times per ns, and the OS may deschedule the reader for
// a while just before a chosen read.
type timeline struct {
	ns      int64
	reads   int
	stallAt map[int]int64 // read number -> ns lost before it
}

func (tl *timeline) step() {
	tl.reads++
	tl.ns += 30 + tl.stallAt[tl.reads]
}
func (tl *timeline) tsc() int64  { tl.step(); return 3 * tl.ns }
func (tl *timeline) nano() int64 { tl.step(); return tl.ns }
func (tl *timeline) wait()       { tl.ns += 20_000_000 }

func TestCalibrationSurvivesDescheduling(t *testing.T) {
	const truth = 1.0 / 3
	for _, tc := range []struct {
		name  string
		stall map[int]int64
	}{
		{"quiet", nil},
		// 5 ms lost between the first monotonic read and the TSC read, as
		// on a loaded 2-core machine; then between a TSC read and the
		// monotonic read after it at the far end.
		{"stalled before the first TSC read", map[int]int64{2: 5_000_000}},
		{"stalled after the last TSC read", map[int]int64{6: 5_000_000}},
		{"stalled at both ends", map[int]int64{2: 5_000_000, 3: 4_000_000, 5: 5_000_000, 9: 3_000_000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := &timeline{stallAt: tc.stall}
			_, _, scale, ok := calibrateWith(tl.tsc, tl.nano, tl.wait)
			require.True(t, ok)
			assert.InEpsilon(t, truth, scale, maxScaleError, "ns per tick")
		})
	}
}

func TestCalibrationRefusesWhenNeverQuiet(t *testing.T) {
	stall := map[int]int64{}
	for i := 1; i <= 1000; i++ {
		stall[i] = 1_000_000 // every read waits a millisecond
	}
	tl := &timeline{stallAt: stall}
	_, _, _, ok := calibrateWith(tl.tsc, tl.nano, tl.wait)
	assert.False(t, ok, "a ratio that cannot be trusted is not used")
}

func TestCalibrationRefusesAnUnboundedEnd(t *testing.T) {
	// Before the wait the monotonic clock steps back inside every bracket,
	// so that end of the span has no width at all; after it, all is quiet.
	tl := &timeline{}
	waited := false
	nano := func() int64 {
		n := tl.nano()
		if !waited && tl.reads%3 == 0 {
			return n - 1_000_000 // the read after the TSC read is behind
		}
		return n
	}
	_, _, _, ok := calibrateWith(tl.tsc, nano, func() { waited = true; tl.wait() })
	assert.False(t, ok, "an end that was never bracketed cannot be trusted")
}

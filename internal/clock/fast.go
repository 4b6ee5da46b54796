package clock

import (
	"math"
	"os"
	"strings"
	"sync"
	"time"
	_ "unsafe" // for go:linkname
)

// runtimeNano is the runtime's monotonic clock, without the wall-clock
// read that time.Now adds.
//
//go:linkname runtimeNano runtime.nanotime
func runtimeNano() int64

// Latency timing is on the hot path twice per operation. On this kind of
// machine the vDSO monotonic clock costs 25-70 ns a read and the raw TSC
// about a third of that, so when the kernel itself trusts the TSC (its
// clocksource is "tsc": invariant and synchronized across cores) ycsbctl
// reads the TSC and scales it to nanoseconds with a ratio calibrated
// against the monotonic clock. Anywhere else it uses runtime.nanotime.

var (
	tscOnce  sync.Once
	tscOK    bool
	tscBase  int64
	nanoBase int64
	tscScale float64 // ns per TSC tick
)

func calibrate() {
	if !haveTSC || os.Getenv("YCSBCTL_NO_TSC") != "" {
		return
	}
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil || strings.TrimSpace(string(b)) != "tsc" {
		return
	}
	tscBase, nanoBase, tscScale, tscOK = calibrateWith(rdtsc, runtimeNano, func() { time.Sleep(20 * time.Millisecond) })
}

// maxScaleError is the largest error in the TSC's ns-per-tick ratio that
// calibration accepts; beyond it ycsbctl stays on runtime.nanotime.
const maxScaleError = 1e-4

// calibrateWith measures ns per TSC tick across wait. On a loaded machine
// the OS may deschedule the thread between a TSC read and a monotonic
// read, so each end of the span is a TSC read bracketed by two monotonic
// reads, taken again while the bracket is wide: a 5 ms gap inside one
// unbracketed pair would skew a 20 ms span's ratio by a quarter, and
// every latency with it.
func calibrateWith(tsc, nano func() int64, wait func()) (tBase, nBase int64, scale float64, ok bool) {
	t0, n0, w0 := bracketed(tsc, nano)
	wait()
	t1, n1, w1 := bracketed(tsc, nano)
	if t1 <= t0 || n1 <= n0 {
		return 0, 0, 0, false
	}
	// Summed as floats: an unbounded width must not overflow into a pass.
	if float64(w0)+float64(w1) > maxScaleError*float64(n1-n0) {
		return 0, 0, 0, false
	}
	return t1, n1, float64(n1-n0) / float64(t1-t0), true
}

// bracketed returns a TSC read, the midpoint of the monotonic reads on
// either side of it, and their distance: the narrowest of a few tries
// (math.MaxInt64 if the monotonic clock never moved forward across one).
func bracketed(tsc, nano func() int64) (t, n, width int64) {
	width = math.MaxInt64
	for range 32 {
		a := nano()
		x := tsc()
		b := nano()
		if w := b - a; w >= 0 && w < width {
			t, n, width = x, a+w/2, w
			if w <= 1000 {
				break
			}
		}
	}
	return t, n, width
}

// monoNow returns monotonic nanoseconds (runtime.nanotime's scale).
func monoNow() int64 {
	if tscOK {
		return nanoBase + int64(float64(rdtsc()-tscBase)*tscScale)
	}
	return runtimeNano()
}

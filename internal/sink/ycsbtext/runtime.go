package ycsbtext

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/run"
)

// RuntimeTracker is ycsbctl.trackruntime (alias measurement.trackjvm), the
// Go counterpart of YCSB's JVM tracking. At every measured interval it
// samples the process: goroutines (YCSB's THREAD_COUNT), heap in use in MB
// (USED_MEM_MB), and the garbage collections and their total pause time
// since the last sample (GCS, GCS_TIME). The status line shows the
// sample as YCSB shows its JVM measurements, and the summary prints the
// extremes and totals as YCSB's MAX_/MIN_ and TOTAL_GC lines do.
//
// It describes the process it runs in: a single host's benchmark process.
type RuntimeTracker struct {
	mu      sync.Mutex
	started bool
	start   time.Time
	gc0     uint32
	pause0  uint64
	lastGC  uint32
	lastP   uint64
	status  string
	samples int64

	maxG, minG       int
	maxHeap, minHeap int64
}

// runtimeSample is one reading of the process.
type runtimeSample struct {
	goroutines int
	heapMB     int64
	numGC      uint32
	pauseNs    uint64
}

func readRuntime() runtimeSample {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtimeSample{goroutines: runtime.NumGoroutine(), heapMB: int64(ms.HeapInuse >> 20), numGC: ms.NumGC, pauseNs: ms.PauseTotalNs}
}

// Begin takes the reading the run's totals are counted from.
func (t *RuntimeTracker) Begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.begin(readRuntime(), time.Now())
}

func (t *RuntimeTracker) begin(s runtimeSample, now time.Time) {
	t.started = true
	t.start = now
	t.gc0, t.pause0 = s.numGC, s.pauseNs
	t.lastGC, t.lastP = s.numGC, s.pauseNs
	t.minG, t.minHeap = int(^uint(0)>>1), int64(^uint64(0)>>1)
}

// OnInterval samples the process (warm-up intervals too: the process runs
// either way, and YCSB's status thread samples whenever it prints).
func (t *RuntimeTracker) OnInterval(*run.Update) {
	s := readRuntime()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observe(s, time.Now())
}

func (t *RuntimeTracker) observe(s runtimeSample, now time.Time) {
	if !t.started {
		t.begin(s, now)
	}
	t.samples++
	t.maxG, t.minG = max(t.maxG, s.goroutines), min(t.minG, s.goroutines)
	t.maxHeap, t.minHeap = max(t.maxHeap, s.heapMB), min(t.minHeap, s.heapMB)
	gcs := int64(s.numGC - t.lastGC)
	pauseMs := int64((s.pauseNs - t.lastP) / 1e6)
	t.lastGC, t.lastP = s.numGC, s.pauseNs
	var b strings.Builder
	for _, m := range []struct {
		name string
		v    int64
	}{{"GOROUTINES", int64(s.goroutines)}, {"HEAP_IN_USE_MB", s.heapMB}, {"GCS", gcs}, {"GCS_TIME", pauseMs}} {
		// One sample per interval, in the HdrHistogram block's shape
		// YCSB gives its JVM series.
		v := strconv.FormatInt(m.v, 10)
		b.WriteString("[" + m.name + ": Count=1, Max=" + v + ", Min=" + v + ", Avg=" + v + ", 90=" + v + ", 99=" + v + ", 99.9=" + v + ", 99.99=" + v + "] ")
	}
	t.status = b.String()
}

// Status is the latest sample's status-line part.
func (t *RuntimeTracker) Status() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// Lines are the summary lines: YCSB's TOTAL_GCs, TOTAL_GC_TIME and
// TOTAL_GC_TIME_% (over runTime), then the extremes of the samples.
func (t *RuntimeTracker) Lines(runTime time.Duration) []Line {
	s := readRuntime()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started || t.samples == 0 {
		t.observe(s, time.Now())
	}
	return t.lines(s, runTime)
}

func (t *RuntimeTracker) lines(s runtimeSample, runTime time.Duration) []Line {
	gcs := int64(s.numGC - t.gc0)
	gcMs := int64((s.pauseNs - t.pause0) / 1e6)
	pct := 0.0
	if ms := runTime.Milliseconds(); ms > 0 {
		pct = float64(gcMs) / float64(ms) * 100
	}
	return []Line{
		{"TOTAL_GCs", "Count", gcs},
		{"TOTAL_GC_TIME", "Time(ms)", gcMs},
		{"TOTAL_GC_TIME_%", "Time(%)", pct},
		{"MAX_HEAP_IN_USE_MB", "MBs", t.maxHeap},
		{"MIN_HEAP_IN_USE_MB", "MBs", t.minHeap},
		{"MAX_GOROUTINES", "Count", int64(t.maxG)},
		{"MIN_GOROUTINES", "Count", int64(t.minG)},
	}
}

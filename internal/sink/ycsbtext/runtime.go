package ycsbtext

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/run"
)

// RuntimeSampler reads the Go runtime of the process it runs in for
// ycsbctl.trackruntime. A single host's RuntimeTracker and every agent
// (which ships its samples to the coordinator) read through it, so both
// report the same figures. It is not safe for concurrent use.
type RuntimeSampler struct {
	started bool
	gc0     uint32
	pause0  uint64
	lastGC  uint32
	lastP   uint64
}

// runtimeReading is one raw reading of the process.
type runtimeReading struct {
	goroutines int
	heapMB     int64
	numGC      uint32
	pauseNs    uint64
}

func readRuntime() runtimeReading {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtimeReading{goroutines: runtime.NumGoroutine(), heapMB: int64(ms.HeapInuse >> 20), numGC: ms.NumGC, pauseNs: ms.PauseTotalNs}
}

// Begin takes the reading the totals are counted from.
func (s *RuntimeSampler) Begin() { s.begin(readRuntime()) }

func (s *RuntimeSampler) begin(r runtimeReading) {
	s.started = true
	s.gc0, s.pause0 = r.numGC, r.pauseNs
	s.lastGC, s.lastP = r.numGC, r.pauseNs
}

// Sample reads the process now: gauges, the collections since the
// previous sample and since Begin (the first sample begins when Begin was
// not called).
func (s *RuntimeSampler) Sample() run.RuntimeSample { return s.sample(readRuntime()) }

func (s *RuntimeSampler) sample(r runtimeReading) run.RuntimeSample {
	if !s.started {
		s.begin(r)
	}
	out := run.RuntimeSample{
		Goroutines: int64(r.goroutines), HeapInUseMB: r.heapMB,
		GCs: int64(r.numGC - s.lastGC), GCPause: time.Duration(r.pauseNs - s.lastP),
		TotalGCs: int64(r.numGC - s.gc0), TotalGCPause: time.Duration(r.pauseNs - s.pause0),
	}
	s.lastGC, s.lastP = r.numGC, r.pauseNs
	return out
}

// RuntimeTracker is ycsbctl.trackruntime (alias measurement.trackjvm), the
// Go counterpart of YCSB's JVM tracking. At every measured interval it
// samples the process: goroutines (YCSB's THREAD_COUNT), heap in use in MB
// (USED_MEM_MB), and the garbage collections and their total pause time
// since the last sample (GCS, GCS_TIME). The status line shows the
// sample as YCSB shows its JVM measurements, and the summary prints the
// extremes and totals as YCSB's MAX_/MIN_ and TOTAL_GC lines do.
//
// It describes the process it runs in: a single host's benchmark process.
// A distributed run reports its agents' processes (AgentRuntimeTracker).
type RuntimeTracker struct {
	mu      sync.Mutex
	sampler RuntimeSampler
	status  string
	samples int64

	maxG, minG       int64
	maxHeap, minHeap int64
}

// Begin takes the reading the run's totals are counted from.
func (t *RuntimeTracker) Begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.begin(readRuntime())
}

func (t *RuntimeTracker) begin(r runtimeReading) {
	t.sampler.begin(r)
	t.minG, t.minHeap = int64(^uint64(0)>>1), int64(^uint64(0)>>1)
}

// OnInterval samples the process (warm-up intervals too: the process runs
// either way, and YCSB's status thread samples whenever it prints).
func (t *RuntimeTracker) OnInterval(*run.Update) {
	r := readRuntime()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observe(r)
}

func (t *RuntimeTracker) observe(r runtimeReading) run.RuntimeSample {
	if !t.sampler.started {
		t.begin(r)
	}
	s := t.sampler.sample(r)
	t.samples++
	t.maxG, t.minG = max(t.maxG, s.Goroutines), min(t.minG, s.Goroutines)
	t.maxHeap, t.minHeap = max(t.maxHeap, s.HeapInUseMB), min(t.minHeap, s.HeapInUseMB)
	var b strings.Builder
	for _, m := range runtimeSeries(s) {
		// One sample per interval, in the HdrHistogram block's shape
		// YCSB gives its JVM series.
		v := strconv.FormatInt(m.v, 10)
		b.WriteString("[" + m.name + ": Count=1, Max=" + v + ", Min=" + v + ", Avg=" + v + ", 90=" + v + ", 99=" + v + ", 99.9=" + v + ", 99.99=" + v + "] ")
	}
	t.status = b.String()
	return s
}

type runtimeValue struct {
	name string
	v    int64
}

// runtimeSeries are the status line's series of one sample, in order.
func runtimeSeries(s run.RuntimeSample) [4]runtimeValue {
	return [4]runtimeValue{{"GOROUTINES", s.Goroutines}, {"HEAP_IN_USE_MB", s.HeapInUseMB}, {"GCS", s.GCs}, {"GCS_TIME", s.GCPause.Milliseconds()}}
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
	r := readRuntime()
	t.mu.Lock()
	defer t.mu.Unlock()
	var s run.RuntimeSample
	if t.samples == 0 {
		s = t.observe(r)
	} else {
		s = t.sampler.sample(r)
	}
	return runtimeLines(s.TotalGCs, s.TotalGCPause.Milliseconds(), gcPercent(s.TotalGCPause.Milliseconds(), runTime, 1), t.maxHeap, t.minHeap, t.maxG, t.minG)
}

// gcPercent is GC time as a share of the run time of n processes.
func gcPercent(gcMs int64, runTime time.Duration, n int) float64 {
	if ms := runTime.Milliseconds(); ms > 0 && n > 0 {
		return float64(gcMs) / float64(ms*int64(n)) * 100
	}
	return 0
}

func runtimeLines(gcs, gcMs int64, pct float64, maxHeap, minHeap, maxG, minG int64) []Line {
	return []Line{
		{"TOTAL_GCs", "Count", gcs},
		{"TOTAL_GC_TIME", "Time(ms)", gcMs},
		{"TOTAL_GC_TIME_%", "Time(%)", pct},
		{"MAX_HEAP_IN_USE_MB", "MBs", maxHeap},
		{"MIN_HEAP_IN_USE_MB", "MBs", minHeap},
		{"MAX_GOROUTINES", "Count", maxG},
		{"MIN_GOROUTINES", "Count", minG},
	}
}

// AgentRuntimeTracker is ycsbctl.trackruntime in a distributed run: it
// reports the agents' processes (the load generators, as YCSB's JVM lines
// report its client), from the samples they send with every interval
// (run.Update.AgentRuntime). The status line shows each series across the
// agents that sent a sample for the interval, in the HdrHistogram block's
// shape: Count is the number of agents, Max/Min/Avg and the percentiles
// are over their values. The summary sums the agents' GC counts and pause
// times (TOTAL_GC_TIME_% is the mean agent's share of the run time) and
// gives the extremes of every sample of every agent.
type AgentRuntimeTracker struct {
	mu     sync.Mutex
	status string
	// per agent, by index: the latest totals, whether it sent samples or
	// intervals at all, and its address for the notes.
	totalGCs   []int64
	totalPause []time.Duration
	sampled    []bool
	delivered  []bool
	addrs      []string
	samples    int64

	maxG, minG       int64
	maxHeap, minHeap int64
}

// OnInterval takes the interval's agent samples.
func (t *AgentRuntimeTracker) OnInterval(u *run.Update) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := max(len(u.Agents), len(u.AgentRuntime), len(u.AgentIntervals))
	t.grow(n)
	for _, a := range u.Agents {
		if a.Index >= 0 && a.Index < n {
			t.addrs[a.Index] = a.Address
		}
	}
	for i, iv := range u.AgentIntervals {
		if iv != nil {
			t.delivered[i] = true
		}
	}
	var got []run.RuntimeSample
	for i, s := range u.AgentRuntime {
		if s == nil {
			continue
		}
		got = append(got, *s)
		t.sampled[i] = true
		// Totals only grow; a record that arrives late carries older ones.
		t.totalGCs[i] = max(t.totalGCs[i], s.TotalGCs)
		t.totalPause[i] = max(t.totalPause[i], s.TotalGCPause)
		if t.samples == 0 {
			t.maxG, t.minG, t.maxHeap, t.minHeap = s.Goroutines, s.Goroutines, s.HeapInUseMB, s.HeapInUseMB
		}
		t.samples++
		t.maxG, t.minG = max(t.maxG, s.Goroutines), min(t.minG, s.Goroutines)
		t.maxHeap, t.minHeap = max(t.maxHeap, s.HeapInUseMB), min(t.minHeap, s.HeapInUseMB)
	}
	if len(got) == 0 {
		// Nothing to show for this interval; the summary says which
		// agents never sent a sample.
		t.status = ""
		return
	}
	series := make([][4]runtimeValue, len(got))
	for i, s := range got {
		series[i] = runtimeSeries(s)
	}
	var b strings.Builder
	vals := make([]int64, len(got))
	for k := range series[0] {
		for i := range series {
			vals[i] = series[i][k].v
		}
		writeAcross(&b, series[0][k].name, vals)
	}
	t.status = b.String()
}

func (t *AgentRuntimeTracker) grow(n int) {
	for len(t.addrs) < n {
		t.addrs = append(t.addrs, "")
		t.totalGCs = append(t.totalGCs, 0)
		t.totalPause = append(t.totalPause, 0)
		t.sampled = append(t.sampled, false)
		t.delivered = append(t.delivered, false)
	}
}

// writeAcross writes one series over the agents' values (sorted in
// place) as an HdrHistogram status block; percentiles are nearest-rank.
func writeAcross(b *strings.Builder, name string, vals []int64) {
	slices.Sort(vals)
	var sum int64
	for _, v := range vals {
		sum += v
	}
	n := len(vals)
	b.WriteString("[" + name + ": Count=" + strconv.Itoa(n))
	b.WriteString(", Max=" + strconv.FormatInt(vals[n-1], 10))
	b.WriteString(", Min=" + strconv.FormatInt(vals[0], 10))
	b.WriteString(", Avg=" + decimalFormat2(float64(sum)/float64(n)))
	for _, q := range []struct {
		name string
		p    float64
	}{{"90", 90}, {"99", 99}, {"99.9", 99.9}, {"99.99", 99.99}} {
		rank := min(max(int(math.Ceil(float64(n)*q.p/100)), 1), n)
		b.WriteString(", " + q.name + "=" + strconv.FormatInt(vals[rank-1], 10))
	}
	b.WriteString("] ")
}

// Status is the latest interval's status-line part ("" when no agent sent
// a sample for it).
func (t *AgentRuntimeTracker) Status() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// Reporting is the number of agents that sent at least one sample.
func (t *AgentRuntimeTracker) Reporting() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reporting()
}

func (t *AgentRuntimeTracker) reporting() int {
	n := 0
	for _, ok := range t.sampled {
		if ok {
			n++
		}
	}
	return n
}

// Lines are the summary lines over the agents that sent samples, in the
// single host's order, then RUNTIME_AGENTS (how many agents they cover);
// none when no agent sent any (Notes says so rather than print zeros).
func (t *AgentRuntimeTracker) Lines(runTime time.Duration) []Line {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.reporting()
	if n == 0 {
		return nil
	}
	var gcs int64
	var pause time.Duration
	for i := range t.sampled {
		gcs += t.totalGCs[i]
		pause += t.totalPause[i]
	}
	ms := pause.Milliseconds()
	lines := runtimeLines(gcs, ms, gcPercent(ms, runTime, n), t.maxHeap, t.minHeap, t.maxG, t.minG)
	return append(lines, Line{"RUNTIME_AGENTS", "Count", int64(n)})
}

// Notes say what the runtime lines describe and which agents sent no
// samples (an agent older than the coordinator sends none).
func (t *AgentRuntimeTracker) Notes(prop string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.reporting()
	var silent []string
	for i, ok := range t.sampled {
		if !ok && t.delivered[i] {
			silent = append(silent, fmt.Sprintf("agent %d (%s)", i, t.addrs[i]))
		}
	}
	var notes []string
	if n == 0 {
		notes = append(notes, prop+": no agent sent runtime samples (agents older than this coordinator send none); no runtime lines are reported")
	} else {
		notes = append(notes, fmt.Sprintf("%s: the runtime figures are the agents' own processes (%d reporting); status-line Count is the agents reporting with Max/Min/Avg across them; TOTAL_GCs and TOTAL_GC_TIME are summed over the agents and TOTAL_GC_TIME_%% is their mean share of the run time; MAX_/MIN_ lines span every agent's samples", prop, n))
	}
	if len(silent) > 0 && n > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s sent no runtime samples (older agent?); the runtime figures leave them out", prop, strings.Join(silent, " and ")))
	}
	return notes
}

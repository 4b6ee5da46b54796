package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
)

// LocalRecorder records a single-host run into a bundle directory while it
// runs: merged.hlog grows one line per series per interval and interval
// statistics accumulate in memory (a few hundred bytes each). Fill adds
// what it recorded to run.json; the session writes run.json itself, last,
// once the run's exit code is known. The layout is the coordinator's with
// one agent (index 0, address "local").
type LocalRecorder struct {
	dir string

	mu  sync.Mutex
	f   *os.File
	hw  *hlog.Writer
	ivs []Interval
	err error
}

// NewLocalRecorder creates dir if needed and opens merged.hlog.
func NewLocalRecorder(dir string, started time.Time) (*LocalRecorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, FileHlog))
	if err != nil {
		return nil, err
	}
	return &LocalRecorder{dir: dir, f: f, hw: hlog.NewWriter(f, started)}, nil
}

// OnInterval records one measured interval (a run.Sink).
func (w *LocalRecorder) OnInterval(u *run.Update) {
	if u.Progress.Warmup {
		return
	}
	iv := u.Interval
	w.mu.Lock()
	defer w.mu.Unlock()
	ops := OpsPerSec(iv.Ops, iv.StartNs, iv.EndNs)
	stats := IntervalStats(iv)
	slice := AgentSlice{Index: 0, Operations: iv.Ops, OpsPerSec: ops, LagNs: int64(u.Progress.Lag), Series: stats}
	if len(u.Agents) > 0 {
		slice.CPUSeconds = u.Agents[0].CPUSeconds
	}
	w.ivs = append(w.ivs, Interval{
		Seq: iv.Seq, StartUnixNs: iv.StartNs, EndUnixNs: iv.EndNs, Operations: iv.Ops, OpsPerSec: ops,
		Series: stats, Returns: Returns(iv), Agents: []AgentSlice{slice},
	})
	if w.err != nil {
		return
	}
	for s, h := range iv.Hist {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if err := w.hw.WriteInterval(Tag(measurement.Series(s), -1), iv.StartNs, iv.EndNs, h); err != nil {
			w.err = err
			return
		}
	}
}

// LocalResult is what the engine reports at the end of a single-host run.
type LocalResult struct {
	StartNs, EndNs int64
	RunTime        time.Duration
	Total          *measurement.Interval
	WarmupOps      int64
	Intervals      int64
	Stopped        string
	Threads        int
	CPUSeconds     float64
	Hostname       string
}

// Fill closes merged.hlog and adds the recorded intervals and the single
// agent to r.
func (w *LocalRecorder) Fill(r *Run, res LocalResult) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	cerr := w.f.Close()
	if w.err != nil {
		return fmt.Errorf("writing %s: %w", FileHlog, w.err)
	}
	if cerr != nil {
		return cerr
	}
	r.Intervals = w.ivs
	r.Config.Agents = []string{run.LocalAgent}
	if res.StartNs > 0 {
		r.PlannedStart = time.Unix(0, res.StartNs)
	}
	var skew int64
	r.Agents = []Agent{{Index: 0, Address: run.LocalAgent, Hostname: res.Hostname, Version: r.Version, Protocol: r.Protocol, State: run.AgentFinished,
		Threads: res.Threads, Intervals: len(w.ivs), Operations: res.Total.Ops, CPUSeconds: res.CPUSeconds, StartSkewNs: &skew,
		Final: &Final{StartUnixNs: res.StartNs, EndUnixNs: res.EndNs, RunTimeMs: float64(res.RunTime) / 1e6, Operations: res.Total.Ops,
			WarmupOps: res.WarmupOps, Intervals: res.Intervals, Stopped: res.Stopped, CPUSeconds: res.CPUSeconds},
		Summary: IntervalStats(res.Total)}}
	return nil
}

// SummaryOf is run.json's summary of a YCSB summary and its text form.
func SummaryOf(sum *ycsbtext.Summary, text string) Summary {
	s := Summary{RunTimeMs: sum.RunTime.Milliseconds(), Operations: sum.Total.Ops, WarmupOps: sum.Warmup,
		Series: IntervalStats(sum.Total), Returns: Returns(sum.Total),
		Lines: strings.Split(strings.TrimRight(text, "\n"), "\n")}
	switch ms := sum.RunTime.Milliseconds(); {
	case ms > 0:
		s.Throughput = float64(sum.Total.Ops) * 1000 / float64(ms)
	case sum.RunTime > 0:
		// A sub-millisecond run: YCSB's formula divides by zero (the
		// text summary says Infinity, as YCSB's does); run.json, which
		// charts and workbooks read, keeps the rate over the real time.
		s.Throughput = float64(sum.Total.Ops) / sum.RunTime.Seconds()
	}
	return s
}

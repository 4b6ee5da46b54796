package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
)

// LocalMeta describes a single-host run.
type LocalMeta struct {
	RunID       string
	Version     string
	Protocol    uint32
	DB          string
	Phase       string
	Label       string
	Properties  map[string]string
	CommandLine []string
	Interval    time.Duration
	Exporter    string
	Threads     int
	Started     time.Time
	// CPU returns the process' CPU seconds so far (user + system); nil
	// leaves CPU at zero.
	CPU func() float64
	// Now is the clock for the end time (time.Now when nil).
	Now func() time.Time
}

// LocalWriter records a single-host run into a bundle directory while it
// runs: merged.hlog grows one line per series per interval, interval
// statistics accumulate in memory (a few hundred bytes each), and Finish
// writes run.json and summary.txt. The layout is the coordinator's with
// one agent (index 0, address "local").
type LocalWriter struct {
	dir  string
	meta LocalMeta

	mu      sync.Mutex
	f       *os.File
	hw      *hlog.Writer
	ivs     []Interval
	err     error
	cpu0    float64
	cpuLast float64
}

// NewLocal creates dir if needed and opens merged.hlog.
func NewLocal(dir string, meta LocalMeta) (*LocalWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, FileHlog))
	if err != nil {
		return nil, err
	}
	if meta.Now == nil {
		meta.Now = time.Now
	}
	if meta.Started.IsZero() {
		meta.Started = meta.Now()
	}
	w := &LocalWriter{dir: dir, meta: meta, f: f, hw: hlog.NewWriter(f, meta.Started)}
	w.cpu0 = w.cpu()
	w.cpuLast = w.cpu0
	return w, nil
}

func (w *LocalWriter) cpu() float64 {
	if w.meta.CPU == nil {
		return 0
	}
	return w.meta.CPU()
}

// OnInterval records one measured interval (engine.Observer).
func (w *LocalWriter) OnInterval(iv, _ *measurement.Interval, p engine.Progress) {
	if p.Warmup {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	cpu := w.cpu()
	ops := OpsPerSec(iv.Ops, iv.StartNs, iv.EndNs)
	stats := IntervalStats(iv)
	w.ivs = append(w.ivs, Interval{
		Seq: iv.Seq, StartUnixNs: iv.StartNs, EndUnixNs: iv.EndNs, Operations: iv.Ops, OpsPerSec: ops,
		Series: stats, Returns: Returns(iv),
		Agents: []AgentSlice{{Index: 0, Operations: iv.Ops, OpsPerSec: ops, CPUSeconds: cpu - w.cpuLast, LagNs: int64(p.Lag), Series: stats}},
	})
	w.cpuLast = cpu
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

// Outcome is how a run ended, for run.json.
type Outcome struct {
	Status     string
	Reasons    []string
	ExitCode   int
	ExitReason string
	Error      string
}

// Finish writes run.json and summary.txt (the YCSB text summary of sum).
func (w *LocalWriter) Finish(res *engine.Result, sum *ycsbtext.Summary, out Outcome) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	cerr := w.f.Close()
	if w.err != nil {
		return fmt.Errorf("writing %s: %w", FileHlog, w.err)
	}
	if cerr != nil {
		return cerr
	}
	var txt strings.Builder
	if err := ycsbtext.Export(&txt, ycsbtext.TextExporter, sum); err != nil {
		return err
	}
	host, _ := os.Hostname()
	cpu := w.cpu() - w.cpu0
	m := w.meta
	r := &Run{
		RunID: m.RunID, Tool: "ycsbctl", Version: m.Version, Protocol: m.Protocol,
		Status: out.Status, StatusReasons: out.Reasons, ExitCode: out.ExitCode, ExitReason: out.ExitReason, Error: out.Error,
		DB: m.DB, Phase: m.Phase, Label: m.Label, Mode: "single-host",
		StartedAt: m.Started, EndedAt: m.Now(),
		Config: Config{Properties: Redact(m.Properties), Agents: []string{"local"}, IntervalNs: int64(m.Interval),
			Exporter: m.Exporter, CommandLine: RedactArgs(m.CommandLine)},
		Intervals:   w.ivs,
		Environment: &Environment{Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()},
	}
	if res.StartNs > 0 {
		r.PlannedStart = time.Unix(0, res.StartNs)
	}
	agent := Agent{Index: 0, Address: "local", Hostname: host, Version: m.Version, Protocol: m.Protocol, State: "finished",
		Threads: m.Threads, Intervals: len(w.ivs), Operations: res.Total.Ops, CPUSeconds: cpu,
		Final: &Final{StartUnixNs: res.StartNs, EndUnixNs: res.EndNs, RunTimeMs: float64(res.RunTime) / 1e6, Operations: res.Total.Ops,
			WarmupOps: res.WarmupOps, Intervals: res.Intervals, Stopped: res.Stopped, CPUSeconds: cpu},
		Summary: IntervalStats(res.Total)}
	var skew int64
	agent.StartSkewNs = &skew
	r.Agents = []Agent{agent}
	r.Summary = Summary{RunTimeMs: sum.RunTime.Milliseconds(), Operations: sum.Total.Ops, WarmupOps: sum.Warmup,
		Series: IntervalStats(sum.Total), Returns: Returns(sum.Total),
		Lines: strings.Split(strings.TrimRight(txt.String(), "\n"), "\n")}
	if ms := sum.RunTime.Milliseconds(); ms > 0 {
		r.Summary.Throughput = float64(sum.Total.Ops) * 1000 / float64(ms)
	}
	if err := WriteSummary(w.dir, txt.String()); err != nil {
		return err
	}
	return WriteRun(w.dir, r)
}

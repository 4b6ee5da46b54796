// Package run is the vocabulary every part of a benchmark run shares, so
// that the engine, the coordinator, the agent and every sink speak about a
// run in the same terms: its phase, its progress, one interval as sinks
// receive it (Update), the state of each agent, the run's status, and the
// Sink interface itself.
//
// A single-host run is described exactly like a distributed one with one
// agent named "local": sinks never need to know which mode produced an
// interval.
package run

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// Phase is load (inserts) or run (transactions).
type Phase uint8

// The two YCSB phases.
const (
	Load Phase = iota
	Run
)

func (p Phase) String() string {
	if p == Load {
		return "load"
	}
	return "run"
}

// Progress describes where a run is when an interval is cut.
type Progress struct {
	Phase Phase
	// Warmup is true while warm-up operations are running; WarmupOps
	// counts them.
	Warmup    bool
	WarmupOps int64
	// Elapsed is the time since measuring started.
	Elapsed time.Duration
	// Budget is the measured-operation budget (0 = none).
	Budget int64
	// MaxExecution is the time limit (0 = none).
	MaxExecution time.Duration
	// Final marks the last interval of the run.
	Final bool
	// Lag is how far the slowest paced worker is behind its schedule.
	Lag time.Duration
}

// AgentState is where one load generator is in its run.
type AgentState string

// Agent states, as shown in the live view, /metrics and run.json.
const (
	AgentConnecting AgentState = "connecting"
	AgentPreparing  AgentState = "preparing"
	AgentReady      AgentState = "ready"
	AgentWarmup     AgentState = "warmup"
	AgentRunning    AgentState = "running"
	AgentFinished   AgentState = "finished"
	// AgentStopped: the agent ended its load by itself before its share
	// was done (a signal on its host, its lease, no coordinator at the
	// start) and handed over what it measured.
	AgentStopped AgentState = "stopped"
	AgentLost    AgentState = "lost"
	AgentFailed  AgentState = "failed"
	// AgentUnknown is only ever recorded, never live: a bundle rebuilt
	// from the spool of a process that was killed knows an agent's
	// intervals, not how it ended (its process, or the coordinator,
	// ended first). It is not in AgentStates, which are live states.
	AgentUnknown AgentState = "unknown"
)

// AgentStates lists every state, for metrics that expose one series per
// state.
var AgentStates = []AgentState{AgentConnecting, AgentPreparing, AgentReady, AgentWarmup, AgentRunning, AgentFinished, AgentStopped, AgentLost, AgentFailed}

// Status is how a whole run ended, as recorded in run.json.
type Status string

// Run statuses: the one table that `ycsbctl --help` and
// docs/exit-codes.md render (Statuses). Adding a status is adding a row
// here.
var (
	StatusComplete = defineStatus("complete", "every agent's share was measured for the whole run")
	StatusPartial  = defineStatus("partial", "some agent's share was not measured for the whole run (an agent was lost and the run continued without it)")
	StatusAborted  = defineStatus("aborted", "the run was cut short: operations in flight cancelled by the operator's abort, agent loss under the abort policy, a failure")
	StatusStopped  = defineStatus("stopped", "stopped gracefully before its end (the operator, or its stdout closed): every operation in flight finished and was measured; the results measure a shorter run")
	StatusStalled  = defineStatus("coordinator-stalled", "the coordinator itself did not run (paused, starved of CPU) for longer than its agents' lease: they stopped their load on their lease, as they must, and what they measured until then is counted")
)

// StatusInfo is one row of the statuses' table.
type StatusInfo struct {
	Status  Status
	Meaning string
}

var statuses []StatusInfo

func defineStatus(name, meaning string) Status {
	for _, r := range statuses {
		if string(r.Status) == name {
			panic("run: status " + name + " defined twice")
		}
	}
	statuses = append(statuses, StatusInfo{Status: Status(name), Meaning: meaning})
	return Status(name)
}

// Statuses returns every status run.json can hold, in order.
func Statuses() []StatusInfo { return append([]StatusInfo(nil), statuses...) }

// LocalAgent is the agent name of a single-host run.
const LocalAgent = "local"

// Agent is what is known about one load generator after an interval.
type Agent struct {
	Index int
	// Address is the agent's address as given to --agents ("local" on a
	// single host); Hostname the name the agent reported.
	Address  string
	Hostname string
	Version  string
	State    AgentState
	// ClockOffset (agent minus coordinator), round-trip time and start
	// skew; zero on a single host.
	ClockOffset time.Duration
	RTT         time.Duration
	StartSkew   time.Duration
	// Ops counts operations received so far; OpsPerSec and CPUSeconds
	// are for the latest interval only.
	Ops        int64
	OpsPerSec  float64
	CPUSeconds float64
	Lag        time.Duration
	LastSeq    int64
	Reconnects int
	Error      string
}

// Update is one interval of a run as every sink receives it.
type Update struct {
	RunID string
	// Interval is what was measured in this interval (the merge of every
	// agent's), Cumulative everything measured so far. Times are Unix ns
	// on the clock of the process that presents the run.
	Interval   *measurement.Interval
	Cumulative *measurement.Interval
	Progress   Progress
	// Agents describes every load generator; AgentIntervals holds each
	// agent's own part of Interval by index (nil where none arrived).
	Agents         []Agent
	AgentIntervals []*measurement.Interval
	// AgentRuntime holds, by agent index, each agent's runtime sample
	// for this interval (ycsbctl.trackruntime in a distributed run); nil
	// where an agent sent none. A single host leaves it nil: its session
	// samples its own process.
	AgentRuntime []*RuntimeSample
	// Telemetry holds, by agent index, what each load generator's host,
	// its database processes and the load generator itself did in the
	// interval (ycsbctl.telemetry); nil where an agent sent none.
	Telemetry []*telemetry.Interval
}

// RuntimeSample is one reading of a load generator's Go runtime, the
// counterpart of YCSB's JVM measurements (ycsbctl.trackruntime, alias
// measurement.trackjvm).
type RuntimeSample struct {
	Goroutines  int64
	HeapInUseMB int64
	// GCs and GCPause are the collections and their total pause since the
	// previous sample.
	GCs     int64
	GCPause time.Duration
	// TotalGCs and TotalGCPause are counted since tracking began.
	TotalGCs     int64
	TotalGCPause time.Duration
}

// Sink receives every interval of a run, one call at a time, in order. A
// sink must not block for long and must not modify the update (it may keep
// it: nothing in it is reused).
type Sink interface {
	OnInterval(u *Update)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(u *Update)

// OnInterval calls f.
func (f SinkFunc) OnInterval(u *Update) { f(u) }

// Sinks fans one update out to several sinks, in order.
type Sinks []Sink

// OnInterval calls every sink.
func (s Sinks) OnInterval(u *Update) {
	for _, k := range s {
		k.OnInterval(u)
	}
}

// NewID returns a run id: the UTC start time and a random suffix, so ids
// sort by time and never collide across hosts.
func NewID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Share splits n into k parts and returns part i: the first n%k parts get
// one more, as YCSB splits operations over threads. Engines split over
// workers and coordinators over agents with the same rule.
func Share(n int64, k, i int) int64 {
	if n <= 0 || k <= 0 {
		return 0
	}
	s := n / int64(k)
	if int64(i) < n%int64(k) {
		s++
	}
	return s
}

// SliverFraction is how short, relative to the status interval, a trailing
// interval must be to count as a sliver (see IsSliver).
const SliverFraction = 0.25

// IsSliver reports whether an interval is the short remainder a run leaves
// at its end: a few milliseconds after the last full interval. Its rate,
// computed over so little time, reads as a collapse or a spike on a chart;
// sinks that draw or export rates merge it into the previous interval (see
// MergeTrailingSliver) instead of plotting it as a full one.
func IsSliver(startNs, endNs int64, interval time.Duration) bool {
	if interval <= 0 {
		return false
	}
	return float64(endNs-startNs) < SliverFraction*float64(interval)
}

// Span is the extent and operation count of one interval, the part of it
// that rates are computed from.
type Span struct {
	StartNs, EndNs int64
	Ops            int64
}

// Rate is the span's operations per second (0 for an empty span).
func (s Span) Rate() float64 {
	if s.EndNs <= s.StartNs {
		return 0
	}
	return float64(s.Ops) / (float64(s.EndNs-s.StartNs) / 1e9)
}

// MergeTrailingSliver returns spans with a trailing sliver (IsSliver)
// folded into the span before it, so the last rate of a chart is the rate
// over the last full interval plus the remainder. The second result says
// whether a sliver was merged. spans is not modified.
func MergeTrailingSliver(spans []Span, interval time.Duration) ([]Span, bool) {
	n := len(spans)
	if n < 2 || !IsSliver(spans[n-1].StartNs, spans[n-1].EndNs, interval) {
		return spans, false
	}
	out := append([]Span(nil), spans[:n-1]...)
	last := &out[n-2]
	last.EndNs = spans[n-1].EndNs
	last.Ops += spans[n-1].Ops
	return out, true
}

// Info describes a run before it starts: what sinks and the run bundle
// need to know about its source.
type Info struct {
	RunID string
	// Mode is "single-host" or "distributed".
	Mode string
	// Command names what runs, for the live view: "run", "coordinator load".
	Command string
	// Agents are the load generators' addresses (["local"] on one host).
	Agents []string
	// Threads is the worker count per agent.
	Threads int
	// Started is when the run began preparing.
	Started time.Time
}

// Modes of a run.
const (
	ModeSingleHost  = "single-host"
	ModeDistributed = "distributed"
)

// Outcome is what a finished run measured and how it ended, before the
// presenting session adds its own verdicts (operator interruption, error
// rate, output failures).
type Outcome struct {
	// RunTime is the measured window; Total everything measured in it.
	RunTime   time.Duration
	Total     *measurement.Interval
	WarmupOps int64
	Status    Status
	// Reasons explain a status other than complete, one line each; Notes
	// are further remarks for the summary (re-attached agents, ...).
	Reasons []string
	Notes   []string
	// Err ends the run with a failure; it carries its exit code
	// (exitcode.Error), Failure when it carries none.
	Err error
	// NeverStarted says the run failed before any load was sent (an
	// agent refused or failed to prepare): there is nothing to summarise.
	NeverStarted bool
}

// SelfView describes a process' own engine as the one agent of its
// updates: a single host ("local"), or an agent daemon exposing its own
// metrics. It is used from the engine's reporter goroutine only.
type SelfView struct {
	Name, Hostname string
	ops            int64
	cpuLast        float64
}

// Begin sets the CPU reading the first interval's CPU is counted from.
func (v *SelfView) Begin(cpuSeconds float64) { v.cpuLast = cpuSeconds }

// Describe fills u.Agents and u.AgentIntervals from the engine's interval;
// cpuSeconds is the process' CPU reading now.
func (v *SelfView) Describe(u *Update, cpuSeconds float64) {
	a := Agent{Index: 0, Address: v.Name, Hostname: v.Hostname, State: AgentRunning, Lag: u.Progress.Lag}
	switch {
	case u.Progress.Warmup:
		a.State = AgentWarmup
	case u.Progress.Final:
		a.State = AgentFinished
	}
	if !u.Progress.Warmup && u.Interval != nil {
		iv := u.Interval
		v.ops += iv.Ops
		a.Ops, a.LastSeq = v.ops, iv.Seq
		a.CPUSeconds = max(cpuSeconds-v.cpuLast, 0)
		a.OpsPerSec = Span{StartNs: iv.StartNs, EndNs: iv.EndNs, Ops: iv.Ops}.Rate()
		u.AgentIntervals = []*measurement.Interval{iv}
	}
	v.cpuLast = cpuSeconds
	u.Agents = []Agent{a}
}

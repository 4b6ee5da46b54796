// Package bundle is the run's record: the bundle directory --results
// fills, and the one builder that makes it. A bundle is run.json
// (configuration, agents, per-interval merged and per-agent statistics,
// final summary, status), summary.txt (the YCSB text summary) and
// merged.hlog (an HdrHistogram interval log whose tags name the series and
// the agent: "READ.all" for the merge, "READ.agent-0" for agent 0), and
// when the load generators sampled their hosts, telemetry.csv (their raw
// 1 s samples; run.json's telemetry section holds the per-interval
// summaries and the verdicts drawn from them).
//
// Both modes record a run the same way (a single host is a run with one
// agent, index 0, address "local"): a Recorder writes the run's metadata
// and then every agent's interval records to a spool as they are accepted;
// Build turns the spool, and the run's ending when there is one, into the
// bundle, at the end of the run or, after a crash, from `ycsbctl report
// DIR` (Recover).
package bundle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/environ"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/redact"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// File names inside a bundle directory.
const (
	FileRunJSON = "run.json"
	FileSummary = "summary.txt"
	FileHlog    = "merged.hlog"
)

// Tag suffixes in merged.hlog.
const (
	TagAll         = "all"
	TagAgentPrefix = "agent-"
)

// Tag returns the merged.hlog tag of a series for one agent (index >= 0)
// or for the merge (index < 0).
func Tag(s measurement.Series, agent int) string {
	if agent < 0 {
		return s.Name() + "." + TagAll
	}
	return fmt.Sprintf("%s.%s%d", s.Name(), TagAgentPrefix, agent)
}

// Run is run.json.
type Run struct {
	RunID         string     `json:"run_id"`
	Tool          string     `json:"tool"`
	Version       string     `json:"version"`
	Protocol      uint32     `json:"protocol"`
	Status        run.Status `json:"status"`
	StatusReasons []string   `json:"status_reasons,omitempty"`
	ExitCode      int        `json:"exit_code"`
	ExitReason    string     `json:"exit_reason"`
	Error         string     `json:"error,omitempty"`
	DB            string     `json:"db"`
	Phase         string     `json:"phase"`
	Label         string     `json:"label,omitempty"`
	// Mode is "single-host" or "distributed" (empty in bundles written
	// before the field existed, which were all distributed).
	Mode         string    `json:"mode,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	EndedAt      time.Time `json:"ended_at"`
	PlannedStart time.Time `json:"planned_start"`
	Config       Config    `json:"config"`
	// Plan is the coordinator's work split; nil on a single host.
	Plan      any        `json:"plan"`
	Agents    []Agent    `json:"agents"`
	Intervals []Interval `json:"intervals"`
	Summary   Summary    `json:"summary"`
	// AgentPropertyDifferences lists the properties the agents did not
	// all run with (their own agent -p), each agent's value beside the
	// others'; absent when they all ran with the same.
	AgentPropertyDifferences []PropertyDifference `json:"agent_property_differences,omitempty"`
	// Environment describes what the run ran on.
	Environment *Environment `json:"environment,omitempty"`
	// Suite places a suite step's run in its suite, with the fingerprint
	// of its configuration that --resume compares (nil outside suites).
	Suite *SuiteStep `json:"suite,omitempty"`
	// Telemetry is what every load generator's host did, per interval
	// (absent when telemetry was off).
	Telemetry *telemetry.Record `json:"telemetry,omitempty"`
	// Coordinator self-measurement: CPU-side cost of merging.
	MergeSeconds float64 `json:"coordinator_merge_seconds"`
	LateRecords  int     `json:"late_records"`
	// SpoolDamage is what could not be read of the spool the bundle was
	// built from (nil: all of it was read).
	SpoolDamage *SpoolDamage `json:"spool_damage,omitempty"`
}

// Config is the configuration, secrets redacted.
type Config struct {
	Properties       map[string]string `json:"properties"`
	Agents           []string          `json:"agents"`
	OnAgentLoss      string            `json:"on_agent_loss"`
	IntervalNs       int64             `json:"interval_ns"`
	TLS              bool              `json:"tls"`
	Token            bool              `json:"token"`
	MaxClockOffsetNs int64             `json:"max_clock_offset_ns"`
	AgentTimeoutNs   int64             `json:"agent_timeout_ns"`
	Exporter         string            `json:"exporter"`
	// CommandLine is the command as typed.
	CommandLine []string `json:"command_line,omitempty"`
	// Percentiles are those the summary reports (hdrhistogram.percentiles).
	Percentiles []float64 `json:"percentiles,omitempty"`
}

// Environment is what the run ran on, a study's appendix: the machine
// that ran the command (Hostname to GoVersion), ycsbctl's version and the
// exact command, every load-generating host (the single host, or each
// agent's, from its Hello reply), and the database as its adapter read it
// from the server.
type Environment struct {
	Hostname  string `json:"hostname"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	Version   string `json:"ycsbctl_version,omitempty"`
	// Command is the command as typed (a suite's for its steps), secrets
	// redacted.
	Command  []string          `json:"command,omitempty"`
	Hosts    []environ.Host    `json:"hosts,omitempty"`
	Database *environ.Database `json:"database,omitempty"`
}

// SuiteStep is a suite step's place and configuration.
type SuiteStep struct {
	Suite    string `json:"suite"`
	Database string `json:"database"`
	// Step is "NN-name"; Sweep its swept values in order.
	Step  string       `json:"step"`
	Sweep []SweepValue `json:"sweep,omitempty"`
	// Fingerprint is a hash of Definition and of the run's properties
	// (Config.Properties, less the ones that only say where output goes):
	// --resume reuses the bundle only when the planned step has the same.
	Fingerprint string `json:"fingerprint"`
	// Definition is what besides the properties the fingerprint covers:
	// ycsbctl's version, the adapter, the agents, the step's kind and
	// workload and how it is run.
	Definition map[string]string `json:"definition"`
}

// SweepValue is one swept key's value.
type SweepValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Agent is one agent in run.json. Times are on the coordinator's clock;
// offsets are agent minus coordinator.
type Agent struct {
	Index         int            `json:"index"`
	Address       string         `json:"address"`
	Hostname      string         `json:"hostname"`
	Version       string         `json:"version"`
	Protocol      uint32         `json:"protocol"`
	State         run.AgentState `json:"state"`
	Error         string         `json:"error,omitempty"`
	ClockOffsetNs int64          `json:"clock_offset_ns"`
	RTTNs         int64          `json:"rtt_ns"`
	StartSkewNs   *int64         `json:"start_skew_ns"`
	Threads       int            `json:"threads"`
	Reconnects    int            `json:"reconnects"`
	Intervals     int            `json:"intervals_received"`
	Operations    int64          `json:"operations_received"`
	CPUSeconds    float64        `json:"cpu_seconds"`
	// MissingIntervals lists the run's intervals this agent's share was
	// not measured in ("7-16", "3, 5"): empty when it was measured for
	// the whole run.
	MissingIntervals string        `json:"missing_intervals,omitempty"`
	Final            *Final        `json:"final,omitempty"`
	Summary          []SeriesStats `json:"summary,omitempty"`
	// Properties are the properties the agent added to every run (its own
	// `agent -p`: per-host settings such as hosts), values redacted.
	Properties map[string]string `json:"properties,omitempty"`
	// States is the agent's life in the run as the coordinator saw it,
	// one entry per change of state.
	States []StateChange `json:"states,omitempty"`
}

// StateChange is one change of an agent's state: the state entered (the
// coordinator's own names: connecting, preparing, ready, running,
// finished, stopped, lost, gone, failed), when (milliseconds since the
// coordinator began) and why.
type StateChange struct {
	State string  `json:"state"`
	AtMs  float64 `json:"at_ms"`
	Why   string  `json:"why,omitempty"`
}

// Final is an agent's own end-of-run account.
type Final struct {
	StartUnixNs int64   `json:"start_unix_ns"`
	EndUnixNs   int64   `json:"end_unix_ns"`
	RunTimeMs   float64 `json:"runtime_ms"`
	Operations  int64   `json:"operations"`
	WarmupOps   int64   `json:"warmup_ops"`
	Intervals   int64   `json:"intervals"`
	Stopped     string  `json:"stopped,omitempty"`
	CPUSeconds  float64 `json:"cpu_seconds"`
}

// SeriesStats are one series' statistics, latencies in µs (YCSB's unit).
type SeriesStats struct {
	Series string  `json:"series"`
	Count  int64   `json:"count"`
	MeanUs float64 `json:"mean_us"`
	MinUs  int64   `json:"min_us"`
	P50Us  int64   `json:"p50_us"`
	P95Us  int64   `json:"p95_us"`
	P99Us  int64   `json:"p99_us"`
	P999Us int64   `json:"p99_9_us"`
	MaxUs  int64   `json:"max_us"`
}

// Interval is one interval: the merged view and each agent's.
type Interval struct {
	Seq         int64         `json:"seq"`
	StartUnixNs int64         `json:"start_unix_ns"`
	EndUnixNs   int64         `json:"end_unix_ns"`
	Operations  int64         `json:"operations"`
	OpsPerSec   float64       `json:"ops_per_sec"`
	Series      []SeriesStats `json:"series"`
	Agents      []AgentSlice  `json:"agents"`
	// Returns counts return codes by operation and status (single-host
	// bundles; absent from older coordinator bundles).
	Returns map[string]map[string]int64 `json:"returns,omitempty"`
}

// AgentSlice is one agent's part of an interval.
type AgentSlice struct {
	Index      int           `json:"index"`
	Operations int64         `json:"operations"`
	OpsPerSec  float64       `json:"ops_per_sec"`
	CPUSeconds float64       `json:"cpu_seconds"`
	LagNs      int64         `json:"lag_ns"`
	Series     []SeriesStats `json:"series"`
}

// Summary is the final summary.
type Summary struct {
	RunTimeMs  int64                       `json:"runtime_ms"`
	Throughput float64                     `json:"throughput_ops_per_sec"`
	Operations int64                       `json:"operations"`
	WarmupOps  int64                       `json:"warmup_operations"`
	Series     []SeriesStats               `json:"series"`
	Returns    map[string]map[string]int64 `json:"returns"`
	Lines      []string                    `json:"ycsb_text"`
}

// Stats computes a series' statistics from a histogram in nanoseconds.
func Stats(name string, h *hdrhistogram.Histogram) SeriesStats {
	if h == nil || h.TotalCount() == 0 {
		return SeriesStats{Series: name}
	}
	d := measurement.DigestOf(h, 50, 95, 99, 99.9)
	v := d.Values
	return SeriesStats{Series: name, Count: d.Count, MeanUs: d.Mean / 1000, MinUs: d.Min / 1000,
		P50Us: v[0] / 1000, P95Us: v[1] / 1000, P99Us: v[2] / 1000, P999Us: v[3] / 1000, MaxUs: d.Max / 1000}
}

// IntervalStats returns the statistics of every non-empty series of iv, in
// series order.
func IntervalStats(iv *measurement.Interval) []SeriesStats {
	var out []SeriesStats
	for s, h := range iv.Hist {
		if h != nil && h.TotalCount() > 0 {
			out = append(out, Stats(measurement.Series(s).Name(), h))
		}
	}
	return out
}

// Returns maps an interval's return counts by operation and status name.
func Returns(iv *measurement.Interval) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for op := range iv.Returns {
		for st, n := range iv.Returns[op] {
			if n == 0 {
				continue
			}
			o := measurement.Op(op).String()
			if out[o] == nil {
				out[o] = map[string]int64{}
			}
			out[o][adapters.Status(st).String()] = n
		}
	}
	return out
}

// OpsPerSec is ops over the window [startNs, endNs].
func OpsPerSec(ops, startNs, endNs int64) float64 {
	if endNs <= startNs {
		return 0
	}
	return float64(ops) / (float64(endNs-startNs) / 1e9)
}

// Redact returns the properties with secrets hidden, by the rules of
// package redact (which every sink shares).
func Redact(props map[string]string) map[string]string {
	return redact.Properties(props)
}

// redacted returns a copy of r with secrets hidden, whatever the caller
// passed (the redaction is idempotent): run.json and the spool's header
// never depend on every writer remembering.
func redacted(r *Run) *Run {
	safe := *r
	safe.Config.Properties = redact.Properties(r.Config.Properties)
	safe.Config.CommandLine = redact.Args(r.Config.CommandLine)
	safe.Error = redact.Text(r.Error)
	safe.ExitReason = redact.Text(r.ExitReason)
	if e := r.Environment; e != nil {
		env := *e
		env.Command = redact.Args(e.Command)
		if e.Database != nil {
			db := *e.Database
			db.Error = redact.Text(db.Error)
			env.Database = &db
		}
		safe.Environment = &env
	}
	if r.Agents != nil {
		safe.Agents = make([]Agent, len(r.Agents))
		for i, a := range r.Agents {
			a.Error = redact.Text(a.Error)
			a.Properties = redact.Properties(a.Properties)
			safe.Agents[i] = a
		}
	}
	return &safe
}

// WriteRun writes run.json, secrets redacted, atomically (package
// outfile), so a crash never leaves a truncated file that tools would
// misread.
func WriteRun(dir string, r *Run) error {
	b, err := json.MarshalIndent(redacted(r), "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(filepath.Join(dir, FileRunJSON), append(b, '\n'), 0o644)
}

// WriteSummary writes summary.txt.
func WriteSummary(dir string, text string) error {
	return outfile.Write(filepath.Join(dir, FileSummary), []byte(text), 0o644)
}

// Bundle is a bundle read back from disk.
type Bundle struct {
	Dir     string
	Run     *Run
	Summary string
}

// Read loads run.json and summary.txt from dir (a bundle directory, or a
// run.json path). merged.hlog is read on demand by Histograms.
func Read(dir string) (*Bundle, error) {
	if strings.HasSuffix(dir, ".json") {
		dir = filepath.Dir(dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileRunJSON))
	if err != nil {
		return nil, fmt.Errorf("%s: not a run bundle: %w", dir, err)
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, FileRunJSON), err)
	}
	out := &Bundle{Dir: dir, Run: &r}
	if s, err := os.ReadFile(filepath.Join(dir, FileSummary)); err == nil {
		out.Summary = string(s)
	} else if len(r.Summary.Lines) > 0 {
		out.Summary = strings.Join(r.Summary.Lines, "\n") + "\n"
	}
	return out, nil
}

// Name is a short human name for the bundle: its label, else the
// directory's base name.
func (b *Bundle) Name() string {
	if b.Run.Label != "" {
		return b.Run.Label
	}
	return filepath.Base(filepath.Clean(b.Dir))
}

// Workload names the workload: the workload files given with -P when the
// command line is known, else the properties' workload class.
func (b *Bundle) Workload() string {
	var names []string
	cl := b.Run.Config.CommandLine
	for i := 0; i < len(cl)-1; i++ {
		if cl[i] == "-P" || cl[i] == "--P" {
			names = append(names, filepath.Base(cl[i+1]))
		}
	}
	if len(names) > 0 {
		return strings.Join(names, "+")
	}
	if w := b.Run.Config.Properties["ycsbctl.workloadname"]; w != "" {
		return w
	}
	return ""
}

// RedactArgs returns a command line with secrets hidden, by the rules of
// package redact. Command lines are echoed on stderr and stored in
// run.json and reports.
func RedactArgs(args []string) []string {
	return redact.Args(args)
}

// MainSeries is the series that stands for the run in comparisons (the
// compare page, the workbook's Periods): the service time of the
// operation the workload's mix weights most (workload.Config's
// MainOperation; INSERT in a load), so that a step shows the same series
// for every sweep value and database. When the recorded properties do not
// parse, it is the most frequent successful series.
func (r *Run) MainSeries() string {
	if r.Phase == "load" {
		return measurement.SeriesOf(measurement.Insert, measurement.Service, false).Name()
	}
	if cfg, err := workload.ParseConfig(properties.FromMap(r.Config.Properties)); err == nil {
		return measurement.SeriesOf(cfg.MainOperation(), measurement.Service, false).Name()
	}
	best, n := "", int64(-1)
	for _, s := range r.Summary.Series {
		ps, ok := measurement.ParseSeries(s.Series)
		if !ok || ps.Failed() || ps.Kind() != measurement.Service || ps.Op() == measurement.Cleanup {
			continue
		}
		if s.Count > n {
			best, n = s.Series, s.Count
		}
	}
	return best
}

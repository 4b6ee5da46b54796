// Package spec turns a YCSB command line (adapter name, merged properties,
// phase) into one typed, validated run specification, and a specification
// into a prepared engine run. It is the one place where properties become
// settings: every process parses its properties once (Parse), and single
// hosts, coordinators and agents all configure runs through it, so they
// cannot drift apart.
package spec

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// Client-level property names (YCSB's Client plus ycsbctl's additions).
const (
	PropThreads         = "threadcount"
	PropTarget          = "target"
	PropStatusInterval  = "status.interval"
	PropMaxExecution    = "maxexecutiontime"
	PropMeasurementMode = "measurement.interval"
	PropMeasurementType = "measurementtype"
	PropWarmupTime      = "warmuptime"
	PropWarmupOps       = "warmupops"
	PropWorkload        = "workload"
	PropDB              = "db"
	PropPercentiles     = "hdrhistogram.percentiles"
	PropLabel           = "label"
)

// Settings are the validated client-level settings of a run.
type Settings struct {
	Phase          run.Phase
	Threads        int
	Target         float64
	OpCount        int64
	MaxExecution   time.Duration
	WarmupOps      int64
	WarmupTime     time.Duration
	StatusInterval time.Duration
	Mode           measurement.Mode
	ModeName       string
	Percentiles    []float64
	MeasurementTyp string
}

// ParseSettings validates the client-level properties for a phase.
func ParseSettings(p *properties.Properties, phase run.Phase) (*Settings, error) {
	cfg, err := workload.ParseConfig(p)
	if err != nil {
		return nil, err
	}
	return parseSettings(p, phase, cfg)
}

// parseSettings validates the client-level properties, with the
// workload's configuration already parsed.
func parseSettings(p *properties.Properties, phase run.Phase, cfg *workload.Config) (*Settings, error) {
	s := &Settings{Phase: phase}
	th, err := p.Int64(PropThreads, 1)
	if err != nil {
		return nil, err
	}
	if maxTh := MaxThreads(); th < 1 || th > maxTh {
		return nil, &properties.Error{Property: PropThreads, Value: p.String(PropThreads, ""),
			Expected: fmt.Sprintf("a thread count from 1 to %d (each thread needs about %d KiB and this host has %d MiB available)",
				maxTh, threadBytes>>10, availableMemory()>>20)}
	}
	s.Threads = int(th)
	if err := checkRecordMemory(cfg, s.Threads, phase); err != nil {
		return nil, err
	}
	if s.Target, err = rangedFloat(p, PropTarget, 0, MinTarget, MaxTarget, "unthrottled", "ops/s"); err != nil {
		return nil, err
	}
	si, err := rangedFloat(p, PropStatusInterval, 10, minStatusSecs, maxDurationSecs, "", "seconds")
	if err != nil {
		return nil, err
	}
	s.StatusInterval = seconds(si)
	me, err := p.NonNegInt64(PropMaxExecution, 0)
	if err != nil {
		return nil, err
	}
	if me > maxDurationSecs {
		return nil, &properties.Error{Property: PropMaxExecution, Value: p.String(PropMaxExecution, ""),
			Expected: fmt.Sprintf("whole seconds from 0 to %d (0 = no limit)", int64(maxDurationSecs))}
	}
	s.MaxExecution = time.Duration(me) * time.Second
	wt, err := rangedFloat(p, PropWarmupTime, 0, 0, maxDurationSecs, "no warm-up", "seconds")
	if err != nil {
		return nil, err
	}
	s.WarmupTime = seconds(wt)
	s.WarmupOps, err = p.NonNegInt64(PropWarmupOps, 0)
	if err != nil {
		return nil, err
	}
	s.ModeName = p.String(PropMeasurementMode, "op")
	mode, ok := measurement.ParseMode(s.ModeName)
	if !ok {
		return nil, &properties.Error{Property: PropMeasurementMode, Value: s.ModeName, Expected: "op, intended or both"}
	}
	s.Mode = mode
	s.MeasurementTyp, err = p.OneOf(PropMeasurementType, "hdrhistogram", ycsbtext.KindNames()...)
	if err != nil {
		return nil, err
	}
	s.Percentiles, err = ParsePercentiles(p.String(PropPercentiles, "50,95,99"))
	if err != nil {
		return nil, err
	}
	if w := p.String(PropWorkload, "site.ycsb.workloads.CoreWorkload"); w != "site.ycsb.workloads.CoreWorkload" && w != "core" {
		return nil, &properties.Error{Property: PropWorkload, Value: w, Expected: "site.ycsb.workloads.CoreWorkload (the only workload class ycsbctl implements)"}
	}
	if phase == run.Load {
		// YCSB's load phase inserts insertcount records (default:
		// recordcount - insertstart).
		s.OpCount = cfg.InsertCount
		if cfg.RecordCount == 1<<63-1 && !p.Has(workload.PropInsertCount) && s.MaxExecution == 0 {
			return nil, &properties.Error{Property: workload.PropRecordCount, Expected: "a positive record count for the load phase"}
		}
		// A count of 0 is the engine's "no limit": an untimed load of
		// no records would insert past recordcount until stopped.
		if s.OpCount == 0 && s.MaxExecution == 0 {
			if p.Has(workload.PropInsertCount) {
				return nil, &properties.Error{Property: workload.PropInsertCount, Value: p.String(workload.PropInsertCount, ""),
					Expected: "a positive number of records to load, or 0 together with maxexecutiontime > 0 for a timed load"}
			}
			return nil, &properties.Error{Property: workload.PropInsertStart, Value: p.String(workload.PropInsertStart, ""),
				Expected: fmt.Sprintf("less than recordcount (%d): a load inserts recordcount - insertstart records, and that leaves none", cfg.RecordCount)}
		}
	} else {
		s.OpCount, err = p.NonNegInt64(workload.PropOperationCount, 0)
		if err != nil {
			return nil, err
		}
		if s.OpCount == 0 && s.MaxExecution == 0 {
			return nil, &properties.Error{Property: workload.PropOperationCount, Value: p.String(workload.PropOperationCount, "0"),
				Expected: "a positive count, or 0 together with maxexecutiontime > 0 for a timed run"}
		}
	}
	return s, nil
}

// Ranges of the client's durations and rates. Beyond them a value either
// overflows the nanosecond clock (a time limit that stops at once, a
// warm-up that silently vanishes) or means nothing useful (a status line
// every nanosecond, a target of one operation per century).
const (
	// maxDurationSecs is ten years: far beyond any benchmark, far below
	// the 292 years an int64 of nanoseconds holds.
	maxDurationSecs = 10 * 365 * 24 * 3600.0
	minStatusSecs   = 0.01
	// MinTarget is one operation per 1000 s; MaxTarget a billion ops/s.
	MinTarget = 0.001
	MaxTarget = 1e9
	// threadBytes is what one worker costs: its histograms (HDR, three
	// significant digits, per series), buffers and goroutine stack.
	threadBytes = 300 << 10
	// maxThreadsCap bounds the thread count however large the host.
	maxThreadsCap = 100000
)

// rangedFloat reads a number that must be within [lo, hi], or 0 when
// zero is set: what 0 means ("unthrottled"), said in the refusal.
func rangedFloat(p *properties.Properties, key string, def, lo, hi float64, zero, unit string) (float64, error) {
	zeroOK := zero != ""
	v, err := p.Float64(key, def)
	if err != nil {
		return 0, err
	}
	if (v == 0 && zeroOK) || (v >= lo && v <= hi) {
		return v, nil
	}
	exp := fmt.Sprintf("%s from %g to %g", unit, lo, hi)
	if zeroOK && lo > 0 {
		exp = "0 (" + zero + "), or " + exp
	}
	return 0, &properties.Error{Property: key, Value: p.String(key, ""), Expected: exp}
}

func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// MaxThreads is the most worker threads this host's memory can hold: half
// of the memory available now, at threadBytes each, and never more than
// maxThreadsCap.
func MaxThreads() int64 {
	n := availableMemory() / 2 / threadBytes
	return max(min(n, maxThreadsCap), 1)
}

// availableMemory reads MemAvailable from /proc/meminfo; where it cannot,
// it assumes 4 GiB.
func availableMemory() int64 {
	const fallback = 4 << 30
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return fallback
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemAvailable:" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return fallback
}

// ParsePercentiles parses hdrhistogram.percentiles.
func ParsePercentiles(v string) ([]float64, error) {
	var out []float64
	start := 0
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == ',' {
			f := trim(v[start:i])
			start = i + 1
			if f == "" {
				continue
			}
			x, err := strconv.ParseFloat(f, 64)
			if err != nil || x <= 0 || x > 100 {
				return nil, &properties.Error{Property: PropPercentiles, Value: v, Expected: "a comma list of percentiles in (0, 100]"}
			}
			out = append(out, x)
		}
	}
	return out, nil
}

func trim(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// Output and operator properties (YCSB's names where YCSB has them).
const (
	PropExporter         = "exporter"
	PropExportFile       = "exportfile"
	PropHdrFileOutput    = "hdrhistogram.fileoutput"
	PropHdrOutputPath    = "hdrhistogram.output.path"
	PropHistogramVerbose = "measurement.histogram.verbose"
	PropTimeseriesGran   = "timeseries.granularity"
	PropStatus           = "status"
	PropMaxErrorRate     = "ycsbctl.maxerrorrate"
	// PropTUI turns the live terminal view off (false); it is only ever
	// on when stdout is a terminal.
	PropTUI = "ycsbctl.tui"
	// PropMetricsAddr serves Prometheus metrics on this address.
	PropMetricsAddr = "ycsbctl.metrics.addr"
	// PropMetricsLinger keeps /metrics up this many seconds after the
	// run, so the last interval is scraped before the process exits.
	PropMetricsLinger = "ycsbctl.metrics.linger"
	// PropMetricsStartDelay holds the start of the load this many seconds
	// after the run's series are exposed at zero, so that a scraper sees
	// the zeros before the first operation (increase() only counts growth
	// it has seen). The coordinator adds it to its lockstep start.
	PropMetricsStartDelay = "ycsbctl.metrics.startdelay"
	// PropResults writes a run bundle (run.json, summary.txt,
	// merged.hlog) to this directory.
	PropResults = "ycsbctl.results"
	// PropOverwrite lets a run replace the bundle already in its results
	// directory (--overwrite); without it such a directory is refused.
	PropOverwrite = "ycsbctl.results.overwrite"
	// PropStopGrace bounds, in seconds, how long a graceful stop waits
	// for calls in flight before it aborts them.
	PropStopGrace = "ycsbctl.stopgrace"
)

// DefaultStopGrace is PropStopGrace's default.
const DefaultStopGrace = 10 * time.Second

// NotMeasured reports whether a property leaves what a complete run
// measures unchanged: it only says where or how results are shown (the
// bundle's directory and its overwrite, the live view, /metrics, status
// lines, the summary's format and file, the HdrHistogram file log) or how
// a stopped run ends. A suite's step fingerprint leaves these out.
func NotMeasured(key string) bool {
	switch key {
	case PropResults, PropOverwrite, PropStopGrace, PropTUI, PropMetricsAddr, PropMetricsLinger, PropMetricsStartDelay, PropStatus, PropLabel,
		PropExporter, PropExportFile, PropHdrFileOutput, PropHdrOutputPath, PropHistogramVerbose:
		return true
	}
	return false
}

// Output is how a run presents its results.
type Output struct {
	// Exporter is a YCSB exporter class; ExportFile the file the final
	// summary goes to (stdout when empty).
	Exporter   string
	ExportFile string
	// HlogPath is the tagged HdrHistogram interval log
	// (hdrhistogram.fileoutput), empty when off.
	HlogPath string
	// Verbose prints every histogram bucket in the summary.
	Verbose bool
	// Timeseries is measurementtype=timeseries: intervals are cut at
	// Granularity and averages printed per bucket.
	Timeseries  bool
	Granularity time.Duration
	// MaxErrorRate is the share of failed operations above which the run
	// exits 5; negative when unset.
	MaxErrorRate float64
	// Status prints YCSB status lines (-s) with Label in front (-l).
	Status bool
	Label  string
	// ResultsDir receives the run bundle; empty for none. Overwrite
	// replaces a bundle already there.
	ResultsDir string
	Overwrite  bool
	// StopGrace is how long a graceful stop waits for calls in flight.
	StopGrace time.Duration
	// MetricsAddr serves /metrics; MetricsLinger keeps it up after the run.
	MetricsAddr   string
	MetricsLinger time.Duration
	// MetricsStartDelay delays the start of the load (0: none).
	MetricsStartDelay time.Duration
	// TUI is false when the live view is switched off.
	TUI bool
}

// Spec is one run, fully parsed and validated: the adapter, the phase,
// the client settings, the workload's configuration and the output. The
// properties travel along unchanged because agents are configured by
// sending them (so an agent is deterministic from its properties alone).
type Spec struct {
	*Settings
	DB       string
	Adapter  *adapters.Info
	Props    *properties.Properties
	Workload *workload.Config
	Output   Output
	// Measure is the measurement type's options (measure.go).
	Measure Measurement
	// Telemetry is what load generators sample of their hosts.
	Telemetry Telemetry
	// CutInterval is how often the engine cuts an interval: the status
	// interval, or the timeseries granularity. StatusEvery is how many
	// cut intervals make one status line.
	CutInterval time.Duration
	StatusEvery int64
	// Warnings are settings that are valid but probably not what was
	// meant; the session prints each once before the run.
	Warnings []string
}

// Parse validates everything about a run that can be checked without
// touching a database: the adapter name, the workload, the client
// settings and the output options. Errors name the property at fault.
func Parse(dbName string, p *properties.Properties, phase run.Phase) (*Spec, error) {
	info, err := adapters.Lookup(dbName)
	if err != nil {
		return nil, err
	}
	cfg, err := workload.ParseConfig(p)
	if err != nil {
		return nil, err
	}
	s, err := parseSettings(p, phase, cfg)
	if err != nil {
		return nil, err
	}
	out, err := parseOutput(p, s)
	if err != nil {
		return nil, err
	}
	sp := &Spec{Settings: s, DB: dbName, Adapter: info, Props: p, Workload: cfg, Output: *out, CutInterval: s.StatusInterval, StatusEvery: 1}
	m, err := parseMeasurement(p, s)
	if err != nil {
		return nil, err
	}
	sp.Measure = *m
	if sp.Telemetry, err = parseTelemetry(p); err != nil {
		return nil, err
	}
	sp.Warnings = warnings(p, phase, cfg)
	if w := unknownWarning(p, info); w != "" {
		sp.Warnings = append(sp.Warnings, w)
	}
	if out.Timeseries {
		// The engine cuts intervals at the timeseries granularity; the
		// status printer groups them back into status intervals.
		sp.CutInterval = out.Granularity
		if n := int64(s.StatusInterval / out.Granularity); n > 1 {
			sp.StatusEvery = n
		}
	}
	return sp, nil
}

func parseOutput(p *properties.Properties, s *Settings) (*Output, error) {
	o := &Output{}
	o.Exporter = p.String(PropExporter, ycsbtext.TextExporter)
	if err := ycsbtext.CheckExporter(o.Exporter); err != nil {
		return nil, err
	}
	o.ExportFile = p.String(PropExportFile, "")
	fo, err := p.Bool(PropHdrFileOutput, false)
	if err != nil {
		return nil, err
	}
	if fo {
		path := p.String(PropHdrOutputPath, "")
		if strings.HasSuffix(path, ".hlog") {
			o.HlogPath = path
		} else {
			o.HlogPath = path + "ycsbctl.hlog"
		}
	}
	if o.Verbose, err = p.Bool(PropHistogramVerbose, false); err != nil {
		return nil, err
	}
	o.Timeseries = s.MeasurementTyp == "timeseries"
	g, err := p.PositiveInt64(PropTimeseriesGran, 1000)
	if err != nil {
		return nil, err
	}
	// Beyond ten years the milliseconds overflow nanoseconds soon after
	// (9.2e12 ms), into a negative interval.
	if g > maxDurationSecs*1000 {
		return nil, &properties.Error{Property: PropTimeseriesGran, Value: p.String(PropTimeseriesGran, ""),
			Expected: fmt.Sprintf("milliseconds from 1 to %d (ten years)", int64(maxDurationSecs*1000))}
	}
	o.Granularity = time.Duration(g) * time.Millisecond
	o.MaxErrorRate = -1
	if p.Has(PropMaxErrorRate) {
		v, err := p.Float64(PropMaxErrorRate, -1)
		if err != nil || v < 0 || v > 1 {
			return nil, &properties.Error{Property: PropMaxErrorRate, Value: p.String(PropMaxErrorRate, ""), Expected: "a fraction between 0 and 1"}
		}
		o.MaxErrorRate = v
	}
	if o.Status, err = p.Bool(PropStatus, false); err != nil {
		return nil, err
	}
	// YCSB prints the label exactly as given (no trimming): "-l 'run1 '".
	o.Label, _ = p.Lookup(PropLabel)
	o.ResultsDir = p.String(PropResults, "")
	if v, set := p.Lookup(PropResults); set && o.ResultsDir == "" {
		// Set, but to nothing: the same as unset, which is rarely what
		// was meant (-p ycsbctl.results=$DIR with DIR unset).
		return nil, &properties.Error{Property: PropResults, Value: v, Expected: "a directory; set empty, no bundle would be written (leave it out for none)"}
	}
	if o.Overwrite, err = p.Bool(PropOverwrite, false); err != nil {
		return nil, err
	}
	grace, err := p.Float64(PropStopGrace, DefaultStopGrace.Seconds())
	if err != nil {
		return nil, err
	}
	if grace <= 0 || grace > 3600 {
		return nil, &properties.Error{Property: PropStopGrace, Value: p.String(PropStopGrace, ""), Expected: "seconds, more than 0 and at most 3600"}
	}
	o.StopGrace = time.Duration(grace * float64(time.Second))
	o.MetricsAddr = p.String(PropMetricsAddr, "")
	linger, err := p.Float64(PropMetricsLinger, 0)
	if err != nil {
		return nil, err
	}
	if linger < 0 || linger > 3600 {
		return nil, &properties.Error{Property: PropMetricsLinger, Value: p.String(PropMetricsLinger, ""), Expected: "seconds between 0 and 3600"}
	}
	o.MetricsLinger = time.Duration(linger * float64(time.Second))
	delay, err := p.Float64(PropMetricsStartDelay, 0)
	if err != nil {
		return nil, err
	}
	if delay < 0 || delay > 600 {
		return nil, &properties.Error{Property: PropMetricsStartDelay, Value: p.String(PropMetricsStartDelay, ""), Expected: "seconds between 0 and 600"}
	}
	o.MetricsStartDelay = time.Duration(delay * float64(time.Second))
	if o.TUI, err = p.Bool(PropTUI, true); err != nil {
		return nil, err
	}
	return o, nil
}

// warnings lists settings YCSB accepts that usually mean a mistake.
func warnings(p *properties.Properties, phase run.Phase, cfg *workload.Config) []string {
	out := workload.LenientWarnings(p)
	mix := []struct {
		name string
		v    float64
	}{{"read", cfg.ReadProp}, {"update", cfg.UpdateProp}, {"insert", cfg.InsertProp}, {"scan", cfg.ScanProp},
		{"readmodifywrite", cfg.RMWProp}, {"delete", cfg.DeleteProp}}
	var sum float64
	for _, m := range mix {
		sum += m.v
	}
	if phase == run.Run && math.Abs(sum-1) > 1e-9 {
		// YCSB normalises silently; say what will actually run.
		var parts []string
		for _, m := range mix {
			if m.v > 0 {
				parts = append(parts, fmt.Sprintf("%s %.4g%%", m.name, 100*m.v/sum))
			}
		}
		out = append(out, fmt.Sprintf("Warning: the operation proportions add up to %g, not 1; they are normalised (as YCSB does) to: %s", sum, strings.Join(parts, ", ")))
	}
	if phase == run.Run && cfg.RecordCount == 1<<63-1 {
		rc := p.String(workload.PropRecordCount, "")
		if rc == "" {
			rc = "unset"
		}
		out = append(out, fmt.Sprintf("Warning: recordcount is %s: the run phase treats it as unbounded (as YCSB does) and will read keys that were never loaded; set recordcount to what was loaded", rc))
	}
	return out
}

// WarmupDescription says how the run warms up, for the operator; empty
// when it does not.
func (s *Spec) WarmupDescription() string {
	var parts []string
	if s.WarmupTime > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s)", s.WarmupTime, PropWarmupTime))
	}
	if s.WarmupOps > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s)", plural.Count(s.WarmupOps, "operation"), PropWarmupOps))
	}
	return strings.Join(parts, " and ")
}

// Prepared is a run ready to start.
type Prepared struct {
	Spec     *Spec
	Workload *workload.Workload
	DB       adapters.DB
	Runner   *engine.Runner
	// Raw writes raw samples (measurementtype raw, hdrhistogram+raw);
	// nil otherwise. Close closes it.
	Raw *measurement.RawLog
}

// Close releases the database and finishes the raw samples' output.
func (p *Prepared) Close() error {
	var err error
	if p.Raw != nil {
		err = p.Raw.Close()
	}
	if c, ok := p.DB.(adapters.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Prepare opens the database, builds the workload and prepares the engine
// (per-worker database handles included). sink sees every interval.
func Prepare(ctx context.Context, s *Spec, clk clock.Clock, logf func(string, ...any), sink run.Sink) (*Prepared, error) {
	wl, err := workload.NewFromConfig(s.Workload, clk)
	if err != nil {
		return nil, err
	}
	raw, err := s.Measure.rawLog(logf)
	if err != nil {
		return nil, err
	}
	db, err := s.Adapter.Driver.Open(ctx, s.Props)
	if err != nil {
		if raw != nil {
			_ = raw.Close()
		}
		return nil, err
	}
	r, err := engine.Prepare(ctx, engine.Options{
		Phase:          s.Phase,
		DB:             db,
		Workload:       wl,
		Threads:        s.Threads,
		Target:         s.Target,
		OpCount:        s.OpCount,
		MaxExecution:   s.MaxExecution,
		WarmupOps:      s.WarmupOps,
		WarmupTime:     s.WarmupTime,
		StatusInterval: s.CutInterval,
		Mode:           s.Mode,
		SetupRecorder:  s.Measure.setupRecorder(raw),
		Clock:          clk,
		Sink:           sink,
		Logf:           logf,
	})
	if err != nil {
		if c, ok := db.(adapters.Closer); ok {
			_ = c.Close()
		}
		if raw != nil {
			_ = raw.Close()
		}
		return nil, err
	}
	if raw != nil {
		raw.Start()
	}
	return &Prepared{Spec: s, Workload: wl, DB: db, Runner: r, Raw: raw}, nil
}

// With is the same run with some properties set to other values, parsed
// anew (a suite's thread-scan try, or a step that takes its thread count
// from a scan): the properties stay the one source of the settings, so
// an agent configured from them runs exactly this spec.
func (s *Spec) With(set map[string]string) (*Spec, error) {
	p := s.Props.Clone()
	for k, v := range set {
		p.Set(k, v)
	}
	return Parse(s.DB, p, s.Phase)
}

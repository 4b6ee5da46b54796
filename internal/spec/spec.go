// Package bench turns a YCSB command line (db name, merged properties,
// phase) into a prepared engine run. It is the one place where properties
// become engine options, so single-host commands and distributed agents
// configure runs identically.
package spec

import (
	"context"
	"strconv"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
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
	Phase          engine.Phase
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
func ParseSettings(p *properties.Properties, phase engine.Phase) (*Settings, error) {
	s := &Settings{Phase: phase}
	th, err := p.Int64(PropThreads, 1)
	if err != nil {
		return nil, err
	}
	if th < 1 || th > 1<<20 {
		return nil, &properties.Error{Property: PropThreads, Value: p.String(PropThreads, ""), Expected: "a thread count of at least 1 (flag -threads)"}
	}
	s.Threads = int(th)
	s.Target, err = p.Float64(PropTarget, 0)
	if err != nil {
		return nil, err
	}
	if s.Target < 0 {
		return nil, &properties.Error{Property: PropTarget, Value: p.String(PropTarget, ""), Expected: "a non-negative ops/s rate (flag -target)"}
	}
	si, err := p.Float64(PropStatusInterval, 10)
	if err != nil {
		return nil, err
	}
	if si <= 0 {
		return nil, &properties.Error{Property: PropStatusInterval, Value: p.String(PropStatusInterval, ""), Expected: "a positive number of seconds"}
	}
	s.StatusInterval = time.Duration(si * float64(time.Second))
	me, err := p.NonNegInt64(PropMaxExecution, 0)
	if err != nil {
		return nil, err
	}
	s.MaxExecution = time.Duration(me) * time.Second
	wt, err := p.Float64(PropWarmupTime, 0)
	if err != nil {
		return nil, err
	}
	if wt < 0 {
		return nil, &properties.Error{Property: PropWarmupTime, Value: p.String(PropWarmupTime, ""), Expected: "a non-negative number of seconds"}
	}
	s.WarmupTime = time.Duration(wt * float64(time.Second))
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
	s.MeasurementTyp, err = p.OneOf(PropMeasurementType, "hdrhistogram", "hdrhistogram", "timeseries")
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
	if phase == engine.Load {
		// YCSB's load phase inserts insertcount records (default:
		// recordcount - insertstart).
		cfg, err := workload.ParseConfig(p)
		if err != nil {
			return nil, err
		}
		s.OpCount = cfg.InsertCount
		if cfg.RecordCount == 1<<63-1 && !p.Has(workload.PropInsertCount) && s.MaxExecution == 0 {
			return nil, &properties.Error{Property: workload.PropRecordCount, Expected: "a positive record count for the load phase"}
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

// Validate checks everything about a run that can be checked without
// touching the database: the binding name, the workload and the client
// settings. Coordinators call it before any agent is contacted.
func Validate(dbName string, p *properties.Properties, phase engine.Phase) (*Settings, error) {
	if _, err := adapters.Lookup(dbName); err != nil {
		return nil, err
	}
	s, err := ParseSettings(p, phase)
	if err != nil {
		return nil, err
	}
	if _, err := workload.ParseConfig(p); err != nil {
		return nil, err
	}
	return s, nil
}

// Prepared is a run ready to start.
type Prepared struct {
	Settings *Settings
	Workload *workload.Workload
	DB       adapters.DB
	Runner   *engine.Runner
	DBName   string
}

// Close releases the database.
func (p *Prepared) Close() error {
	if c, ok := p.DB.(adapters.Closer); ok {
		return c.Close()
	}
	return nil
}

// Prepare validates, opens the database, builds the workload and prepares
// the engine (per-worker database handles included). Observers see every
// interval.
func Prepare(ctx context.Context, dbName string, p *properties.Properties, phase engine.Phase, clk clock.Clock, logf func(string, ...any), observers ...engine.Observer) (*Prepared, error) {
	s, err := Validate(dbName, p, phase)
	if err != nil {
		return nil, err
	}
	info, _ := adapters.Lookup(dbName)
	wl, err := workload.New(p, clk)
	if err != nil {
		return nil, err
	}
	db, err := info.Driver.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	r, err := engine.Prepare(ctx, engine.Options{
		Phase:          phase,
		DB:             db,
		Workload:       wl,
		Threads:        s.Threads,
		Target:         s.Target,
		OpCount:        s.OpCount,
		MaxExecution:   s.MaxExecution,
		WarmupOps:      s.WarmupOps,
		WarmupTime:     s.WarmupTime,
		StatusInterval: s.StatusInterval,
		Mode:           s.Mode,
		Clock:          clk,
		Observers:      observers,
		Logf:           logf,
	})
	if err != nil {
		if c, ok := db.(adapters.Closer); ok {
			_ = c.Close()
		}
		return nil, err
	}
	return &Prepared{Settings: s, Workload: wl, DB: db, Runner: r, DBName: info.Name}, nil
}

package capacity

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// Input is a search's settings as the operator wrote them: `capacity`'s
// flags or a suite's capacity step. Settings checks it, naming each
// setting the way name calls it (a flag, a suite key), so that both
// refuse the same values with the same words.
type Input struct {
	SLOs         []string
	MaxErrorRate string
	Precision    string
	Probe        time.Duration
	Warmup       time.Duration
	Start, Max   float64
	MaxProbes    int
}

// DefaultInput is a search's defaults (no objective: at least one is
// required).
func DefaultInput() Input {
	return Input{MaxErrorRate: strconv.FormatFloat(DefaultMaxErrorRate, 'g', -1, 64), Precision: FormatShare(DefaultPrecision),
		Probe: DefaultProbe, Warmup: DefaultWarmup, Start: DefaultStart, Max: DefaultMax, MaxProbes: DefaultMaxProbes}
}

// Setting names, as the command's flags spell them.
const (
	SettingSLO          = "--slo"
	SettingMaxErrorRate = "--max-error-rate"
	SettingPrecision    = "--precision"
	SettingProbe        = "--probe"
	SettingWarmup       = "--warmup"
	SettingStart        = "--start"
	SettingMax          = "--max"
	SettingMaxProbes    = "--max-probes"
)

// Settings validates in; errors begin with the setting's name (name of
// the flag's spelling; nil keeps the flags').
func (in Input) Settings(name func(flag string) string) (Settings, error) {
	if name == nil {
		name = func(f string) string { return "flag " + f }
	}
	s := Settings{Start: in.Start, Max: in.Max, MaxProbes: in.MaxProbes, Probe: in.Probe, Warmup: in.Warmup}
	if len(in.SLOs) == 0 {
		return s, fmt.Errorf("%s: expected at least one objective, e.g. 'READ.p99<=10ms'", name(SettingSLO))
	}
	for _, v := range in.SLOs {
		o, err := ParseObjective(v)
		if err != nil {
			return s, fmt.Errorf("%s %w", name(SettingSLO), err)
		}
		s.Objectives = append(s.Objectives, o)
	}
	var err error
	if s.MaxErrorRate, err = ParseShare(in.MaxErrorRate); err != nil {
		return s, fmt.Errorf("%s %q: %w", name(SettingMaxErrorRate), in.MaxErrorRate, err)
	}
	if s.Precision, err = ParseShare(in.Precision); err != nil {
		return s, fmt.Errorf("%s %q: %w", name(SettingPrecision), in.Precision, err)
	}
	if in.Probe < time.Second || in.Probe%time.Second != 0 {
		return s, fmt.Errorf("%s %s: expected whole seconds, at least 1s (it is each probe's %s)", name(SettingProbe), in.Probe, spec.PropMaxExecution)
	}
	if in.Max > spec.MaxTarget {
		return s, fmt.Errorf("%s %g: expected at most %g operations per second", name(SettingMax), in.Max, spec.MaxTarget)
	}
	if in.Start < spec.MinTarget {
		return s, fmt.Errorf("%s %g: expected at least %g operations per second", name(SettingStart), in.Start, spec.MinTarget)
	}
	if err := s.Check(); err != nil {
		// Check names the flags; say the setting's own name.
		msg := err.Error()
		for _, f := range []string{SettingMaxErrorRate, SettingPrecision, SettingStart, SettingMaxProbes, SettingMax, SettingProbe, SettingWarmup} {
			if strings.HasPrefix(msg, f+" ") {
				return s, errors.New(name(f) + strings.TrimPrefix(msg, f))
			}
		}
		return s, err
	}
	return s, nil
}

// Args are the command's flags that give s: the equivalent command of a
// suite's capacity step.
func (s *Settings) Args() []string {
	var args []string
	for _, o := range s.Objectives {
		args = append(args, SettingSLO, o.String())
	}
	return append(args, SettingMaxErrorRate, strconv.FormatFloat(s.MaxErrorRate, 'g', -1, 64),
		SettingPrecision, strconv.FormatFloat(s.Precision, 'g', -1, 64),
		SettingProbe, s.Probe.String(), SettingWarmup, s.Warmup.String(),
		SettingStart, strconv.FormatFloat(s.Start, 'f', -1, 64), SettingMax, strconv.FormatFloat(s.Max, 'f', -1, 64),
		SettingMaxProbes, strconv.Itoa(s.MaxProbes))
}

// ParseShare reads a share written 0.05 or 5%.
func ParseShare(v string) (float64, error) {
	t := strings.TrimSpace(v)
	pct := strings.HasSuffix(t, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("expected a share such as 0.05 or 5%")
	}
	if pct {
		f /= 100
	}
	return f, nil
}

// ProbeProperties makes p the properties of every probe (the target is
// each probe's own) and returns what the operator should know of it.
func ProbeProperties(p *properties.Properties, s *Settings) []string {
	var notes []string
	if v, ok := p.Lookup(spec.PropMeasurementMode); ok && v != "both" {
		notes = append(notes, fmt.Sprintf("%s=%s replaced by both: objectives are judged on intended-time latencies (coordinated omission corrected), and both are recorded", spec.PropMeasurementMode, v))
	}
	p.Set(spec.PropMeasurementMode, "both")
	for _, k := range []string{spec.PropMaxExecution, spec.PropWarmupTime, spec.PropWarmupOps} {
		if v, ok := p.Lookup(k); ok {
			notes = append(notes, fmt.Sprintf("%s=%s replaced: every probe runs --probe %s after --warmup %s", k, v, s.Probe, s.Warmup))
		}
	}
	p.Set(workload.PropOperationCount, "0")
	p.Set(spec.PropMaxExecution, strconv.FormatInt(int64(s.Probe/time.Second), 10))
	p.Set(spec.PropWarmupTime, strconv.FormatFloat(s.Warmup.Seconds(), 'g', -1, 64))
	p.Delete(spec.PropWarmupOps)
	if !p.Has(spec.PropStatusInterval) {
		// At least six intervals per probe for the steadiness check,
		// and no longer than YCSB's default.
		iv := min(10, s.Probe.Seconds()/6)
		p.Set(spec.PropStatusInterval, strconv.FormatFloat(iv, 'g', 4, 64))
	}
	return notes
}

// CheckSpec refuses what a capacity search cannot honour in sp, the
// probes' run (ProbeProperties applied), before any load.
func CheckSpec(sp *spec.Spec, objs []Objective) error {
	if v, ok := sp.Props.Lookup(spec.PropTarget); ok {
		return &properties.Error{Property: spec.PropTarget, Value: v, Expected: "no target: the search sets each probe's target, from --start up to --max (flag -target is not taken)"}
	}
	if f := sp.Output.ExportFile; f != "" {
		return &properties.Error{Property: spec.PropExportFile, Value: f, Expected: "none: each probe's summary is in its bundle under --results (summary.txt)"}
	}
	if sp.Output.HlogPath != "" {
		return &properties.Error{Property: spec.PropHdrFileOutput, Value: "true", Expected: "false: each probe's HdrHistogram log is merged.hlog in its bundle under --results"}
	}
	probe := time.Duration(sp.MaxExecution)
	if n := probe / sp.StatusInterval; n < 3 {
		return &properties.Error{Property: spec.PropStatusInterval, Value: sp.Props.String(spec.PropStatusInterval, ""),
			Expected: fmt.Sprintf("at most a third of --probe %s (flag --interval): the steadiness check needs at least 3 intervals per probe", probe)}
	}
	return CheckMix(objs, sp.Workload)
}

package session

import (
	"fmt"
	"path/filepath"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// measureOutputs are the outputs of the measurement type's options
// (spec.Measurement): YCSB's per-measurement .hdr logs and the process
// tracking of ycsbctl.trackruntime. Raw samples are written where the
// load runs (spec.Prepared.Raw), not here.
//
// ycsbctl.trackruntime describes the load generators: a single host's own
// process (runtime), or in a distributed run the agents' processes from
// the samples they send (agentRuntime), never the coordinator's.
type measureOutputs struct {
	runtime      *ycsbtext.RuntimeTracker
	agentRuntime *ycsbtext.AgentRuntimeTracker
	opFiles      *hlog.OpFiles
}

// openMeasure checks, before any load, that the per-measurement logs can
// be written.
func (s *Session) openMeasure() error {
	m := s.o.Spec.Measure
	if m.HdrLogPrefix != "" {
		if err := checkWritableDir(filepath.Dir(m.HdrLogPrefix + "x")); err != nil {
			return exitcode.Wrap(exitcode.InvalidConfig, fmt.Errorf("property %q=%q: %w", spec.PropHdrOutputPath, m.HdrLogPrefix, err))
		}
	}
	return nil
}

// newMeasureOutputs builds the outputs when the run starts.
func (s *Session) newMeasureOutputs(info run.Info) *measureOutputs {
	m := s.o.Spec.Measure
	o := &measureOutputs{}
	switch {
	case m.TrackRuntime && info.Mode == run.ModeDistributed:
		o.agentRuntime = &ycsbtext.AgentRuntimeTracker{}
	case m.TrackRuntime:
		o.runtime = &ycsbtext.RuntimeTracker{}
		o.runtime.Begin()
	}
	if m.HdrLogPrefix != "" {
		np := ""
		if m.Format.Kind != ycsbtext.KindHdr {
			np = "Hdr"
		}
		o.opFiles = &hlog.OpFiles{Prefix: m.HdrLogPrefix, NamePrefix: np, Start: s.o.Clock.Now()}
	}
	return o
}

// sinks go before the status printer: it shows the runtime sample taken
// for the same interval.
func (o *measureOutputs) sinks() []run.Sink {
	var out []run.Sink
	if o.runtime != nil {
		out = append(out, o.runtime)
	}
	if o.agentRuntime != nil {
		out = append(out, o.agentRuntime)
	}
	if o.opFiles != nil {
		out = append(out, o.opFiles)
	}
	return out
}

// statusExtra is the status printer's Extra.
func (o *measureOutputs) statusExtra() func() string {
	switch {
	case o.runtime != nil:
		return o.runtime.Status
	case o.agentRuntime != nil:
		return o.agentRuntime.Status
	}
	return nil
}

// summarize adds the measurement type's format, process lines and notes.
func (o *measureOutputs) summarize(sum *ycsbtext.Summary, sp *spec.Spec, info run.Info) {
	sum.Format = sp.Measure.Format
	distributed := info.Mode == run.ModeDistributed
	if o.runtime != nil {
		sum.Process = o.runtime.Lines(sum.RunTime)
	}
	if o.agentRuntime != nil {
		sum.Process = o.agentRuntime.Lines(sum.RunTime)
		sum.Notes = append(sum.Notes, o.agentRuntime.Notes(spec.PropTrackRuntime)...)
	}
	if distributed && sp.Measure.Format.Kind.HasRaw() {
		where := sp.Measure.RawFile
		if where == "" {
			where = "its standard output"
		}
		sum.Notes = append(sum.Notes, fmt.Sprintf("%s=%s: every agent wrote its raw samples on its own host (%s); the raw figures above come from the agents' merged histograms", spec.PropMeasurementType, sp.MeasurementTyp, where))
	}
}

// close finishes the per-measurement logs.
func (o *measureOutputs) close() error {
	if o.opFiles == nil {
		return nil
	}
	if err := o.opFiles.Close(); err != nil {
		return fmt.Errorf("property %q: %w", spec.PropHdrFileOutput, err)
	}
	return nil
}

// rawNotes are the summary's notes about a single host's raw samples: how
// many could not be written, zero included, so the count is always on
// record (summary and run.json).
func rawNotes(dropped int64) []string {
	return []string{spec.RawNote(dropped)}
}

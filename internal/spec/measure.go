package spec

import (
	"fmt"
	"os"
	"strings"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
)

// Measurement-type properties (YCSB's names, plus ycsbctl.trackruntime).
const (
	PropHistogramBuckets  = "histogram.buckets"
	PropRawOutputFile     = "measurement.raw.output_file"
	PropRawNoSummary      = "measurement.raw.no_summary"
	PropReportEachError   = "reportlatencyforeacherror"
	PropTrackedErrors     = "latencytrackederrors"
	PropTrackRuntime      = "ycsbctl.trackruntime"
	PropTrackJVM          = "measurement.trackjvm"
	maxHistogramBuckets   = 10_000_000
	defaultHistogramWidth = 1000
)

// Measurement is how latencies are measured and presented beyond the
// client settings: YCSB's measurementtype and its options, how failed
// calls are named, and whether the process itself is tracked.
type Measurement struct {
	// Format is measurementtype with histogram.buckets and
	// measurement.raw.no_summary.
	Format ycsbtext.Format
	// RawFile is measurement.raw.output_file (stdout when empty); only
	// used when Format.Kind keeps raw samples.
	RawFile string
	// Errors is reportlatencyforeacherror / latencytrackederrors.
	Errors measurement.ErrorNaming
	// TrackRuntime is ycsbctl.trackruntime (alias measurement.trackjvm).
	TrackRuntime bool
	// HdrLogPrefix, when set, writes one YCSB interval log per
	// measurement, <HdrLogPrefix><NAME>.hdr (hdrhistogram.fileoutput
	// with an hdrhistogram type).
	HdrLogPrefix string
}

func parseMeasurement(p *properties.Properties, s *Settings) (*Measurement, error) {
	m := &Measurement{}
	kind, ok := ycsbtext.ParseKind(s.MeasurementTyp)
	if !ok {
		return nil, &properties.Error{Property: PropMeasurementType, Value: s.MeasurementTyp, Expected: "one of " + strings.Join(ycsbtext.KindNames(), ", ")}
	}
	m.Format.Kind = kind
	b, err := p.PositiveInt64(PropHistogramBuckets, defaultHistogramWidth)
	if err != nil {
		return nil, err
	}
	if b > maxHistogramBuckets {
		return nil, &properties.Error{Property: PropHistogramBuckets, Value: p.String(PropHistogramBuckets, ""), Expected: fmt.Sprintf("a bucket count between 1 and %d", maxHistogramBuckets)}
	}
	m.Format.Buckets = int(b)
	if m.Format.RawNoSummary, err = p.Bool(PropRawNoSummary, false); err != nil {
		return nil, err
	}
	m.RawFile = p.String(PropRawOutputFile, "")
	if m.Errors.EachError, err = p.Bool(PropReportEachError, false); err != nil {
		return nil, err
	}
	if v, ok := p.Lookup(PropTrackedErrors); ok {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			st, ok := adapters.ParseStatus(name)
			if !ok || st.IsOK() {
				return nil, &properties.Error{Property: PropTrackedErrors, Value: v, Expected: "a comma list of failure statuses (" + failureStatusNames() + ")"}
			}
			m.Errors.Tracked = append(m.Errors.Tracked, st)
		}
	}
	rt, err := p.Bool(PropTrackRuntime, false)
	if err != nil {
		return nil, err
	}
	jvm, err := p.Bool(PropTrackJVM, false)
	if err != nil {
		return nil, err
	}
	m.TrackRuntime = rt || jvm
	if fo, err := p.Bool(PropHdrFileOutput, false); err == nil && fo && kind.HasHdr() {
		// A path ending in .hlog names ycsbctl's combined log only.
		if path := p.String(PropHdrOutputPath, ""); !strings.HasSuffix(path, ".hlog") {
			m.HdrLogPrefix = path
		}
	}
	return m, nil
}

func failureStatusNames() string {
	var names []string
	for st := adapters.Status(0); st < adapters.NumStatuses; st++ {
		if !st.IsOK() {
			names = append(names, st.String())
		}
	}
	return strings.Join(names, ", ")
}

// rawLog opens the raw measurement's output when the type keeps raw
// samples: measurement.raw.output_file, appended to as YCSB does, or
// stdout. logf says where the samples go, as YCSB prints it.
func (m *Measurement) rawLog(logf func(string, ...any)) (*measurement.RawLog, error) {
	if !m.Format.Kind.HasRaw() {
		return nil, nil
	}
	prefix := m.Format.Kind.RawPrefix()
	if m.RawFile == "" {
		logf("Raw data measurement: will output to stdout.")
		return measurement.NewRawLog(os.Stdout, nil, prefix), nil
	}
	// Appended to as YCSB does, but only a regular file (package outfile).
	f, err := outfile.Append(m.RawFile, 0o644)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.InvalidConfig, fmt.Errorf("property %q: %w", PropRawOutputFile, err))
	}
	logf("Raw data measurement: will output to result file: %s", m.RawFile)
	return measurement.NewRawLog(f, f, prefix), nil
}

// setupRecorder configures one worker's recorder for the measurement.
func (m *Measurement) setupRecorder(raw *measurement.RawLog) func(*measurement.Recorder) {
	return func(r *measurement.Recorder) {
		r.NameFailures(m.Errors)
		if raw != nil {
			r.KeepRaw(raw)
		}
	}
}

// RawNote is the summary's [NOTE] about raw samples: how many were
// measured but not written (dropped when the raw writer could not keep up,
// or lost to a write error). Never silent: zero is stated too.
func RawNote(dropped int64) string {
	return fmt.Sprintf("%s: %d raw samples dropped (measured but not written)", PropMeasurementType, dropped)
}

package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/redact"
)

// FileRecord is the capacity bundle's record, beside one run bundle per
// probe (bundle.ProbeDir).
const FileRecord = bundle.FileCapacity

// Status is how a search ended, as capacity.json records it.
type Status string

// Statuses: running while the search goes on, complete when it ended by
// its own rules, stopped or failed when a probe did not run to its end,
// aborted when its process ended without finishing the record (killed,
// crashed): the next owner of its directory finds it still "running" and
// marks it so (MarkEnded), as a run's rebuilt bundle is marked.
const (
	StatusRunning  Status = "running"
	StatusComplete Status = "complete"
	StatusStopped  Status = "stopped"
	StatusFailed   Status = "failed"
	StatusAborted  Status = "aborted"
)

// Record is capacity.json: what was searched, every probe and the answer.
type Record struct {
	Kind    string `json:"kind"`
	Tool    string `json:"tool"`
	Version string `json:"version"`
	DB      string `json:"db"`
	// Workload names the workload (-P names as given).
	Workload string `json:"workload,omitempty"`
	Label    string `json:"label,omitempty"`
	// Mode is "single-host" or "distributed"; Agents the load
	// generators (["local"] on one host) and Threads each one's workers.
	Mode        string    `json:"mode"`
	Agents      []string  `json:"agents"`
	Threads     int       `json:"threads"`
	CommandLine []string  `json:"command_line,omitempty"`
	StartedAt   time.Time `json:"started_at"`
	EndedAt     time.Time `json:"ended_at,omitempty"`
	Settings    Settings  `json:"settings"`
	// ProbeSeconds and WarmupSeconds are each probe's measured time and
	// warm-up; IntervalSeconds the interval the steadiness check fits.
	ProbeSeconds    float64 `json:"probe_seconds"`
	WarmupSeconds   float64 `json:"warmup_seconds"`
	IntervalSeconds float64 `json:"interval_seconds"`
	Status          Status  `json:"status"`
	ExitCode        int     `json:"exit_code"`
	Error           string  `json:"error,omitempty"`
	Probes          []Probe `json:"probes"`
	Answer          Answer  `json:"answer"`
	// Suite places a suite's capacity step (nil outside suites): its
	// fingerprint lets a resumed suite reuse the search.
	Suite *bundle.SuiteStep `json:"suite,omitempty"`
}

// RecordKind marks capacity.json.
const RecordKind = "capacity"

// Write writes capacity.json into dir atomically, so that a record is
// whole whenever the process is killed.
func (r *Record) Write(dir string) error {
	safe := *r
	safe.CommandLine = redact.Args(r.CommandLine)
	safe.Error = redact.Text(r.Error)
	b, err := json.MarshalIndent(&safe, "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(filepath.Join(dir, FileRecord), append(b, '\n'), 0o644)
}

// MarkEnded rewrites dir's record when it still says the search is
// running though no process owns the directory any more (the caller owns
// it now): the search ended without an ending, its exit code unknown. It
// reports whether it did; a directory without a record is left alone.
func MarkEnded(dir string) (bool, error) {
	path := filepath.Join(dir, FileRecord)
	st, err := os.Stat(path)
	if err != nil {
		return false, nil
	}
	r, err := Read(dir)
	if err != nil || r.Status != StatusRunning {
		// A record that cannot be read is report's to refuse.
		return false, nil
	}
	r.Status, r.ExitCode = StatusAborted, bundle.RecoveredExitCode
	r.EndedAt = st.ModTime()
	r.Error = "unknown: ycsbctl ended without an exit code (killed or crashed) during the search; the probes are those it had judged"
	r.Answer.Ended = EndInterrupted
	return true, r.Write(dir)
}

// IsBundle reports whether dir holds a capacity bundle.
func IsBundle(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, FileRecord))
	return err == nil
}

// Read reads dir's capacity.json (dir may name the file itself).
func Read(dir string) (*Record, error) {
	path := dir
	if filepath.Base(dir) != FileRecord {
		path = filepath.Join(dir, FileRecord)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: not a capacity bundle: %w", dir, err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Kind != RecordKind {
		return nil, fmt.Errorf("%s: kind %q, expected %q", path, r.Kind, RecordKind)
	}
	return &r, nil
}

// AtCapacity returns the probe that established the answer, or nil.
func (r *Record) AtCapacity() *Probe {
	if !r.Answer.Found {
		return nil
	}
	for i := range r.Probes {
		if r.Probes[i].N == r.Answer.Probe {
			return &r.Probes[i]
		}
	}
	return nil
}

// Objectives lists the objectives as typed.
func (r *Record) Objectives() string { return r.Settings.ObjectivesText() }

// ObjectivesText lists the objectives as typed, comma separated.
func (s *Settings) ObjectivesText() string {
	var parts []string
	for _, o := range s.Objectives {
		parts = append(parts, o.String())
	}
	return strings.Join(parts, ", ")
}

// WriteTable writes the probes' table and the answer for people.
func (r *Record) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Capacity of %s", r.DB)
	if r.Workload != "" {
		fmt.Fprintf(&b, " (%s)", r.Workload)
	}
	fmt.Fprintf(&b, " at %s, errors <= %s\n", r.Objectives(), FormatShare(r.Settings.MaxErrorRate))
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', tabwriter.AlignRight)
	head := []string{"probe", "target", "achieved"}
	for _, o := range r.Settings.Objectives {
		head = append(head, o.Op.String()+" "+o.Key())
	}
	head = append(head, "errors", "steady", "verdict", "\t")
	_, _ = fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, p := range r.Probes {
		n := fmt.Sprint(p.N)
		if p.Repeat {
			n += "r"
		}
		row := []string{n, FormatRate(p.Target), FormatRate(p.Achieved)}
		for _, o := range r.Settings.Objectives {
			if v, ok := p.Value(o); ok {
				row = append(row, FormatMicros(v))
			} else {
				row = append(row, "-")
			}
		}
		st := "yes"
		if !p.Steady {
			st = "no"
		}
		row = append(row, FormatShare(p.ErrorRate()), st, string(p.Verdict), "")
		_, _ = fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString(r.AnswerText() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// AnswerText is the answer in one line.
func (r *Record) AnswerText() string {
	a := r.Answer
	var s string
	if a.Found {
		s = fmt.Sprintf("Capacity: %s ops/s (achieved %s ops/s, probe %d", FormatRate(a.Capacity), FormatRate(a.Achieved), a.Probe)
		if !a.Steady {
			s += ", not steady: lengthen --probe or --warmup to be sure"
		}
		s += ")"
	} else {
		s = "Capacity: none found"
	}
	switch a.Ended {
	case EndConverged:
		s += fmt.Sprintf("; the lowest failing target was %s ops/s (within %s)", FormatRate(a.Bracket.Fail), FormatShare(r.Settings.Precision))
	case EndAtMax:
		s += fmt.Sprintf("; the largest target tried (--max %s) passed: the capacity may be higher", FormatRate(r.Settings.Max))
	case EndBudget:
		s += fmt.Sprintf("; the probe budget (--max-probes %d) ran out before the precision: %s", r.Settings.MaxProbes, a.Bracket)
	case EndNoPass:
		s += fmt.Sprintf("; every target failed, down to %s ops/s", FormatRate(a.Bracket.upper()))
	case EndUndecided:
		s += fmt.Sprintf("; not converged: the search cannot decide %s ops/s, the lowest target above it (%s)", FormatRate(a.Bracket.Undecided), a.Reason)
	case EndTooShort:
		s += fmt.Sprintf("; no target passed down to %s ops/s, and lower ones cannot be judged (%s)", FormatRate(a.Bracket.upper()), a.Reason)
	case EndInterrupted:
		s += "; the search was interrupted: " + a.Bracket.String()
	case EndRunning:
		s += "; the search had not ended when this record was written"
	}
	return s
}

package suite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// Files the suite keeps in its results directory.
const (
	FileState  = "suite.json"
	FileSource = "suite.yaml"
)

// Step statuses in suite.json.
const (
	StatusPending    = "pending"
	StatusPassed     = "passed"
	StatusFailed     = "failed"
	StatusIncomplete = "incomplete"
	// StatusResumed: complete from an earlier, interrupted invocation.
	StatusResumed = "passed (earlier run)"
	// StatusSkipped: a pause or warm-up not repeated on resume because
	// the step it precedes is complete.
	StatusSkipped = "skipped (step complete)"
)

// State is suite.json: the plan and every item's outcome, rewritten after
// each step, so `suite report` and `--resume` know what ran.
type State struct {
	Name      string      `json:"name"`
	Started   time.Time   `json:"started"`
	Updated   time.Time   `json:"updated"`
	Agents    []string    `json:"agents,omitempty"`
	Overrides []string    `json:"overrides,omitempty"`
	Databases []string    `json:"databases"`
	Steps     []StepState `json:"steps"`
	Scans     []ScanState `json:"thread_scans,omitempty"`
	// Interrupted is set when the operator stopped or aborted the suite.
	Interrupted bool `json:"interrupted"`
	// Status is the suite's: running while it runs, then one of the
	// Suite* outcomes; ExitCode (absent while running) is the suite
	// process's exit code, ExitReason its name in the exit-code table.
	Status     string `json:"status,omitempty"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	ExitReason string `json:"exit_reason,omitempty"`
}

// The suite's statuses in suite.json.
const (
	SuiteRunning = "running"
	// SuiteComplete: every step passed (exit 0).
	SuiteComplete = "complete"
	// SuiteFailed: a step failed (the first failure's exit code).
	SuiteFailed = "failed"
	// SuiteStopped: stopped gracefully by the operator (exit 6).
	SuiteStopped = "stopped"
	// SuiteAborted: aborted by the operator (exit 4).
	SuiteAborted = "aborted"
)

// setOutcome records how the suite ended, as its process exits.
func (s *State) setOutcome(code exitcode.Code) {
	c := int(code)
	s.ExitCode, s.ExitReason = &c, code.String()
	switch code {
	case exitcode.OK:
		s.Status = SuiteComplete
	case exitcode.Stopped:
		s.Status = SuiteStopped
	case exitcode.Aborted:
		s.Status = SuiteAborted
	default:
		s.Status = SuiteFailed
	}
	s.Interrupted = code.ByOperator()
}

// StepState is one measured (or warm-up, or pause) item.
type StepState struct {
	Seq         int          `json:"seq"`
	DB          string       `json:"db"`
	Database    string       `json:"database"`
	StepIndex   int          `json:"step_index"`
	Step        string       `json:"step"`
	Kind        Kind         `json:"kind"`
	Workload    string       `json:"workload,omitempty"`
	Sweep       []SweepValue `json:"sweep,omitempty"`
	Threads     int          `json:"threads,omitempty"`
	Target      *float64     `json:"target,omitempty"`
	RecordCount int64        `json:"recordcount,omitempty"`
	Dir         string       `json:"dir,omitempty"`
	Status      string       `json:"status"`
	// ExitCode is the step's exit code; absent while it has not run
	// (pending), so that nothing reads a step that never ran as passed.
	ExitCode *int `json:"exit_code,omitempty"`
	// Fingerprint identifies the step's configuration (fingerprint.go).
	Fingerprint string    `json:"fingerprint,omitempty"`
	Started     time.Time `json:"started,omitzero"`
	Ended       time.Time `json:"ended,omitzero"`
	Args        []string  `json:"command_line,omitempty"`
	// ScanOf names the thread-scan step this try belongs to.
	ScanOf string `json:"thread_scan_of,omitempty"`
}

// Measured reports whether the step writes a run bundle the summaries
// use (a capacity step's bundle holds a search: see Searched).
func (s *StepState) Measured() bool { return s.Kind == KindLoad || s.Kind == KindRun }

// Searched reports whether the step writes a capacity bundle.
func (s *StepState) Searched() bool { return s.Kind == KindCapacity }

// ScanState is a thread scan's result.
type ScanState struct {
	Database string `json:"database"`
	Step     string `json:"step"`
	// Knee is the thread count after which doubling grew throughput by
	// less than MinGain (0 while unknown).
	Knee       int       `json:"knee_threads"`
	Throughput []float64 `json:"throughput"`
	Threads    []int     `json:"threads"`
	MinGain    float64   `json:"min_gain"`
	Reason     string    `json:"reason"`
}

// ReadState reads DIR/suite.json.
func ReadState(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, FileState))
	if err != nil {
		return nil, fmt.Errorf("%s: not a suite results directory: %w", dir, err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, FileState), err)
	}
	return &s, nil
}

// WriteState writes DIR/suite.json atomically.
func WriteState(dir string, s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(filepath.Join(dir, FileState), append(b, '\n'), 0o644)
}

// Exit returns the step's exit code and whether it has one.
func (s *StepState) Exit() (int, bool) {
	if s.ExitCode == nil {
		return 0, false
	}
	return *s.ExitCode, true
}

// setExit records the step's exit code.
func (s *StepState) setExit(code int) { s.ExitCode = &code }

// completeSearch reads dir's capacity record when its search ended by
// its own rules: what --resume may reuse, if its fingerprint matches.
func completeSearch(dir string) (*capacity.Record, bool) {
	rec, err := capacity.Read(dir)
	if err != nil || rec.Status != capacity.StatusComplete || rec.ExitCode != 0 {
		return nil, false
	}
	return rec, true
}

// completeBundle reads dir's bundle when it holds a run that ended
// normally: what --resume may reuse, if its fingerprint matches.
func completeBundle(dir string) (*bundle.Run, bool) {
	b, err := bundle.Read(dir)
	if err != nil || b.Run.Status != run.StatusComplete || b.Run.ExitCode != 0 {
		return nil, false
	}
	return b.Run, true
}

// EndedUnknown is the exit reason suite.json gives a suite whose process
// ended without recording how (killed or crashed).
const EndedUnknown = "unknown: ycsbctl ended without an exit code (killed or crashed) during the suite"

// MarkEnded rewrites the suite.json of a suite whose process died while
// it ran (it still says running, and the caller owns the directory, so no
// live process is running it): the suite is aborted with its exit code
// unknown (bundle.RecoveredExitCode), and a step it had started but not
// ended is incomplete. It reports whether it changed anything; a
// suite.json that cannot be read is left for its reader to refuse.
func MarkEnded(dir string) (bool, error) {
	s, err := ReadState(dir)
	if err != nil || s.Status != SuiteRunning {
		return false, nil
	}
	code := bundle.RecoveredExitCode
	s.Status, s.ExitCode, s.ExitReason = SuiteAborted, &code, EndedUnknown
	for i := range s.Steps {
		st := &s.Steps[i]
		if !st.Started.IsZero() && st.Ended.IsZero() {
			st.Status = StatusIncomplete
		}
	}
	return true, WriteState(dir, s)
}

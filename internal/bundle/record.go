package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/environ"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spool"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Recorder is a run's record while it runs, the same in both modes: when
// the run starts, its metadata (run.json as far as it is known then) is
// written to a spool in the results directory; from then on every interval
// record of every agent is added to the spool as it is accepted (a single
// host is agent 0). At the end Finish builds the bundle from the spool and
// what only the end knows (the Ending); a spool left by a process that was
// killed is built by Recover, without an ending.
//
// Add may be called from any goroutine; Start, Finish and Discard from the
// one that owns the run.
type Recorder struct {
	dir string
	// Meta is run.json as known when the run starts: the session fills
	// in the run's part and the source its own (agents, plan, limits)
	// before calling Start.
	Meta *Run

	mu  sync.Mutex
	w   *spool.Writer
	err error
}

// NewRecorder returns the recorder of a run whose bundle goes to dir (a
// directory Claim made ready).
func NewRecorder(dir string, meta *Run) *Recorder {
	return &Recorder{dir: dir, Meta: meta}
}

// Dir is the results directory.
func (r *Recorder) Dir() string { return r.dir }

// Start writes the metadata to a new spool: from now on the run has a
// record, which a crash does not lose.
func (r *Recorder) Start() error {
	h, err := json.Marshal(redacted(r.Meta))
	if err != nil {
		return err
	}
	w, err := spool.Create(spool.Path(r.dir, r.Meta.RunID), h)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.w = w
	r.mu.Unlock()
	return nil
}

// Add spools one interval record. The first failure is returned again by
// Finish: a bundle missing an interval would contradict the summary.
func (r *Recorder) Add(rec *pb.IntervalRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return errors.New("the run's record was not started")
	}
	if r.err != nil {
		return r.err
	}
	if err := r.w.Add(rec); err != nil {
		r.err = fmt.Errorf("spooling interval %d: %w", rec.Seq, err)
	}
	return r.err
}

// Discard removes the spool of a run that never started: nothing was
// measured, and no half bundle is left.
func (r *Recorder) Discard() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		r.w.Remove()
		r.w = nil
	}
}

// Finish builds the bundle from the spool and the run's ending, and
// removes the spool. When spooling or building fails the spool stays, so
// that `ycsbctl report DIR` can rebuild what it holds.
func (r *Recorder) Finish(end *Ending) (*Run, error) {
	r.mu.Lock()
	w, addErr := r.w, r.err
	r.w = nil
	r.mu.Unlock()
	if w == nil {
		return nil, errors.New("the run's record was not started")
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("spool %s: %w", w.Path(), err)
	}
	if addErr != nil {
		return nil, fmt.Errorf("%w (rebuild what was spooled with `ycsbctl report %s`)", addErr, r.dir)
	}
	return Build(r.dir, w.Path(), end)
}

// Ending is what is known of a run only when it has ended: how it ended
// (the session's verdict and summary) and what only its source knows
// (agents' states and their own accounts, the planned start). A bundle
// rebuilt after a crash has none.
type Ending struct {
	EndedAt    time.Time
	Status     run.Status
	Reasons    []string
	ExitCode   int
	ExitReason string
	Error      string
	// Summary and SummaryText are the YCSB summary the run printed.
	Summary     *ycsbtext.Summary
	SummaryText string

	PlannedStart time.Time
	MergeSeconds float64
	LateRecords  int
	// Agents holds each agent's end, by index.
	Agents []AgentEnding
	// Hosts and Database are the environment the source learned after
	// the record started (agents describe their hosts when they attach,
	// agent 0 the database once prepared); nil keeps the metadata's.
	Hosts    []environ.Host
	Database *environ.Database
}

// AgentEnding is how one agent ended.
type AgentEnding struct {
	State run.AgentState
	Error string
	// Threads is the workers the agent actually ran (0: as planned).
	Threads          int
	Reconnects       int
	StartSkewNs      *int64
	MissingIntervals string
	Final            *Final
	// States is the agent's life in the run, as the coordinator saw it.
	States []StateChange
}

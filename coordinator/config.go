// Package coordinator drives a distributed YCSB run: it validates the
// configuration, splits the work among agents (Plan), synchronises their
// start at one absolute instant, merges their interval histograms exactly
// into a cluster view, applies the agent-loss policy, and writes the
// final YCSB summary and the run bundle.
package coordinator

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/transport"
)

// Agent-loss policies (--on-agent-loss).
const (
	LossAbort    = "abort"
	LossContinue = "continue"
)

// Defaults.
const (
	DefaultMaxClockOffset = time.Second
	DefaultAgentTimeout   = 3 * time.Second
	DefaultPrepareTimeout = 2 * time.Minute
	// DefaultStopTimeout bounds how long stopping agents may take to
	// deliver their last interval before the coordinator gives up.
	DefaultStopTimeout = 15 * time.Second
)

// Property names the coordinator reads (the CLI uses the same names).
const (
	PropExporter     = "exporter"
	PropExportFile   = "exportfile"
	PropMaxErrorRate = "ycsbctl.maxerrorrate"
)

// Config is one coordinator invocation.
type Config struct {
	DB    string
	Phase engine.Phase
	// Props are the merged properties (-P files, -p, and the CLI's
	// -threads/-target/-s/-l flags already applied).
	Props  *properties.Properties
	Agents []string
	// ResultsDir, when set, receives run.json, summary.txt and merged.hlog.
	ResultsDir string
	// OnAgentLoss is LossAbort (default) or LossContinue.
	OnAgentLoss string
	TLS         *transport.TLSFiles
	Token       string
	// Label prefixes status lines (YCSB -l).
	Label string
	// Status prints cluster status lines to Stderr every interval (YCSB -s).
	Status         bool
	Stdout, Stderr io.Writer
	Clock          clock.Clock
	// Interval is the status/merge interval; 0 takes status.interval
	// (default 10 s).
	Interval time.Duration
	// MaxClockOffset refuses agents whose clock differs more than this
	// from the coordinator's (DefaultMaxClockOffset when 0; negative
	// disables the check).
	MaxClockOffset time.Duration
	// AgentTimeout declares an agent lost after this much silence
	// (DefaultAgentTimeout when 0).
	AgentTimeout time.Duration
	// PrepareTimeout bounds how long agents may take to open their
	// databases (DefaultPrepareTimeout when 0).
	PrepareTimeout time.Duration
	// StopTimeout bounds a graceful stop (DefaultStopTimeout when 0).
	StopTimeout time.Duration
	// Observers receive every merged interval (live views, metrics).
	Observers []Observer
	// Version overrides version.Version in what this coordinator
	// announces; tests use it to exercise the mismatch refusal.
	Version string
	// Abort, when closed, aborts the run: agents cancel their calls in
	// flight instead of finishing them (the operator's second Ctrl-C;
	// cancelling Run's context stops gracefully).
	Abort <-chan struct{}
	// CommandLine is recorded in run.json so reports can name the run.
	CommandLine []string
}

// Observer receives the cluster view after every merged interval.
// Calls come from the coordinator's loop, one at a time; an observer must
// not block and must not modify the Update (it may keep it).
type Observer interface {
	OnInterval(u *Update)
}

// ObserverFunc adapts a function.
type ObserverFunc func(u *Update)

// OnInterval calls f.
func (f ObserverFunc) OnInterval(u *Update) { f(u) }

// Update is one merged interval and the state of every agent.
type Update struct {
	RunID string
	Seq   int64
	// Interval is the merge of every agent's record for Seq; Cumulative
	// everything merged so far. Times are on the coordinator's clock.
	Interval   *measurement.Interval
	Cumulative *measurement.Interval
	Progress   engine.Progress
	Agents     []AgentStatus
	// AgentIntervals holds each agent's own record for Seq, by agent
	// index (nil where none arrived), for per-agent views and metrics.
	AgentIntervals []*measurement.Interval
}

// AgentStatus is what the coordinator knows about one agent.
type AgentStatus struct {
	Index    int
	Address  string
	Hostname string
	Version  string
	// State is one of connecting, preparing, ready, running, finished,
	// lost, failed.
	State       string
	ClockOffset time.Duration
	RTT         time.Duration
	StartSkew   time.Duration
	// Ops counts operations received from the agent so far; OpsPerSec
	// and CPUSeconds are for its latest interval.
	Ops        int64
	OpsPerSec  float64
	CPUSeconds float64
	Lag        time.Duration
	LastSeq    int64
	Reconnects int
	Error      string
}

// settings is a validated Config.
type settings struct {
	Config
	bench       *spec.Settings
	plan        *Plan
	agents      []string // normalised
	exporter    string
	exportFile  string
	maxErrRate  float64
	percentiles []float64
}

func invalid(format string, args ...any) error {
	return exitcode.Wrap(exitcode.InvalidConfig, fmt.Errorf(format, args...))
}

// validate checks everything that can be checked before contacting an
// agent. Errors carry exitcode.InvalidConfig and name the flag or
// property at fault.
func validate(cfg Config) (*settings, error) {
	s := &settings{Config: cfg}
	if s.Stdout == nil {
		s.Stdout = os.Stdout
	}
	if s.Stderr == nil {
		s.Stderr = os.Stderr
	}
	if s.Clock == nil {
		s.Clock = clock.NewReal()
	}
	if s.Props == nil {
		s.Props = properties.New()
	}
	switch s.OnAgentLoss {
	case "":
		s.OnAgentLoss = LossAbort
	case LossAbort, LossContinue:
	default:
		return nil, invalid("--on-agent-loss %q: expected %s or %s", s.OnAgentLoss, LossAbort, LossContinue)
	}
	if len(s.Agents) == 0 {
		return nil, invalid("--agents: no agents given (expected a comma-separated list of host[:port])")
	}
	first := map[string]string{}
	for _, a := range s.Agents {
		n, err := transport.NormalizeAddr(strings.TrimSpace(a))
		if err != nil {
			return nil, invalid("--agents: %v", err)
		}
		if prev, dup := first[n]; dup {
			return nil, invalid("--agents: duplicate agent %s (given as %q and %q)", n, prev, a)
		}
		first[n] = a
		s.agents = append(s.agents, n)
	}
	if s.Interval < 0 {
		return nil, invalid("--interval %s: expected a positive duration", s.Interval)
	}
	if s.MaxClockOffset == 0 {
		s.MaxClockOffset = DefaultMaxClockOffset
	}
	if s.AgentTimeout <= 0 {
		s.AgentTimeout = DefaultAgentTimeout
	}
	if s.PrepareTimeout <= 0 {
		s.PrepareTimeout = DefaultPrepareTimeout
	}
	if s.StopTimeout <= 0 {
		s.StopTimeout = DefaultStopTimeout
	}
	if err := s.TLS.Validate(); err != nil {
		return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	bs, err := spec.Validate(s.DB, s.Props, s.Phase)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	s.bench = bs
	s.percentiles = bs.Percentiles
	s.exporter = s.Props.String(PropExporter, ycsbtext.TextExporter)
	if err := ycsbtext.CheckExporter(s.exporter); err != nil {
		return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	s.exportFile = s.Props.String(PropExportFile, "")
	s.maxErrRate = -1
	if s.Props.Has(PropMaxErrorRate) {
		v, err := s.Props.Float64(PropMaxErrorRate, -1)
		if err != nil || v < 0 || v > 1 {
			return nil, exitcode.Wrap(exitcode.InvalidConfig, &properties.Error{Property: PropMaxErrorRate, Value: s.Props.String(PropMaxErrorRate, ""), Expected: "a fraction between 0 and 1"})
		}
		s.maxErrRate = v
	}
	if s.Interval == 0 {
		s.Interval = bs.StatusInterval
	}
	plan, err := NewPlan(s.Props, s.Phase, s.agents, s.Interval)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	s.plan = plan
	if s.ResultsDir != "" {
		if err := os.MkdirAll(s.ResultsDir, 0o755); err != nil {
			return nil, invalid("--results: %v", err)
		}
	}
	return s, nil
}

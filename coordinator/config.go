// Package coordinator drives a distributed YCSB run: it validates the
// configuration, splits the work among agents (Plan), synchronises their
// start at one absolute instant, merges their interval histograms exactly
// into a cluster view and applies the agent-loss policy. A Coordinator is
// a source of a run session (package session), which presents the merged
// intervals exactly as it presents a single host's.
package coordinator

import (
	"fmt"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
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
	// MinAgentTimeout is two of an agent's one-second heartbeats: a
	// shorter silence limit would call healthy agents lost.
	MinAgentTimeout = 2 * time.Second
	// MaxAgentTimeout bounds how long a run waits for a silent agent: a
	// dead one would otherwise hold the run (and its survivors' results)
	// for as long as the timeout says.
	MaxAgentTimeout = time.Minute
	// MinMaxClockOffset and MaxMaxClockOffset bound the clock-offset
	// limit. The check cannot be switched off: a limit of 0 would refuse
	// every agent (no two clocks agree to the nanosecond), and beyond 10
	// minutes the agents' intervals could not be aligned at all; 10m0s
	// accepts any clock that NTP keeps at all.
	MinMaxClockOffset     = time.Millisecond
	MaxMaxClockOffset     = 10 * time.Minute
	DefaultPrepareTimeout = 2 * time.Minute
	// DefaultStopTimeout bounds how long stopping agents may take to
	// deliver their last interval before the coordinator gives up.
	DefaultStopTimeout = 15 * time.Second
)

// MaxClockOffsetRange says what --max-clock-offset accepts, for its
// refusal and its help.
const MaxClockOffsetRange = "the largest difference between an agent's clock and the coordinator's that is accepted; the check cannot be switched off, 10m0s is the most lenient"

// Config is one coordinator invocation.
type Config struct {
	// Spec is the run, parsed and validated once; its properties are what
	// every agent receives (with its share of the work).
	Spec   *spec.Spec
	Agents []string
	// OnAgentLoss is LossAbort (default) or LossContinue.
	OnAgentLoss string
	TLS         *transport.TLSFiles
	Token       string
	// Logf receives the coordinator's notices (one line each); they are
	// dropped when nil.
	Logf  func(format string, args ...any)
	Clock clock.Clock
	// MaxClockOffset refuses agents whose clock differs more than this
	// from the coordinator's: from MinMaxClockOffset to
	// MaxMaxClockOffset, DefaultMaxClockOffset when 0 (unset).
	MaxClockOffset time.Duration
	// AgentTimeout declares an agent lost after this much silence
	// (DefaultAgentTimeout when 0).
	AgentTimeout time.Duration
	// PrepareTimeout bounds how long agents may take to open their
	// databases (DefaultPrepareTimeout when 0).
	PrepareTimeout time.Duration
	// StopTimeout bounds a graceful stop (DefaultStopTimeout when 0).
	StopTimeout time.Duration
	// Version overrides version.Version in what this coordinator
	// announces; tests use it to exercise the mismatch refusal.
	Version string
}

// settings is a validated Config.
type settings struct {
	Config
	plan   *Plan
	agents []string // normalised
	// Interval is how often agents cut intervals (the spec's).
	Interval time.Duration
}

func invalid(format string, args ...any) error {
	return exitcode.Wrap(exitcode.InvalidConfig, fmt.Errorf(format, args...))
}

// validate checks everything that can be checked before contacting an
// agent. Errors carry exitcode.InvalidConfig and name the flag or
// property at fault.
func validate(cfg Config) (*settings, error) {
	s := &settings{Config: cfg}
	if s.Spec == nil {
		return nil, invalid("coordinator: no run specification")
	}
	if s.Logf == nil {
		s.Logf = func(string, ...any) {}
	}
	if s.Clock == nil {
		s.Clock = clock.NewReal()
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
	agents, err := normalizeAgents(s.Agents)
	if err != nil {
		return nil, err
	}
	s.agents = agents
	switch {
	case s.MaxClockOffset == 0:
		s.MaxClockOffset = DefaultMaxClockOffset
	case s.MaxClockOffset < MinMaxClockOffset || s.MaxClockOffset > MaxMaxClockOffset:
		return nil, invalid("flag --max-clock-offset %s: expected at least %s and at most %s (%s)", s.MaxClockOffset, MinMaxClockOffset, MaxMaxClockOffset, MaxClockOffsetRange)
	}
	switch {
	case s.AgentTimeout == 0:
		s.AgentTimeout = DefaultAgentTimeout
	case s.AgentTimeout < MinAgentTimeout || s.AgentTimeout > MaxAgentTimeout:
		return nil, invalid("flag --agent-timeout %s: expected at least %s and at most %s (agents send a heartbeat every second)", s.AgentTimeout, MinAgentTimeout, MaxAgentTimeout)
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
	s.Interval = s.Spec.CutInterval
	plan, err := NewPlan(s.Spec, s.agents)
	if err != nil {
		return nil, exitcode.Wrap(exitcode.InvalidConfig, err)
	}
	s.plan = plan
	return s, nil
}

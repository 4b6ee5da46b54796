package coordinator

import (
	"context"
	"io"
	"strconv"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/session"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/transport"
)

// runConfig is one coordinator command as the tests describe it: the
// coordinator's Config plus what the command line adds (db, phase,
// properties, output flags).
type runConfig struct {
	DB          string
	Phase       run.Phase
	Props       *properties.Properties
	Agents      []string
	ResultsDir  string
	OnAgentLoss string
	TLS         *transport.TLSFiles
	Token       string
	Label       string
	Status      bool
	Stdout      io.Writer
	Stderr      io.Writer
	Clock       clock.Clock
	// Interval sets status.interval, as --interval does.
	Interval       time.Duration
	MaxClockOffset time.Duration
	AgentTimeout   time.Duration
	PrepareTimeout time.Duration
	StopTimeout    time.Duration
	// Observers see every merged interval.
	Observers []run.Sink
	// Abort, when closed, aborts the run (the operator's second Ctrl-C).
	Abort   <-chan struct{}
	Version string
}

// runSession runs rc the way `ycsbctl coordinator` does: one parsed spec,
// a session presenting a Coordinator.
func runSession(ctx context.Context, rc runConfig) (exitcode.Code, error) {
	p := properties.New()
	if rc.Props != nil {
		p = rc.Props.Clone()
	}
	if rc.ResultsDir != "" {
		p.Set(spec.PropResults, rc.ResultsDir)
	}
	if rc.Status {
		p.Set(spec.PropStatus, "true")
	}
	if rc.Label != "" {
		p.Set(spec.PropLabel, rc.Label)
	}
	if rc.Interval > 0 {
		p.Set(spec.PropStatusInterval, strconv.FormatFloat(rc.Interval.Seconds(), 'g', -1, 64))
	}
	sp, err := spec.Parse(rc.DB, p, rc.Phase)
	if err != nil {
		return exitcode.InvalidConfig, err
	}
	if rc.Stdout == nil {
		rc.Stdout = io.Discard
	}
	if rc.Stderr == nil {
		rc.Stderr = io.Discard
	}
	s := session.New(session.Options{Spec: sp, Stdout: rc.Stdout, Stderr: rc.Stderr, Clock: rc.Clock, Sinks: rc.Observers,
		CommandLine: []string{"ycsbctl", "coordinator", rc.Phase.String(), rc.DB}})
	c, err := New(Config{Spec: sp, Agents: rc.Agents, OnAgentLoss: rc.OnAgentLoss, TLS: rc.TLS, Token: rc.Token, Logf: s.Logf,
		Clock: rc.Clock, MaxClockOffset: rc.MaxClockOffset, AgentTimeout: rc.AgentTimeout, PrepareTimeout: rc.PrepareTimeout,
		StopTimeout: rc.StopTimeout, Version: rc.Version})
	if err != nil {
		return exitcode.Of(err), err
	}
	if rc.Abort != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-rc.Abort:
				c.Abort("aborted by operator")
			case <-done:
			}
		}()
	}
	err = s.Run(ctx, c)
	return exitcode.Of(err), err
}

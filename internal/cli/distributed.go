package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/coordinator"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/session"
	"github.com/ycsbctl/ycsbctl/internal/sink/metrics"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/transport"
)

// securityFlags are the mTLS and token flags shared by agent and
// coordinator.
type securityFlags struct {
	cert, key, ca    string
	token, tokenFile string
}

func (s *securityFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&s.cert, "tls-cert", "", "PEM certificate for mutual TLS")
	fl.StringVar(&s.key, "tls-key", "", "PEM private key for --tls-cert")
	fl.StringVar(&s.ca, "tls-ca", "", "PEM CA that signed the peer's certificate")
	fl.StringVar(&s.token, "token", "", "shared secret the coordinator must present, at least 16 characters (prefer --token-file or YCSBCTL_TOKEN)")
	fl.StringVar(&s.tokenFile, "token-file", "", "file holding the shared secret")
}

func (s *securityFlags) resolve(gs *GlobalState) (*transport.TLSFiles, string, error) {
	var tlsFiles *transport.TLSFiles
	if s.cert != "" || s.key != "" || s.ca != "" {
		if s.cert == "" || s.key == "" || s.ca == "" {
			return nil, "", invalid(errors.New("flags --tls-cert, --tls-key and --tls-ca: expected all three together for mutual TLS"))
		}
		tlsFiles = &transport.TLSFiles{Cert: s.cert, Key: s.key, CA: s.ca}
		if err := tlsFiles.Validate(); err != nil {
			return nil, "", invalid(fmt.Errorf("flag --tls-cert/--tls-key/--tls-ca: %w", err))
		}
	}
	if w := tlsFiles.KeyWarning(); w != "" {
		fmt.Fprintln(gs.Stderr, w)
	}
	token, from := s.token, "flag --token"
	if s.tokenFile != "" {
		if token != "" {
			return nil, "", invalid(errors.New("flags --token and --token-file: expected at most one"))
		}
		b, err := gs.ReadFile(s.tokenFile)
		if err != nil {
			return nil, "", invalid(fmt.Errorf("flag --token-file: %w", err))
		}
		token, from = strings.TrimSpace(string(b)), "flag --token-file "+s.tokenFile
		if token == "" {
			return nil, "", invalid(fmt.Errorf("flag --token-file %s: the file is empty", s.tokenFile))
		}
	}
	if token == "" && gs.Getenv != nil {
		token, from = gs.Getenv("YCSBCTL_TOKEN"), "YCSBCTL_TOKEN (the token when neither --token nor --token-file is given)"
	}
	if err := transport.CheckToken(token, from); err != nil {
		return nil, "", invalid(err)
	}
	return tlsFiles, token, nil
}

func newAgentCmd(gs *GlobalState) *cobra.Command {
	var (
		listen      string
		lease       time.Duration
		insecure    bool
		metricsAddr string
		overrides   []string
		sec         securityFlags
	)
	cmd := &cobra.Command{
		Use:   "agent [--listen HOST:PORT] [--tls-cert F --tls-key F --tls-ca F] [--token-file F] [-p k=v]...",
		Short: "Run the benchmark agent daemon on a database host (one benchmark at a time)",
		Long: `Runs the agent that a coordinator drives over gRPC. It listens on port 7420
by default; without TLS it binds loopback only unless --insecure-listen is
given. An agent that hears nothing from its coordinator for --lease stops its
load by itself, and does not start a load unless its coordinator was heard
from just before the start instant. -p properties apply on top of every
run's: per-host settings only (hosts, connection and TLS settings,
embedded.dir); properties the coordinator's plan owns (record and operation
counts, target, threads, time limits, warm-up, measurement settings, the
workload) are refused (exit 2), and so are the output properties an agent
never reads (exportfile, status, hdrhistogram.*, ycsbctl.results, ...: the
coordinator presents the run). The token (--token, --token-file or
YCSBCTL_TOKEN) has at least 16 characters; wrong tokens are throttled per
address and logged.

SIGTERM or Ctrl-C stops a run in progress and hands it over: the last
intervals and a final account saying the agent was stopped go to the
coordinator, which records the agent as stopped with everything it
measured; the agent waits up to 5s for the acknowledgement. A second signal
ends the agent at once.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			tlsFiles, token, err := sec.resolve(gs)
			if err != nil {
				return err
			}
			props := map[string]string{}
			for _, o := range overrides {
				k, v, err := properties.ParseOverride(o)
				if err != nil {
					return invalid(err)
				}
				props[k] = v
			}
			if err := checkDuration("--lease", lease, agent.MinLease, agent.MaxLease, "the coordinator renews the lease every second"); err != nil {
				return err
			}
			if err := spec.CheckAgentProperties("", props); err != nil {
				return invalid(err)
			}
			ctx, force, stop := agentSignals(gs)
			defer stop()
			logf := func(format string, a ...any) {
				fmt.Fprintf(gs.Stderr, "%s agent: %s\n", time.Now().Format("2006-01-02 15:04:05"), fmt.Sprintf(format, a...))
			}
			var sink func(run.Info, *spec.Spec) run.Sink
			if metricsAddr != "" {
				addr, err := metrics.NormalizeAddr(metricsAddr)
				if err != nil {
					return invalid(fmt.Errorf("flag --metrics-addr: %w", err))
				}
				exp := metrics.New()
				srv, err := metrics.Listen(addr, exp.Handler())
				if err != nil {
					return invalid(fmt.Errorf("flag --metrics-addr %s: %w", addr, err))
				}
				fmt.Fprintf(gs.Stderr, "Prometheus metrics: %s\n", srv.URL())
				defer func() { _ = srv.Close() }()
				// The agent's series carry the coordinator's run id, so
				// they line up with the coordinator's own.
				sink = func(info run.Info, sp *spec.Spec) run.Sink {
					return exp.NewSink(metrics.RunInfo{RunID: info.RunID, Phase: sp.Phase.String(), DB: sp.DB, Mode: sp.Mode, Start: info.Started,
						Agents: info.Agents, Ops: metrics.PlannedOps(sp.Phase, sp.Workload), HostMetrics: sp.Telemetry.HostMetrics}, gs.Clock.Now)
				}
			}
			err = agent.Serve(ctx, agent.Config{
				Sink:             sink,
				Listen:           listen,
				TLS:              tlsFiles,
				Token:            token,
				Lease:            lease,
				Clock:            gs.Clock,
				Logf:             logf,
				AllowNonLoopback: insecure,
				Properties:       props,
				Force:            force,
				Ready:            func(addr string) { logf("listening on %s", addr) },
			})
			if err != nil && ctx.Err() == nil {
				var ce *exitcode.Error
				if errors.As(err, &ce) {
					return err
				}
				return invalid(err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", "", "address to listen on (default 127.0.0.1:7420; port 7420 when only a host is given)")
	fl.DurationVar(&lease, "lease", agent.DefaultLease, "stop the load after this long without hearing from the coordinator")
	fl.BoolVar(&insecure, "insecure-listen", false, "allow listening on non-loopback addresses without TLS (warns)")
	fl.StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus metrics of this agent's runs at http://ADDR/metrics")
	fl.StringArrayVarP(&overrides, "p", "p", nil, "property applied on top of every run's (repeatable)")
	sec.register(cmd)
	return cmd
}

func newCoordinatorCmd(gs *GlobalState) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "coordinator load|run|capacity [db] --agents HOST:PORT,... [-P workload]... [-p k=v]... [-threads N] [-target OPS] [-s]",
		Short: "Run a benchmark on many agents at once, merging their histograms exactly",
	}
	groupCommand(cmd)
	cmd.AddCommand(newCoordinatorPhaseCmd(gs, run.Load), newCoordinatorPhaseCmd(gs, run.Run), newCapacityCmd(gs, true))
	return cmd
}

func newCoordinatorPhaseCmd(gs *GlobalState, phase run.Phase) *cobra.Command {
	f := &ycsbFlags{}
	var dist distributedFlags
	cmd := &cobra.Command{
		Use:   phase.String() + " [db] --agents HOST:PORT,HOST:PORT,... [-P workload]... [-p k=v]... [-threads N] [-target OPS] [-s] [--results DIR]",
		Short: "Distributed " + phase.String() + " phase: split the work across agents, start them together, merge their results",
		Long: `The coordinator splits the work deterministically across the agents in the
order given: the load phase gives each agent a contiguous part of
[insertstart, insertstart+insertcount); -threads is per agent; operationcount
and -target are split by share; run-phase inserts are striped so that no two
agents insert the same key. It starts every agent at one instant, merges
their HDR histograms exactly every status.interval, and presents the merged
run exactly like a single host's: status lines (-s), timeseries, the HDR
file log, the live view, /metrics, the final YCSB summary and the run
bundle (--results DIR).`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			sp, err := parseSpec(gs, cmd, f, args, phase)
			if err != nil {
				return err
			}
			cfg, err := dist.config(gs, nil, true)
			if err != nil {
				return err
			}
			return f.asTyped(sp.Props, runSpec(gs, sp, cfg, sessionExtras{}))
		},
	}
	f.register(cmd, coordinatorSettingFlags...)
	dist.register(cmd)
	return cmd
}

// distributedFlags are how a coordinator reaches and judges its agents:
// the agent list, mutual TLS and the token, the agent-loss policy and the
// clock and silence limits. `coordinator load|run` and `suite` take the
// same flags from this one definition.
type distributedFlags struct {
	agents       []string
	onLoss       string
	maxOffset    time.Duration
	agentTimeout time.Duration
	sec          securityFlags
}

func (d *distributedFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringSliceVar(&d.agents, "agents", nil, "agent addresses in order, host:port, comma separated (port defaults to 7420)")
	fl.StringVar(&d.onLoss, "on-agent-loss", coordinator.LossAbort, "when an agent is lost: abort (stop everything, exit 3) or continue (results marked partial)")
	fl.DurationVar(&d.maxOffset, "max-clock-offset", coordinator.DefaultMaxClockOffset, "refuse agents whose clock differs more than this from the coordinator's (from 1ms to 10m; the check cannot be switched off)")
	fl.DurationVar(&d.agentTimeout, "agent-timeout", coordinator.DefaultAgentTimeout, "declare an agent lost after this much silence")
	d.sec.register(cmd)
}

// config is the coordinator configuration every distributed run of the
// command shares (the spec and the log are each run's own): the agents
// given with --agents, else fallback (a suite file's agents). Without
// agents it is nil (TLS or a token are then an error) unless required,
// when the coordinator refuses the empty list itself.
func (d *distributedFlags) config(gs *GlobalState, fallback []string, required bool) (*coordinator.Config, error) {
	agents := splitAgents(d.agents)
	if len(agents) == 0 {
		agents = fallback
	}
	tlsFiles, token, err := d.sec.resolve(gs)
	if err != nil {
		return nil, err
	}
	if len(agents) == 0 && !required {
		if tlsFiles != nil || token != "" {
			return nil, invalid(errors.New("flags --tls-cert/--tls-key/--tls-ca and --token-file secure the connections to agents: expected --agents too"))
		}
		return nil, nil
	}
	for _, c := range []struct {
		flag           string
		v, least, most time.Duration
		why            string
	}{
		{"--agent-timeout", d.agentTimeout, coordinator.MinAgentTimeout, coordinator.MaxAgentTimeout, "agents send a heartbeat every second"},
		{"--max-clock-offset", d.maxOffset, coordinator.MinMaxClockOffset, coordinator.MaxMaxClockOffset, coordinator.MaxClockOffsetRange},
	} {
		if err := checkDuration(c.flag, c.v, c.least, c.most, c.why); err != nil {
			return nil, err
		}
	}
	return &coordinator.Config{Agents: agents, OnAgentLoss: d.onLoss, TLS: tlsFiles, Token: token, Clock: gs.Clock,
		MaxClockOffset: d.maxOffset, AgentTimeout: d.agentTimeout}, nil
}

// checkDuration refuses a duration flag outside [least, most], naming the
// flag, the value and the range (exit 2).
func checkDuration(flag string, v, least, most time.Duration, why string) error {
	if v >= least && v <= most {
		return nil
	}
	return invalid(fmt.Errorf("flag %s %s: expected at least %s and at most %s (%s)", flag, v, least, most, why))
}

// agentSignals is the agent's handling of SIGINT and SIGTERM: the first
// cancels the returned context, with the signal as its cause, so that the
// agent hands its run over; the second closes force, ending it at once.
func agentSignals(gs *GlobalState) (ctx context.Context, force <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancelCause(gs.Ctx)
	sigs := make(chan os.Signal, 2)
	gs.SignalNotify(sigs, os.Interrupt, syscall.SIGTERM)
	forced := make(chan struct{})
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case sig := <-sigs:
				if n++; n == 1 {
					cancel(errors.New(session.SignalName(sig)))
					continue
				}
				close(forced)
				return
			case <-done:
				return
			}
		}
	}()
	return ctx, forced, func() {
		gs.SignalStop(sigs)
		close(done)
		cancel(nil)
	}
}

func splitAgents(in []string) []string {
	var out []string
	for _, a := range in {
		for _, s := range strings.Split(a, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

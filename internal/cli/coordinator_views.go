package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/coordinator"
	"github.com/ycsbctl/ycsbctl/internal/sink/metrics"
	"github.com/ycsbctl/ycsbctl/internal/sink/tui"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// CoordinatorViews is the live view and the /metrics endpoint of a
// coordinator run. The coordinator command wires them in with
// AttachCoordinatorViews, after filling cfg and before coordinator.Run:
//
//	ctx, cancel := context.WithCancel(gs.Ctx) // cancel = graceful stop
//	views, err := AttachCoordinatorViews(gs, &cfg, func(abort bool) { ... })
//	if err != nil {
//		return err
//	}
//	defer views.Close()
//	code, err := coordinator.Run(ctx, cfg)
//
// It appends observers to cfg.Observers and, when the live view is on,
// wraps cfg.Stdout and cfg.Stderr: the coordinator's log lines show under
// the view, and the first write to stdout (the final summary) closes the
// view first, so the summary lands on the restored terminal.
type CoordinatorViews struct {
	live   *tui.View
	server *metrics.Server
	stderr io.Writer
	once   sync.Once
	mu     sync.Mutex
	closed bool
	owned  bool
}

// AttachCoordinatorViews sets up what cfg.Props asks for:
// ycsbctl.metrics.addr (--metrics-addr) and the live view
// (ycsbctl.tui, on when stdout is a terminal). stop is what q and Ctrl-C
// in the view do: stop(false) must stop the run gracefully (for example
// cancel Run's context), stop(true) abort it.
func AttachCoordinatorViews(gs *GlobalState, cfg *coordinator.Config, stop func(abort bool)) (*CoordinatorViews, error) {
	v := &CoordinatorViews{stderr: cfg.Stderr}
	if v.stderr == nil {
		v.stderr = gs.Stderr
	}
	if addr := cfg.Props.String(PropMetricsAddr, ""); addr != "" {
		exp := metrics.New()
		srv, err := ServeMetrics(v.stderr, addr, exp)
		if err != nil {
			return nil, invalid(err)
		}
		v.server = srv
		cfg.Observers = append(cfg.Observers, CoordinatorMetrics(exp, cfg))
	}
	ok, why := liveWanted(gs, cfg.Props, cfg.DB)
	if why != "" {
		fmt.Fprintln(v.stderr, why)
	}
	if !ok {
		return v, nil
	}
	s, err := coordinatorSettings(cfg)
	if err != nil {
		// Run refuses the same configuration with a better message.
		return v, nil
	}
	v.live = tui.New(tui.Config{
		Command: "coordinator " + cfg.Phase.String(), DB: cfg.DB, Phase: cfg.Phase, Threads: s.Threads, Target: s.Target,
		Interval: s.StatusInterval, Budget: s.OpCount, MaxExecution: s.MaxExecution, Distributed: true,
	}, gs.Stdin, gs.Stdout)
	cfg.Observers = append(cfg.Observers, coordinator.ObserverFunc(func(u *coordinator.Update) { v.live.Update(coordinatorSnapshot(u)) }))
	stdout := cfg.Stdout
	if stdout == nil {
		stdout = gs.Stdout
	}
	cfg.Stdout = &closeOnWrite{v: v, w: stdout}
	if tui.IsTerminal(v.stderr) {
		v.owned = true
		cfg.Stderr = &viewStderr{v: v}
		// The view replaces the status lines, as on a single host.
		cfg.Status = false
	}
	v.live.Start(stop)
	return v, nil
}

// Close gives the terminal back and stops /metrics; safe to call twice.
func (v *CoordinatorViews) Close() {
	v.closeView()
	if v.server != nil {
		_ = v.server.Close()
		v.server = nil
	}
}

func (v *CoordinatorViews) closeView() {
	v.once.Do(func() {
		if v.live == nil {
			return
		}
		if err := v.live.Close(); err != nil {
			fmt.Fprintf(v.stderr, "live view: %v\n", err)
		}
		v.mu.Lock()
		v.closed = true
		v.mu.Unlock()
		if v.owned {
			for _, l := range v.live.Logs() {
				fmt.Fprintln(v.stderr, l)
			}
		}
	})
}

// closeOnWrite closes the view before the first byte of the summary.
type closeOnWrite struct {
	v *CoordinatorViews
	w io.Writer
}

func (c *closeOnWrite) Write(p []byte) (int, error) {
	c.v.closeView()
	return c.w.Write(p)
}

// viewStderr sends log lines into the view while it is up, to stderr
// afterwards.
type viewStderr struct {
	v  *CoordinatorViews
	lw io.Writer
}

func (s *viewStderr) Write(p []byte) (int, error) {
	s.v.mu.Lock()
	closed := s.v.closed
	if s.lw == nil {
		s.lw = s.v.live.Writer()
	}
	s.v.mu.Unlock()
	if closed {
		return s.v.stderr.Write(p)
	}
	return s.lw.Write(p)
}

// coordinatorSnapshot turns a coordinator update into what the view shows.
func coordinatorSnapshot(u *coordinator.Update) tui.Snapshot {
	sn := tui.Snapshot{RunID: u.RunID, Progress: u.Progress, Interval: u.Interval, Cumulative: u.Cumulative}
	secs := 0.0
	if u.Interval != nil {
		secs = time.Duration(u.Interval.EndNs - u.Interval.StartNs).Seconds()
	}
	for _, a := range u.Agents {
		ag := tui.Agent{Name: a.Address, Host: a.Hostname, State: a.State, OpsPerSec: a.OpsPerSec, Lag: a.Lag, ClockOffset: a.ClockOffset, Error: a.Error}
		if secs > 0 {
			ag.CPU = a.CPUSeconds / secs
		}
		sn.Agents = append(sn.Agents, ag)
	}
	return sn
}

// CoordinatorMetrics exposes a coordinator's view on exp: latency
// histograms and operation counters per agent (labelled with the agent's
// address; sum across agents for the cluster), and agent state, clock
// offset, lag, interval delay and CPU per agent.
func CoordinatorMetrics(exp *metrics.Exporter, cfg *coordinator.Config) coordinator.Observer {
	var mu sync.Mutex
	started := false
	cpu := map[int]float64{}
	seen := map[int]int64{}
	return coordinator.ObserverFunc(func(u *coordinator.Update) {
		mu.Lock()
		defer mu.Unlock()
		if !started || exp.Run().RunID != u.RunID {
			started = true
			var start time.Time
			if u.Interval != nil && u.Interval.StartNs > 0 {
				start = time.Unix(0, u.Interval.StartNs)
			}
			s, _ := coordinatorSettings(cfg)
			info := metrics.RunInfo{RunID: u.RunID, Phase: cfg.Phase.String(), Workload: cfg.Props.String("workload", "core"), DB: cfg.DB, Start: start}
			if s != nil {
				info.Mode = s.Mode
			}
			exp.SetRun(info)
		}
		if !u.Progress.Warmup {
			// Per-agent series, labelled by address, aggregate with
			// sum by (...) across agents; "all" is only a fallback
			// for an update that carries no per-agent intervals.
			if len(u.AgentIntervals) == 0 {
				exp.ObserveInterval("all", u.Interval)
			}
			for i, iv := range u.AgentIntervals {
				if iv != nil && i < len(u.Agents) {
					exp.ObserveInterval(u.Agents[i].Address, iv)
				}
			}
		}
		now := time.Now()
		for _, a := range u.Agents {
			// CPUSeconds is per interval: accumulate it once per new
			// interval into the counter Prometheus expects.
			if a.LastSeq > seen[a.Index] {
				cpu[a.Index] += a.CPUSeconds
				seen[a.Index] = a.LastSeq
			}
			st := metrics.AgentStatus{State: a.State, ClockOffset: a.ClockOffset, Lag: a.Lag, CPUSeconds: cpu[a.Index]}
			if u.Interval != nil && u.Interval.EndNs > 0 {
				st.IntervalDelay = max(now.Sub(time.Unix(0, u.Interval.EndNs)), 0)
			}
			exp.SetAgentStatus(a.Address, st)
		}
	})
}

// coordinatorSettings parses the client-level settings of a coordinator
// run (threads per agent, cluster-wide target and budget).
func coordinatorSettings(cfg *coordinator.Config) (*spec.Settings, error) {
	if cfg.Props == nil {
		return nil, fmt.Errorf("no properties")
	}
	return spec.ParseSettings(cfg.Props, cfg.Phase)
}

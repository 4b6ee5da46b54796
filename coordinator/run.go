package coordinator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// The coordinator's files, by concern:
//
//	run.go         the Coordinator: connect, run the loop, release the agents
//	probe.go       dialing and probing agents, and RPC errors in operator language
//	agentstate.go  one agent's life in the run: its state machine
//	loop.go        the event loop: agent messages, merging and sealing, the start
//	loss.go        silence, stalls, departures and the --on-agent-loss policy
//	outcome.go     how the run ended: status, reasons, exit code
//	conn.go        the gRPC stream to one agent, re-dialed and resumed

// runPhase is where the whole run is; each agent's own state is agentState.
type runPhase uint8

const (
	phasePreparing runPhase = iota
	phaseRunning
	phaseStopping
)

// Coordinator is one distributed run: the source of a run session
// (session.Source). Its state is owned by its event loop; Stop and Abort
// only post requests to it.
type Coordinator struct {
	s       *settings
	sink    run.Sink
	stopCh  chan string
	abortCh chan string
	// interrupted is canceled by the first Stop or Abort, so that work
	// before the event loop (probing, waiting for an agent ending its
	// previous run) gives up at once.
	interrupted context.Context
	interrupt   context.CancelFunc
	// aborted is closed by the first Abort. abortCh is read only by the
	// event loop; an abort that comes once the loop has ended (the
	// operator's second Ctrl-C while agents are slow to confirm their
	// release) cuts the release wait short through aborted.
	aborted   chan struct{}
	abortOnce sync.Once
	clk       clock.Clock
	runID     string
	self      transport.Identity
	agents    []*agentRun
	events    chan event
	done      chan struct{}
	m         *merger
	// rec is the run's record: every accepted interval record is added
	// to it; nil when the run is not recorded.
	rec *bundle.Recorder
	dec wire.Decoded

	phase        runPhase
	startedWall  time.Time
	began        int64 // clk.Nanotime when the coordinator began
	plannedStart int64 // coordinator-clock Unix ns
	measureStart int64
	prepDeadline int64
	stopDeadline int64
	stopReason   string
	// ending is why the run was stopped before its end, if it was.
	ending     endCause
	runFailure error
	lastHB     int64
	// lastAwake is when the loop last ran; a gap longer than stallExcuse
	// is a stall of this process. longestStall is the longest one.
	lastAwake    int64
	longestStall time.Duration
	// agentWarnings holds what agents' own parses warn about, by text,
	// with the agents that said it: printed once, before the start.
	agentWarnings map[string][]int
	warningOrder  []string
	// missing holds each agent's unmeasured intervals, for run.json.
	missing []string
	notes   []string
	mergeNs int64
	sealed  int64
	// propDiffs are the properties the agents do not all run with.
	propDiffs []bundle.PropertyDifference
}

// New validates a distributed run; errors name the flag or property at
// fault and carry exitcode.InvalidConfig. Nothing is contacted yet.
func New(cfg Config) (*Coordinator, error) {
	s, err := validate(cfg)
	if err != nil {
		return nil, err
	}
	c := &Coordinator{s: s, clk: s.Clock, events: make(chan event, 4096), done: make(chan struct{}),
		stopCh: make(chan string, 1), abortCh: make(chan string, 1), aborted: make(chan struct{}), agentWarnings: map[string][]int{}}
	c.interrupted, c.interrupt = context.WithCancel(context.Background())
	c.startedWall = c.clk.Now()
	c.began = c.clk.Nanotime()
	c.runID = run.NewID(c.startedWall)
	c.self = transport.Identity{Version: version.Version, Protocol: version.Protocol}
	if s.Version != "" {
		c.self.Version = s.Version
	}
	return c, nil
}

// Info describes the run.
func (c *Coordinator) Info() run.Info {
	return run.Info{RunID: c.runID, Mode: run.ModeDistributed, Command: "coordinator " + c.s.Spec.Phase.String(),
		Agents: c.s.agents, Threads: c.s.plan.ThreadsPerAgent, Started: c.startedWall}
}

// Stop asks every agent to stop gracefully; their last intervals are still
// collected.
func (c *Coordinator) Stop(reason string) {
	c.interrupt()
	select {
	case c.stopCh <- reason:
	default:
	}
}

// Abort asks every agent to stop at once, cancelling calls in flight.
func (c *Coordinator) Abort(reason string) {
	c.interrupt()
	c.abortOnce.Do(func() { close(c.aborted) })
	select {
	case c.abortCh <- reason:
	default:
	}
}

// Run executes the distributed phase, handing every merged interval to
// sink and every accepted record to rec (when the run is recorded), and
// returns how it ended. ctx being cancelled stops the agents gracefully,
// as Stop does.
func (c *Coordinator) Run(ctx context.Context, sink run.Sink, rec *bundle.Recorder) *run.Outcome {
	c.sink = sink
	if c.sink == nil {
		c.sink = run.Sinks{}
	}
	c.rec = rec
	out, err := c.execute(ctx)
	if out == nil {
		// The run never started: nothing was measured, so there is no
		// summary or bundle to write.
		out = &run.Outcome{Total: measurement.NewInterval(0, 0, 0), Status: run.StatusAborted, NeverStarted: true}
	}
	if err != nil && out.Err == nil {
		out.Err = err
	}
	return out
}

func (c *Coordinator) logf(format string, args ...any) { c.s.Logf(format, args...) }

// since is how long the coordinator has been running, for journals.
func (c *Coordinator) since() time.Duration { return time.Duration(c.clk.Nanotime() - c.began) }

func (c *Coordinator) execute(ctx context.Context) (*run.Outcome, error) {
	s := c.s
	c.logf("ycsbctl coordinator %s: %s %s on %s, run %s", c.self.Version, s.Spec.Phase, s.Spec.DB, plural.Count(len(s.agents), "agent"), c.runID)
	if s.Token != "" && !s.TLS.Enabled() {
		for _, a := range s.agents {
			host := a[:strings.LastIndex(a, ":")]
			if !isLoopbackHost(host) {
				c.logf("WARNING: --token is sent in clear text to %s without TLS", a)
				break
			}
		}
	}

	// Connect and measure clocks. Everything that can refuse (token,
	// certificate, version, busy, clock offset, plan-owned agent
	// properties) refuses here, before any agent touches a database.
	connCtx, cancelConns := context.WithCancel(context.Background())
	defer cancelConns()
	probeCtx, cancelProbe := context.WithCancel(ctx)
	defer cancelProbe()
	defer context.AfterFunc(c.interrupted, cancelProbe)()
	name := coordinatorName()
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, addr := range s.agents {
		a := &agentRun{idx: i, addr: addr, state: stConnecting}
		c.agents = append(c.agents, a)
		cc, err := transport.Dial(addr, s.TLS, s.Token, c.self)
		if err != nil {
			return nil, exitcode.Wrap(exitcode.Failure, fmt.Errorf("agent %d (%s): %w", i, addr, err))
		}
		h := &pb.Hello{Version: c.self.Version, Protocol: c.self.Protocol, RunId: c.runID, Coordinator: name, AgentIndex: int32(i)}
		a.conn = newConn(i, addr, cc, h, c.events, c.done)
		defer func() { _ = cc.Close() }()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.probe(probeCtx, a); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if probeCtx.Err() != nil {
		return nil, exitcode.Wrap(exitcode.Aborted, errors.New("interrupted before the run started"))
	}
	if len(errs) > 0 {
		return nil, probeErrors(errs)
	}
	for _, a := range c.agents {
		c.logf("agent %d %s (%s, %s): clock offset %s, rtt %s", a.idx, a.addr, a.hostname, a.version, fmtDur(a.offset), fmtDur(a.rtt))
		if a.lease > 0 && a.lease <= s.AgentTimeout {
			c.logf("WARNING: agent %d (%s) stops its load after %s without word from this coordinator, before --agent-timeout %s declares it lost", a.idx, a.addr, a.lease, s.AgentTimeout)
		}
	}
	c.comparePropertiesOfAgents()

	c.m = newMerger(len(c.agents))
	c.m.keepAgents = true
	if c.rec != nil {
		// The run's record starts before any agent prepares: the agents
		// and their clocks are known now.
		c.describe(c.rec.Meta)
		if err := c.rec.Start(); err != nil {
			return nil, exitcode.Wrap(exitcode.Failure, fmt.Errorf("--results: %w", err))
		}
	}

	var loops sync.WaitGroup
	for _, a := range c.agents {
		loops.Add(1)
		go func(a *agentRun) {
			defer loops.Done()
			a.conn.loop(connCtx)
		}(a)
	}
	c.phase = phasePreparing
	c.prepDeadline = c.clk.Nanotime() + int64(s.PrepareTimeout)
	out, err := c.loop(ctx)

	c.releaseAgents()
	cancelConns()
	loops.Wait()
	return out, err
}

// releaseWait bounds how long the coordinator waits, after the run, for
// its agents to confirm their Release; abortReleaseWait bounds it after
// the operator aborted, who wants the terminal back at once, whether the
// abort came during the run or during that wait.
const (
	releaseWait      = 10 * time.Second
	abortReleaseWait = time.Second
)

// releaseAgents releases every agent and waits, within releaseWait, until
// each one that still takes part in the run has confirmed it: an agent
// confirms once it has ended the run (workers gone, database closed), so
// the next coordinator finds it free. Agents that end the run by
// themselves (see endsByItself) are released if they can be reached but
// not waited for. An abort (the operator's second Ctrl-C, or the stop
// grace running out) that comes during the wait shortens what is left of
// it to abortReleaseWait. The coordinator loop has ended, so the agents'
// state is ours to read.
func (c *Coordinator) releaseAgents() {
	for _, a := range c.agents {
		a.conn.release()
	}
	close(c.done)
	began := time.Now()
	deadline := began.Add(releaseWait)
	aborted := c.aborted
	if c.ending == endOperatorAbort {
		deadline, aborted = began.Add(abortReleaseWait), nil
	}
	var unconfirmed []string
	for _, a := range c.agents {
		if a.endsByItself() {
			continue
		}
		for waiting := true; waiting; {
			timer := time.NewTimer(time.Until(deadline))
			select {
			case <-a.conn.loopDone:
				waiting = false
			case <-timer.C:
				waiting = false
			case <-aborted:
				// Waiting on: the Release may still be on its way to an
				// agent that is merely slow, and without it the agent holds
				// the run until its lease runs out.
				aborted = nil
				if d := time.Now().Add(abortReleaseWait); d.Before(deadline) {
					deadline = d
				}
				c.logf("Aborted: not waiting more than %s for the agents to confirm the end of run %s", abortReleaseWait, c.runID)
			}
			timer.Stop()
		}
		if a.conn.wasAccepted() && !a.conn.isReleased() {
			unconfirmed = append(unconfirmed, fmt.Sprintf("agent %d (%s)", a.idx, a.addr))
		}
	}
	if len(unconfirmed) > 0 {
		c.logf("%s did not confirm the end of run %s within %s; an agent that missed its Release ends the run by itself when its lease runs out",
			strings.Join(unconfirmed, ", "), c.runID, time.Since(began).Round(100*time.Millisecond))
	}
}

func coordinatorName() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("coordinator %s (pid %d)", h, os.Getpid())
}

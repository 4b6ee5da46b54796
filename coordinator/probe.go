package coordinator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// pingSamples per agent for the clock-offset estimate.
const pingSamples = 8

// endingWait bounds the wait for an agent that is ending its previous
// run; endingPoll is how often it is asked again.
const (
	endingWait = 30 * time.Second
	endingPoll = 200 * time.Millisecond
)

// probe pings an agent: identity, busy state, clock offset, lease and
// the properties it adds to every run. Everything that can refuse the run
// refuses here, before any agent touches a database; a refusal that is
// the operator's input (a plan-owned agent property) carries
// exitcode.InvalidConfig.
func (c *Coordinator) probe(ctx context.Context, a *agentRun) error {
	off, rtt, resp, err := probeClock(ctx, a.conn.cli, c.clk, pingSamples)
	// An agent still ending its previous run (released, or its lease ran
	// out: it is letting in-flight requests finish and closing its
	// database) is free in a moment: wait for it, within a bound, rather
	// than refuse. A run that is not ending belongs to a live coordinator,
	// or to one that died and whose lease has not yet run out: refused.
	for waited := time.Duration(0); err == nil && resp.BusyRun != "" && resp.BusyEnding && waited < endingWait; waited += endingPoll {
		if waited == 0 {
			c.logf("agent %d (%s) is still ending run %s; waiting up to %s", a.idx, a.addr, resp.BusyRun, endingWait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("agent %d (%s): interrupted while it was ending run %s", a.idx, a.addr, resp.BusyRun)
		case <-time.After(endingPoll):
		}
		off, rtt, resp, err = probeClock(ctx, a.conn.cli, c.clk, pingSamples)
	}
	if err != nil {
		msg := transport.Describe(err, transport.Call{TLS: c.s.TLS.Enabled(), First: true})
		return fmt.Errorf("agent %d (%s): %s", a.idx, a.addr, msg)
	}
	a.hostname, a.version, a.protocol = resp.Hostname, resp.Version, resp.Protocol
	peer := transport.Identity{Version: resp.Version, Protocol: resp.Protocol}
	if peer != c.self {
		return fmt.Errorf("agent %d (%s): %v", a.idx, a.addr, transport.VersionMismatch(c.self, peer))
	}
	// An agent refuses plan-owned properties of its own at start-up; one
	// that was started another way must not rewrite the plan either.
	a.props = resp.AgentProperties
	if err := spec.CheckAgentProperties(fmt.Sprintf("agent %d (%s)", a.idx, a.addr), a.props); err != nil {
		return err
	}
	if resp.BusyRun != "" {
		return fmt.Errorf("agent %d (%s): %s", a.idx, a.addr, busyReason(resp))
	}
	a.offset, a.rtt, a.lease = off, rtt, time.Duration(resp.LeaseNs)
	if lim := c.s.MaxClockOffset; off > lim || off < -lim {
		dir := "ahead of"
		if off < 0 {
			dir = "behind"
		}
		return fmt.Errorf("agent %d (%s): its clock is %s %s the coordinator's (limit %s): synchronise clocks (NTP/chrony) or raise the clock-offset limit", a.idx, a.addr, fmtDur(abs(off)), dir, lim)
	}
	return nil
}

// probeErrors combines the refusals of several agents into one error: a
// usage error (exit 2) when any of them is the operator's input, a
// failure (exit 1) otherwise.
func probeErrors(errs []error) error {
	code := exitcode.Failure
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
		if exitcode.Of(err) == exitcode.InvalidConfig {
			code = exitcode.InvalidConfig
		}
	}
	sort.Strings(msgs)
	return exitcode.Wrap(code, fmt.Errorf("%s", strings.Join(msgs, "; ")))
}

// busyReason says why a busy agent refuses, and when it will be free if
// its coordinator is gone.
func busyReason(resp *pb.PingResponse) string {
	if resp.BusyEnding {
		return fmt.Sprintf("busy: still ending run %s for %s after %s (finishing in-flight requests and closing its database)", resp.BusyRun, resp.BusyCoordinator, endingWait)
	}
	msg := fmt.Sprintf("busy: running run %s for %s", resp.BusyRun, resp.BusyCoordinator)
	if resp.LeaseNs > 0 {
		silent, lease := time.Duration(resp.BusySilentNs), time.Duration(resp.LeaseNs)
		msg += fmt.Sprintf(" (its coordinator silent for %s; the agent ends the run by itself after %s of silence)",
			silent.Round(time.Millisecond), lease)
	}
	return msg
}

func isLoopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1"
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func fmtDur(d time.Duration) string {
	switch {
	case abs(d) >= time.Second:
		return d.Round(time.Millisecond).String()
	case abs(d) >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// describeErr words an error of an agent's stream for the operator.
func (c *Coordinator) describeErr(err error) string {
	return transport.Describe(err, transport.Call{TLS: c.s.TLS.Enabled()})
}

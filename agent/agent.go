// Package agent is the `ycsbctl agent` daemon: a gRPC server that runs one
// benchmark at a time on behalf of a coordinator. It runs exactly what a
// single-host `ycsbctl load|run` runs (spec.Prepare and the engine), with
// the coordinator's share of the work, and streams every measured interval
// back as HDR histograms.
//
// Failure model. The coordinator dials the agent and holds one Session
// stream. Every message from the coordinator renews a lease (default
// 15 s). If the stream breaks, the run goes on and intervals are kept until
// the coordinator re-attaches (Hello.resume) and acknowledges them; if the
// lease runs out first, the agent stops the load by itself so that no
// orphaned load keeps hammering a database (a stream still attached, as to
// a paused coordinator, stays open a while to hand over what was
// measured). No load starts unless the coordinator was heard from just
// before the start instant and its stream stayed up from the Start to
// the instant itself. Wrong tokens are throttled per address and logged
// (transport.Guard). An agent told to stop (SIGTERM) hands its run
// over: last intervals and a Final saying why, acknowledged within a
// bound. The agent's own properties may not set what the coordinator's
// plan owns (spec.PlanOwned).
package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/redact"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/version"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// DefaultLease is how long an agent keeps running without hearing from its
// coordinator.
const DefaultLease = 15 * time.Second

// heartbeatEvery is the agent's heartbeat period; the coordinator declares
// an agent lost after about three missed ones.
const heartbeatEvery = time.Second

// MinLease is the shortest lease the command accepts: two of the
// coordinator's one-second heartbeats, so that one late heartbeat never
// stops a healthy run.
const MinLease = 2 * time.Second

// MaxLease is the longest lease the command accepts: the lease is how long
// orphaned load may run against a database after its coordinator is gone.
const MaxLease = 5 * time.Minute

// helloTimeout bounds the wait for a stream's first message.
const helloTimeout = 10 * time.Second

// Config configures an agent.
type Config struct {
	// Listen is host:port; the port defaults to 7420. Without TLS the
	// default host is 127.0.0.1.
	Listen string
	// TLS enables mutual TLS: the coordinator must present a certificate
	// signed by TLS.CA.
	TLS *transport.TLSFiles
	// Token, when set, must be sent by the coordinator.
	Token string
	// Lease is how long a run survives without any message from its
	// coordinator (DefaultLease when 0).
	Lease time.Duration
	Clock clock.Clock
	Logf  func(format string, args ...any)
	// AllowNonLoopback permits listening beyond loopback without TLS (the
	// CLI's --insecure-listen, which the refusal below names).
	// Anyone who can reach such an agent can make it load any database it
	// can reach, so the agent warns.
	AllowNonLoopback bool
	// Ready, if set, is called with the bound address once the agent
	// accepts connections (useful with port 0).
	Ready func(addr string)
	// Properties are applied on top of the coordinator's for every run:
	// host-local settings such as embedded.dir when several agents share
	// a host, or the database hosts this agent should reach (the CLI's
	// `agent -p k=v`). Properties the coordinator's plan owns are refused
	// (spec.PlanOwned).
	Properties map[string]string
	// Force, when closed, ends a shutdown at once (the operator's second
	// signal): the first cancellation of Serve's context hands the run in
	// progress over to its coordinator, within handOverWait.
	Force <-chan struct{}
	// Version overrides version.Version in what this agent announces;
	// tests use it to exercise the mismatch refusal.
	Version string
	// Sink, when set, is called for every run and the sink it returns sees
	// that run's intervals too (the agent's /metrics endpoint).
	Sink func(info run.Info, sp *spec.Spec) run.Sink
}

// ListenAddr resolves the address to bind: default port, default host,
// and the loopback rule for agents without TLS.
func ListenAddr(cfg Config) (addr string, warning string, err error) {
	l := cfg.Listen
	if l == "" {
		l = "127.0.0.1"
		if cfg.TLS.Enabled() {
			l = ""
		}
	}
	host, port, err := net.SplitHostPort(l)
	if err != nil {
		// A bare host; only an IPv6 address has colons of its own.
		if strings.Contains(l, ":") && net.ParseIP(l) == nil {
			return "", "", fmt.Errorf("--listen %q: expected HOST:PORT, HOST or [IPv6]:PORT, for example 127.0.0.1:7420", l)
		}
		host, port = l, strconv.Itoa(transport.DefaultPort)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", "", fmt.Errorf("--listen %q: port %q: expected a number from 0 to 65535", l, port)
	}
	addr = net.JoinHostPort(host, port)
	// A name is resolved first: one that names nothing is a mistyped
	// address, and would otherwise be refused as not loopback (without
	// TLS) or fail later in a raw bind error.
	if host != "" && host != "localhost" && net.ParseIP(host) == nil {
		if err := lookupHost(host); err != nil {
			return "", "", fmt.Errorf("--listen %q: host %q does not resolve (%s): expected an IP address or a name of this host, with an optional :PORT, for example 127.0.0.1:7420", l, host, err)
		}
	}
	if cfg.TLS.Enabled() {
		return addr, "", nil
	}
	if isLoopback(host) {
		return addr, "", nil
	}
	if !cfg.AllowNonLoopback {
		return "", "", fmt.Errorf("--listen %s: without TLS the agent only listens on loopback (127.0.0.1); configure --tls-cert/--tls-key/--tls-ca, or pass --insecure-listen to accept unauthenticated connections from the network", l)
	}
	return addr, fmt.Sprintf("WARNING: agent listening on %s without TLS: anyone who can reach this port can run load against any database this host can reach", addr), nil
}

// lookupHost resolves a --listen name, in a bounded time; the error is
// the resolver's reason ("no such host"), the name being quoted already.
func lookupHost(host string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupHost(ctx, host)
	var de *net.DNSError
	switch {
	case errors.As(err, &de):
		return errors.New(de.Err)
	case err == nil && len(ips) == 0:
		return errors.New("no address")
	}
	return err
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve runs the agent until ctx is done. A run in progress is then
// handed over: its load stops, its last intervals and a Final saying the
// agent was stopped (context.Cause(ctx) names why, e.g. the signal) go to
// the coordinator, and the agent waits a bounded time for them to be
// acknowledged (handOverWait; cfg.Force cuts it short).
func Serve(ctx context.Context, cfg Config) error {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.NewReal()
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Version == "" {
		cfg.Version = version.Version
	}
	if err := spec.CheckAgentProperties("", cfg.Properties); err != nil {
		return err
	}
	if err := cfg.TLS.Validate(); err != nil {
		return err
	}
	addr, warn, err := ListenAddr(cfg)
	if err != nil {
		return err
	}
	self := transport.Identity{Version: cfg.Version, Protocol: version.Protocol}
	guard := &transport.Guard{Token: cfg.Token, Self: self, Logf: cfg.Logf}
	opts, err := transport.ServerOptions(cfg.TLS, guard)
	if err != nil {
		return err
	}
	raw, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	ln := guard.Listen(raw)
	if warn != "" {
		cfg.Logf("%s", warn)
	}
	host, _ := os.Hostname()
	s := &server{cfg: cfg, clk: cfg.Clock, self: self, hostname: host, ownProps: redact.Properties(cfg.Properties)}
	gs := grpc.NewServer(opts...)
	pb.RegisterAgentServer(gs, s)
	cfg.Logf("agent %s listening on %s (tls=%v, token=%v, lease=%s)", self, ln.Addr(), cfg.TLS.Enabled(), cfg.Token != "", cfg.Lease)
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	reason := "agent shutting down"
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		reason = c.Error()
	}
	s.shutdown(reason, cfg.Force)
	ended := make(chan struct{})
	go func() { s.runs.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		cfg.Logf("gave up waiting for the last run to close its database")
	}
	stopped := make(chan struct{})
	go func() { gs.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		gs.Stop()
	}
	return nil
}

type server struct {
	pb.UnimplementedAgentServer
	cfg      Config
	clk      clock.Clock
	self     transport.Identity
	hostname string
	// ownProps are cfg.Properties redacted, as Ping reports them.
	ownProps map[string]string

	mu      sync.Mutex
	current *heldRun
	// runs counts runs not yet fully ended (database closed), so that
	// shutdown waits for them.
	runs sync.WaitGroup
}

// Ping implements the clock-offset probe. Both timestamps are taken as
// close to the wire as the handler allows; the coordinator uses the
// sample with the smallest round trip.
func (s *server) Ping(ctx context.Context, req *pb.PingRequest) (*pb.PingResponse, error) {
	recv := s.clk.Now().UnixNano()
	resp := &pb.PingResponse{AgentReceiveUnixNs: recv, Version: s.self.Version, Protocol: s.self.Protocol, Hostname: s.hostname}
	s.mu.Lock()
	if r := s.current; r != nil {
		resp.BusyRun, resp.BusyCoordinator, resp.BusyEnding = r.id, r.coordinator, r.ending.Load()
		resp.BusySilentNs = r.clk.Nanotime() - r.lastHeard.Load()
	}
	resp.LeaseNs = int64(s.cfg.Lease)
	resp.AgentProperties = s.ownProps
	s.mu.Unlock()
	resp.AgentSendUnixNs = s.clk.Now().UnixNano()
	return resp, nil
}

// shutdown hands the run in progress, if any, over to its coordinator
// (see handOver) and ends it.
func (s *server) shutdown(reason string, force <-chan struct{}) {
	s.mu.Lock()
	r := s.current
	s.mu.Unlock()
	if r != nil {
		r.handOver(reason, force)
	}
}

// ownWarnings are the warnings of the agent's own properties for a run
// of sp's adapter: the coordinator's parse never saw them.
func (s *server) ownWarnings(sp *spec.Spec) []string {
	keys := make([]string, 0, len(s.cfg.Properties))
	for k := range s.cfg.Properties {
		keys = append(keys, k)
	}
	if w := spec.UnknownWarning(keys, sp.Adapter); w != "" {
		return []string{w}
	}
	return nil
}

// drop forgets r if it is still the current run.
func (s *server) drop(r *heldRun) {
	s.mu.Lock()
	if s.current == r {
		s.current = nil
	}
	s.mu.Unlock()
}

// endingWait bounds how long a Hello waits for a run that is already
// ending (finishing in-flight requests, closing its database). It stays
// under the coordinator's 5 s limit for a Hello's reply.
const endingWait = 3 * time.Second

// admit decides what a Hello gets: a new run, the run it resumes, or a
// refusal. A run that is already ending is waited for, within endingWait,
// rather than refused: a coordinator that starts right after the previous
// one released its agents finds them free, and one resuming a run that
// was just released learns that it is gone.
func (s *server) admit(ctx context.Context, hello *pb.Hello) (*heldRun, error) {
	var waited *heldRun
	for {
		s.mu.Lock()
		r := s.current
		if r != nil && r.ending.Load() && r != waited {
			s.mu.Unlock()
			waited = r
			t := time.NewTimer(endingWait)
			select {
			case <-r.freed:
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			t.Stop()
			continue
		}
		r, err := s.admitLocked(hello, r)
		s.mu.Unlock()
		return r, err
	}
}

// admitLocked is admit's decision once no ending run is left to wait
// for; s.mu is held.
func (s *server) admitLocked(hello *pb.Hello, r *heldRun) (*heldRun, error) {
	switch {
	case hello.Resume && (r == nil || r.id != hello.RunId || r.ending.Load()):
		return nil, status.Errorf(codes.NotFound, "no run %s on this agent (it was released, its %s lease expired, or the agent restarted)", hello.RunId, s.cfg.Lease)
	case !hello.Resume && r != nil && r.ending.Load():
		return nil, status.Errorf(codes.FailedPrecondition, "busy: still ending run %s for %s (finishing in-flight requests and closing its database after %s)", r.id, r.coordinator, endingWait)
	case !hello.Resume && r != nil:
		return nil, status.Errorf(codes.FailedPrecondition, "busy: running run %s for %s", r.id, r.coordinator)
	case !hello.Resume:
		r = newRun(s, hello)
		s.current = r
		s.cfg.Logf("run %s: accepted from %s as agent %d", r.id, r.coordinator, r.index)
	default:
		s.cfg.Logf("run %s: coordinator re-attached", r.id)
	}
	return r, nil
}

func errString(err error) string {
	if st, ok := status.FromError(err); ok {
		return st.Code().String() + ": " + st.Message()
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	return err.Error()
}

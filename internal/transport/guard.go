package transport

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Metadata keys sent by the coordinator on every RPC.
const (
	mdAuthorization = "authorization"
	mdVersion       = "ycsbctl-version"
	mdProtocol      = "ycsbctl-protocol"
)

// DefaultPort is the agent's default TCP port.
const DefaultPort = 7420

// MaxMessageBytes bounds one message from an agent to its coordinator.
// An interval record holds at most one histogram per series (measurement.
// NumSeries, 176 with a series per failure status) of at most
// wire.MaxHistogramBytes (1 MiB) each; real ones are a few KB. Only an
// agent the coordinator itself dialled (mutual TLS, token) can send one.
const MaxMessageBytes = 200 << 20

// MaxCoordinatorMessageBytes bounds one message from the coordinator to an
// agent: the largest is Prepare, which carries the run's properties
// (property files are capped at 4 MiB each; real ones are a few KB). The
// agent refuses anything larger before allocating it, and the coordinator
// refuses to send it.
const MaxCoordinatorMessageBytes = 16 << 20

// maxPingBytes bounds a PingRequest (one int64 today); the agent checks it
// per method because the server-wide limit above must fit Prepare.
const maxPingBytes = 4 << 10

// maxHeaderListBytes bounds the metadata of one request. Headers are read
// before the token can be checked, so this is what an unauthenticated
// caller can make the agent hold per stream.
const maxHeaderListBytes = 16 << 10

// maxStreamsPerConn bounds concurrent streams on one connection. A
// coordinator uses one Session stream and an occasional Ping.
const maxStreamsPerConn = 16

// Timeouts of the agent's server side.
const (
	// handshakeTimeout bounds TLS and the HTTP/2 preface and settings
	// exchange of a new connection.
	handshakeTimeout = 5 * time.Second
	// idleTimeout closes an authenticated connection that has carried no
	// stream for this long (between runs); the coordinator redials on
	// demand.
	idleTimeout = 5 * time.Minute
	// serverPingAfter and serverPingTimeout: after this long without any
	// frame the agent pings, and closes the connection if the ping is not
	// answered in time. Honest peers answer at once.
	serverPingAfter   = 30 * time.Second
	serverPingTimeout = 10 * time.Second
	// minClientPingInterval is the most frequent client keepalive ping the
	// agent tolerates; clientPingInterval (below) must not be shorter.
	minClientPingInterval = 5 * time.Second
	// clientPingInterval and clientPingTimeout are the coordinator's
	// keepalive. gRPC raises intervals under 10 s to 10 s.
	clientPingInterval = 10 * time.Second
	clientPingTimeout  = 5 * time.Second
)

// Identity is what each side announces: the ycsbctl build and protocol.
type Identity struct {
	Version  string
	Protocol uint32
}

func (id Identity) String() string {
	return fmt.Sprintf("ycsbctl %s (protocol %d)", id.Version, id.Protocol)
}

// VersionMismatch is the error both sides give when builds differ. It
// names both versions so the operator knows which host to upgrade.
func VersionMismatch(coordinator, agent Identity) error {
	return fmt.Errorf("version mismatch: coordinator runs %s, agent runs %s; run the same ycsbctl build on every host", coordinator, agent)
}

// Guard checks, on the agent, every incoming RPC: the shared token first
// (so that an unauthenticated caller learns nothing else), then the
// coordinator's version.
//
// The token is checked twice: by Tap, from the request headers before
// gRPC reads a single message byte (so an unauthenticated caller cannot
// make the agent buffer request bodies), and again by the interceptors.
type Guard struct {
	// Token, when non-empty, must be presented by the coordinator.
	Token string
	Self  Identity
	// AuthWindow and MaxPending configure the connection gate installed by
	// Listen (DefaultAuthWindow and DefaultMaxPending when zero).
	AuthWindow time.Duration
	MaxPending int
	// Logf receives the failed authentications, per address and counted,
	// never with the token that was tried (dropped when nil).
	Logf func(format string, args ...any)

	throttleOnce sync.Once
	throttle     *authThrottle
	gate         *gate
}

// throttler is the guard's record of failed authentications.
func (g *Guard) throttler() *authThrottle {
	g.throttleOnce.Do(func() { g.throttle = newAuthThrottle(g.Logf) })
	return g.throttle
}

// Listen wraps the agent's listener so that connections which carry no
// authenticated request within AuthWindow are closed, and at most
// MaxPending such connections are held at once (the oldest is dropped).
func (g *Guard) Listen(ln net.Listener) net.Listener {
	g.gate = newGate(ln, g.AuthWindow, g.MaxPending)
	return g.gate
}

// MinTokenLength is the shortest token either side accepts, in
// characters. Failed guesses are throttled to a few a second per address
// (authThrottle), but an attacker may use many addresses for a long time:
// 16 random characters are 64 bits even from a hexadecimal alphabet, some
// 60,000 years of guessing from a million addresses at their throttled 5
// a second, where a 1-character token falls within a minute from one.
// `openssl rand -hex 16` gives 32 characters (128 bits).
const MinTokenLength = 16

// CheckToken refuses a token too short to resist guessing; flag names
// where it came from (--token, --token-file FILE, YCSBCTL_TOKEN).
func CheckToken(token, flag string) error {
	if n := utf8.RuneCountInString(token); n > 0 && n < MinTokenLength {
		return fmt.Errorf("%s: the token has %d characters, expected at least %d so that it cannot be guessed (for example `openssl rand -hex 16 >token`, 32 characters)", flag, n, MinTokenLength)
	}
	return nil
}

// checkToken compares the authorization header with the token.
func (g *Guard) checkToken(md metadata.MD) error {
	if g.Token == "" {
		return nil
	}
	got := first(md, mdAuthorization)
	// Compare digests so that the comparison is constant-time even
	// when the lengths differ.
	a := sha256.Sum256([]byte("Bearer " + g.Token))
	b := sha256.Sum256([]byte(got))
	if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		if got == "" {
			return status.Error(codes.Unauthenticated, "this agent requires a token (--token) and none was sent")
		}
		return status.Error(codes.Unauthenticated, "wrong token (--token)")
	}
	return nil
}

// Tap runs when a request's headers arrive, before its body is read. A
// request without the token is refused there (the stream is reset, so the
// client stops sending); a request with it marks its connection as
// authenticated for the gate.
//
// A peer that failed too often lately (see authThrottle) is refused
// before its token is compared, with how long to wait.
func (g *Guard) Tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	var addr net.Addr
	if p, ok := peer.FromContext(ctx); ok {
		addr = p.Addr
	}
	if g.Token != "" {
		th := g.throttler()
		if wait, throttled := th.throttled(addr); throttled {
			return ctx, status.Errorf(codes.ResourceExhausted, "too many requests with a wrong or missing token from %s: this agent looks at the next one in %s (failed authentications are throttled per address: %d at once, then %g a second)",
				peerKey(addr), wait, authFailBurst, authFailRate)
		}
		if err := g.checkToken(info.Header); err != nil {
			th.failed(addr)
			return ctx, err
		}
	}
	if g.gate != nil && addr != nil {
		g.gate.authenticated(addr)
	}
	return ctx, nil
}

func (g *Guard) check(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	if err := g.checkToken(md); err != nil {
		return err
	}
	peer := Identity{Version: first(md, mdVersion)}
	p, err := strconv.ParseUint(first(md, mdProtocol), 10, 32)
	if peer.Version == "" || err != nil {
		return status.Errorf(codes.FailedPrecondition, "caller did not identify as a ycsbctl coordinator (agent runs %s)", g.Self)
	}
	peer.Protocol = uint32(p)
	if peer != g.Self {
		return status.Error(codes.FailedPrecondition, VersionMismatch(peer, g.Self).Error())
	}
	return nil
}

func first(md metadata.MD, k string) string {
	if v := md.Get(k); len(v) > 0 {
		return v[0]
	}
	return ""
}

// unaryLimits bounds requests of unary methods whose legitimate size is
// far below the server-wide MaxCoordinatorMessageBytes.
var unaryLimits = map[string]int{
	pb.Agent_Ping_FullMethodName: maxPingBytes,
}

// Unary is the unary server interceptor.
func (g *Guard) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := g.check(ctx); err != nil {
		return nil, err
	}
	if limit, ok := unaryLimits[info.FullMethod]; ok {
		if m, ok := req.(proto.Message); ok {
			if n := proto.Size(m); n > limit {
				return nil, status.Errorf(codes.ResourceExhausted, "%s: request of %d bytes exceeds this method's limit of %d", info.FullMethod, n, limit)
			}
		}
	}
	return h(ctx, req)
}

// Stream is the stream server interceptor.
func (g *Guard) Stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := g.check(ss.Context()); err != nil {
		return err
	}
	return h(srv, controlLimit{ss})
}

// maxControlBytes bounds every Session message but Prepare (Hello,
// Start, Heartbeat, Ack, Stop, Release: a few dozen bytes each), which the
// server-wide limit sized for Prepare would let reach 16 MiB.
const maxControlBytes = 64 << 10

// controlLimit applies maxControlBytes to a Session's messages.
type controlLimit struct{ grpc.ServerStream }

func (s controlLimit) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if cm, ok := m.(*pb.CoordinatorMsg); ok && cm.GetPrepare() == nil {
		if n := proto.Size(cm); n > maxControlBytes {
			return status.Errorf(codes.ResourceExhausted, "session message of %d bytes exceeds the limit of %d for anything but Prepare", n, maxControlBytes)
		}
	}
	return nil
}

// ServerOptions returns the agent's gRPC server options: credentials (TLS
// when files are given), the guard, message limits and keepalive policy.
func ServerOptions(f *TLSFiles, g *Guard) ([]grpc.ServerOption, error) {
	opts := []grpc.ServerOption{
		grpc.InTapHandle(g.Tap),
		grpc.ChainUnaryInterceptor(g.Unary),
		grpc.ChainStreamInterceptor(g.Stream),
		grpc.MaxRecvMsgSize(MaxCoordinatorMessageBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.MaxHeaderListSize(maxHeaderListBytes),
		grpc.MaxConcurrentStreams(maxStreamsPerConn),
		grpc.ConnectionTimeout(handshakeTimeout),
		// The coordinator pings to notice dead connections faster than
		// TCP would; allow it, but no more often than it does, so that a
		// ping flood is cut off.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: minClientPingInterval, PermitWithoutStream: true}),
		// No MaxConnectionAge: a run's Session stream lives for hours.
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: idleTimeout,
			Time:              serverPingAfter,
			Timeout:           serverPingTimeout,
		}),
	}
	if f.Enabled() {
		c, err := ServerCredentials(f)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(c))
	}
	return opts, nil
}

// Dial returns a client connection to an agent. The connection is lazy;
// every RPC carries the token and the coordinator's identity. Reconnect
// backoff is capped at one second because a broken stream must be
// re-established well within the agent's lease.
func Dial(addr string, f *TLSFiles, token string, self Identity) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if f.Enabled() {
		c, err := ClientCredentials(f)
		if err != nil {
			return nil, err
		}
		creds = c
	}
	md := []string{mdVersion, self.Version, mdProtocol, strconv.FormatUint(uint64(self.Protocol), 10)}
	if token != "" {
		md = append(md, mdAuthorization, "Bearer "+token)
	}
	withMD := func(ctx context.Context) context.Context {
		return metadata.AppendToOutgoingContext(ctx, md...)
	}
	return grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return inv(withMD(ctx), method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, s grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return s(withMD(ctx), desc, cc, method, opts...)
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxCoordinatorMessageBytes)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: ConnectTimeout,
		}),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: clientPingInterval, Timeout: clientPingTimeout, PermitWithoutStream: true}),
	)
}

// NormalizeAddr adds the default port to an address without one, so that
// "host" and "host:7420" name the same agent.
func NormalizeAddr(addr string) (string, error) {
	if addr == "" {
		return "", fmt.Errorf("empty agent address")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		// No port: treat the whole string as a host.
		if _, _, err2 := net.SplitHostPort(addr + ":" + strconv.Itoa(DefaultPort)); err2 != nil {
			return "", fmt.Errorf("agent address %q: %v", addr, err)
		}
		return net.JoinHostPort(addr, strconv.Itoa(DefaultPort)), nil
	}
	if host == "" {
		return "", fmt.Errorf("agent address %q: missing host", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("agent address %q: bad port", addr)
	}
	return net.JoinHostPort(host, port), nil
}

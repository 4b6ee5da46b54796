package transport

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Metadata keys sent by the coordinator on every RPC.
const (
	mdAuthorization = "authorization"
	mdVersion       = "ycsbctl-version"
	mdProtocol      = "ycsbctl-protocol"
)

// DefaultPort is the agent's default TCP port.
const DefaultPort = 7420

// MaxMessageBytes bounds one gRPC message. An interval record holds at
// most one histogram per series (32) of at most MaxHistogramBytes each;
// real ones are a few KB.
const MaxMessageBytes = 40 << 20

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
type Guard struct {
	// Token, when non-empty, must be presented by the coordinator.
	Token string
	Self  Identity
}

func (g *Guard) check(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	if g.Token != "" {
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

// Unary is the unary server interceptor.
func (g *Guard) Unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := g.check(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// Stream is the stream server interceptor.
func (g *Guard) Stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := g.check(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}

// ServerOptions returns the agent's gRPC server options: credentials (TLS
// when files are given), the guard, message limits and keepalive policy.
func ServerOptions(f *TLSFiles, g *Guard) ([]grpc.ServerOption, error) {
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(g.Unary),
		grpc.ChainStreamInterceptor(g.Stream),
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
		// The coordinator pings every few seconds to notice dead
		// connections faster than TCP would; allow it.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}),
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
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		}),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 5 * time.Second, Timeout: 3 * time.Second, PermitWithoutStream: true}),
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

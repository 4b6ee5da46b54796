package transport

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Call says how the failed call reached the agent.
type Call struct {
	// TLS: the caller dialed with --tls-cert/--tls-key/--tls-ca.
	TLS bool
	// First: the first call on a new connection, so the connection's
	// setup (TLS handshake, HTTP/2 preface) is part of what failed.
	First bool
}

// Describe turns an error of a call to an agent into operator language.
// gRPC reports a side that speaks TLS facing one that does not only by
// what broke ("error reading server preface: EOF", "first record does not
// look like a TLS handshake"); only the caller knows which side it was.
func Describe(err error, c Call) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Unauthenticated:
		return "rejected the token: " + msg
	case codes.FailedPrecondition:
		return msg
	case codes.Unavailable:
		return describeUnavailable(msg, c)
	case codes.DeadlineExceeded:
		return "no answer within 5s"
	}
	return st.Code().String() + ": " + msg
}

func describeUnavailable(msg string, c Call) string {
	low := strings.ToLower(msg)
	switch {
	case strings.Contains(low, "connection refused"):
	case c.TLS && strings.Contains(low, "first record does not look like a tls handshake"):
		return "TLS mismatch: this coordinator uses TLS (--tls-cert/--tls-key/--tls-ca) but the agent does not; start the agent with --tls-cert/--tls-key/--tls-ca too (its certificate from `ycsbctl certs`), or leave them out here for an agent on loopback: " + msg
	case !c.TLS && (strings.Contains(low, "server preface") || c.First && strings.Contains(low, "connection reset by peer")):
		// A TLS agent reads our plaintext HTTP/2 preface as a broken
		// handshake and closes the connection before saying anything.
		return "TLS mismatch: the agent closed the connection before answering, as an agent with TLS does when a coordinator connects without it; give this coordinator --tls-cert/--tls-key/--tls-ca (signed by the agent's CA): " + msg
	case strings.Contains(low, "certificate") || strings.Contains(low, "tls") || strings.Contains(low, "handshake"):
		return "TLS handshake failed (check --tls-cert/--tls-key/--tls-ca on both sides): " + msg
	case c.TLS && c.First:
		// With TLS 1.3 the agent's rejection of our certificate arrives
		// after the client considers the handshake done, as a reset.
		return "connection dropped during TLS setup: the agent probably rejected our client certificate (check --tls-cert/--tls-key/--tls-ca on both sides): " + msg
	}
	return "unreachable: " + msg
}

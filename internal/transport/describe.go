package transport

import (
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ConnectTimeout bounds a new connection's setup (TCP, TLS, the HTTP/2
// prefaces): a peer that accepts the connection but does not answer in
// time is given up on.
const ConnectTimeout = 2 * time.Second

// CallTimeout bounds one Ping from the coordinator to an agent.
const CallTimeout = 5 * time.Second

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
	case codes.ResourceExhausted:
		return "refused: " + msg
	case codes.FailedPrecondition:
		return msg
	case codes.Unavailable:
		return describeUnavailable(msg, c)
	case codes.DeadlineExceeded:
		return "no answer within " + CallTimeout.String() + ": the agent took the call but did not reply: is it stopped (SIGSTOP) or overloaded?"
	}
	return st.Code().String() + ": " + msg
}

// failure is what a connection's error says happened to it.
type failure uint8

const (
	// failOther: nothing more specific is known.
	failOther failure = iota
	// failRefused: nothing listens at the address.
	failRefused
	// failSilent: the peer accepted the connection and then said nothing
	// until this side gave up (its deadline closed the connection).
	failSilent
	// failClosed: the peer closed or reset the connection before it
	// answered.
	failClosed
	// failNotTLS: the peer answered in something other than TLS.
	failNotTLS
	// failTLS: the TLS handshake failed on a certificate.
	failTLS
	// failForeign: the peer answered, but not in HTTP/2: not an agent.
	failForeign
)

// classify reads gRPC's words for a failed connection. The order
// matters: a timeout during the TLS handshake says "handshake" too, and
// a connection this side closed on its deadline says "server preface"
// like one the peer closed.
func classify(msg string) failure {
	low := strings.ToLower(msg)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(low, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("connection refused"):
		return failRefused
	case has("deadline exceeded", "i/o timeout", "use of closed network connection", "keepalive"):
		return failSilent
	case has("first record does not look like a tls handshake"):
		return failNotTLS
	case has("certificate", "tls", "handshake"):
		return failTLS
	case has("eof", "connection reset by peer", "broken pipe"):
		return failClosed
	case has("server preface", "frame"):
		return failForeign
	}
	return failOther
}

func describeUnavailable(msg string, c Call) string {
	switch f := classify(msg); {
	case f == failRefused:
	case f == failSilent && c.First:
		return "no answer: the agent accepted the connection but did not answer within " + ConnectTimeout.String() +
			": is it stopped (SIGSTOP), overloaded, or not a ycsbctl agent? (" + msg + ")"
	case f == failSilent:
		return "no answer: the agent stopped answering on its connection: is it stopped (SIGSTOP) or overloaded? (" + msg + ")"
	case f == failForeign:
		return "not a ycsbctl agent: something answers at this address, but not as an agent does (no HTTP/2); check the address and port: " + msg
	case f == failNotTLS && c.TLS:
		return "TLS mismatch: this coordinator uses TLS (--tls-cert/--tls-key/--tls-ca) but the agent does not; start the agent with --tls-cert/--tls-key/--tls-ca too (its certificate from `ycsbctl certs`), or leave them out here for an agent on loopback: " + msg
	case f == failClosed && !c.TLS && (strings.Contains(strings.ToLower(msg), "server preface") || c.First):
		// A TLS agent reads our plaintext HTTP/2 preface as a broken
		// handshake and closes the connection before saying anything.
		return "TLS mismatch: the agent closed the connection before answering, as an agent with TLS does when a coordinator connects without it; give this coordinator --tls-cert/--tls-key/--tls-ca (signed by the agent's CA): " + msg
	case f == failTLS || f == failNotTLS:
		return "TLS handshake failed (check --tls-cert/--tls-key/--tls-ca on both sides): " + msg
	case f == failClosed && c.TLS && c.First:
		// With TLS 1.3 the agent's rejection of our certificate arrives
		// after the client considers the handshake done, as a reset.
		return "connection dropped during TLS setup: the agent probably rejected our client certificate (check --tls-cert/--tls-key/--tls-ca on both sides): " + msg
	}
	return "unreachable: " + msg
}

package transport

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestDescribeSaysWhatHappened: each way a connection to an agent fails,
// in gRPC's own words as real processes produced them, is named for what
// happened: a peer that never answered is not said to have closed the
// connection, nor to have failed a TLS handshake (issue 34 #15).
func TestDescribeSaysWhatHappened(t *testing.T) {
	plain, tls := Call{First: true}, Call{TLS: true, First: true}
	for _, tc := range []struct {
		call Call
		msg  string
		want string
	}{
		{plain, `connection error: desc = "error reading server preface: raw-read tcp 127.0.0.1:1->127.0.0.1:2: use of closed network connection"`, "no answer: the agent accepted the connection but did not answer within 2s"},
		{tls, `connection error: desc = "transport: authentication handshake failed: context deadline exceeded"`, "no answer: the agent accepted the connection but did not answer within 2s"},
		{Call{}, `connection error: desc = "keepalive ping failed to receive ACK within timeout"`, "no answer: the agent stopped answering on its connection"},
		{plain, `connection error: desc = "error reading server preface: EOF"`, "TLS mismatch: the agent closed the connection before answering"},
		{plain, `connection error: desc = "read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer"`, "TLS mismatch: the agent closed the connection before answering"},
		{tls, `connection error: desc = "transport: authentication handshake failed: tls: first record does not look like a TLS handshake"`, "TLS mismatch: this coordinator uses TLS"},
		{tls, `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`, "TLS handshake failed"},
		{tls, `connection error: desc = "read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer"`, "connection dropped during TLS setup"},
		{plain, `connection error: desc = "error reading server preface: http2: frame too large"`, "not a ycsbctl agent"},
		{plain, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:2: connect: connection refused"`, "unreachable: "},
	} {
		got := Describe(status.Error(codes.Unavailable, tc.msg), tc.call)
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%+v %q:\n got %q\nwant %q...", tc.call, tc.msg, got, tc.want)
		}
	}
	if got := Describe(status.Error(codes.DeadlineExceeded, "context deadline exceeded"), plain); !strings.Contains(got, "did not reply: is it stopped (SIGSTOP)") {
		t.Errorf("a call that timed out: %q", got)
	}
}

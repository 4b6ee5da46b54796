package coordinator

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/transport"
)

// resolveWait bounds the name lookups of the duplicate check.
const resolveWait = 5 * time.Second

// normalizeAgents gives every --agents entry its default port and refuses
// an agent given twice, however it is spelled: two entries are the same
// agent when they reach the same port at the same address, a name being
// its addresses and every loopback address (127.0.0.0/8, ::1, localhost)
// this host. An agent given twice would be sent a second Hello for the
// same run and refuse it as busy, and the run would fail blaming itself.
func normalizeAgents(given []string) ([]string, error) {
	var out []string
	seen := map[string]int{} // endpoint -> index into given
	for i, a := range given {
		n, err := transport.NormalizeAddr(strings.TrimSpace(a))
		if err != nil {
			return nil, invalid("--agents: %v", err)
		}
		for _, e := range endpoints(n) {
			if j, dup := seen[e]; dup {
				return nil, invalid("--agents: duplicate agent: %q and %q are the same agent (both reach %s): give each agent once; two agents on one host listen on different ports", given[j], a, describeEndpoint(e))
			}
		}
		for _, e := range endpoints(n) {
			seen[e] = i
		}
		out = append(out, n)
	}
	return out, nil
}

// loopbackHost stands for every loopback address in an endpoint.
const loopbackHost = "loopback"

// endpoints are the host:port pairs addr reaches: its address, or each
// address its name resolves to, loopback ones as one. A name that does
// not resolve stands for itself (the dial says what is wrong with it).
func endpoints(addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{addr}
	}
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else if strings.EqualFold(host, "localhost") {
		return []string{net.JoinHostPort(loopbackHost, port)}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), resolveWait)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil || len(addrs) == 0 {
			return []string{net.JoinHostPort(strings.ToLower(host), port)}
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		h := ip.String()
		if ip.IsLoopback() {
			h = loopbackHost
		}
		out = append(out, net.JoinHostPort(h, port))
	}
	return out
}

// describeEndpoint words an endpoint for the refusal.
func describeEndpoint(e string) string {
	host, port, _ := net.SplitHostPort(e)
	if host == loopbackHost {
		return fmt.Sprintf("port %s on this host's loopback", port)
	}
	return e
}

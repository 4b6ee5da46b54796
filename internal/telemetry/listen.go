package telemetry

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// Telling the server apart from its look-alikes: a host may run several
// processes of the same name or main class (the nodes of a one-machine
// cluster, each in a network namespace of its own; a second server). The
// one the adapter talks to is the one holding the listening socket at the
// address the adapter reaches: the kernel's socket table
// (/proc/net/tcp{,6}, the sampler's own network namespace) gives that
// socket's inode, and /proc/PID/fd names the process that holds it.

// tcpListen is the socket state LISTEN in /proc/net/tcp.
const tcpListen = 0x0A

// endpoint is an address on this host a server process is reached at.
type endpoint struct {
	ip   net.IP // nil: any address of the host
	port int
}

func (e endpoint) String() string {
	if e.ip == nil {
		return ":" + strconv.Itoa(e.port)
	}
	return net.JoinHostPort(e.ip.String(), strconv.Itoa(e.port))
}

// matches reports whether a socket listening at ip:port serves e: the same
// port, at e's address or on every address (0.0.0.0, ::).
func (e endpoint) matches(ip net.IP, port int) bool {
	return port == e.port && (e.ip == nil || ip.IsUnspecified() || ip.Equal(e.ip))
}

// resolveTimeout bounds the lookup of the host names in the adapter's
// addresses, once per run.
const resolveTimeout = 2 * time.Second

// localEndpoints keeps those of the host:port addresses in listen that are
// on this host (own is its addresses): an empty host, one of its own
// addresses, or a name that resolves to one (localhost among them).
// Malformed ones are left out: they decide nothing.
func localEndpoints(listen []string, own []string) []endpoint {
	isOwn := func(ip net.IP) bool {
		for _, a := range own {
			if o := net.ParseIP(a); o != nil && o.Equal(ip) {
				return true
			}
		}
		return ip.IsLoopback()
	}
	var out []endpoint
	for _, hp := range listen {
		host, p, err := net.SplitHostPort(hp)
		port, perr := strconv.Atoi(p)
		if err != nil || perr != nil || port <= 0 {
			continue
		}
		if host == "" {
			out = append(out, endpoint{port: port})
			continue
		}
		ips := []net.IP{net.ParseIP(strings.Trim(host, "[]"))}
		if ips[0] == nil {
			ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
			as, err := net.DefaultResolver.LookupIPAddr(ctx, host)
			cancel()
			if err != nil {
				continue
			}
			ips = ips[:0]
			for _, a := range as {
				ips = append(ips, a.IP)
			}
		}
		for _, ip := range ips {
			if isOwn(ip) {
				out = append(out, endpoint{ip: ip, port: port})
			}
		}
	}
	return out
}

// endpointsByRole maps each adapter process role to its endpoints on this
// host; a role with none is absent (its name or main class decides).
func endpointsByRole(patterns []adapters.ServerProcess, own []string) map[string][]endpoint {
	out := map[string][]endpoint{}
	for _, p := range patterns {
		if eps := localEndpoints(p.Listen, own); len(eps) > 0 {
			out[p.Role] = append(out[p.Role], eps...)
		}
	}
	return out
}

// listening maps the inodes of the TCP sockets listening in this network
// namespace to their address. A table that cannot be read (no IPv6) adds
// nothing.
func listening(fs procfs.FS) map[uint64]endpoint {
	out := map[uint64]endpoint{}
	// procfs would have sock_diag over netlink read instead (faster on a
	// host of many sockets); a look every 30 s reads the text table once,
	// with the library's parser, and needs no netlink socket.
	for _, read := range []func() (procfs.NetTCP, error){fs.NetTCP, fs.NetTCP6} { //nolint:staticcheck // see above
		tab, err := read()
		if err != nil {
			continue
		}
		for _, l := range tab {
			if l.St == tcpListen {
				out[l.Inode] = endpoint{ip: l.LocalAddr, port: int(l.LocalPort)}
			}
		}
	}
	return out
}

// serves reports whether process pid holds a socket of socks listening at
// one of eps. Its descriptors may be unreadable (another user's process
// without CAP_SYS_PTRACE): then it does not tell.
func serves(fs procfs.FS, pid int, socks map[uint64]endpoint, eps []endpoint) bool {
	p, err := fs.Proc(pid)
	if err != nil {
		return false
	}
	targets, err := p.FileDescriptorTargets()
	if err != nil {
		return false
	}
	for _, t := range targets {
		ino, ok := socketInode(t)
		if !ok {
			continue
		}
		s, ok := socks[ino]
		if !ok {
			continue
		}
		for _, e := range eps {
			if e.matches(s.ip, s.port) {
				return true
			}
		}
	}
	return false
}

// socketInode reads a descriptor's target "socket:[12345]".
func socketInode(target string) (uint64, bool) {
	rest, ok := strings.CutPrefix(target, "socket:[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
	return n, err == nil
}

// narrow keeps, for each role with endpoints on this host, the processes
// listening at one of them; when none of a role's processes is seen
// listening, all of them stay (the name or main class decides, as when
// no endpoint is on this host).
func narrow(fs procfs.FS, found []found, byRole map[string][]endpoint) []found {
	if len(byRole) == 0 || len(found) == 0 {
		return found
	}
	socks := listening(fs)
	keep := make([]bool, len(found))
	served := map[string]bool{}
	for i, f := range found {
		if eps, ok := byRole[f.role]; ok && serves(fs, f.pid, socks, eps) {
			keep[i], served[f.role] = true, true
		}
	}
	out := found[:0:0]
	for i, f := range found {
		if keep[i] || !served[f.role] {
			out = append(out, f)
		}
	}
	return out
}

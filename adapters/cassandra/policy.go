package cassandra

import (
	"sync"
	"sync/atomic"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// hostPolicy is gocql's token-aware policy with a shortcut for a cluster of
// one live host, where every statement goes to that host whatever its
// token: Pick then skips the routing key (a cache lookup under a lock, the
// key's encoding and its hash) and the replica lookup, with their
// allocations, some 5 % of the client's CPU per operation against a single
// node. With more than one host up it is token-aware as before.
type hostPolicy struct {
	gocql.HostSelectionPolicy

	mu     sync.Mutex
	known  map[string]*gocql.HostInfo
	up     map[string]*gocql.HostInfo
	single atomic.Pointer[gocql.HostInfo]
}

func newHostPolicy() *hostPolicy {
	return &hostPolicy{
		HostSelectionPolicy: gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy()),
		known:               map[string]*gocql.HostInfo{},
		up:                  map[string]*gocql.HostInfo{},
	}
}

func hostKey(h *gocql.HostInfo) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddressAndPort()
}

// update records a host's state change and recomputes the shortcut.
func (p *hostPolicy) update(h *gocql.HostInfo, known, up bool) {
	k := hostKey(h)
	p.mu.Lock()
	defer p.mu.Unlock()
	if known {
		p.known[k] = h
	} else {
		delete(p.known, k)
	}
	if up {
		p.up[k] = h
	} else {
		delete(p.up, k)
	}
	var one *gocql.HostInfo
	if len(p.known) == 1 && len(p.up) == 1 {
		for _, h := range p.up {
			one = h
		}
	}
	p.single.Store(one)
}

// AddHost implements gocql.HostStateNotifier.
func (p *hostPolicy) AddHost(h *gocql.HostInfo) {
	p.HostSelectionPolicy.AddHost(h)
	p.update(h, true, h.IsUp())
}

// RemoveHost implements gocql.HostStateNotifier.
func (p *hostPolicy) RemoveHost(h *gocql.HostInfo) {
	p.HostSelectionPolicy.RemoveHost(h)
	p.update(h, false, false)
}

// HostUp implements gocql.HostStateNotifier.
func (p *hostPolicy) HostUp(h *gocql.HostInfo) {
	p.HostSelectionPolicy.HostUp(h)
	p.update(h, true, true)
}

// HostDown implements gocql.HostStateNotifier.
func (p *hostPolicy) HostDown(h *gocql.HostInfo) {
	p.HostSelectionPolicy.HostDown(h)
	p.update(h, true, false)
}

// Pick implements gocql.HostSelectionPolicy.
func (p *hostPolicy) Pick(q gocql.ExecutableStatement) gocql.NextHost {
	if h := p.single.Load(); h != nil {
		return (&onlyHost{h: h}).next
	}
	return p.HostSelectionPolicy.Pick(q)
}

// onlyHost offers one host once, as gocql's policies offer each of theirs.
type onlyHost struct {
	h    *gocql.HostInfo
	used bool
}

func (o *onlyHost) next() gocql.SelectedHost {
	if o.used {
		return nil
	}
	o.used = true
	return o
}

func (o *onlyHost) Info() *gocql.HostInfo { return o.h }
func (o *onlyHost) Mark(error)            {}

package transport

import (
	"net"
	"sync"
	"time"
)

// Defaults for the connection gate.
const (
	// DefaultAuthWindow is how long a new connection may stay without a
	// single authenticated stream. A coordinator opens its first RPC right
	// after connecting, so honest peers need milliseconds.
	DefaultAuthWindow = 10 * time.Second
	// DefaultMaxPending bounds connections that have not yet authenticated.
	DefaultMaxPending = 64
)

// gate wraps the agent's listener and tracks connections that have not
// yet carried an authenticated stream ("pending"). A pending connection
// is closed when its window runs out, and when more than maxPending are
// pending the oldest is closed: an attacker holding many silent
// connections then has to out-pace an honest coordinator's handshake
// rather than simply filling a table, and memory stays bounded.
type gate struct {
	net.Listener
	window     time.Duration
	maxPending int

	mu      sync.Mutex
	pending map[string]*gatedConn // by remote address
	order   []*gatedConn          // oldest first; may hold settled entries
}

type gatedConn struct {
	net.Conn
	g     *gate
	key   string
	timer *time.Timer
	// settled is set (under g.mu) once the connection authenticated or
	// was closed; it is then no longer pending.
	settled bool
}

func newGate(ln net.Listener, window time.Duration, maxPending int) *gate {
	if window <= 0 {
		window = DefaultAuthWindow
	}
	if maxPending <= 0 {
		maxPending = DefaultMaxPending
	}
	return &gate{Listener: ln, window: window, maxPending: maxPending, pending: map[string]*gatedConn{}}
}

func (g *gate) Accept() (net.Conn, error) {
	c, err := g.Listener.Accept()
	if err != nil {
		return nil, err
	}
	gc := &gatedConn{Conn: c, g: g, key: c.RemoteAddr().String()}
	var evict []*gatedConn
	g.mu.Lock()
	g.pending[gc.key] = gc
	g.order = append(g.order, gc)
	for len(g.pending) > g.maxPending && len(g.order) > 0 {
		old := g.order[0]
		g.order = g.order[1:]
		if !old.settled {
			g.settleLocked(old)
			evict = append(evict, old)
		}
	}
	g.compactLocked()
	gc.timer = time.AfterFunc(g.window, func() {
		g.mu.Lock()
		expired := !gc.settled
		if expired {
			g.settleLocked(gc)
		}
		g.mu.Unlock()
		if expired {
			_ = gc.Conn.Close()
		}
	})
	g.mu.Unlock()
	for _, old := range evict {
		_ = old.Conn.Close()
	}
	return gc, nil
}

// settleLocked removes c from the pending set.
func (g *gate) settleLocked(c *gatedConn) {
	c.settled = true
	if c.timer != nil {
		c.timer.Stop()
	}
	if g.pending[c.key] == c {
		delete(g.pending, c.key)
	}
}

// compactLocked drops settled entries from the front of order so that it
// does not grow with every connection ever accepted.
func (g *gate) compactLocked() {
	i := 0
	for i < len(g.order) && g.order[i].settled {
		i++
	}
	g.order = g.order[i:]
	if len(g.order) > 4*g.maxPending {
		kept := g.order[:0]
		for _, c := range g.order {
			if !c.settled {
				kept = append(kept, c)
			}
		}
		g.order = kept
	}
}

// authenticated marks the connection from remote as trusted: it is no
// longer subject to the window or the pending bound.
func (g *gate) authenticated(remote net.Addr) {
	if remote == nil {
		return
	}
	g.mu.Lock()
	if c := g.pending[remote.String()]; c != nil {
		g.settleLocked(c)
	}
	g.mu.Unlock()
}

func (c *gatedConn) Close() error {
	c.g.mu.Lock()
	if !c.settled {
		c.g.settleLocked(c)
	}
	c.g.mu.Unlock()
	return c.Conn.Close()
}

package transport

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"
)

// Failed authentication is throttled per peer, and logged. A peer is an
// IP address (an IPv6 /64, which one host usually holds whole); each has a
// bucket of authFailBurst failures that refills at authFailRate a second.
// A request from a peer whose bucket is empty is refused before its token
// is even compared, so that guesses cost a guesser time whether they are
// right or not: 20 at once, then 5 a second, where an agent used to
// answer 4,250 wrong tokens a second on one connection. A coordinator
// with the right token never spends from its bucket; one that shares its
// address with a guesser is refused while the guesser is.
const (
	authFailBurst = 20
	authFailRate  = 5.0
	// authPeersMax bounds the peers remembered (see makeRoomLocked).
	authPeersMax = 1024
	// authLogEvery is how often failures are summed up in the log, at
	// most authLogPeers peers a line each and one line for the rest.
	authLogEvery = 10 * time.Second
	authLogPeers = 10
)

// authThrottle holds the failures of every peer. Its methods are called
// from gRPC's tap handler, before a stream's body is read.
type authThrottle struct {
	now  func() time.Time
	logf func(format string, args ...any)

	mu    sync.Mutex
	peers map[string]*peerFailures
	// flushing is set while a summary is scheduled: failures until then
	// are counted, not logged one by one.
	flushing bool
}

// peerFailures is one peer's bucket and what the log has not said yet.
type peerFailures struct {
	tokens  float64
	at      time.Time // when tokens was last brought up to date
	failed  int64     // wrong or missing tokens not yet logged
	refused int64     // requests refused while throttled, not yet logged
}

func newAuthThrottle(logf func(string, ...any)) *authThrottle {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &authThrottle{now: time.Now, logf: logf, peers: map[string]*peerFailures{}}
}

// peerKey is the address a peer is throttled by: its IP, an IPv6 one
// cut to its /64.
func peerKey(addr net.Addr) string {
	if addr == nil {
		return "unknown"
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		host = addr.String()
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.String()
	}
	return (&net.IPNet{IP: ip.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

// refill brings p's bucket up to now.
func (p *peerFailures) refill(now time.Time) {
	p.tokens += now.Sub(p.at).Seconds() * authFailRate
	if p.tokens > authFailBurst {
		p.tokens = authFailBurst
	}
	p.at = now
}

// throttled says whether the peer must wait, and how long, before its
// next request is looked at.
func (t *authThrottle) throttled(addr net.Addr) (time.Duration, bool) {
	key := peerKey(addr)
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.peers[key]
	if p == nil {
		return 0, false
	}
	p.refill(t.now())
	if p.tokens >= 1 {
		return 0, false
	}
	p.refused++
	t.scheduleLocked()
	wait := time.Duration((1 - p.tokens) / authFailRate * float64(time.Second))
	return wait.Round(time.Millisecond) + time.Millisecond, true
}

// failed counts a wrong or missing token from the peer. The first failure
// after a quiet spell is logged at once; the rest are summed up every
// authLogEvery.
func (t *authThrottle) failed(addr net.Addr) {
	key := peerKey(addr)
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.peers[key]
	if p == nil {
		p = &peerFailures{tokens: t.makeRoomLocked(now), at: now}
		t.peers[key] = p
	}
	p.refill(now)
	p.tokens--
	if t.flushing {
		p.failed++
		t.scheduleLocked()
		return
	}
	t.logf("authentication failed: a request from %s with a wrong or missing token was refused; failures are throttled per address (%d at once, then %g a second) and summed up here every %s",
		key, authFailBurst, authFailRate, authLogEvery)
	t.scheduleLocked()
}

// scheduleLocked arranges for a summary authLogEvery from now unless one
// is on its way.
func (t *authThrottle) scheduleLocked() {
	if !t.flushing {
		t.flushing = true
		time.AfterFunc(authLogEvery, t.flush)
	}
}

// flush logs what failed since the last summary, the busiest peers first.
// When there was something, another summary follows; otherwise the next
// failure is logged at once.
func (t *authThrottle) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	type line struct {
		key             string
		failed, refused int64
	}
	var lines []line
	for k, p := range t.peers {
		if p.failed > 0 || p.refused > 0 {
			lines = append(lines, line{k, p.failed, p.refused})
			p.failed, p.refused = 0, 0
		}
	}
	t.flushing = false
	if len(lines) == 0 {
		return
	}
	sort.Slice(lines, func(i, j int) bool {
		a, b := lines[i].failed+lines[i].refused, lines[j].failed+lines[j].refused
		return a > b || a == b && lines[i].key < lines[j].key
	})
	var restFailed, restRefused int64
	for i, l := range lines {
		if i >= authLogPeers {
			restFailed += l.failed
			restRefused += l.refused
			continue
		}
		t.logf("authentication failed: %s", failureCounts(l.key, l.failed, l.refused))
	}
	if n := len(lines) - authLogPeers; n > 0 {
		t.logf("authentication failed: %s", failureCounts(fmt.Sprintf("%d more addresses", n), restFailed, restRefused))
	}
	t.scheduleLocked()
}

// failureCounts words one summary line, never with any token in it.
func failureCounts(who string, failed, refused int64) string {
	var parts []string
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d requests with a wrong or missing token", failed))
	}
	if refused > 0 {
		parts = append(parts, fmt.Sprintf("%d more refused unread while throttled", refused))
	}
	return fmt.Sprintf("%s from %s in the last %s", strings.Join(parts, " and "), who, authLogEvery)
}

// makeRoomLocked forgets a peer when authPeersMax are remembered, the
// one with the fullest bucket, and returns the bucket a newcomer starts
// with: that one's, so that addresses beyond the table (a guesser with
// many) start as throttled as the peer they replace rather than with a
// full burst each; below the limit, a full burst.
func (t *authThrottle) makeRoomLocked(now time.Time) float64 {
	if len(t.peers) < authPeersMax {
		return authFailBurst
	}
	var fullest string
	best := -1.0
	for k, p := range t.peers {
		p.refill(now)
		if p.tokens > best {
			fullest, best = k, p.tokens
		}
	}
	delete(t.peers, fullest)
	return best
}

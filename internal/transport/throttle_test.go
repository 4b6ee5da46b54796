package transport

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAddr is a peer's address.
type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

// testThrottle is a throttle on a clock the test moves, logging into a
// slice.
func testThrottle() (*authThrottle, *time.Time, func() []string) {
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	var lines []string
	th := newAuthThrottle(func(f string, a ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(f, a...))
		mu.Unlock()
	})
	th.now = func() time.Time { return now }
	return th, &now, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), lines...) }
}

// A peer has authFailBurst failures at once, then authFailRate a second;
// a throttled request is told how long to wait; another peer is not
// affected, and a peer with no failures is never looked at twice.
func TestAuthThrottleBucket(t *testing.T) {
	th, now, _ := testThrottle()
	guesser, honest := fakeAddr("10.0.0.1:5000"), fakeAddr("10.0.0.2:6000")
	for i := 0; i < authFailBurst; i++ {
		if _, thr := th.throttled(guesser); thr {
			t.Fatalf("throttled after %d failures, before the burst of %d", i, authFailBurst)
		}
		th.failed(guesser)
	}
	wait, thr := th.throttled(fakeAddr("10.0.0.1:5001")) // another connection, same address
	if !thr || wait <= 0 || wait > time.Second/authFailRate+time.Millisecond {
		t.Fatalf("after the burst: throttled %v, wait %s", thr, wait)
	}
	if _, thr := th.throttled(honest); thr {
		t.Fatal("another address is throttled")
	}
	// Over a minute of constant guessing, at most the rate gets looked at.
	looked := 0
	for step := 0; step < 60_000; step++ {
		*now = now.Add(time.Millisecond)
		if _, thr := th.throttled(guesser); !thr {
			looked++
			th.failed(guesser)
		}
	}
	if max := int(60*authFailRate) + 1; looked > max {
		t.Fatalf("%d guesses looked at in a minute, expected at most %d", looked, max)
	}
	*now = now.Add(time.Duration(authFailBurst/authFailRate) * time.Second)
	if _, thr := th.throttled(guesser); thr {
		t.Fatal("still throttled after the bucket refilled")
	}
}

// IPv6 peers are throttled by their /64, IPv4 ones by their address.
func TestAuthThrottlePeerKey(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:4000":          "127.0.0.1",
		"[2001:db8:1:2:3::4]:80":  "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::]:1": "2001:db8:1:2::/64",
		"[::ffff:10.0.0.1]:5":     "10.0.0.1",
	} {
		if got := peerKey(fakeAddr(addr)); got != want {
			t.Errorf("%s: %s, want %s", addr, got, want)
		}
	}
}

// The log says the first failure at once and then sums failures up per
// address, the busiest first, at most authLogPeers lines and one for the
// rest, never with a token; memory holds at most authPeersMax addresses.
func TestAuthThrottleLogAndMemory(t *testing.T) {
	th, now, lines := testThrottle()
	for p := 0; p < 3*authPeersMax; p++ {
		addr := fakeAddr(fmt.Sprintf("10.%d.%d.%d:1", p>>16&255, p>>8&255, p&255))
		for i := 0; i <= p%3; i++ {
			th.failed(addr)
		}
		*now = now.Add(time.Microsecond)
	}
	if n := len(th.peers); n > authPeersMax {
		t.Fatalf("%d addresses remembered, expected at most %d", n, authPeersMax)
	}
	if got := lines(); len(got) != 1 || !strings.Contains(got[0], "a request from 10.0.0.0 with a wrong or missing token was refused") {
		t.Fatalf("the first failure is logged at once, the rest counted: %q", got)
	}
	th.flush()
	got := lines()[1:]
	if len(got) != authLogPeers+1 {
		t.Fatalf("%d summary lines, expected %d:\n%s", len(got), authLogPeers+1, strings.Join(got, "\n"))
	}
	if !strings.Contains(got[0], "3 requests with a wrong or missing token from 10.") {
		t.Errorf("the busiest first: %q", got[0])
	}
	if last := got[len(got)-1]; !strings.Contains(last, " more addresses in the last 10s") {
		t.Errorf("the rest in one line: %q", last)
	}
	th.flush()
	if n := len(lines()); n != authLogPeers+2 {
		t.Errorf("a summary with nothing new logged %d lines", n-authLogPeers-2)
	}
	if th.flushing {
		t.Error("a quiet summary schedules another")
	}
}

// A guesser with more addresses than the table holds gets no fresh burst
// for each: a newcomer to a table of drained addresses starts drained.
func TestAuthThrottleManyAddresses(t *testing.T) {
	th, now, _ := testThrottle()
	for p := 0; p < authPeersMax; p++ {
		addr := fakeAddr(fmt.Sprintf("10.0.%d.%d:1", p>>8, p&255))
		for i := 0; i < authFailBurst; i++ {
			th.failed(addr)
		}
	}
	*now = now.Add(time.Millisecond)
	fresh := fakeAddr("192.0.2.1:1")
	th.failed(fresh)
	if _, thr := th.throttled(fresh); !thr {
		t.Fatalf("a newcomer to a full table of drained addresses got a burst (bucket %.2f)", th.peers[peerKey(fresh)].tokens)
	}
	if n := len(th.peers); n != authPeersMax {
		t.Fatalf("%d addresses remembered, expected %d", n, authPeersMax)
	}
}

var _ net.Addr = fakeAddr("")

package cassandra

import (
	"net"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

func testHost(t *testing.T, ip string) *gocql.HostInfo {
	t.Helper()
	h, err := gocql.NewHostInfoFromAddrPort(net.ParseIP(ip), 9042)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// picked lists the hosts a NextHost offers, in order.
func picked(next gocql.NextHost) []*gocql.HostInfo {
	var out []*gocql.HostInfo
	for i := 0; i < 10; i++ {
		h := next()
		if h == nil {
			break
		}
		out = append(out, h.Info())
	}
	return out
}

func TestHostPolicyShortcutOnlyForOneLiveHost(t *testing.T) {
	p := newHostPolicy()
	a, b := testHost(t, "127.0.0.1"), testHost(t, "127.0.0.2")

	p.AddHost(a)
	if got := picked(p.Pick(nil)); len(got) != 1 || got[0] != a {
		t.Fatalf("one host: picked %v, want just %v", got, a)
	}
	if _, ok := p.Pick(nil)().(*onlyHost); !ok {
		t.Error("one host: the shortcut was not taken")
	}

	p.AddHost(b)
	if _, ok := p.Pick(nil)().(*onlyHost); ok {
		t.Error("two hosts up: the shortcut bypassed token awareness")
	}
	if got := picked(p.Pick(nil)); len(got) != 2 {
		t.Errorf("two hosts up: picked %v, want both", got)
	}

	p.HostDown(b)
	if _, ok := p.Pick(nil)().(*onlyHost); ok {
		t.Error("a second host known but down: the shortcut must wait for it to go away")
	}
	p.RemoveHost(b)
	if got := picked(p.Pick(nil)); len(got) != 1 || got[0] != a {
		t.Errorf("second host removed: picked %v, want just %v", got, a)
	}

	p.HostDown(a)
	if got := picked(p.Pick(nil)); len(got) != 0 {
		t.Errorf("only host down: picked %v, want none", got)
	}
	p.HostUp(a)
	if _, ok := p.Pick(nil)().(*onlyHost); !ok {
		t.Error("only host up again: the shortcut was not taken")
	}
}

package hbase

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// fnvKey is YCSB's hashed key for record n (FNV-1a 64 over the 8 bytes of
// n, least significant first, then Java's Math.abs).
func fnvKey(n int64) string {
	h := uint64(0xcbf29ce484222325)
	v := uint64(n)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= 1099511628211
		v >>= 8
	}
	r := int64(h)
	if r < 0 {
		r = -r
	}
	return "user" + strconv.FormatInt(r, 10)
}

func TestFractionBelow(t *testing.T) {
	for _, c := range []struct {
		prefix   string
		min, max float64
	}{
		{"1", 0, 1e-9},           // only "0" sorts before "1"
		{"2", 0.11, 0.13},        // "1..." holds about 12%
		{"9", 0.95, 0.97},        // "9..." holds about 3.6%
		{"99999", 0.999, 1.0001}, // nearly everything
	} {
		f := fractionBelow(c.prefix)
		if f < c.min || f > c.max {
			t.Errorf("fractionBelow(%s) = %v, want in [%v, %v]", c.prefix, f, c.min, c.max)
		}
	}
}

// TestHashedSplitsAreEven checks the computed split points against real
// YCSB keys: every region gets close to 1/n of them.
func TestHashedSplitsAreEven(t *testing.T) {
	const records = 200000
	keys := make([]string, records)
	for i := range keys {
		keys[i] = fnvKey(int64(i))
	}
	sort.Strings(keys)
	for _, n := range []int{2, 10, 64, 200} {
		splits, _, err := splitKeys(properties.FromMap(map[string]string{propPresplitN: strconv.Itoa(n)}))
		if err != nil {
			t.Fatal(err)
		}
		if len(splits) != n-1 {
			t.Fatalf("n=%d: %d split keys", n, len(splits))
		}
		prev := 0
		for i := 0; i <= len(splits); i++ {
			end := records
			if i < len(splits) {
				end = sort.SearchStrings(keys, string(splits[i]))
			}
			share := float64(end-prev) / records
			if want := 1 / float64(n); share < want*0.85 || share > want*1.15 {
				t.Errorf("n=%d region %d holds %.4f of keys, want about %.4f", n, i, share, want)
			}
			prev = end
		}
	}
}

func TestExplicitSplitKeys(t *testing.T) {
	s, _, err := splitKeys(properties.FromMap(map[string]string{propPresplitKeys: "user1, user2,user3"}))
	if err != nil || len(s) != 3 || string(s[1]) != "user2" {
		t.Fatalf("got %q, %v", s, err)
	}
	if _, _, err := splitKeys(properties.FromMap(map[string]string{propPresplitKeys: "user2,user1"})); err == nil {
		t.Fatal("unordered keys accepted")
	}
}

func TestQuorumFrom(t *testing.T) {
	for props, want := range map[string]string{
		"":                              "127.0.0.1:2181",
		"hosts=zk1,zk2":                 "zk1:2181,zk2:2181",
		"hbase.zookeeper.quorum=a:1, b": "a:1,b:2181",
		"hbase.zookeeper.property.clientPort=2182": "127.0.0.1:2182",
	} {
		m := map[string]string{}
		if k, v, ok := strings.Cut(props, "="); ok {
			m[k] = v
		}
		got, err := quorumFrom(properties.FromMap(m))
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", props, got, err, want)
		}
	}
}

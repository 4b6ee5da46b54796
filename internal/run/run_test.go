package run

import (
	"testing"
	"time"
)

func TestShare(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		k    int
		want []int64
	}{
		{10, 3, []int64{4, 3, 3}},
		{2, 3, []int64{1, 1, 0}},
		{0, 3, []int64{0, 0, 0}},
		{-5, 2, []int64{0, 0}},
		{1 << 40, 2, []int64{1 << 39, 1 << 39}},
	} {
		var sum int64
		for i, w := range tc.want {
			if got := Share(tc.n, tc.k, i); got != w {
				t.Errorf("Share(%d, %d, %d) = %d, want %d", tc.n, tc.k, i, got, w)
			}
			sum += w
		}
		if tc.n > 0 && sum != tc.n {
			t.Errorf("shares of %d add up to %d", tc.n, sum)
		}
	}
}

// A run that ends 9 ms into its last 10 s interval must not chart as a
// collapse: the sliver is folded into the interval before it.
func TestMergeTrailingSliver(t *testing.T) {
	const s = int64(time.Second)
	full := []Span{{0, 10 * s, 50000}, {10 * s, 20 * s, 50000}}
	sliver := append(append([]Span(nil), full...), Span{20 * s, 20*s + 9*int64(time.Millisecond), 6})
	got, ok := MergeTrailingSliver(sliver, 10*time.Second)
	if !ok || len(got) != 2 {
		t.Fatalf("merged=%v spans=%v", ok, got)
	}
	if got[1].EndNs != sliver[2].EndNs || got[1].Ops != 50006 {
		t.Fatalf("last span %+v", got[1])
	}
	if r := got[1].Rate(); r < 4990 || r > 5010 {
		t.Fatalf("rate of the merged span %g, want about 5000 (the sliver alone reads %g)", r, sliver[2].Rate())
	}
	if sliver[2].Ops != 6 || len(sliver) != 3 {
		t.Fatal("input modified")
	}
	// A last interval that is merely short (half of one) is real data.
	half := append(append([]Span(nil), full...), Span{20 * s, 25 * s, 25000})
	if _, ok := MergeTrailingSliver(half, 10*time.Second); ok {
		t.Fatal("a half interval is not a sliver")
	}
	if _, ok := MergeTrailingSliver(full[:1], 10*time.Second); ok {
		t.Fatal("a single span has nothing to merge into")
	}
	if _, ok := MergeTrailingSliver(sliver, 0); ok {
		t.Fatal("without a nominal interval nothing is a sliver")
	}
}

func TestSelfViewCountsCPUPerInterval(t *testing.T) {
	v := SelfView{Name: LocalAgent}
	v.Begin(10)
	u := &Update{Progress: Progress{Warmup: true}}
	v.Describe(u, 11)
	if u.Agents[0].State != AgentWarmup || u.AgentIntervals != nil {
		t.Fatalf("warm-up update %+v", u)
	}
	u = &Update{Interval: nil, Progress: Progress{Final: true}}
	v.Describe(u, 12.5)
	if u.Agents[0].State != AgentFinished {
		t.Fatalf("state %s", u.Agents[0].State)
	}
}

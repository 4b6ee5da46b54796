package coordinator

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/transport"
)

func agentsN(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "h" + string(rune('a'+i)) + ":7420"
	}
	return out
}

func TestPlanLoadSplitsContiguousRanges(t *testing.T) {
	props := properties.FromMap(map[string]string{"recordcount": "1000", "insertstart": "100", "insertcount": "900", "threadcount": "4", "target": "1000"})
	p, err := planOf(props, run.Load, agentsN(4), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// 900 over 4: 225 each, contiguous from 100.
	wantStart := []int64{100, 325, 550, 775}
	var total int64
	for i, a := range p.Agents {
		if a.InsertStart != wantStart[i] || a.InsertCount != 225 {
			t.Errorf("agent %d: [%d,+%d), want [%d,+225)", i, a.InsertStart, a.InsertCount, wantStart[i])
		}
		if a.Props["insertstart"] != itoa(wantStart[i]) || a.Props["insertcount"] != "225" {
			t.Errorf("agent %d props: %v", i, a.Props)
		}
		if a.Props["threadcount"] != "4" {
			t.Errorf("threadcount must stay per agent, got %s", a.Props["threadcount"])
		}
		if a.Props["target"] != "250" {
			t.Errorf("target share %s, want 250", a.Props["target"])
		}
		total += a.InsertCount
	}
	if total != 900 || p.OperationCount != 900 {
		t.Fatalf("total %d / plan ops %d", total, p.OperationCount)
	}

	// Remainders go to the first agents and ranges stay contiguous.
	props = properties.FromMap(map[string]string{"recordcount": "10"})
	p, err = planOf(props, run.Load, agentsN(3), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := [][2]int64{}
	for _, a := range p.Agents {
		got = append(got, [2]int64{a.InsertStart, a.InsertCount})
	}
	if want := [][2]int64{{0, 4}, {4, 3}, {7, 3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ranges %v, want %v", got, want)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestPlanRunSharesAndStripes(t *testing.T) {
	props := properties.FromMap(map[string]string{
		"recordcount": "1000", "operationcount": "1003", "target": "2", "warmupops": "5",
		"insertproportion": "0.5", "readproportion": "0.5", "updateproportion": "0",
	})
	p, err := planOf(props, run.Run, agentsN(3), 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	wantOps := []string{"335", "334", "334"}
	wantWarm := []string{"2", "2", "1"}
	for i, a := range p.Agents {
		if a.Props["operationcount"] != wantOps[i] || a.Props["warmupops"] != wantWarm[i] {
			t.Errorf("agent %d: ops %s warm %s", i, a.Props["operationcount"], a.Props["warmupops"])
		}
		// Reads cover the whole key space: insertstart/count untouched.
		if _, ok := a.Props["insertstart"]; ok {
			t.Errorf("agent %d: run phase must not narrow insertstart", i)
		}
		if a.InsertStart != 0 || a.InsertCount != 1000 {
			t.Errorf("agent %d range [%d,+%d)", i, a.InsertStart, a.InsertCount)
		}
		if a.Props["ycsbctl.insertstripe.index"] != itoa(int64(i)) || a.Props["ycsbctl.insertstripe.count"] != "3" {
			t.Errorf("agent %d stripe %s/%s", i, a.Props["ycsbctl.insertstripe.index"], a.Props["ycsbctl.insertstripe.count"])
		}
		if a.Props["status.interval"] != "0.5" {
			t.Errorf("interval %s", a.Props["status.interval"])
		}
		// target 2 over 3 agents: an integer share would give an agent 0
		// (= unthrottled); split evenly instead.
		if a.Target < 0.66 || a.Target > 0.67 {
			t.Errorf("agent %d target %v", i, a.Target)
		}
	}
	// The plan is deterministic.
	p2, _ := planOf(props, run.Run, agentsN(3), 500*time.Millisecond)
	if !reflect.DeepEqual(p, p2) {
		t.Fatal("plan not deterministic")
	}
	// The user's properties are not modified.
	if props.String("operationcount", "") != "1003" {
		t.Fatal("plan mutated the input properties")
	}
}

func TestPlanRejectsTinyBudgets(t *testing.T) {
	_, err := planOf(properties.FromMap(map[string]string{"recordcount": "100", "operationcount": "2"}), run.Run, agentsN(3), time.Second)
	if err == nil {
		t.Fatal("2 operations over 3 agents accepted")
	}
	_, err = planOf(properties.FromMap(map[string]string{"recordcount": "2"}), run.Load, agentsN(3), time.Second)
	if err == nil {
		t.Fatal("2 records over 3 agents accepted")
	}
	if _, err := planOf(properties.New(), run.Run, nil, time.Second); err == nil {
		t.Fatal("no agents accepted")
	}
}

func TestClusterLimit(t *testing.T) {
	cases := []struct {
		acked []int64
		want  int64
	}{
		{[]int64{0, 0, 0}, 99},
		{[]int64{1, 1, 1}, 102}, // keys 100,101,102
		{[]int64{2, 1, 1}, 103}, // + agent 0's second insert (key 103)
		{[]int64{2, 2, 1}, 104}, // + agent 1's (104); agent 2's 105 missing
		{[]int64{1, 2, 2}, 102}, // agent 0 lags: 103 missing, stop there
		{[]int64{5}, 104},       // one agent: its contiguous inserts
		{[]int64{3, 0, 7}, 100}, // agent 0's first insert; agent 1 has none
	}
	for _, c := range cases {
		if got := ClusterLimit(100, c.acked); got != c.want {
			t.Errorf("ClusterLimit(%v) = %d, want %d", c.acked, got, c.want)
		}
	}
}

// planOf parses props as the coordinator command does (status.interval set
// to interval) and plans it over agents.
func planOf(props *properties.Properties, phase run.Phase, agents []string, interval time.Duration) (*Plan, error) {
	p := props.Clone()
	p.Set(spec.PropStatusInterval, strconv.FormatFloat(interval.Seconds(), 'g', -1, 64))
	sp, err := spec.Parse("basic", p, phase)
	if err != nil {
		return nil, err
	}
	return NewPlan(sp, agents)
}

// TestPlanRejectsPropertiesAgentsWouldRefuse: properties too large for an
// agent's receive limit are a configuration error before anything is
// sent; just below the limit they pass.
func TestPlanRejectsPropertiesAgentsWouldRefuse(t *testing.T) {
	big := func(n int) *properties.Properties {
		p := properties.FromMap(map[string]string{"recordcount": "1000", "operationcount": "1000"})
		for i := 0; n > 0; i++ {
			v := strings.Repeat("x", min(n, 1<<20))
			p.Set("pad."+strconv.Itoa(i), v)
			n -= len(v)
		}
		return p
	}
	_, err := planOf(big(transport.MaxCoordinatorMessageBytes), run.Run, agentsN(2), time.Second)
	if err == nil || !strings.Contains(err.Error(), "MiB") || !strings.Contains(err.Error(), "-P files") {
		t.Fatalf("oversized properties: %v", err)
	}
	if _, err := planOf(big(transport.MaxCoordinatorMessageBytes-64<<10), run.Run, agentsN(2), time.Second); err != nil {
		t.Fatalf("properties under the limit refused: %v", err)
	}
}

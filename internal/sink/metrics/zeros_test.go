package metrics

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

func workloadConfig(t *testing.T, props map[string]string) *workload.Config {
	t.Helper()
	cfg, err := workload.ParseConfig(properties.FromMap(props))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestPlannedOps(t *testing.T) {
	a := map[string]string{"readproportion": "0.5", "updateproportion": "0.5", "recordcount": "10"}
	f := map[string]string{"readproportion": "0.5", "updateproportion": "0", "readmodifywriteproportion": "0.5", "recordcount": "10"}
	e := map[string]string{"readproportion": "0", "updateproportion": "0", "scanproportion": "0.95", "insertproportion": "0.05", "recordcount": "10", "dataintegrity": "true"}
	for _, tc := range []struct {
		name  string
		phase run.Phase
		props map[string]string
		want  []measurement.Op
	}{
		{"load", run.Load, a, []measurement.Op{measurement.Insert}},
		{"workload A", run.Run, a, []measurement.Op{measurement.Read, measurement.Update}},
		{"workload F", run.Run, f, []measurement.Op{measurement.Read, measurement.Update, measurement.ReadModifyWrite}},
		{"scans with integrity", run.Run, e, []measurement.Op{measurement.Insert, measurement.Scan, measurement.Verify}},
	} {
		if got := PlannedOps(tc.phase, workloadConfig(t, tc.props)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A run's series exist at zero from the moment its sink is made, before
// any interval, over real HTTP; the first interval then raises them from
// those zeros, so increase() over a range starting before the load counts
// every operation.
func TestZeroSeriesBeforeFirstInterval(t *testing.T) {
	e := New()
	ops := PlannedOps(run.Run, workloadConfig(t, map[string]string{"readproportion": "0.5", "updateproportion": "0", "readmodifywriteproportion": "0.5", "recordcount": "10"}))
	sink := e.NewSink(RunInfo{RunID: "r0", Phase: "run", DB: "basic", Start: time.Now(), Agents: []string{"10.0.0.1:7420", "10.0.0.2:7420"}, Ops: ops}, nil)
	srv, err := Listen("127.0.0.1:0", e.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	scrape := func() string {
		resp, err := http.Get(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	body := scrape()
	for _, agent := range []string{"10.0.0.1:7420", "10.0.0.2:7420"} {
		for _, op := range []string{"READ", "UPDATE"} {
			for st := range adapters.NumStatuses {
				line := `ycsbctl_operations_total{agent="` + agent + `",op="` + op + `",run_id="r0",status="` + st.String() + `"} 0`
				if !strings.Contains(body, line+"\n") {
					t.Errorf("missing zero series %s", line)
				}
			}
		}
		for _, op := range []string{"READ", "UPDATE", "READ-MODIFY-WRITE"} {
			line := `ycsbctl_operation_duration_seconds_count{agent="` + agent + `",kind="service",op="` + op + `",outcome="ok",run_id="r0"} 0`
			if !strings.Contains(body, line+"\n") {
				t.Errorf("missing zero histogram %s", line)
			}
		}
		if !strings.Contains(body, `ycsbctl_transactions_total{agent="`+agent+`",run_id="r0"} 0`+"\n") {
			t.Errorf("missing zero transactions of %s", agent)
		}
	}
	// A read-modify-write is counted as its READ and UPDATE only: no
	// counter that can never move.
	if strings.Contains(body, `ycsbctl_operations_total{agent="10.0.0.1:7420",op="READ-MODIFY-WRITE"`) {
		t.Error("READ-MODIFY-WRITE has a status counter")
	}

	iv := interval(3, 40, 0)
	iv.Seq = 1
	sink.OnInterval(&run.Update{RunID: "r0", Interval: iv, Agents: []run.Agent{{Index: 0, Address: "10.0.0.1:7420", State: run.AgentRunning, LastSeq: 1}},
		AgentIntervals: []*measurement.Interval{iv}})
	body = scrape()
	if !strings.Contains(body, `ycsbctl_operations_total{agent="10.0.0.1:7420",op="READ",run_id="r0",status="OK"} 40`+"\n") {
		t.Error("first interval not counted on top of the zero series")
	}
	if !strings.Contains(body, `ycsbctl_operations_total{agent="10.0.0.2:7420",op="READ",run_id="r0",status="OK"} 0`+"\n") {
		t.Error("the idle agent's zero series went away")
	}
}

// A long-lived agent keeps exposing a finished run, final interval
// included, until the next run replaces it; the next run starts from zero.
func TestFinishedRunStaysUntilNext(t *testing.T) {
	e := New()
	ops := []measurement.Op{measurement.Read}
	s1 := e.NewSink(RunInfo{RunID: "r1", Phase: "run", Agents: []string{"host"}, Ops: ops}, nil)
	self := run.SelfView{Name: "host"}
	for seq, final := range []bool{false, true} {
		iv := interval(uint64(seq+1), 25, 0)
		iv.Seq = int64(seq + 1)
		u := &run.Update{RunID: "r1", Interval: iv, Progress: run.Progress{Final: final}}
		self.Describe(u, 0)
		s1.OnInterval(u)
	}
	for range 3 {
		mfs, err := e.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		if v := findMetric(t, mfs, "ycsbctl_operations_total", map[string]string{"run_id": "r1", "op": "READ", "status": "OK"}).Counter.GetValue(); v != 50 {
			t.Fatalf("finished run shows %v reads, want 50 (final interval included)", v)
		}
		if v := findMetric(t, mfs, "ycsbctl_agent_state", map[string]string{"run_id": "r1", "state": "finished"}).Gauge.GetValue(); v != 1 {
			t.Fatal("finished run not in state finished")
		}
	}
	e.NewSink(RunInfo{RunID: "r2", Phase: "run", Agents: []string{"host"}, Ops: ops}, nil)
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	if v := findMetric(t, mfs, "ycsbctl_operations_total", map[string]string{"run_id": "r2", "op": "READ", "status": "OK"}).Counter.GetValue(); v != 0 {
		t.Fatalf("next run starts at %v, want 0", v)
	}
}

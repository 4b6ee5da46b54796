package coordinator

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	"github.com/ycsbctl/ycsbctl/internal/workload"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Plan is how one run is divided among agents. It is a pure function of
// the configuration and the agent order (NewPlan), so a re-run with the
// same flags gives every agent the same share, and it is recorded in
// run.json.
type Plan struct {
	Phase run.Phase `json:"-"`
	// PhaseName is "load" or "run".
	PhaseName string `json:"phase"`
	// Cluster-wide totals, as the user configured them.
	RecordCount    int64   `json:"recordcount"`
	InsertStart    int64   `json:"insertstart"`
	InsertCount    int64   `json:"insertcount"`
	OperationCount int64   `json:"operationcount"`
	Target         float64 `json:"target"`
	WarmupOps      int64   `json:"warmupops"`
	// ThreadsPerAgent is `threadcount`: YCSB's thread count is per
	// client process, and an agent is a client process.
	ThreadsPerAgent int           `json:"threads_per_agent"`
	Interval        time.Duration `json:"interval_ns"`
	Agents          []AgentPlan   `json:"agents"`
}

// AgentPlan is one agent's share.
type AgentPlan struct {
	Index   int    `json:"index"`
	Address string `json:"address"`
	// InsertStart/InsertCount: load phase, the agent's contiguous slice of
	// the key range; run phase, the whole configured range (reads go
	// anywhere).
	InsertStart    int64   `json:"insertstart"`
	InsertCount    int64   `json:"insertcount"`
	OperationCount int64   `json:"operationcount"`
	Target         float64 `json:"target"`
	WarmupOps      int64   `json:"warmupops"`
	// Props is the complete property set sent to the agent.
	Props map[string]string `json:"-"`
}

// NewPlan divides a parsed run among agents, in the given order.
func NewPlan(s *spec.Spec, agents []string) (*Plan, error) {
	n := len(agents)
	if n == 0 {
		return nil, fmt.Errorf("no agents (--agents)")
	}
	cfg, props, phase, interval := s.Workload, s.Props, s.Phase, s.CutInterval
	p := &Plan{
		Phase: phase, PhaseName: phase.String(),
		RecordCount: cfg.RecordCount, InsertStart: cfg.InsertStart, InsertCount: cfg.InsertCount,
		OperationCount: s.OpCount, Target: s.Target, WarmupOps: s.WarmupOps,
		ThreadsPerAgent: s.Threads, Interval: interval,
	}
	timed := s.MaxExecution > 0
	// An agent with a zero budget would run without limit (the engine's
	// "0 = unlimited"), so a budget smaller than the agent count is an
	// error rather than a silently unbounded agent.
	if s.OpCount > 0 && s.OpCount < int64(n) {
		if phase == run.Load {
			return nil, loadCountError(props, cfg, n)
		}
		return nil, &properties.Error{Property: workload.PropOperationCount, Value: props.String(workload.PropOperationCount, ""),
			Expected: fmt.Sprintf("at least one operation per agent (%s)", plural.Count(n, "agent"))}
	}
	// Each agent validates its share as a single host would; a share
	// below what a host accepts is refused here, in the user's terms,
	// before any agent is contacted. The value is the property as set,
	// so that the command line can say which flag or -p typed it.
	if s.Target > 0 && s.Target/float64(n) < spec.MinTarget {
		return nil, &properties.Error{Property: spec.PropTarget, Value: props.String(spec.PropTarget, ""),
			Expected: fmt.Sprintf("at least %.6g ops/s with %s: the target is split evenly across agents and each paces at least %g ops/s",
				spec.MinTarget*float64(n), plural.Count(n, "agent"), spec.MinTarget)}
	}
	if phase == run.Load && s.OpCount == 0 && !timed {
		// spec.Parse refuses this already; kept so that a plan is never
		// an unbounded load whatever built the spec.
		return nil, &properties.Error{Property: workload.PropInsertCount, Value: props.String(workload.PropInsertCount, ""), Expected: "a positive number of records to load"}
	}
	for i := 0; i < n; i++ {
		a := AgentPlan{Index: i, Address: agents[i]}
		a.OperationCount = run.Share(s.OpCount, n, i)
		a.WarmupOps = run.Share(s.WarmupOps, n, i)
		a.Target = splitTarget(s.Target, n, i)
		if phase == run.Load {
			// Contiguous slices: agent i loads [start_i, start_i+count_i).
			a.InsertCount = run.Share(cfg.InsertCount, n, i)
			a.InsertStart = cfg.InsertStart
			for j := 0; j < i; j++ {
				a.InsertStart += run.Share(cfg.InsertCount, n, j)
			}
		} else {
			a.InsertStart, a.InsertCount = cfg.InsertStart, cfg.InsertCount
		}
		a.Props = agentProps(props, phase, a, n, interval)
		if err := checkPrepareSize(a); err != nil {
			return nil, err
		}
		p.Agents = append(p.Agents, a)
	}
	return p, nil
}

// loadCountError refuses a load of fewer records than agents (an agent
// with none would load without limit), naming the property the user set:
// insertcount when given, else recordcount, from which the count derives
// (recordcount - insertstart).
func loadCountError(p *properties.Properties, cfg *workload.Config, n int) error {
	agents := plural.Count(n, "agent")
	if p.Has(workload.PropInsertCount) {
		return &properties.Error{Property: workload.PropInsertCount, Value: p.String(workload.PropInsertCount, ""),
			Expected: fmt.Sprintf("at least one record per agent to load (%s)", agents)}
	}
	if cfg.InsertStart > 0 {
		return &properties.Error{Property: workload.PropRecordCount, Value: p.String(workload.PropRecordCount, ""),
			Expected: fmt.Sprintf("at least %d with insertstart=%s and %s: the load inserts recordcount - insertstart records, at least one per agent",
				cfg.InsertStart+int64(n), p.String(workload.PropInsertStart, ""), agents)}
	}
	return &properties.Error{Property: workload.PropRecordCount, Value: p.String(workload.PropRecordCount, ""),
		Expected: fmt.Sprintf("at least one record per agent to load (%s)", agents)}
}

// checkPrepareSize refuses, before anything is sent, properties that an
// agent would refuse to receive (transport.MaxCoordinatorMessageBytes):
// otherwise the stream would break and re-connect until the prepare
// timeout.
func checkPrepareSize(a AgentPlan) error {
	msg := &pb.CoordinatorMsg{Msg: &pb.CoordinatorMsg_Prepare{Prepare: &pb.Prepare{Properties: a.Props, IntervalNs: math.MaxInt64, AgentIndex: math.MaxInt32, AgentCount: math.MaxInt32}}}
	const margin = 1 << 10
	if n := proto.Size(msg) + margin; n > transport.MaxCoordinatorMessageBytes {
		return fmt.Errorf("the run's properties take %.1f MiB for agent %d; an agent accepts at most %d MiB (check the -P files and -p values)",
			float64(n)/(1<<20), a.Index, transport.MaxCoordinatorMessageBytes>>20)
	}
	return nil
}

// splitTarget divides an ops/s target. Whole-number targets split like
// operation counts (integers, remainder to the first agents) so per-agent
// targets read like YCSB's; a target smaller than the agent count, or a
// fractional one, is divided evenly instead, because an integer share of
// 0 would mean "unthrottled" to the engine.
func splitTarget(t float64, n, i int) float64 {
	if t <= 0 {
		return 0
	}
	if t == math.Trunc(t) && t >= float64(n) && t < 1<<53 {
		return float64(run.Share(int64(t), n, i))
	}
	return t / float64(n)
}

func agentProps(base *properties.Properties, phase run.Phase, a AgentPlan, n int, interval time.Duration) map[string]string {
	p := base.Map()
	set := func(k string, v int64) { p[k] = strconv.FormatInt(v, 10) }
	if phase == run.Load {
		set(workload.PropInsertStart, a.InsertStart)
		set(workload.PropInsertCount, a.InsertCount)
	} else {
		// The zipfian key space is sized from the whole run's expected
		// inserts, so every agent draws from the same distribution as a
		// single host would; only the budget is this agent's share.
		if v, ok := p[workload.PropOperationCount]; ok {
			p[workload.PropKeyspaceOperationCount] = v
		}
		set(workload.PropOperationCount, a.OperationCount)
	}
	if a.Target > 0 {
		p[spec.PropTarget] = strconv.FormatFloat(a.Target, 'g', -1, 64)
	}
	if _, ok := p[spec.PropWarmupOps]; ok {
		set(spec.PropWarmupOps, a.WarmupOps)
	}
	// Run-phase inserts of agent i use key numbers recordcount + k*n + i,
	// so agents never insert the same key (YCSB's multi-client problem).
	set(workload.PropInsertStripeIndex, int64(a.Index))
	set(workload.PropInsertStripeCount, int64(n))
	p[spec.PropStatusInterval] = strconv.FormatFloat(interval.Seconds(), 'g', -1, 64)
	return p
}

// ClusterLimit combines agents' contiguous acknowledged run-phase insert
// counts into the cluster-wide highest readable key number. With striping,
// agent i's k-th insert is key recordcount + k*n + i; if every agent has
// at least m inserts acknowledged, all keys below recordcount + m*n exist,
// and the next ones exist for the leading agents that have more than m.
func ClusterLimit(recordCount int64, acked []int64) int64 {
	if len(acked) == 0 {
		return recordCount - 1
	}
	m := acked[0]
	for _, a := range acked {
		if a < m {
			m = a
		}
	}
	limit := recordCount - 1 + m*int64(len(acked))
	for _, a := range acked {
		if a <= m {
			break
		}
		limit++
	}
	return limit
}

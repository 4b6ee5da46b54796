// Package metrics exposes a run on a Prometheus /metrics endpoint: operation
// counters, latency histograms (classic buckets and native histograms, fed
// from the engine's HDR histograms), run and agent state, and the harness's
// own CPU.
//
// Every ycsbctl_ series carries a run_id label (k6's testid pattern), so
// that one dashboard variable selects a run and runs never mix in a sum;
// an exporter only ever exposes its current run. Operation series carry an
// agent label; all agents share one bucket layout, so sum without(agent)
// over counters and histograms gives the cluster view exactly.
package metrics

import (
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// RunInfo identifies the run being exposed.
type RunInfo struct {
	RunID    string
	Phase    string // load or run
	Workload string
	DB       string
	// Mode tells which latency the plain series hold: with
	// measurement.ModeIntended they are intended latencies.
	Mode measurement.Mode
	// Start is when the run began measuring; it becomes the created
	// timestamp of counters and histograms.
	Start time.Time
	// Agents and Ops name the series exposed at zero from the moment the
	// run is set, before any operation: for each agent, every YCSB status
	// of each op and the ok latency histogram of each op. PromQL's
	// increase() and rate() only count growth between samples, so a
	// counter whose first scraped sample is already 5,000 loses those
	// 5,000; a series scraped at 0 first loses nothing. Ops come from the
	// workload (PlannedOps).
	Agents []string
	Ops    []measurement.Op
	// HostMetrics exposes the hosts' own CPU, disk and network figures
	// too (ycsbctl.telemetry.hostmetrics).
	HostMetrics bool
}

// PlannedOps returns the operations a phase of the workload issues and so
// records: INSERT when loading; in the run phase each op with a non-zero
// proportion, a read-modify-write also being timed as a READ and an
// UPDATE, and VERIFY when data integrity is checked.
func PlannedOps(phase run.Phase, w *workload.Config) []measurement.Op {
	if phase == run.Load || w == nil {
		return []measurement.Op{measurement.Insert}
	}
	var use [measurement.NumOps]bool
	use[measurement.Read] = w.ReadProp > 0 || w.RMWProp > 0
	use[measurement.Update] = w.UpdateProp > 0 || w.RMWProp > 0
	use[measurement.Insert] = w.InsertProp > 0
	use[measurement.Scan] = w.ScanProp > 0
	use[measurement.Delete] = w.DeleteProp > 0
	use[measurement.ReadModifyWrite] = w.RMWProp > 0
	use[measurement.Verify] = w.DataIntegrity && (w.ReadProp > 0 || w.RMWProp > 0 || w.ScanProp > 0)
	var ops []measurement.Op
	for op, on := range use {
		if on {
			ops = append(ops, measurement.Op(op))
		}
	}
	return ops
}

// AgentStatus is the non-histogram state of one agent (or of the single
// host).
type AgentStatus struct {
	State       run.AgentState
	ClockOffset time.Duration
	// Lag is how far the slowest paced worker is behind its schedule.
	Lag time.Duration
	// IntervalDelay is how long after its end the agent's latest interval
	// arrived (0 on a single host).
	IntervalDelay time.Duration
	// CPUSeconds is the CPU the agent's process has used since the run
	// started (user + system).
	CPUSeconds float64
}

type agentData struct {
	// counted marks the ops whose status counters are exposed even at
	// zero (see RunInfo.Agents).
	counted [measurement.NumOps]bool
	status  AgentStatus
	hasStat bool
	hist    map[histKey]*accumulator
	returns [measurement.NumOps][adapters.NumStatuses]int64
	ops     int64
}

type histKey struct {
	op      measurement.Op
	kind    string
	outcome string
}

// Exporter holds what /metrics shows. It is safe for concurrent use:
// observers write from the reporter goroutine, scrapes read from HTTP.
type Exporter struct {
	reg *prometheus.Registry

	mu     sync.Mutex
	run    RunInfo
	agents map[string]*agentData
	// hosts are the agents' hosts (telemetry.go), by agent name.
	hosts map[string]*hostData
}

var (
	runLabels    = []string{"run_id"}
	agentLabels  = []string{"run_id", "agent"}
	descRunInfo  = prometheus.NewDesc("ycsbctl_run_info", "The run being measured (always 1); phase is load or run.", []string{"run_id", "phase", "workload", "db"}, nil)
	descOps      = prometheus.NewDesc("ycsbctl_operations_total", "Database operations completed, by operation and YCSB return status.", []string{"run_id", "agent", "op", "status"}, nil)
	descTx       = prometheus.NewDesc("ycsbctl_transactions_total", "Workload transactions completed (YCSB's operation count; a read-modify-write is one transaction).", agentLabels, nil)
	descDuration = prometheus.NewDesc("ycsbctl_operation_duration_seconds", "Operation latency: kind=service from the actual start of the call, kind=intended from its scheduled start (corrects coordinated omission under -target); outcome=failed for non-OK returns.", []string{"run_id", "agent", "op", "kind", "outcome"}, nil)
	descState    = prometheus.NewDesc("ycsbctl_agent_state", "Agent state as a state set: 1 for the current state, 0 for the others.", []string{"run_id", "agent", "state"}, nil)
	descOffset   = prometheus.NewDesc("ycsbctl_agent_clock_offset_seconds", "Estimated offset of the agent's clock from the coordinator's.", agentLabels, nil)
	descLag      = prometheus.NewDesc("ycsbctl_schedule_lag_seconds", "How far the slowest paced worker is behind its schedule (-target runs).", agentLabels, nil)
	descDelay    = prometheus.NewDesc("ycsbctl_interval_delay_seconds", "How long after its end the agent's latest interval was merged.", agentLabels, nil)
	descCPU      = prometheus.NewDesc("ycsbctl_agent_cpu_seconds_total", "CPU time (user+system) the load-generating process used during the run.", agentLabels, nil)
	descAgents   = prometheus.NewDesc("ycsbctl_agents", "Number of agents taking part in the run (1 on a single host).", runLabels, nil)
)

// New returns an exporter whose registry also holds the Go runtime and
// process collectors (go_*, process_cpu_seconds_total, ...).
func New() *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), agents: map[string]*agentData{}}
	e.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), (*collector)(e))
	return e
}

// Registry returns the registry, for mounting with other handlers or for
// tests.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Handler serves the registry in the Prometheus text format, or protobuf
// when the scraper asks for it (which it does with native histograms
// enabled).
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// SetRun starts exposing a run. A different run id drops everything the
// previous run left, so a long-lived agent exposes one run at a time.
func (e *Exporter) SetRun(info RunInfo) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if info.RunID != e.run.RunID {
		e.agents = map[string]*agentData{}
		e.hosts = nil
	}
	e.run = info
	e.zeroSeries()
}

// zeroSeries creates the run's planned series at zero. Every YCSB status is
// created, not only OK: a NOT_FOUND series appearing at its first count
// would lose that count to increase() just as OK would. The cost is
// bounded (ops x 10 statuses x agents; 20 per agent for workload A).
// Failed-outcome latency histograms are not pre-created: they describe a
// distribution, and rate() missing the first failures' latencies does not
// shift a quantile the way a missing count shifts a sum.
func (e *Exporter) zeroSeries() {
	for _, name := range e.run.Agents {
		a := e.agent(name)
		for _, op := range e.run.Ops {
			// A read-modify-write has no status of its own (its READ
			// and UPDATE are counted); it is only timed.
			if op != measurement.ReadModifyWrite {
				a.counted[op] = true
			}
			for _, kind := range e.kinds() {
				k := histKey{op: op, kind: kind, outcome: "ok"}
				if a.hist[k] == nil {
					a.hist[k] = &accumulator{}
				}
			}
		}
	}
}

// kinds returns the latency kinds the run's measurement mode records.
func (e *Exporter) kinds() []string {
	switch e.run.Mode {
	case measurement.ModeIntended:
		return []string{"intended"}
	case measurement.ModeBoth:
		return []string{"service", "intended"}
	}
	return []string{"service"}
}

// Run returns the current run.
func (e *Exporter) Run() RunInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.run
}

func (e *Exporter) agent(name string) *agentData {
	a := e.agents[name]
	if a == nil {
		a = &agentData{hist: map[histKey]*accumulator{}}
		e.agents[name] = a
	}
	return a
}

// ObserveInterval adds one interval measured by agent (a single host names
// itself) to the cumulative counters and histograms.
func (e *Exporter) ObserveInterval(agent string, iv *measurement.Interval) {
	if iv == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.agent(agent)
	for s, h := range iv.Hist {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		k := e.keyOf(measurement.Series(s))
		acc := a.hist[k]
		if acc == nil {
			acc = &accumulator{}
			a.hist[k] = acc
		}
		acc.addHDR(h)
	}
	for op := range iv.Returns {
		for st, n := range iv.Returns[op] {
			a.returns[op][st] += n
		}
	}
	a.ops += iv.Ops
}

func (e *Exporter) keyOf(s measurement.Series) histKey {
	k := histKey{op: s.Op(), kind: "service", outcome: "ok"}
	if s.Kind() == measurement.Intended || e.run.Mode == measurement.ModeIntended {
		k.kind = "intended"
	}
	if s.Failed() {
		k.outcome = "failed"
	}
	return k
}

// SetAgentStatus records an agent's state, clock offset, lag and CPU.
func (e *Exporter) SetAgentStatus(agent string, st AgentStatus) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.agent(agent)
	a.status = st
	a.hasStat = true
}

// collector is the Exporter seen as a prometheus.Collector. It is
// "unchecked" (Describe sends nothing) because its label values change
// from run to run; the registry still checks every collected metric.
type collector Exporter

func (c *collector) Describe(chan<- *prometheus.Desc) {}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	e := (*Exporter)(c)
	e.mu.Lock()
	defer e.mu.Unlock()
	info := e.run
	if info.RunID == "" {
		return
	}
	ch <- prometheus.MustNewConstMetric(descRunInfo, prometheus.GaugeValue, 1, info.RunID, info.Phase, info.Workload, info.DB)
	// Agents are the names with a status; a coordinator's merged series
	// ("all") is not one.
	agents := 0
	for _, a := range e.agents {
		if a.hasStat {
			agents++
		}
	}
	ch <- prometheus.MustNewConstMetric(descAgents, prometheus.GaugeValue, float64(agents), info.RunID)
	var ct *timestamppb.Timestamp
	if !info.Start.IsZero() {
		ct = timestamppb.New(info.Start)
	}
	names := make([]string, 0, len(e.agents))
	for n := range e.agents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		a := e.agents[name]
		for op := range a.returns {
			for st, n := range a.returns[op] {
				if n == 0 && !a.counted[op] {
					continue
				}
				ch <- counter(descOps, float64(n), info.Start, info.RunID, name, measurement.Op(op).String(), adapters.Status(st).String())
			}
		}
		ch <- counter(descTx, float64(a.ops), info.Start, info.RunID, name)
		for k, acc := range a.hist {
			m := &histMetric{desc: descDuration, labels: prometheus.MakeLabelPairs(descDuration, []string{info.RunID, name, k.op.String(), k.kind, k.outcome})}
			acc.write(&m.h)
			m.h.CreatedTimestamp = ct
			ch <- m
		}
		if !a.hasStat {
			continue
		}
		// ycsbctl_agent_state is a state set: 1 for the current state, 0
		// for the others.
		for _, s := range run.AgentStates {
			v := 0.0
			if s == a.status.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, v, info.RunID, name, string(s))
		}
		ch <- prometheus.MustNewConstMetric(descOffset, prometheus.GaugeValue, a.status.ClockOffset.Seconds(), info.RunID, name)
		ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, a.status.Lag.Seconds(), info.RunID, name)
		ch <- prometheus.MustNewConstMetric(descDelay, prometheus.GaugeValue, a.status.IntervalDelay.Seconds(), info.RunID, name)
		ch <- counter(descCPU, a.status.CPUSeconds, info.Start, info.RunID, name)
	}
	e.collectHosts(ch)
}

func counter(d *prometheus.Desc, v float64, created time.Time, labels ...string) prometheus.Metric {
	if created.IsZero() {
		return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	return prometheus.MustNewConstMetricWithCreatedTimestamp(d, prometheus.CounterValue, v, created, labels...)
}

// histMetric is a histogram with classic buckets and native parts at once.
// client_golang's const constructors build one or the other; writing the
// dto directly lets one series carry both, as its live Histogram does.
type histMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	h      dto.Histogram
}

func (m *histMetric) Desc() *prometheus.Desc { return m.desc }

func (m *histMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	out.Histogram = &m.h
	return nil
}

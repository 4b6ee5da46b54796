package metrics

import (
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/run"
)

// Sink feeds a run into an Exporter: every agent's interval into its
// latency histograms and counters (labelled with the agent's address, so
// sum by (...) across agents gives the cluster), and every agent's state,
// clock offset, lag, interval delay and CPU. A single host is a run with
// one agent named "local"; an agent daemon exposes itself the same way.
type Sink struct {
	e    *Exporter
	info RunInfo
	now  func() time.Time

	mu      sync.Mutex
	started bool
	cpu     map[int]float64
	seen    map[int]int64
}

// NewSink returns the sink for one run. When info.RunID is known the run
// is exposed at once, its planned series at zero (info.Agents, info.Ops),
// so that a scrape before the first operation sees the zeros; otherwise
// the id is taken from the first update.
func (e *Exporter) NewSink(info RunInfo, now func() time.Time) *Sink {
	if now == nil {
		now = time.Now
	}
	s := &Sink{e: e, info: info, now: now, cpu: map[int]float64{}, seen: map[int]int64{}}
	if info.RunID != "" {
		s.started = true
		e.SetRun(info)
	}
	return s
}

// OnInterval exposes one update.
func (s *Sink) OnInterval(u *run.Update) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || (u.RunID != "" && s.e.Run().RunID != u.RunID) {
		s.started = true
		info := s.info
		if u.RunID != "" {
			info.RunID = u.RunID
		}
		if info.Start.IsZero() && u.Interval != nil && u.Interval.StartNs > 0 {
			info.Start = time.Unix(0, u.Interval.StartNs)
		}
		s.e.SetRun(info)
	}
	if !u.Progress.Warmup {
		for i, iv := range u.AgentIntervals {
			if iv != nil && i < len(u.Agents) {
				s.e.ObserveInterval(u.Agents[i].Address, iv)
			}
		}
	}
	for i, iv := range u.Telemetry {
		if iv != nil && i < len(u.Agents) {
			s.e.SetTelemetry(u.Agents[i].Address, u.Agents[i].Hostname, iv)
		}
	}
	now := s.now()
	for _, a := range u.Agents {
		// CPUSeconds is per interval: add it once per new interval into
		// the counter Prometheus expects.
		if a.LastSeq > s.seen[a.Index] {
			s.cpu[a.Index] += a.CPUSeconds
			s.seen[a.Index] = a.LastSeq
		}
		st := AgentStatus{State: a.State, ClockOffset: a.ClockOffset, Lag: a.Lag, CPUSeconds: s.cpu[a.Index]}
		if u.Interval != nil && u.Interval.EndNs > 0 && !u.Progress.Warmup {
			st.IntervalDelay = max(now.Sub(time.Unix(0, u.Interval.EndNs)), 0)
		}
		s.e.SetAgentStatus(a.Address, st)
	}
}

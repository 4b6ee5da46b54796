package metrics

import (
	"time"

	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// EngineObserver feeds an engine run (a single host, or one agent's own
// engine) into e under the given agent name. CPU is this process' own,
// counted from the first interval.
func (e *Exporter) EngineObserver(agent string) engine.Observer {
	return &engineObserver{e: e, agent: agent, cpu0: ProcessCPUSeconds(), now: time.Now}
}

type engineObserver struct {
	e     *Exporter
	agent string
	cpu0  float64
	now   func() time.Time
}

func (o *engineObserver) OnInterval(iv, _ *measurement.Interval, p engine.Progress) {
	st := AgentStatus{State: "running", Lag: p.Lag, CPUSeconds: ProcessCPUSeconds() - o.cpu0}
	switch {
	case p.Warmup:
		st.State = "warmup"
	case p.Final:
		st.State = "finished"
	}
	if !p.Warmup {
		o.e.ObserveInterval(o.agent, iv)
		if iv.EndNs > 0 {
			st.IntervalDelay = max(o.now().Sub(time.Unix(0, iv.EndNs)), 0)
		}
	}
	o.e.SetAgentStatus(o.agent, st)
}

// StartRun starts exposing a run measured by this process' own engine
// (an agent, or a single host) and returns the observer to hand to the
// engine. An agent names itself as the coordinator knows it
// ("agent-<index>"), so its series line up with the coordinator's.
func (e *Exporter) StartRun(info RunInfo, agent string) engine.Observer {
	e.SetRun(info)
	return e.EngineObserver(agent)
}

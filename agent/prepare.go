package agent

import (
	"fmt"
	"os"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// specOf validates a coordinator's Prepare as the agent will run it: its
// phase, then the run's properties with the agent's own (its -p) on top,
// parsed once, here (the coordinator validated the same set before
// sending it). It touches no database.
func specOf(m *pb.Prepare, own map[string]string) (*spec.Spec, run.Phase, error) {
	var phase run.Phase
	switch m.Phase {
	case pb.Phase_PHASE_LOAD:
		phase = run.Load
	case pb.Phase_PHASE_RUN:
		phase = run.Run
	default:
		return nil, phase, fmt.Errorf("unknown phase %v", m.Phase)
	}
	props := properties.FromMap(m.Properties)
	for k, v := range own {
		props.Set(k, v)
	}
	sp, err := spec.Parse(m.Db, props, phase)
	return sp, phase, err
}

// prepare runs a coordinator's Prepare: it opens the database and builds
// the engine, then says the run is ready with what the coordinator plans
// with (threads, operation count, warnings, agent 0's description of the
// database). A run that ends meanwhile closes what was opened; one the
// coordinator stopped meanwhile (its Final is sent) keeps it for its end
// and announces nothing.
func (r *heldRun) prepare(m *pb.Prepare) {
	sp, phase, err := specOf(m, r.srv.cfg.Properties)
	if err != nil {
		r.failPrepare(err)
		return
	}
	r.logf("preparing %s %s (agent %d of %d)", phase, m.Db, m.AgentIndex, m.AgentCount)
	if r.srv.cfg.Sink != nil {
		// The sink exposes this agent's series at zero as soon as the run
		// is prepared, under the name its intervals will carry.
		host, _ := os.Hostname()
		r.self = run.SelfView{Name: host, Hostname: host}
		r.metrics = r.srv.cfg.Sink(run.Info{RunID: r.id, Mode: run.ModeDistributed, Command: "agent " + phase.String(), Started: r.clk.Now(), Agents: []string{host}}, sp)
	}
	p, err := spec.Prepare(r.ctx, sp, r.clk, func(f string, a ...any) { r.logf(f, a...) }, r)
	if err != nil {
		r.failPrepare(err)
		return
	}
	var dbInfo *pb.DatabaseInfo
	if m.AgentIndex == 0 {
		// One agent describes the database for the run's record: the
		// server is the same for all, and each description costs it
		// a few queries.
		dbInfo = wire.DatabaseToProto(adapters.Describe(r.ctx, sp.Adapter.Name, p.DB))
	}
	r.mu.Lock()
	if r.ending.Load() {
		r.mu.Unlock()
		_ = p.Close()
		return
	}
	defer r.mu.Unlock()
	r.prepared = p
	if r.state != stPreparing {
		return
	}
	if sp.Measure.TrackRuntime {
		r.runtime = &ycsbtext.RuntimeSampler{}
	}
	// Agent 0 reads a remote database's internals when none of its
	// server runs on its host; every agent samples its own host.
	host, _ := os.Hostname()
	r.tel = p.StartTelemetry(host, r.index == 0, r.logf)
	r.moveLocked(stReady, "prepared")
	if r.keyLimit != nil {
		p.Runner.SetExternalLimit(*r.keyLimit)
	}
	r.sendLocked(&pb.AgentMsg{Msg: &pb.AgentMsg_Prepared{Prepared: &pb.Prepared{
		AgentIndex: r.index, Threads: int32(p.Runner.Threads()), OperationCount: p.Spec.OpCount, Warnings: r.srv.ownWarnings(sp), Database: dbInfo,
	}}})
}

// failPrepare says why the prepare failed; a run the coordinator stopped
// meanwhile (its Final is sent) only logs it.
func (r *heldRun) failPrepare(err error) {
	r.logf("prepare failed: %v", err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == stPreparing {
		r.moveLocked(stFailed, "prepare: "+err.Error())
		r.sendLocked(failed(r.index, "prepare", err.Error()))
	}
}

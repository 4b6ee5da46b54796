package agent

import (
	"fmt"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
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

package session

import (
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// telemetryNotes says what each load generator's sampler says once (the
// database's processes found or not, internals that cannot be read) and
// tallies the measured intervals' telemetry for the summary's verdicts,
// drawn by the same rules as run.json's (telemetry.Builder), keeping no
// interval: a run of any length costs it the same memory.
type telemetryNotes struct {
	logf        func(string, ...any)
	distributed bool
	b           *telemetry.Builder
	seen        bool
}

func newTelemetryNotes(logf func(string, ...any), distributed bool) *telemetryNotes {
	return &telemetryNotes{logf: logf, distributed: distributed, b: telemetry.NewVerdictBuilder()}
}

func (t *telemetryNotes) OnInterval(u *run.Update) {
	for i, iv := range u.Telemetry {
		if iv == nil {
			continue
		}
		t.seen = true
		var a run.Agent
		if i < len(u.Agents) {
			a = u.Agents[i]
		}
		for _, n := range iv.Notes {
			if t.distributed {
				t.logf("agent %d (%s): %s", i, a.Address, n)
			} else {
				t.logf("%s", n)
			}
		}
		if u.Progress.Warmup || u.Interval == nil {
			continue
		}
		t.b.Name(i, a.Address, a.Hostname)
		t.b.Add(i, u.Interval.Seq, u.Interval.StartNs, u.Interval.EndNs, iv)
	}
}

// lines are the verdicts for the summary's notes.
func (t *telemetryNotes) lines() []string {
	if !t.seen {
		return nil
	}
	return t.b.Lines()
}

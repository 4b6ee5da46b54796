package spec

import (
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// Telemetry is what the load generators sample of their hosts
// (ycsbctl.telemetry*, package telemetry).
type Telemetry struct {
	// Enabled is false when ycsbctl.telemetry=false.
	Enabled bool
	// Pids names the database server's processes when set.
	Pids telemetry.Pids
	// HostMetrics exposes host-wide figures on /metrics as well.
	HostMetrics bool
}

func parseTelemetry(p *properties.Properties) (Telemetry, error) {
	var t Telemetry
	var err error
	if t.Enabled, err = p.Bool(telemetry.PropEnabled, true); err != nil {
		return t, err
	}
	if t.HostMetrics, err = p.Bool(telemetry.PropHostMetrics, false); err != nil {
		return t, err
	}
	v := p.String(telemetry.PropPids, "")
	if t.Pids, err = telemetry.ParsePids(v); err != nil {
		return t, &properties.Error{Property: telemetry.PropPids, Value: v,
			Expected: "a pid file (a path with a slash), pids (12,34) or a regular expression matched against process names and command lines (" + err.Error() + ")"}
	}
	return t, nil
}

// StartTelemetry starts sampling this host for the prepared run: the
// adapter says which processes are its server's and reads its internals
// (capabilities of the opened DB); readsRemote says this load generator
// reads a remote server's internals when none runs on its host. The
// sampler's notes come with the intervals it cuts (Interval.Notes). It
// returns nil when telemetry is off or /proc cannot be read (said with
// logf).
func (p *Prepared) StartTelemetry(host string, readsRemote bool, logf func(string, ...any)) *telemetry.Sampler {
	t := p.Spec.Telemetry
	if !t.Enabled {
		return nil
	}
	cfg := telemetry.Config{Host: host, DB: p.Spec.Adapter.Name, Pids: t.Pids, ReadsRemote: readsRemote,
		InternalsEvery: max(p.Spec.StatusInterval, time.Second)}
	if sp, ok := p.DB.(adapters.ServerProcesses); ok {
		cfg.Processes = sp.ServerProcesses()
	}
	if is, ok := p.DB.(adapters.InternalsSource); ok {
		cfg.Internals = is
	}
	s, err := telemetry.Start(cfg)
	if err != nil {
		logf("%v: the run goes on without telemetry (%s=false hides this)", err, telemetry.PropEnabled)
		return nil
	}
	return s
}

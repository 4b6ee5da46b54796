package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/sink/metrics"
)

func init() {
	localObserverHooks = append(localObserverHooks, startLocalMetrics)
	finishHooks = append(finishHooks, stopLocalMetrics)
}

// LocalAgentName is the agent label of a single-host run's series.
const LocalAgentName = "local"

// metricsServers holds each run's server until its finish hook.
var metricsServers sync.Map // *localRun -> *metrics.Server

// startLocalMetrics serves /metrics for a single-host run when
// --metrics-addr (ycsbctl.metrics.addr) is set.
func startLocalMetrics(gs *GlobalState, run *localRun) engine.Observer {
	addr := run.Props.String(PropMetricsAddr, "")
	if addr == "" {
		return nil
	}
	exp := metrics.New()
	exp.SetRun(metrics.RunInfo{RunID: run.RunID, Phase: run.Phase.String(), Workload: workloadLabel(run.Cmdline, run.Props),
		DB: run.DB, Mode: run.Settings.Mode, Start: run.Started})
	srv, err := ServeMetrics(gs.Stderr, addr, exp)
	if err != nil {
		// The run goes on: losing the dashboard is better than losing
		// a benchmark that may have taken long to set up.
		fmt.Fprintf(gs.Stderr, "Warning: %v; running without /metrics\n", err)
		return nil
	}
	metricsServers.Store(run, srv)
	return exp.EngineObserver(LocalAgentName)
}

// ServeMetrics starts the /metrics endpoint of exp on addr and says where
// it is. The coordinator and agent commands use it for --metrics-addr.
func ServeMetrics(stderr io.Writer, addr string, exp *metrics.Exporter) (*metrics.Server, error) {
	srv, err := metrics.Listen(addr, exp.Handler())
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	fmt.Fprintf(stderr, "Prometheus metrics: %s\n", srv.URL())
	return srv, nil
}

func stopLocalMetrics(gs *GlobalState, run *localRun, _ *engine.Result) {
	v, ok := metricsServers.LoadAndDelete(run)
	if !ok {
		return
	}
	srv := v.(*metrics.Server)
	// A scraper polling every 15 s would otherwise miss the last
	// interval of a short run.
	if secs, err := run.Props.Float64(PropMetricsLinger, 0); err == nil && secs > 0 {
		fmt.Fprintf(gs.Stderr, "Keeping %s up for %gs (%s)\n", srv.URL(), secs, PropMetricsLinger)
		<-gs.Clock.After(time.Duration(secs * float64(time.Second)))
	}
	_ = srv.Close()
}

// workloadLabel names the workload for run_info: the -P names, else the
// workload class.
func workloadLabel(cmdline []string, p *properties.Properties) string {
	if w := workloadName(cmdline); w != "" {
		return w
	}
	return p.String("workload", "core")
}

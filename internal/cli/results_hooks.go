package cli

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/sink/metrics"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/version"
)

func init() {
	localObserverHooks = append(localObserverHooks, startLocalBundle)
	finishHooks = append(finishHooks, finishLocalBundle)
}

var bundleWriters sync.Map // *localRun -> *bundle.LocalWriter

// startLocalBundle records a single-host run into --results DIR, in the
// coordinator's bundle layout.
func startLocalBundle(gs *GlobalState, run *localRun) engine.Observer {
	dir := run.Props.String(PropResults, "")
	if dir == "" {
		return nil
	}
	w, err := bundle.NewLocal(dir, bundle.LocalMeta{
		RunID: run.RunID, Version: version.Version, Protocol: version.Protocol, DB: run.DB, Phase: run.Phase.String(),
		Label: run.Props.String("label", ""), Properties: run.Props.Map(), CommandLine: run.Cmdline,
		Interval: run.Settings.StatusInterval, Exporter: run.Props.String(PropExporter, ycsbtext.TextExporter),
		Threads: run.Settings.Threads, Started: run.Started, CPU: metrics.ProcessCPUSeconds, Now: gs.Clock.Now,
	})
	if err != nil {
		fmt.Fprintf(gs.Stderr, "Warning: --results %s: %v; no bundle will be written\n", dir, err)
		return nil
	}
	bundleWriters.Store(run, w)
	return w
}

func finishLocalBundle(gs *GlobalState, run *localRun, res *engine.Result) {
	v, ok := bundleWriters.LoadAndDelete(run)
	if !ok {
		return
	}
	out := bundle.Outcome{Status: bundle.StatusComplete, ExitCode: int(exitcode.OK), ExitReason: exitcode.OK.String()}
	if res.Stopped != "" {
		out.Status = bundle.StatusAborted
		out.Reasons = []string{res.Stopped}
		code := exitcode.Failure
		if strings.Contains(res.Stopped, "operator") {
			code = exitcode.Aborted
		}
		out.ExitCode, out.ExitReason = int(code), code.String()
	}
	dir := run.Props.String(PropResults, "")
	if err := v.(*bundle.LocalWriter).Finish(res, run.Summary, out); err != nil {
		fmt.Fprintf(gs.Stderr, "Error: --results %s: %v\n", dir, err)
		return
	}
	fmt.Fprintf(gs.Stderr, "Results: %s (ycsbctl report %s)\n", dir, dir)
}

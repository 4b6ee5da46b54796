package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/sink/tui"
)

func init() { liveViewHook = newLocalLiveView }

// liveWanted decides whether a run gets the live view: only on a terminal
// (scripts and CI that capture stdout keep the plain status lines), not
// when switched off, and not when something else prints on stdout while
// the run is on. why explains a refusal the operator would not expect.
func liveWanted(gs *GlobalState, p *properties.Properties, db string) (ok bool, why string) {
	if !gs.IsTerminal {
		return false, ""
	}
	if on, err := p.Bool(PropTUI, true); err != nil || !on {
		return false, ""
	}
	if gs.Getenv != nil && gs.Getenv("TERM") == "dumb" {
		return false, ""
	}
	if db == "basic" {
		if v, err := p.Bool("basicdb.verbose", true); err != nil || v {
			return false, "live view off: basicdb.verbose prints every operation on stdout (set -p basicdb.verbose=false to see it)"
		}
	}
	return true, ""
}

// workloadName names the workload from the -P arguments of the command
// line ("workloada", "my.properties"); empty when none was given.
func workloadName(cmdline []string) string {
	var names []string
	for i := 0; i < len(cmdline)-1; i++ {
		if cmdline[i] == "-P" || cmdline[i] == "--P" {
			names = append(names, filepath.Base(cmdline[i+1]))
		}
	}
	return strings.Join(names, "+")
}

func newLocalLiveView(gs *GlobalState, run *localRun) liveView {
	ok, why := liveWanted(gs, run.Props, run.DB)
	if why != "" {
		fmt.Fprintln(gs.Stderr, why)
	}
	if !ok {
		return nil
	}
	s := run.Settings
	v := tui.New(tui.Config{
		Command: run.Phase.String(), DB: run.DB, Workload: workloadName(run.Cmdline), RunID: run.RunID, Phase: run.Phase,
		Threads: s.Threads, Target: s.Target, Interval: s.StatusInterval, Budget: s.OpCount, MaxExecution: s.MaxExecution,
	}, gs.Stdin, gs.Stdout)
	return &localLive{v: v, stderr: gs.Stderr}
}

// localLive adapts a tui.View to the single-host run's liveView.
type localLive struct {
	v      *tui.View
	stderr io.Writer
	once   sync.Once
	// owned is set when notices went into the view instead of stderr.
	owned bool
}

func (l *localLive) OnInterval(iv, cum *measurement.Interval, p engine.Progress) {
	l.v.OnInterval(iv, cum, p)
}

func (l *localLive) Start(interrupt func()) io.Writer {
	// q and the first Ctrl-C stop gracefully, a second Ctrl-C aborts:
	// exactly what the command does with SIGINT, so both go through
	// interrupt, which counts.
	l.v.Start(func(bool) { interrupt() })
	if tui.IsTerminal(l.stderr) {
		l.owned = true
		return l.v.Writer()
	}
	// stderr goes elsewhere (a file): notices and status lines keep
	// going there.
	return nil
}

func (l *localLive) Close() {
	l.once.Do(func() {
		if err := l.v.Close(); err != nil {
			fmt.Fprintf(l.stderr, "live view: %v\n", err)
		}
		// The alternate screen is gone with everything on it; notices
		// (stopped workers, interruptions) must stay in the scrollback.
		if l.owned {
			for _, line := range l.v.Logs() {
				fmt.Fprintln(l.stderr, line)
			}
		}
	})
}

// switchWriter is a writer whose destination can change while others
// write to it: the live view takes stderr over and gives it back.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

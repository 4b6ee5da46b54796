// Package tui is ycsbctl's live terminal view: a full-screen bubbletea
// program that shows a running benchmark (phase, elapsed and ETA,
// throughput with a sparkline, per-operation latency tables, agents in a
// distributed run) and turns q / Ctrl-C into a graceful stop.
//
// The view never blocks the run: the reporter hands it snapshots through
// a mutex-guarded state that the screen redraws from on its own ticker.
package tui

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/ycsbctl/ycsbctl/internal/run"
)

// View is one live view. Create it with New, Start it when the run is about
// to begin, feed it with OnInterval (it is a run.Sink), and
// Close it before printing anything else to the terminal.
type View struct {
	cfg  Config
	st   *state
	in   io.Reader
	out  io.Writer
	now  func() time.Time
	prog *tea.Program
	done chan struct{}
	once sync.Once
	err  error
	// Refresh is the redraw period (elapsed time, ETA); data changes
	// once per interval.
	Refresh time.Duration
}

// New returns a view drawing on out and reading keys from in. in may be
// nil (or not a terminal), in which case only signals stop the run.
func New(cfg Config, in io.Reader, out io.Writer) *View {
	return &View{cfg: cfg, st: &state{interval: cfg.Interval}, in: in, out: out, now: time.Now, done: make(chan struct{}), Refresh: 250 * time.Millisecond}
}

// IsTerminal reports whether w is a terminal, which the view needs.
func IsTerminal(w any) bool {
	f, ok := w.(term.File)
	return ok && term.IsTerminal(f.Fd())
}

// Start takes over the terminal (alternate screen, raw keyboard input).
// onStop is called, on its own goroutine, when the operator asks to stop:
// abort is false for q or a first Ctrl-C, true for a second Ctrl-C.
func (v *View) Start(onStop func(abort bool)) {
	m := model{cfg: v.cfg, st: v.st, start: v.now(), now: v.now, onStop: onStop, refresh: v.Refresh}
	opts := []tea.ProgramOption{
		tea.WithOutput(v.out),
		tea.WithAltScreen(),
		// Signals belong to the command: SIGINT/SIGTERM stop the run
		// through its own handler, whose final interval then closes us.
		tea.WithoutSignalHandler(),
	}
	if IsTerminal(v.in) {
		opts = append(opts, tea.WithInput(v.in))
	} else {
		opts = append(opts, tea.WithInput(nil))
	}
	v.prog = tea.NewProgram(m, opts...)
	go func() {
		defer close(v.done)
		if _, err := v.prog.Run(); err != nil {
			v.err = err
		}
	}()
}

// Update shows a new interval. It never waits for the screen.
func (v *View) Update(s Snapshot) { v.st.update(s, v.now()) }

// OnInterval shows one interval of the run (the view is a run.Sink).
func (v *View) OnInterval(u *run.Update) { v.Update(SnapshotOf(u)) }

// SnapshotOf turns an update into what the view shows. The agents table
// is only drawn for distributed runs (Config.Distributed).
func SnapshotOf(u *run.Update) Snapshot {
	sn := Snapshot{RunID: u.RunID, Progress: u.Progress, Interval: u.Interval, Cumulative: u.Cumulative}
	secs := 0.0
	if u.Interval != nil {
		secs = time.Duration(u.Interval.EndNs - u.Interval.StartNs).Seconds()
	}
	for _, a := range u.Agents {
		ag := Agent{Name: a.Address, Host: a.Hostname, State: a.State, OpsPerSec: a.OpsPerSec, Lag: a.Lag, ClockOffset: a.ClockOffset, Error: a.Error}
		if secs > 0 {
			ag.CPU = a.CPUSeconds / secs
		}
		sn.Agents = append(sn.Agents, ag)
	}
	sn.Hosts = hostsOf(u)
	return sn
}

// Log adds a notice under the tables.
func (v *View) Log(line string) { v.st.log(strings.TrimRight(line, "\n")) }

// Logs returns the notices logged so far (the most recent ones, up to a
// few hundred), for replaying them once the view is gone.
func (v *View) Logs() []string {
	v.st.mu.Lock()
	defer v.st.mu.Unlock()
	return append([]string(nil), v.st.logs...)
}

// Writer returns a writer whose lines become notices; hand it to code that
// would otherwise print to the terminal under the view.
func (v *View) Writer() io.Writer { return &logWriter{v: v} }

// Close gives the terminal back (leaves the alternate screen, restores
// the keyboard mode) and waits until that is done, so that whatever is
// printed next lands on a clean screen. It is safe to call more than once
// and before Start.
func (v *View) Close() error {
	v.once.Do(func() {
		if v.prog == nil {
			close(v.done)
			return
		}
		v.prog.Quit()
		select {
		case <-v.done:
		case <-time.After(5 * time.Second):
			// A wedged terminal write must not keep the summary
			// from printing.
			v.prog.Kill()
			<-v.done
		}
	})
	return v.err
}

// Frame renders the current state at a given size without a terminal.
func (v *View) Frame(width, height int) string {
	return render(v.cfg, v.st, v.now(), v.now(), width, height)
}

type logWriter struct {
	v   *View
	mu  sync.Mutex
	buf []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.v.Log(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

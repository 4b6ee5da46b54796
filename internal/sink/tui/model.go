package tui

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// Config describes the run on screen; it does not change during the run.
type Config struct {
	// Command is what runs: "run", "load", "coordinator run", ...
	Command  string
	DB       string
	Workload string
	RunID    string
	Phase    run.Phase
	Threads  int
	// Target is the total ops/s target (0 = unthrottled).
	Target   float64
	Interval time.Duration
	// Budget is the operation (load: record) count; MaxExecution the time
	// limit. Both feed the ETA and the load progress bar.
	Budget       int64
	MaxExecution time.Duration
	// Distributed shows the agents table.
	Distributed bool
	// Banner, when set, is a line above the title: the progress of a
	// suite this run is a step of.
	Banner string
}

// Agent is one agent's row in a distributed run.
type Agent struct {
	Name  string // address as given to --agents
	Host  string
	State run.AgentState
	// OpsPerSec is the agent's throughput in the latest interval;
	// ExpectedShare the fraction of the cluster's throughput the plan
	// gives it (0: unknown, an equal share is assumed).
	OpsPerSec     float64
	ExpectedShare float64
	Lag           time.Duration
	// CPU is the agent process' CPU in the latest interval, in cores
	// (1.0 = one core busy).
	CPU         float64
	ClockOffset time.Duration
	Error       string
}

// Snapshot is one interval of the run as the view shows it.
type Snapshot struct {
	// RunID, when set, names the run (a coordinator learns its id only
	// once the run starts).
	RunID      string
	Progress   run.Progress
	Interval   *measurement.Interval
	Cumulative *measurement.Interval
	Agents     []Agent
	// Hosts are the load generators' hosts (telemetry), when sampled.
	Hosts []Host
}

// state is shared between the reporter (writes snapshots and log lines)
// and the bubbletea loop (renders). Sharing behind a mutex instead of
// sending messages keeps the reporter from ever waiting on the screen.
type state struct {
	mu      sync.Mutex
	snap    *Snapshot
	snapAt  time.Time
	history []float64
	// interval is the run's status interval and last the span of the
	// latest history point, to fold a trailing sliver into it.
	interval time.Duration
	last     run.Span
	logs     []string
	stopping bool
	aborting bool
}

const (
	maxHistory = 512
	maxLogs    = 200
)

func (s *state) update(sn Snapshot, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap = &sn
	s.snapAt = now
	if !sn.Progress.Warmup && sn.Interval != nil {
		span := run.Span{StartNs: sn.Interval.StartNs, EndNs: sn.Interval.EndNs, Ops: sn.Interval.Ops}
		if merged, ok := run.MergeTrailingSliver([]run.Span{s.last, span}, s.interval); ok && len(s.history) > 0 && sn.Progress.Final {
			// The run's last few milliseconds would read as a collapse
			// of throughput; show them as part of the interval before.
			s.last = merged[0]
			s.history[len(s.history)-1] = s.last.Rate()
			return
		}
		s.last = span
		s.history = append(s.history, span.Rate())
		if len(s.history) > maxHistory {
			s.history = s.history[len(s.history)-maxHistory:]
		}
	}
}

func (s *state) log(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logs = append(s.logs, line)
	if len(s.logs) > maxLogs {
		s.logs = s.logs[len(s.logs)-maxLogs:]
	}
}

func intervalRate(iv *measurement.Interval) float64 {
	d := time.Duration(iv.EndNs - iv.StartNs).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(iv.Ops) / d
}

type tickMsg time.Time

// model is the bubbletea model. It holds only layout and the handles to
// the shared state; every frame is rendered from that state.
type model struct {
	cfg     Config
	st      *state
	start   time.Time
	now     func() time.Time
	width   int
	height  int
	onStop  func(abort bool)
	refresh time.Duration
}

func (m model) Init() tea.Cmd { return m.tick() }

func (m model) tick() tea.Cmd {
	return tea.Tick(m.refresh, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tickMsg:
		return m, m.tick()
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "Q":
			m.stop(false)
		case "ctrl+c":
			m.stop(true)
		}
	}
	return m, nil
}

// stop asks the run to stop: q and the first Ctrl-C stop gracefully, a
// second Ctrl-C aborts. The callback runs on its own goroutine because it
// may log, and logging must never wait for this loop.
func (m model) stop(ctrlC bool) {
	m.st.mu.Lock()
	abort := false
	switch {
	case !m.st.stopping:
		m.st.stopping = true
	case ctrlC && !m.st.aborting:
		m.st.aborting = true
		abort = true
	default:
		m.st.mu.Unlock()
		return
	}
	m.st.mu.Unlock()
	if m.onStop != nil {
		go m.onStop(abort)
	}
}

var (
	colAccent = lipgloss.AdaptiveColor{Light: "#5A56E0", Dark: "#7D79F6"}
	styTitle  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#FFFFFF")).Background(lipgloss.Color("#5A56E0")).Padding(0, 1)
	styBadge  = lipgloss.NewStyle().Bold(true).Padding(0, 1)
	stySect   = lipgloss.NewStyle().Bold(true).Foreground(colAccent)
	styHead   = lipgloss.NewStyle().Bold(true).Faint(true)
	styFaint  = lipgloss.NewStyle().Faint(true)
	styValue  = lipgloss.NewStyle().Bold(true)
	styWarn   = lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Bold(true)
	styBad    = lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
	styGood   = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	stySpark  = lipgloss.NewStyle().Foreground(colAccent)
)

func (m model) View() string {
	w, h := m.width, m.height
	if w <= 0 {
		w = 100
	}
	if h <= 0 {
		h = 40
	}
	return render(m.cfg, m.st, m.start, m.now(), w, h)
}

// render draws one frame. It is a plain function of its inputs so tests
// can check frames without a terminal.
func render(cfg Config, st *state, start, now time.Time, width, height int) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }

	sn := st.snap
	status, statusStyle := "STARTING", styFaint
	elapsed := now.Sub(start)
	if sn != nil {
		status, statusStyle = "RUNNING", styGood
		elapsed = sn.Progress.Elapsed
		if !sn.Progress.Final {
			elapsed += now.Sub(st.snapAt)
		}
		if sn.Progress.Warmup {
			status, statusStyle = "WARM-UP", styWarn
			elapsed = 0
		}
		if sn.Progress.Final {
			status, statusStyle = "FINISHED", styGood
		}
	}
	switch {
	case st.aborting && (sn == nil || !sn.Progress.Final):
		status, statusStyle = "ABORTING", styBad
	case st.stopping && (sn == nil || !sn.Progress.Final):
		status, statusStyle = "STOPPING", styWarn
	}

	if cfg.Banner != "" {
		add(stySect.Render(truncate(cfg.Banner, width)))
	}
	// Title bar.
	title := "ycsbctl " + cfg.Command
	for _, part := range []string{cfg.DB, cfg.Workload} {
		if part != "" {
			title += " · " + part
		}
	}
	left := styTitle.Render(title)
	right := statusStyle.Inherit(styBadge).Render(status)
	gap := width - lipgloss.Width(left) - lipgloss.Width(right)
	add(left + strings.Repeat(" ", max(gap, 1)) + right)

	// Run facts.
	facts := []string{kv("elapsed", fmtClock(elapsed))}
	if sn != nil && !sn.Progress.Warmup && !sn.Progress.Final {
		if eta, ok := estimate(cfg, sn, elapsed); ok {
			facts = append(facts, kv("ETA", fmtClock(eta)))
		}
	}
	switch {
	case cfg.RunID != "":
		facts = append(facts, kv("run", cfg.RunID))
	case sn != nil && sn.RunID != "":
		facts = append(facts, kv("run", sn.RunID))
	}
	if cfg.Threads > 0 {
		th := fmt.Sprint(cfg.Threads)
		if cfg.Distributed {
			th += "/agent"
		}
		facts = append(facts, kv("threads", th))
	}
	if cfg.Target > 0 {
		facts = append(facts, kv("target", fmtRate(cfg.Target)+" ops/s"))
	}
	if cfg.Interval > 0 {
		facts = append(facts, kv("interval", cfg.Interval.String()))
	}
	add(" " + strings.Join(facts, "   "))

	if sn == nil {
		add("", styFaint.Render(" Waiting for the first interval…"))
	} else if sn.Progress.Warmup {
		add("", " "+styWarn.Render("Warm-up")+": "+fmtInt(sn.Progress.WarmupOps)+" operations run (not measured)")
	} else {
		add("")
		add(throughputLine(sn, st.history, width))
		if cfg.Phase == run.Load {
			add(progressLine(cfg, sn, elapsed, width))
		}
		add("")
		add(opTable("Last interval", sn.Interval, intervalSecs(sn.Interval))...)
		add("")
		add(opTable("Since start", sn.Cumulative, sn.Progress.Elapsed.Seconds())...)
		if cfg.Distributed || len(sn.Agents) > 0 {
			add("")
			add(agentTable(sn)...)
		}
		if len(sn.Hosts) > 0 {
			add("")
			add(hostTable(sn.Hosts)...)
		}
	}

	footer := styFaint.Render(" q stop gracefully · ctrl+c stop, twice to abort")
	if st.stopping && !st.aborting {
		footer = styWarn.Render(" Stopping: finishing operations in flight… ctrl+c again to abort")
	}
	// Log lines fill whatever room is left above the footer.
	room := height - len(lines) - 2
	if room > 1 && len(st.logs) > 0 {
		n := min(room-1, len(st.logs), 6)
		add("")
		for _, l := range st.logs[len(st.logs)-n:] {
			add(styFaint.Render(" " + l))
		}
	}
	if len(lines) > height-1 {
		lines = lines[:max(height-1, 1)]
	}
	for len(lines) < height-1 {
		add("")
	}
	add(footer)
	for i, l := range lines {
		lines[i] = lipgloss.NewStyle().MaxWidth(width).Render(l)
	}
	return strings.Join(lines, "\n")
}

func kv(k, v string) string { return styFaint.Render(k+" ") + styValue.Render(v) }

func intervalSecs(iv *measurement.Interval) float64 {
	if iv == nil {
		return 0
	}
	return time.Duration(iv.EndNs - iv.StartNs).Seconds()
}

// estimate mirrors the status line's "est completion": the operation
// budget at the average rate so far, or the time limit, whichever ends
// sooner.
func estimate(cfg Config, sn *Snapshot, elapsed time.Duration) (time.Duration, bool) {
	best := time.Duration(-1)
	done := int64(0)
	if sn.Cumulative != nil {
		done = sn.Cumulative.Ops
	}
	if cfg.Budget > 0 && done > 0 && elapsed > 0 {
		if left := cfg.Budget - done; left > 0 {
			rate := float64(done) / elapsed.Seconds()
			best = time.Duration(float64(left) / rate * float64(time.Second))
		}
	}
	if cfg.MaxExecution > 0 {
		if left := cfg.MaxExecution - elapsed; left > 0 && (best < 0 || left < best) {
			best = left
		}
	}
	return best, best >= 0
}

func throughputLine(sn *Snapshot, history []float64, width int) string {
	cur := intervalRate(sn.Interval)
	total := int64(0)
	errs := int64(0)
	if sn.Cumulative != nil {
		total = sn.Cumulative.Ops
		errs = sn.Cumulative.Errors()
	}
	head := " " + stySect.Render("Throughput") + " " + styValue.Render(fmtRate(cur)+" ops/s") + "  "
	tail := "  " + kv("total", fmtInt(total)+" ops")
	if errs > 0 {
		msg := fmt.Sprintf("errors %s", fmtInt(errs))
		var all int64
		for op := range sn.Cumulative.Returns {
			all += sn.Cumulative.ReturnTotal(measurement.Op(op))
		}
		if all > 0 && errs*100 > all {
			// More than 1% failed: the throughput above is mostly one
			// of failures, so say it plainly.
			msg = fmt.Sprintf("FAILING: %s of %s operations (%.0f%%)", fmtInt(errs), fmtInt(all), 100*float64(errs)/float64(all))
		}
		tail += "  " + styBad.Render(msg)
	} else {
		tail += "  " + kv("errors", "0")
	}
	room := width - lipgloss.Width(head) - lipgloss.Width(tail) - 1
	return head + stySpark.Render(sparkline(history, max(min(room, 60), 0))) + tail
}

// progressLine is the load phase's bar: records inserted of the budget,
// the current insert rate, and the time left at the average rate.
func progressLine(cfg Config, sn *Snapshot, elapsed time.Duration, width int) string {
	done := sn.Cumulative.Ops
	rate := intervalRate(sn.Interval)
	head := " " + stySect.Render("Records") + " "
	var tail string
	frac := 0.0
	if cfg.Budget > 0 {
		frac = float64(done) / float64(cfg.Budget)
		tail = fmt.Sprintf(" %3.0f%%  %s / %s  %s rec/s", frac*100, fmtInt(done), fmtInt(cfg.Budget), fmtRate(rate))
	} else {
		tail = fmt.Sprintf(" %s  %s rec/s", fmtInt(done), fmtRate(rate))
	}
	if eta, ok := estimate(cfg, sn, elapsed); ok && !sn.Progress.Final {
		tail += "  ETA " + fmtClock(eta)
	}
	room := width - lipgloss.Width(head) - lipgloss.Width(tail) - 1
	return head + stySpark.Render(bar(frac, max(min(room, 50), 10))) + tail
}

var opCols = []struct {
	name  string
	width int
}{{"OPERATION", 26}, {"COUNT", 11}, {"OPS/S", 10}, {"P50", 8}, {"P95", 8}, {"P99", 8}, {"P99.9", 8}, {"MAX", 8}, {"  ERRORS", 0}}

func cell(s string, i int) string {
	c := opCols[i]
	if c.width == 0 {
		return s
	}
	if i == 0 {
		return fmt.Sprintf("%-*s", c.width, s)
	}
	return fmt.Sprintf("%*s", c.width, s)
}

// opTable renders one row per latency series with data: operations in
// YCSB's order, intended latency rows after service ones. Counts include
// failed calls; percentiles are of successful calls (YCSB reports failed
// ones under <OP>-FAILED); errors list non-OK return codes.
func opTable(title string, iv *measurement.Interval, secs float64) []string {
	head := " " + stySect.Render(title)
	var hdr strings.Builder
	hdr.WriteByte(' ')
	for i, c := range opCols {
		hdr.WriteString(cell(c.name, i))
	}
	out := []string{head, styHead.Render(hdr.String())}
	if iv == nil {
		return out
	}
	rows := 0
	for _, kind := range []measurement.Kind{measurement.Service, measurement.Intended} {
		for op := measurement.Op(0); op < measurement.NumOps; op++ {
			ok := iv.Hist[measurement.SeriesOf(op, kind, false)]
			// Every call, failures under any name (<OP>-FAILED,
			// <OP>-<STATUS>) included.
			n := iv.KindCount(op, kind)
			if n == 0 && (kind == measurement.Intended || iv.ReturnTotal(op) == 0) {
				continue
			}
			name := op.String()
			if kind == measurement.Intended {
				name = "Intended-" + name
			}
			var row strings.Builder
			row.WriteByte(' ')
			row.WriteString(cell(name, 0))
			row.WriteString(cell(fmtInt(n), 1))
			rate := 0.0
			if secs > 0 {
				rate = float64(n) / secs
			}
			row.WriteString(cell(fmtRate(rate), 2))
			if count(ok) > 0 {
				vals := ok.ValueAtPercentilesSlice([]float64{50, 95, 99, 99.9})
				for i, v := range vals {
					row.WriteString(cell(fmtLatency(v), 3+i))
				}
				row.WriteString(cell(fmtLatency(measurement.Max(ok)), 7))
			} else {
				for i := 3; i <= 7; i++ {
					row.WriteString(cell("-", i))
				}
			}
			line := row.String()
			if kind == measurement.Service {
				if e := errorText(iv, op); e != "" {
					line += "  " + styBad.Render(e)
				}
			}
			out = append(out, line)
			rows++
		}
	}
	if rows == 0 {
		out = append(out, styFaint.Render(" (no operations)"))
	}
	return out
}

func count(h *hdrhistogram.Histogram) int64 {
	if h == nil {
		return 0
	}
	return h.TotalCount()
}

// errorText lists an operation's non-OK return codes, most frequent first.
func errorText(iv *measurement.Interval, op measurement.Op) string {
	type sc struct {
		st adapters.Status
		n  int64
	}
	var errs []sc
	for st, n := range iv.Returns[op] {
		if n > 0 && !adapters.Status(st).IsOK() {
			errs = append(errs, sc{adapters.Status(st), n})
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].n > errs[j].n })
	var parts []string
	for _, e := range errs {
		parts = append(parts, e.st.String()+" "+fmtInt(e.n))
	}
	return strings.Join(parts, ", ")
}

// Straggler thresholds: among at least two running agents, one delivering
// less than this fraction of its expected share of their throughput, or
// whose slowest worker is this much further behind schedule than the
// least-lagging other, is flagged.
const (
	stragglerShare = 0.8
	stragglerLag   = time.Second
)

// shares returns each agent's share of the running agents' throughput
// and the share it is expected to deliver (0 for agents not running), and
// which running agents straggle. A straggler needs someone to lag behind:
// with fewer than two agents running nobody is flagged, and a lag every
// agent shares (a saturated database) flags no one.
func shares(agents []Agent) (share, exp []float64, straggler []bool) {
	share, exp, straggler = make([]float64, len(agents)), make([]float64, len(agents)), make([]bool, len(agents))
	var total float64
	running := 0
	for _, a := range agents {
		if a.State == run.AgentRunning {
			total += a.OpsPerSec
			running++
		}
	}
	for i, a := range agents {
		if a.State != run.AgentRunning {
			continue
		}
		exp[i] = a.ExpectedShare
		if exp[i] == 0 {
			exp[i] = 1 / float64(running)
		}
		if total > 0 {
			share[i] = a.OpsPerSec / total
		}
		if running < 2 {
			continue
		}
		leastOther := time.Duration(-1)
		for j, o := range agents {
			if j != i && o.State == run.AgentRunning && (leastOther < 0 || o.Lag < leastOther) {
				leastOther = o.Lag
			}
		}
		straggler[i] = (total > 0 && share[i] < exp[i]*stragglerShare) || a.Lag-leastOther > stragglerLag
	}
	return share, exp, straggler
}

func agentTable(sn *Snapshot) []string {
	out := []string{" " + stySect.Render(fmt.Sprintf("Agents (%d)", len(sn.Agents)))}
	out = append(out, styHead.Render(fmt.Sprintf(" %-22s %-10s %10s %15s %9s %6s %9s", "AGENT", "STATE", "OPS/S", "SHARE (EXP)", "LAG", "CPU", "OFFSET")))
	shareOf, expOf, straggler := shares(sn.Agents)
	for i, a := range sn.Agents {
		share, exp := shareOf[i], expOf[i]
		name := a.Name
		if a.Host != "" && a.Host != a.Name {
			name += " (" + a.Host + ")"
		}
		if len(name) > 22 {
			name = name[:21] + "…"
		}
		line := fmt.Sprintf(" %-22s %-10s %10s %15s %9s %5.0f%% %9s", name, a.State, fmtRate(a.OpsPerSec),
			fmt.Sprintf("%.0f%% (%.0f%%)", share*100, exp*100), fmtOffset(a.Lag), a.CPU*100, fmtOffset(a.ClockOffset))
		switch {
		case a.State == run.AgentLost || a.State == run.AgentFailed || a.State == run.AgentStopped:
			line = styBad.Render(line + "  " + strings.ToUpper(string(a.State)) + " " + a.Error)
		case straggler[i]:
			line = styWarn.Render(line + "  STRAGGLER")
		}
		out = append(out, line)
	}
	return out
}

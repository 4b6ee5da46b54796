package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

func iv(seq int64, secs float64, reads, updates, notFound int64) *measurement.Interval {
	end := time.Unix(1_700_000_000, 0).Add(time.Duration(seq) * 10 * time.Second)
	i := measurement.NewInterval(seq, end.Add(-time.Duration(secs*float64(time.Second))).UnixNano(), end.UnixNano())
	r := measurement.NewHistogram()
	for k := range reads {
		_ = r.RecordValue(200_000 + k%1000*1000)
	}
	i.Hist[measurement.SeriesOf(measurement.Read, measurement.Service, false)] = r
	i.Returns[measurement.Read][adapters.OK] = reads
	if updates > 0 {
		u := measurement.NewHistogram()
		for range updates {
			_ = u.RecordValue(3_000_000)
		}
		i.Hist[measurement.SeriesOf(measurement.Update, measurement.Service, false)] = u
		i.Returns[measurement.Update][adapters.OK] = updates
	}
	i.Returns[measurement.Read][adapters.NotFound] = notFound
	i.Ops = reads + updates + notFound
	return i
}

func plain(s string) string { return ansi.Strip(s) }

func TestFrameRun(t *testing.T) {
	v := New(Config{Command: "run", DB: "basic", Workload: "workloada", Phase: run.Run, Threads: 4, Budget: 100000, Interval: 10 * time.Second}, nil, nil)
	v.Log("a notice")
	before := plain(v.Frame(120, 40))
	if !strings.Contains(before, "STARTING") || !strings.Contains(before, "Waiting for the first interval") {
		t.Fatalf("before first interval:\n%s", before)
	}
	cum := measurement.NewInterval(0, 0, 0)
	for seq := int64(1); seq <= 3; seq++ {
		i := iv(seq, 10, 5000, 4000, 7)
		cum.Add(i)
		v.OnInterval(&run.Update{Interval: i, Cumulative: cum.Clone(), Progress: run.Progress{Phase: run.Run, Elapsed: time.Duration(seq) * 10 * time.Second, Budget: 100000}})
	}
	f := plain(v.Frame(120, 40))
	for _, want := range []string{"ycsbctl run · basic · workloada", "RUNNING", "Throughput", "901 ops/s", "Last interval", "Since start", "READ", "UPDATE", "P99.9", "NOT_FOUND 7", "NOT_FOUND 21", "3.00ms", "ETA", "a notice", "q stop gracefully"} {
		if !strings.Contains(f, want) {
			t.Errorf("frame lacks %q:\n%s", want, f)
		}
	}
	if n := len(strings.Split(f, "\n")); n != 40 {
		t.Errorf("frame has %d lines, want the full height 40", n)
	}
	for _, l := range strings.Split(f, "\n") {
		if w := ansi.StringWidth(l); w > 120 {
			t.Errorf("line wider than the screen (%d): %q", w, l)
		}
	}
	// Narrow and tiny screens must not panic.
	_ = v.Frame(40, 10)
	_ = v.Frame(1, 1)
}

func TestFrameLoadProgress(t *testing.T) {
	v := New(Config{Command: "load", DB: "embedded", Phase: run.Load, Budget: 10000}, nil, nil)
	i := measurement.NewInterval(1, 0, int64(10*time.Second))
	i.Hist[measurement.SeriesOf(measurement.Insert, measurement.Service, false)] = measurement.NewHistogram()
	_ = i.Hist[measurement.SeriesOf(measurement.Insert, measurement.Service, false)].RecordValues(50_000, 2500)
	i.Returns[measurement.Insert][adapters.OK] = 2500
	i.Ops = 2500
	v.OnInterval(&run.Update{Interval: i, Cumulative: i.Clone(), Progress: run.Progress{Phase: run.Load, Elapsed: 10 * time.Second, Budget: 10000}})
	f := plain(v.Frame(110, 30))
	for _, want := range []string{"Records", "25%", "2,500 / 10,000", "250 rec/s", "ETA 0:00:30", "INSERT", "█", "░"} {
		if !strings.Contains(f, want) {
			t.Errorf("frame lacks %q:\n%s", want, f)
		}
	}
}

func TestFrameAgents(t *testing.T) {
	v := New(Config{Command: "coordinator run", DB: "basic", Phase: run.Run, Distributed: true}, nil, nil)
	i := iv(1, 10, 3000, 0, 0)
	v.Update(Snapshot{Progress: run.Progress{Elapsed: 10 * time.Second}, Interval: i, Cumulative: i,
		Agents: []Agent{
			{Name: "127.0.0.1:7421", State: "running", OpsPerSec: 150, CPU: 0.5, ClockOffset: 300 * time.Microsecond},
			{Name: "127.0.0.1:7422", State: "running", OpsPerSec: 140, CPU: 0.4},
			{Name: "127.0.0.1:7423", State: "running", OpsPerSec: 10, CPU: 0.1, Lag: 2 * time.Second},
			{Name: "127.0.0.1:7424", State: "lost", Error: "silent for 3s"},
		}})
	f := plain(v.Frame(120, 40))
	for _, want := range []string{"Agents (4)", "127.0.0.1:7421", "50% (33%)", "+300µs", "STRAGGLER", "LOST silent for 3s"} {
		if !strings.Contains(f, want) {
			t.Errorf("frame lacks %q:\n%s", want, f)
		}
	}
	for _, l := range strings.Split(f, "\n") {
		if strings.Contains(l, "7421") && strings.Contains(l, "STRAGGLER") {
			t.Errorf("healthy agent flagged: %s", l)
		}
	}
}

// A straggler lags behind other running agents. The only agent still
// running (its peers lost, their last rates stale) is not one, nor are
// agents that all lag alike (a saturated database); one of two running
// agents delivering far less than its share, or lagging a second more
// than the other, is.
func TestStragglerNeedsTwoAgentsAndRealLag(t *testing.T) {
	flagged := func(agents ...Agent) []string {
		v := New(Config{Command: "coordinator run", DB: "basic", Phase: run.Run, Distributed: true}, nil, nil)
		i := iv(1, 10, 3000, 0, 0)
		v.Update(Snapshot{Progress: run.Progress{Elapsed: 10 * time.Second}, Interval: i, Cumulative: i, Agents: agents})
		var out []string
		for _, l := range strings.Split(plain(v.Frame(140, 40)), "\n") {
			if strings.Contains(l, "STRAGGLER") {
				out = append(out, strings.Fields(l)[0])
			}
		}
		return out
	}
	for _, c := range []struct {
		name   string
		agents []Agent
		want   []string
	}{
		{"the only healthy agent", []Agent{
			{Name: "a0", State: "running", OpsPerSec: 300},
			{Name: "a1", State: "lost", OpsPerSec: 310, Error: "silent for 3s"},
			{Name: "a2", State: "lost", OpsPerSec: 290, Error: "silent for 3s"},
		}, nil},
		{"one running agent lagging alone", []Agent{
			{Name: "a0", State: "running", OpsPerSec: 300, Lag: 5 * time.Second},
			{Name: "a1", State: "finished", OpsPerSec: 300},
		}, nil},
		{"every agent lagging alike", []Agent{
			{Name: "a0", State: "running", OpsPerSec: 300, Lag: 3 * time.Second},
			{Name: "a1", State: "running", OpsPerSec: 300, Lag: 3200 * time.Millisecond},
		}, nil},
		{"a slow one of two", []Agent{
			{Name: "a0", State: "running", OpsPerSec: 300},
			{Name: "a1", State: "running", OpsPerSec: 100},
		}, []string{"a1"}},
		{"a lagging one of two", []Agent{
			{Name: "a0", State: "running", OpsPerSec: 300, Lag: 2 * time.Second},
			{Name: "a1", State: "running", OpsPerSec: 300},
		}, []string{"a0"}},
	} {
		if got := flagged(c.agents...); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: flagged %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFrameWarmupAndFinal(t *testing.T) {
	v := New(Config{Command: "run", Phase: run.Run}, nil, nil)
	v.OnInterval(&run.Update{Interval: measurement.NewInterval(0, 0, 0), Cumulative: measurement.NewInterval(0, 0, 0), Progress: run.Progress{Warmup: true, WarmupOps: 1234}})
	if f := plain(v.Frame(100, 20)); !strings.Contains(f, "WARM-UP") || !strings.Contains(f, "1,234 operations") {
		t.Fatalf("warm-up frame:\n%s", f)
	}
	i := iv(1, 5, 10, 0, 0)
	v.OnInterval(&run.Update{Interval: i, Cumulative: i, Progress: run.Progress{Final: true, Elapsed: 5 * time.Second}})
	if f := plain(v.Frame(100, 20)); !strings.Contains(f, "FINISHED") {
		t.Fatalf("final frame:\n%s", f)
	}
}

func TestKeys(t *testing.T) {
	calls := make(chan bool, 4)
	m := model{cfg: Config{}, st: &state{}, now: time.Now, start: time.Now(), onStop: func(abort bool) { calls <- abort }}
	press := func(k tea.KeyMsg) { _, _ = m.Update(k) }
	press(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	if abort := <-calls; abort {
		t.Fatal("q aborted")
	}
	press(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}) // already stopping: ignored
	press(tea.KeyMsg{Type: tea.KeyCtrlC})
	if abort := <-calls; !abort {
		t.Fatal("second ctrl+c did not abort")
	}
	press(tea.KeyMsg{Type: tea.KeyCtrlC})
	select {
	case <-calls:
		t.Fatal("third ctrl+c called again")
	case <-time.After(50 * time.Millisecond):
	}
	if f := plain(render(m.cfg, m.st, m.start, time.Now(), 80, 12)); !strings.Contains(f, "ABORTING") {
		t.Fatalf("no ABORTING:\n%s", f)
	}
}

func TestCloseWithoutStart(t *testing.T) {
	v := New(Config{}, nil, nil)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	_ = v.Close()
}

func TestFormat(t *testing.T) {
	cases := map[string]string{
		fmtLatency(850):                      "850ns",
		fmtLatency(412_345):                  "412µs",
		fmtLatency(1_234_567):                "1.23ms",
		fmtLatency(12_345_678):               "12.3ms",
		fmtLatency(2_500_000_000):            "2.50s",
		fmtInt(1234567):                      "1,234,567",
		fmtInt(-1234):                        "-1,234",
		fmtRate(12.34):                       "12.3",
		fmtRate(1234.5):                      "1,235",
		fmtClock(3723 * time.Second):         "1:02:03",
		sparkline([]float64{0, 1, 2, 4}, 10): "▁▃▅█",
		bar(0.5, 4):                          "██░░",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// The hosts panel: one row per sampled host, the busiest highlighted, a
// saturated one flagged.
func TestFrameHosts(t *testing.T) {
	v := New(Config{Command: "coordinator run", DB: "cassandra", Phase: run.Run, Threads: 4, Interval: 10 * time.Second, Distributed: true}, nil, nil)
	host := func(busy, iowait float64, rss int64) *telemetry.Interval {
		return &telemetry.Interval{Samples: 10, CPU: telemetry.CPU{User: busy, IOWait: iowait, Idle: 100 - busy - iowait},
			Disks: []telemetry.Device{{Name: "vda", WriteBps: 12e6}}, DB: telemetry.Process{Count: 1, CPUPct: busy / 2, RSSMax: rss}, Client: telemetry.Process{CPUPct: 5}}
	}
	i := iv(1, 10, 5000, 4000, 0)
	v.OnInterval(&run.Update{Interval: i, Cumulative: i, Progress: run.Progress{Phase: run.Run, Elapsed: 10 * time.Second},
		Agents: []run.Agent{{Index: 0, Address: "10.0.0.1:7420", Hostname: "h1", State: run.AgentRunning},
			{Index: 1, Address: "10.0.0.2:7420", Hostname: "h2", State: run.AgentRunning},
			{Index: 2, Address: "10.0.0.3:7420", Hostname: "h3", State: run.AgentRunning}},
		Telemetry: []*telemetry.Interval{host(40, 2, 1500e6), host(70, 12.5, 1600e6), nil}})
	f := plain(v.Frame(130, 50))
	for _, want := range []string{"Hosts (2)", "DB RSS", "1500 MB", "12.5%", "12.0"} {
		if !strings.Contains(f, want) {
			t.Errorf("frame lacks %q:\n%s", want, f)
		}
	}
	for _, l := range strings.Split(f, "\n") {
		if strings.Contains(l, " h2 ") && !strings.Contains(l, "HOTTEST") {
			t.Errorf("the busiest host is not highlighted: %q", l)
		}
		if strings.Contains(l, " h1 ") && strings.Contains(l, "HOTTEST") {
			t.Errorf("h1 is not the hottest: %q", l)
		}
	}
	v.OnInterval(&run.Update{Interval: i, Cumulative: i, Progress: run.Progress{Phase: run.Run, Elapsed: 20 * time.Second},
		Agents: []run.Agent{{Index: 0, Hostname: "h1"}}, Telemetry: []*telemetry.Interval{host(95, 1, 0)}})
	if f := plain(v.Frame(130, 50)); !strings.Contains(f, "SATURATED") {
		t.Errorf("a saturated host is not flagged:\n%s", f)
	}
}

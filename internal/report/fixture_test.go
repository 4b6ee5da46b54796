package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	ycsbrun "github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/hlog"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// fixture describes a synthetic run.
type fixture struct {
	db        string
	workload  string // built-in workload name
	agents    int    // 0: single host through bundle.LocalWriter
	intervals int
	rate      float64 // ops/s per interval (total)
	jitter    float64 // relative sd of the rate
	latencyUs float64 // median latency
	seed      uint64
	label     string
	// hosts adds telemetry: what each load generator's host did.
	hosts bool
}

// synthHost is one interval of a host that runs a database beside its
// load generator: CPU that climbs, disk writes in bursts, a database
// process that grows.
func synthHost(r *rand.Rand, i int, agent int, endNs int64) *telemetry.Interval {
	busy := 40 + 50*float64(i%10)/10 + 5*r.Float64()
	iv := &telemetry.Interval{Samples: 10, Cores: 4,
		CPU:     telemetry.CPU{User: busy * 0.7, System: busy * 0.3, IOWait: 3 + 10*r.Float64(), Idle: 100 - busy - 8},
		BusyMax: min(busy+8, 100), IOWaitMax: 15, Load1Max: 3.5, MemTotal: 16 << 30, MemAvailableMin: 9 << 30, MemCached: 4 << 30,
		Disks:  []telemetry.Device{{Name: "nvme0n1", WriteBps: 2e7 + 3e7*r.Float64(), ReadBps: 1e6, UtilPct: 20 + 40*r.Float64(), UtilPctMax: 75, AwaitMs: 0.8}},
		Links:  []telemetry.Link{{Name: "eth0", RxBps: 4e7, TxBps: 3e7, RxPps: 30000, TxPps: 25000}},
		DB:     telemetry.Process{Count: 1, CPUPct: busy * 0.6, CPUPctMax: busy * 0.7, RSSMax: int64(1<<30) + int64(i)<<22, ThreadsMax: 180, FilesMax: 900, WriteBps: 2e7, WriteBytes: 2e8},
		Client: telemetry.Process{Count: 1, CPUPct: busy * 0.2, CPUPctMax: busy * 0.25, RSSMax: 60 << 20},
		Internals: &telemetry.Internals{Product: "Cassandra 5.0.9", Source: fmt.Sprintf("system_views on 10.0.0.%d", agent+1),
			Metrics: []telemetry.Metric{{Name: "compactions_pending", Value: float64(i % 3)}, {Name: "thread_pool.MutationStage.pending", Value: float64(r.IntN(5))}}}}
	for k := range 10 {
		iv.Points = append(iv.Points, telemetry.Point{UnixNs: endNs - int64(9-k)*int64(time.Second), CPU: iv.CPU, DBCPUPct: iv.DB.CPUPct, DBRSS: iv.DB.RSSMax, ClientCPUPct: iv.Client.CPUPct})
	}
	return iv
}

// synthInterval makes one interval of a read/update mix with lognormal
// latencies and a few NOT_FOUND reads.
func synthInterval(r *rand.Rand, seq int64, start time.Time, secs float64, ops int64, latUs float64) *measurement.Interval {
	iv := measurement.NewInterval(seq, start.UnixNano(), start.Add(time.Duration(secs*float64(time.Second))).UnixNano())
	rd, up := measurement.NewHistogram(), measurement.NewHistogram()
	var reads, updates int64
	for range ops {
		v := int64(latUs * 1000 * math.Exp(r.NormFloat64()*0.6))
		if r.IntN(2) == 0 {
			_ = rd.RecordValue(max(v, 1))
			reads++
		} else {
			_ = up.RecordValue(max(v*2, 1))
			updates++
		}
	}
	iv.Hist[measurement.SeriesOf(measurement.Read, measurement.Service, false)] = rd
	iv.Hist[measurement.SeriesOf(measurement.Update, measurement.Service, false)] = up
	nf := reads / 500
	iv.Returns[measurement.Read][adapters.OK] = reads - nf
	iv.Returns[measurement.Read][adapters.NotFound] = nf
	iv.Returns[measurement.Update][adapters.OK] = updates
	iv.Ops = ops
	return iv
}

func workloadProps(t *testing.T, name string) map[string]string {
	w, ok := workloads.Lookup(name)
	if !ok {
		t.Fatalf("no workload %s", name)
	}
	out := map[string]string{}
	for _, line := range strings.Split(w.Text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// makeBundle writes a bundle for f into dir and returns dir.
func makeBundle(t *testing.T, dir string, f fixture) string {
	t.Helper()
	r := rand.New(rand.NewPCG(f.seed, f.seed+1))
	start := time.Unix(1_790_000_000, 0)
	props := workloadProps(t, f.workload)
	props["threadcount"] = "8"
	props["mongodb.url"] = "mongodb://user:secret@db1:27017/ycsb"
	const secs = 10.0
	total := measurement.NewInterval(0, 0, 0)
	if f.agents == 0 {
		// A single host's bundle, recorded as a run records it.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		meta := &bundle.Run{RunID: "run-" + filepath.Base(dir), Tool: "ycsbctl", Version: "test", Protocol: 1, DB: f.db, Phase: "run",
			Label: f.label, Mode: ycsbrun.ModeSingleHost, StartedAt: start,
			Config: bundle.Config{Properties: bundle.Redact(props), Agents: []string{ycsbrun.LocalAgent}, IntervalNs: int64(10 * time.Second),
				CommandLine: bundle.RedactArgs([]string{"run", f.db, "-P", f.workload, "-threads", "8"})},
			Agents: []bundle.Agent{{Index: 0, Address: ycsbrun.LocalAgent, Version: "test", Protocol: 1, Threads: 8}}}
		rec := bundle.NewRecorder(dir, meta)
		if err := rec.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= f.intervals; i++ {
			ops := int64(f.rate * secs * (1 + f.jitter*r.NormFloat64()))
			iv := synthInterval(r, int64(i), start.Add(time.Duration(i-1)*10*time.Second), secs, ops, f.latencyUs)
			total.Add(iv)
			wr, err := wire.RecordFromInterval(0, iv)
			if err != nil {
				t.Fatal(err)
			}
			if f.hosts {
				wr.Telemetry = telemetry.ToPB(synthHost(r, i, 0, iv.EndNs))
			}
			if err := rec.Add(wr); err != nil {
				t.Fatal(err)
			}
		}
		rt := time.Duration(f.intervals) * 10 * time.Second
		sum := &ycsbtext.Summary{RunTime: rt, Total: total, Percentiles: []float64{50, 95, 99}}
		var text strings.Builder
		if err := ycsbtext.Export(&text, ycsbtext.TextExporter, sum); err != nil {
			t.Fatal(err)
		}
		if _, err := rec.Finish(&bundle.Ending{EndedAt: start.Add(rt + 2*time.Second), Status: ycsbrun.StatusComplete, ExitReason: "ok",
			Summary: sum, SummaryText: text.String(), PlannedStart: start,
			Agents: []bundle.AgentEnding{{State: ycsbrun.AgentFinished, Final: &bundle.Final{StartUnixNs: start.UnixNano(), EndUnixNs: start.Add(rt).UnixNano(),
				RunTimeMs: float64(rt) / 1e6, Operations: total.Ops, Intervals: int64(f.intervals)}}}}); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	// A distributed bundle, shaped as the coordinator writes it.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hf, err := os.Create(filepath.Join(dir, bundle.FileHlog))
	if err != nil {
		t.Fatal(err)
	}
	hw := hlog.NewWriter(hf, start)
	run := &bundle.Run{RunID: "run-" + filepath.Base(dir), Tool: "ycsbctl", Version: "test", Protocol: 1, Status: ycsbrun.StatusComplete,
		ExitReason: "ok", DB: f.db, Phase: "run", Label: f.label, StartedAt: start, EndedAt: start.Add(time.Duration(f.intervals) * 10 * time.Second),
		Config: bundle.Config{Properties: bundle.Redact(props), OnAgentLoss: "abort", IntervalNs: int64(10 * time.Second), MaxClockOffsetNs: int64(time.Second)},
		Plan:   map[string]any{"phase": "run", "threads_per_agent": 8}}
	hosts := telemetry.NewBuilder(nil, nil)
	perAgent := make([]*measurement.Interval, f.agents)
	for a := range perAgent {
		perAgent[a] = measurement.NewInterval(0, 0, 0)
		run.Config.Agents = append(run.Config.Agents, fmt.Sprintf("10.0.0.%d:7420", a+1))
	}
	for i := 1; i <= f.intervals; i++ {
		is := bundle.Interval{Seq: int64(i)}
		merged := measurement.NewInterval(int64(i), 0, 0)
		s := start.Add(time.Duration(i-1) * 10 * time.Second)
		for a := range f.agents {
			share := 1.0 / float64(f.agents)
			if a == f.agents-1 && f.agents > 2 {
				share *= 0.6 // a straggler
			}
			ops := int64(f.rate * secs * share * (1 + f.jitter*r.NormFloat64()))
			iv := synthInterval(r, int64(i), s, secs, ops, f.latencyUs*(1+float64(a)*0.1))
			merged.Add(iv)
			perAgent[a].Add(iv)
			if f.hosts {
				hosts.Name(a, fmt.Sprintf("10.0.0.%d:7420", a+1), fmt.Sprintf("loader%d", a+1))
				hosts.Add(a, int64(i), iv.StartNs, iv.EndNs, synthHost(r, i, a, iv.EndNs))
			}
			slice := bundle.AgentSlice{Index: a, Operations: iv.Ops, OpsPerSec: bundle.OpsPerSec(iv.Ops, iv.StartNs, iv.EndNs), CPUSeconds: 2.5, LagNs: int64(a) * 1000, Series: bundle.IntervalStats(iv)}
			is.Agents = append(is.Agents, slice)
			for sr, h := range iv.Hist {
				if h != nil && h.TotalCount() > 0 {
					if err := hw.WriteInterval(bundle.Tag(measurement.Series(sr), a), iv.StartNs, iv.EndNs, h); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		for sr, h := range merged.Hist {
			if h != nil && h.TotalCount() > 0 {
				if err := hw.WriteInterval(bundle.Tag(measurement.Series(sr), -1), merged.StartNs, merged.EndNs, h); err != nil {
					t.Fatal(err)
				}
			}
		}
		is.StartUnixNs, is.EndUnixNs, is.Operations = merged.StartNs, merged.EndNs, merged.Ops
		is.OpsPerSec = bundle.OpsPerSec(merged.Ops, merged.StartNs, merged.EndNs)
		is.Series = bundle.IntervalStats(merged)
		run.Intervals = append(run.Intervals, is)
		total.Add(merged)
	}
	if err := hf.Close(); err != nil {
		t.Fatal(err)
	}
	for a := range f.agents {
		skew := int64(a) * 300_000
		rt := float64(f.intervals) * 10_000
		run.Agents = append(run.Agents, bundle.Agent{Index: a, Address: run.Config.Agents[a], Hostname: fmt.Sprintf("loader%d", a+1), Version: "test",
			State: "finished", ClockOffsetNs: int64(a) * 120_000, RTTNs: 200_000, StartSkewNs: &skew, Threads: 8, Intervals: f.intervals,
			Operations: perAgent[a].Ops, CPUSeconds: 25, Summary: bundle.IntervalStats(perAgent[a]),
			Final: &bundle.Final{RunTimeMs: rt, Operations: perAgent[a].Ops, Intervals: int64(f.intervals), CPUSeconds: 25}})
	}
	rt := time.Duration(f.intervals) * 10 * time.Second
	sum := &ycsbtext.Summary{RunTime: rt, Total: total, Percentiles: []float64{50, 95, 99}}
	var txt strings.Builder
	if err := ycsbtext.Export(&txt, ycsbtext.TextExporter, sum); err != nil {
		t.Fatal(err)
	}
	run.Telemetry = hosts.Record()
	run.Summary = bundle.Summary{RunTimeMs: rt.Milliseconds(), Operations: total.Ops, Series: bundle.IntervalStats(total), Returns: bundle.Returns(total),
		Throughput: float64(total.Ops) / rt.Seconds(), Lines: strings.Split(strings.TrimSpace(txt.String()), "\n")}
	if err := bundle.WriteSummary(dir, txt.String()); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteRun(dir, run); err != nil {
		t.Fatal(err)
	}
	return dir
}

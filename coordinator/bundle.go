package coordinator

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/exitcode"
	"github.com/ycsbctl/ycsbctl/measurement"
	"github.com/ycsbctl/ycsbctl/output"
	"github.com/ycsbctl/ycsbctl/output/hlog"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
	"github.com/ycsbctl/ycsbctl/transport"
)

// Bundle file names inside --results.
const (
	FileRunJSON = "run.json"
	FileSummary = "summary.txt"
	FileHlog    = "merged.hlog"
)

// spool keeps every accepted interval record on disk, so that run.json's
// per-agent, per-interval statistics and the merged .hlog can be built
// exactly at the end (late records included) while memory stays flat
// however long the run.
type spool struct {
	f    *os.File
	path string
	w    *bufio.Writer
	off  int64
	idx  map[spoolKey]spoolEntry
	seqs map[int64]struct{}
}

type spoolKey struct {
	agent int
	seq   int64
}

type spoolEntry struct{ off, n int64 }

func openSpool(dir, runID string) (*spool, error) {
	path := filepath.Join(dir, ".spool-"+runID)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return &spool{f: f, path: path, w: bufio.NewWriterSize(f, 256<<10), idx: map[spoolKey]spoolEntry{}, seqs: map[int64]struct{}{}}, nil
}

func (s *spool) put(agent int, rec *pb.IntervalRecord) error {
	b, err := proto.Marshal(rec)
	if err != nil {
		return err
	}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
	if _, err := s.w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	s.idx[spoolKey{agent, rec.Seq}] = spoolEntry{off: s.off + 4, n: int64(len(b))}
	s.seqs[rec.Seq] = struct{}{}
	s.off += 4 + int64(len(b))
	return nil
}

func (s *spool) get(agent int, seq int64, into *pb.IntervalRecord) (bool, error) {
	e, ok := s.idx[spoolKey{agent, seq}]
	if !ok {
		return false, nil
	}
	if s.w.Buffered() > 0 {
		if err := s.w.Flush(); err != nil {
			return false, err
		}
	}
	b := make([]byte, e.n)
	if _, err := s.f.ReadAt(b, e.off); err != nil {
		return false, err
	}
	return true, proto.Unmarshal(b, into)
}

func (s *spool) sortedSeqs() []int64 {
	out := make([]int64, 0, len(s.seqs))
	for q := range s.seqs {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (s *spool) close() {
	_ = s.f.Close()
	_ = os.Remove(s.path)
}

// RunReport is run.json.
type RunReport struct {
	RunID         string         `json:"run_id"`
	Tool          string         `json:"tool"`
	Version       string         `json:"version"`
	Protocol      uint32         `json:"protocol"`
	Status        string         `json:"status"`
	StatusReasons []string       `json:"status_reasons,omitempty"`
	ExitCode      int            `json:"exit_code"`
	ExitReason    string         `json:"exit_reason"`
	Error         string         `json:"error,omitempty"`
	DB            string         `json:"db"`
	Phase         string         `json:"phase"`
	Label         string         `json:"label,omitempty"`
	StartedAt     time.Time      `json:"started_at"`
	EndedAt       time.Time      `json:"ended_at"`
	PlannedStart  time.Time      `json:"planned_start"`
	Config        ConfigReport   `json:"config"`
	Plan          *Plan          `json:"plan"`
	Agents        []AgentReport  `json:"agents"`
	Intervals     []IntervalStat `json:"intervals"`
	Summary       SummaryReport  `json:"summary"`
	// Coordinator self-measurement: CPU-side cost of merging.
	MergeSeconds float64 `json:"coordinator_merge_seconds"`
	LateRecords  int     `json:"late_records"`
}

// ConfigReport is the configuration, secrets redacted.
type ConfigReport struct {
	Properties       map[string]string `json:"properties"`
	Agents           []string          `json:"agents"`
	OnAgentLoss      string            `json:"on_agent_loss"`
	IntervalNs       int64             `json:"interval_ns"`
	TLS              bool              `json:"tls"`
	Token            bool              `json:"token"`
	MaxClockOffsetNs int64             `json:"max_clock_offset_ns"`
	AgentTimeoutNs   int64             `json:"agent_timeout_ns"`
	Exporter         string            `json:"exporter"`
}

// AgentReport is one agent in run.json. Times are on the coordinator's
// clock; offsets are agent minus coordinator.
type AgentReport struct {
	Index         int           `json:"index"`
	Address       string        `json:"address"`
	Hostname      string        `json:"hostname"`
	Version       string        `json:"version"`
	Protocol      uint32        `json:"protocol"`
	State         string        `json:"state"`
	Error         string        `json:"error,omitempty"`
	ClockOffsetNs int64         `json:"clock_offset_ns"`
	RTTNs         int64         `json:"rtt_ns"`
	StartSkewNs   *int64        `json:"start_skew_ns"`
	Threads       int           `json:"threads"`
	Reconnects    int           `json:"reconnects"`
	Intervals     int           `json:"intervals_received"`
	Operations    int64         `json:"operations_received"`
	CPUSeconds    float64       `json:"cpu_seconds"`
	Final         *FinalReport  `json:"final,omitempty"`
	Summary       []SeriesStats `json:"summary,omitempty"`
}

// FinalReport is an agent's own end-of-run account.
type FinalReport struct {
	StartUnixNs int64   `json:"start_unix_ns"`
	EndUnixNs   int64   `json:"end_unix_ns"`
	RunTimeMs   float64 `json:"runtime_ms"`
	Operations  int64   `json:"operations"`
	WarmupOps   int64   `json:"warmup_ops"`
	Intervals   int64   `json:"intervals"`
	Stopped     string  `json:"stopped,omitempty"`
	CPUSeconds  float64 `json:"cpu_seconds"`
}

// SeriesStats are one series' statistics, latencies in µs (YCSB's unit).
type SeriesStats struct {
	Series string  `json:"series"`
	Count  int64   `json:"count"`
	MeanUs float64 `json:"mean_us"`
	MinUs  int64   `json:"min_us"`
	P50Us  int64   `json:"p50_us"`
	P95Us  int64   `json:"p95_us"`
	P99Us  int64   `json:"p99_us"`
	P999Us int64   `json:"p99_9_us"`
	MaxUs  int64   `json:"max_us"`
}

// IntervalStat is one interval: the merged view and each agent's.
type IntervalStat struct {
	Seq         int64         `json:"seq"`
	StartUnixNs int64         `json:"start_unix_ns"`
	EndUnixNs   int64         `json:"end_unix_ns"`
	Operations  int64         `json:"operations"`
	OpsPerSec   float64       `json:"ops_per_sec"`
	Series      []SeriesStats `json:"series"`
	Agents      []AgentSlice  `json:"agents"`
}

// AgentSlice is one agent's part of an interval.
type AgentSlice struct {
	Index       int           `json:"index"`
	StartUnixNs int64         `json:"start_unix_ns"`
	EndUnixNs   int64         `json:"end_unix_ns"`
	Operations  int64         `json:"operations"`
	OpsPerSec   float64       `json:"ops_per_sec"`
	CPUSeconds  float64       `json:"cpu_seconds"`
	LagNs       int64         `json:"lag_ns"`
	Series      []SeriesStats `json:"series"`
}

// SummaryReport is the final cluster summary.
type SummaryReport struct {
	RunTimeMs  int64                       `json:"runtime_ms"`
	Throughput float64                     `json:"throughput_ops_per_sec"`
	Operations int64                       `json:"operations"`
	WarmupOps  int64                       `json:"warmup_operations"`
	Series     []SeriesStats               `json:"series"`
	Returns    map[string]map[string]int64 `json:"returns"`
	Lines      []string                    `json:"ycsb_text"`
}

func seriesStats(name string, h *hdrhistogram.Histogram) SeriesStats {
	if h == nil || h.TotalCount() == 0 {
		return SeriesStats{Series: name}
	}
	v := h.ValueAtPercentilesSlice([]float64{50, 95, 99, 99.9})
	return SeriesStats{Series: name, Count: h.TotalCount(), MeanUs: h.Mean() / 1000, MinUs: h.Min() / 1000,
		P50Us: v[0] / 1000, P95Us: v[1] / 1000, P99Us: v[2] / 1000, P999Us: v[3] / 1000, MaxUs: h.Max() / 1000}
}

func intervalSeries(iv *measurement.Interval) []SeriesStats {
	var out []SeriesStats
	for s, h := range iv.Hist {
		if h != nil && h.TotalCount() > 0 {
			out = append(out, seriesStats(measurement.Series(s).Name(), h))
		}
	}
	return out
}

func opsPerSec(ops, startNs, endNs int64) float64 {
	if endNs <= startNs {
		return 0
	}
	return float64(ops) / (float64(endNs-startNs) / 1e9)
}

// secretWords mark properties whose values must not leave the machine.
var secretWords = []string{"password", "passwd", "token", "secret", "credential", "apikey", "api_key", "privatekey", "private_key"}

// Redact returns the properties with secrets replaced: values of
// properties named like a secret, and passwords embedded in URLs (e.g.
// mongodb.url=mongodb://user:pw@host).
func Redact(props map[string]string) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		lk := strings.ToLower(k)
		secret := false
		for _, w := range secretWords {
			if strings.Contains(lk, w) {
				secret = true
				break
			}
		}
		switch {
		case secret && v != "":
			out[k] = "REDACTED"
		default:
			out[k] = redactURLs(v)
		}
	}
	return out
}

// redactURLs masks the password of every URL in a (possibly comma
// separated) value. A credential-shaped value that does not parse is
// masked wholesale rather than risk leaking it.
func redactURLs(v string) string {
	if !strings.Contains(v, "@") || !strings.Contains(v, "://") {
		return v
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		switch {
		case err != nil:
			parts[i] = "REDACTED"
		case u.User != nil:
			if _, has := u.User.Password(); has {
				parts[i] = u.Redacted()
			}
		}
	}
	return strings.Join(parts, ",")
}

func (c *coord) writeBundle(status string, reasons []string, code exitcode.Code, runErr error, sum *output.Summary) error {
	dir := c.s.ResultsDir
	start, _ := c.window()
	rep := &RunReport{
		RunID: c.runID, Tool: "ycsbctl", Version: c.self.Version, Protocol: c.self.Protocol,
		Status: status, StatusReasons: reasons, ExitCode: int(code), ExitReason: code.String(),
		DB: c.s.DB, Phase: c.s.Phase.String(), Label: c.s.Label,
		StartedAt: c.startedWall, EndedAt: c.clk.Now(), PlannedStart: time.Unix(0, c.plannedStart),
		Config: ConfigReport{
			Properties: Redact(c.s.Props.Map()), Agents: c.s.agents, OnAgentLoss: c.s.OnAgentLoss,
			IntervalNs: int64(c.s.Interval), TLS: c.s.TLS.Enabled(), Token: c.s.Token != "",
			MaxClockOffsetNs: int64(c.s.MaxClockOffset), AgentTimeoutNs: int64(c.s.AgentTimeout), Exporter: c.s.exporter,
		},
		Plan: c.s.plan, MergeSeconds: float64(c.mergeNs) / 1e9, LateRecords: c.m.late,
	}
	if runErr != nil {
		rep.Error = runErr.Error()
	}

	hf, err := os.Create(filepath.Join(dir, FileHlog))
	if err != nil {
		return err
	}
	defer hf.Close()
	if start == 0 {
		start = c.startedWall.UnixNano()
	}
	hw := hlog.NewWriter(hf, time.Unix(0, start))
	perAgent := make([]*measurement.Interval, len(c.agents))
	for i := range perAgent {
		perAgent[i] = measurement.NewInterval(0, 0, 0)
	}
	var rec pb.IntervalRecord
	var dec transport.Decoded
	scratch := measurement.NewInterval(0, 0, 0)
	merged := measurement.NewInterval(0, 0, 0)
	for _, seq := range c.spool.sortedSeqs() {
		merged.Reset()
		is := IntervalStat{Seq: seq}
		for _, a := range c.agents {
			ok, err := c.spool.get(a.idx, seq, &rec)
			if err != nil {
				return fmt.Errorf("reading spool: %w", err)
			}
			if !ok {
				continue
			}
			if err := transport.DecodeRecord(&rec, &dec); err != nil {
				return err
			}
			off := int64(a.offset)
			s, e := dec.StartNs-off, dec.EndNs-off
			widen(merged, s, e)
			scratch.Reset()
			if err := dec.AddTo(scratch); err != nil {
				return err
			}
			if err := dec.AddTo(merged); err != nil {
				return err
			}
			perAgent[a.idx].Add(scratch)
			slice := AgentSlice{Index: a.idx, StartUnixNs: s, EndUnixNs: e, Operations: dec.Ops, OpsPerSec: opsPerSec(dec.Ops, s, e), CPUSeconds: dec.CPUSeconds, LagNs: dec.LagNs}
			for sr, h := range scratch.Hist {
				if h == nil || h.TotalCount() == 0 {
					continue
				}
				name := measurement.Series(sr).Name()
				slice.Series = append(slice.Series, seriesStats(name, h))
				if err := hw.WriteInterval(name+".agent-"+fmt.Sprint(a.idx), s, e, h); err != nil {
					return err
				}
			}
			is.Agents = append(is.Agents, slice)
		}
		is.StartUnixNs, is.EndUnixNs, is.Operations = merged.StartNs, merged.EndNs, merged.Ops
		is.OpsPerSec = opsPerSec(merged.Ops, merged.StartNs, merged.EndNs)
		is.Series = intervalSeries(merged)
		for sr, h := range merged.Hist {
			if h != nil && h.TotalCount() > 0 {
				if err := hw.WriteInterval(measurement.Series(sr).Name()+".all", merged.StartNs, merged.EndNs, h); err != nil {
					return err
				}
			}
		}
		rep.Intervals = append(rep.Intervals, is)
	}
	if err := hf.Close(); err != nil {
		return err
	}

	for _, a := range c.agents {
		ar := AgentReport{Index: a.idx, Address: a.addr, Hostname: a.hostname, Version: a.version, Protocol: a.protocol,
			State: a.state, Error: a.failed, ClockOffsetNs: int64(a.offset), RTTNs: int64(a.rtt), Threads: a.threads,
			Reconnects: a.reconnects, Intervals: a.intervals, Operations: a.ops, CPUSeconds: a.cpuTotal,
			Summary: intervalSeries(perAgent[a.idx])}
		if a.lost {
			ar.Error = "lost: " + a.lostFor
		}
		if a.hasStarted {
			sk := int64(c.skew(a))
			ar.StartSkewNs = &sk
		}
		if f := a.final; f != nil {
			ar.Final = &FinalReport{StartUnixNs: f.StartUnixNs - int64(a.offset), EndUnixNs: f.EndUnixNs - int64(a.offset),
				RunTimeMs: float64(f.RuntimeNs) / 1e6, Operations: f.Operations, WarmupOps: f.WarmupOps, Intervals: f.Intervals,
				Stopped: f.Stopped, CPUSeconds: f.CpuSeconds}
		}
		rep.Agents = append(rep.Agents, ar)
	}

	rep.Summary = SummaryReport{RunTimeMs: sum.RunTime.Milliseconds(), Operations: sum.Total.Ops, WarmupOps: sum.Warmup,
		Series: intervalSeries(sum.Total), Returns: map[string]map[string]int64{}}
	if ms := sum.RunTime.Milliseconds(); ms > 0 {
		rep.Summary.Throughput = float64(sum.Total.Ops) * 1000 / float64(ms)
	}
	for op := range sum.Total.Returns {
		for st, n := range sum.Total.Returns[op] {
			if n == 0 {
				continue
			}
			o := measurement.Op(op).String()
			if rep.Summary.Returns[o] == nil {
				rep.Summary.Returns[o] = map[string]int64{}
			}
			rep.Summary.Returns[o][adapters.Status(st).String()] = n
		}
	}
	var txt strings.Builder
	if err := output.Export(&txt, output.TextExporter, sum); err != nil {
		return err
	}
	rep.Summary.Lines = strings.Split(strings.TrimRight(txt.String(), "\n"), "\n")
	if err := os.WriteFile(filepath.Join(dir, FileSummary), []byte(txt.String()), 0o644); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, FileRunJSON), append(b, '\n'))
}

// writeFileAtomic writes via a temporary file so a crash never leaves a
// truncated run.json that tools would misread.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

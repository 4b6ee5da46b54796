package telemetry

import (
	"fmt"
	"math"
	"strconv"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Bounds on a record's telemetry from an agent (untrusted input): far
// above what a sampler sends, far below what would cost the coordinator.
const (
	maxWireDevices = 64
	maxWireLinks   = 64
	maxWireMetrics = 512
	maxWirePoints  = 4 * maxPending
	maxWireNotes   = 64
	maxWireText    = 1024
)

// ToPB is an interval's wire form.
func ToPB(iv *Interval) *pb.Telemetry {
	if iv == nil {
		return nil
	}
	t := &pb.Telemetry{Samples: int32(iv.Samples), Cores: int32(iv.Cores),
		CpuUser: f32(iv.CPU.User), CpuSystem: f32(iv.CPU.System), CpuIowait: f32(iv.CPU.IOWait), CpuSteal: f32(iv.CPU.Steal), CpuIdle: f32(iv.CPU.Idle),
		CpuBusyMax: f32(iv.BusyMax), CpuIowaitMax: f32(iv.IOWaitMax), Load1Max: f32(iv.Load1Max),
		MemTotalBytes: iv.MemTotal, MemAvailableMinBytes: iv.MemAvailableMin, MemCachedBytes: iv.MemCached, SwapUsedMaxBytes: iv.SwapUsedMax,
		TcpRetransmits: iv.TCPRetransmits, Db: procToPB(iv.DB), Client: procToPB(iv.Client), ClientCpus: f32(iv.ClientCPUs), Notes: iv.Notes}
	for _, d := range iv.Disks {
		t.Disks = append(t.Disks, &pb.TelemetryDevice{Name: d.Name, ReadBytesPerSec: f32(d.ReadBps), WriteBytesPerSec: f32(d.WriteBps),
			WriteBytesPerSecMax: f32(d.WriteBpsMax), ReadIops: f32(d.ReadIOPS), WriteIops: f32(d.WriteIOPS), UtilPct: f32(d.UtilPct),
			UtilPctMax: f32(d.UtilPctMax), AwaitMs: f32(d.AwaitMs)})
	}
	for _, l := range iv.Links {
		t.Links = append(t.Links, &pb.TelemetryLink{Name: l.Name, RxBytesPerSec: f32(l.RxBps), TxBytesPerSec: f32(l.TxBps),
			RxPacketsPerSec: f32(l.RxPps), TxPacketsPerSec: f32(l.TxPps), Errors: l.Errors, Drops: l.Drops})
	}
	if in := iv.Internals; in != nil {
		pi := &pb.TelemetryInternals{Product: in.Product, Source: in.Source}
		for _, m := range in.Metrics {
			pi.Metrics = append(pi.Metrics, &pb.TelemetryMetric{Name: m.Name, Value: m.Value})
		}
		t.Internals = pi
	}
	for _, p := range iv.Points {
		t.Points = append(t.Points, &pb.TelemetryPoint{UnixNs: p.UnixNs, CpuUser: f32(p.CPU.User), CpuSystem: f32(p.CPU.System),
			CpuIowait: f32(p.CPU.IOWait), CpuSteal: f32(p.CPU.Steal), Load1: f32(p.Load1), MemAvailableBytes: p.MemAvailable,
			DiskReadBytesPerSec: f32(p.DiskReadBps), DiskWriteBytesPerSec: f32(p.DiskWriteBps), DiskUtilPctMax: f32(p.DiskUtilMax),
			NetRxBytesPerSec: f32(p.NetRxBps), NetTxBytesPerSec: f32(p.NetTxBps), DbCpuPct: f32(p.DBCPUPct), DbRssBytes: p.DBRSS,
			DbWriteBytesPerSec: f32(p.DBWriteBps), ClientCpuPct: f32(p.ClientCPUPct), ClientRssBytes: p.ClientRSS})
	}
	return t
}

func f32(v float64) float32 { return float32(v) }

func procToPB(p Process) *pb.TelemetryProcess {
	return &pb.TelemetryProcess{Count: int32(p.Count), CpuPct: f32(p.CPUPct), CpuPctMax: f32(p.CPUPctMax), RssMaxBytes: p.RSSMax,
		ThreadsMax: int32(p.ThreadsMax), OpenFilesMax: int32(p.FilesMax), ReadBytesPerSec: f32(p.ReadBps), WriteBytesPerSec: f32(p.WriteBps),
		WriteBytes: p.WriteBytes}
}

// FromPB validates an agent's telemetry (untrusted) and reads it back. A
// figure that no sampler sends (negative, not a number, a list far too
// long) rejects the whole message with an error naming it.
func FromPB(t *pb.Telemetry) (*Interval, error) {
	if t == nil {
		return nil, nil
	}
	v := &validator{}
	iv := &Interval{Samples: int(v.count(t.Samples, "samples")), Cores: int(v.count(t.Cores, "cores")),
		CPU: CPU{User: v.pct(t.CpuUser, "cpu_user"), System: v.pct(t.CpuSystem, "cpu_system"), IOWait: v.pct(t.CpuIowait, "cpu_iowait"),
			Steal: v.pct(t.CpuSteal, "cpu_steal"), Idle: v.pct(t.CpuIdle, "cpu_idle")},
		BusyMax: v.pct(t.CpuBusyMax, "cpu_busy_max"), IOWaitMax: v.pct(t.CpuIowaitMax, "cpu_iowait_max"), Load1Max: v.num(t.Load1Max, "load1_max"),
		MemTotal: v.bytes(t.MemTotalBytes, "mem_total"), MemAvailableMin: v.bytes(t.MemAvailableMinBytes, "mem_available_min"),
		MemCached: v.bytes(t.MemCachedBytes, "mem_cached"), SwapUsedMax: v.bytes(t.SwapUsedMaxBytes, "swap_used_max"),
		TCPRetransmits: v.bytes(t.TcpRetransmits, "tcp_retransmits"), DB: v.proc(t.Db, "db"), Client: v.proc(t.Client, "client"),
		ClientCPUs: v.num(t.ClientCpus, "client_cpus")}
	if len(t.Disks) > maxWireDevices || len(t.Links) > maxWireLinks || len(t.Points) > maxWirePoints || len(t.Notes) > maxWireNotes {
		return nil, fmt.Errorf("telemetry: %d disks, %d links, %d points, %d notes: more than a sampler sends", len(t.Disks), len(t.Links), len(t.Points), len(t.Notes))
	}
	for _, d := range t.Disks {
		iv.Disks = append(iv.Disks, Device{Name: v.text(d.Name, "disk name"), ReadBps: v.num(d.ReadBytesPerSec, "disk read"), WriteBps: v.num(d.WriteBytesPerSec, "disk write"),
			WriteBpsMax: v.num(d.WriteBytesPerSecMax, "disk write max"), ReadIOPS: v.num(d.ReadIops, "disk read iops"), WriteIOPS: v.num(d.WriteIops, "disk write iops"),
			UtilPct: v.pct(d.UtilPct, "disk util"), UtilPctMax: v.pct(d.UtilPctMax, "disk util max"), AwaitMs: v.num(d.AwaitMs, "disk await")})
	}
	for _, l := range t.Links {
		iv.Links = append(iv.Links, Link{Name: v.text(l.Name, "link name"), RxBps: v.num(l.RxBytesPerSec, "link rx"), TxBps: v.num(l.TxBytesPerSec, "link tx"),
			RxPps: v.num(l.RxPacketsPerSec, "link rx packets"), TxPps: v.num(l.TxPacketsPerSec, "link tx packets"),
			Errors: v.bytes(l.Errors, "link errors"), Drops: v.bytes(l.Drops, "link drops")})
	}
	if pi := t.Internals; pi != nil {
		if len(pi.Metrics) > maxWireMetrics {
			return nil, fmt.Errorf("telemetry: %d internals metrics, at most %d", len(pi.Metrics), maxWireMetrics)
		}
		in := &Internals{Product: v.text(pi.Product, "internals product"), Source: v.text(pi.Source, "internals source")}
		for _, m := range pi.Metrics {
			if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
				v.bad("internals metric " + m.Name)
			}
			in.Metrics = append(in.Metrics, Metric{Name: v.text(m.Name, "internals metric name"), Value: m.Value})
		}
		iv.Internals = in
	}
	for _, p := range t.Points {
		c := CPU{User: v.pct(p.CpuUser, "point cpu_user"), System: v.pct(p.CpuSystem, "point cpu_system"),
			IOWait: v.pct(p.CpuIowait, "point cpu_iowait"), Steal: v.pct(p.CpuSteal, "point cpu_steal")}
		// Idle is what the other four leave: it is not sent.
		c.Idle = max(0, 100-c.User-c.System-c.IOWait-c.Steal)
		iv.Points = append(iv.Points, Point{UnixNs: p.UnixNs, CPU: c, Load1: v.num(p.Load1, "point load1"),
			MemAvailable: v.bytes(p.MemAvailableBytes, "point mem"), DiskReadBps: v.num(p.DiskReadBytesPerSec, "point disk read"),
			DiskWriteBps: v.num(p.DiskWriteBytesPerSec, "point disk write"), DiskUtilMax: v.pct(p.DiskUtilPctMax, "point disk util"),
			NetRxBps: v.num(p.NetRxBytesPerSec, "point net rx"), NetTxBps: v.num(p.NetTxBytesPerSec, "point net tx"),
			DBCPUPct: v.num(p.DbCpuPct, "point db cpu"), DBRSS: v.bytes(p.DbRssBytes, "point db rss"), DBWriteBps: v.num(p.DbWriteBytesPerSec, "point db write"),
			ClientCPUPct: v.num(p.ClientCpuPct, "point client cpu"), ClientRSS: v.bytes(p.ClientRssBytes, "point client rss")})
	}
	for _, n := range t.Notes {
		iv.Notes = append(iv.Notes, v.text(n, "note"))
	}
	if v.err != nil {
		return nil, v.err
	}
	return iv, nil
}

type validator struct{ err error }

func (v *validator) bad(what string) {
	if v.err == nil {
		v.err = fmt.Errorf("telemetry: %s out of range", what)
	}
}

func (v *validator) num(f float32, what string) float64 {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		v.bad(what)
		return 0
	}
	return widen(f)
}

// widen is a float32 as the shortest decimal that reads back as it, so
// that run.json says 94.11765 and not 94.11764669418335.
func widen(f float32) float64 {
	x, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return x
}

// pct allows a little over 100: float rounding of shares that add up.
func (v *validator) pct(f float32, what string) float64 {
	x := v.num(f, what)
	if x > 100.5 {
		v.bad(what)
		return 0
	}
	return min(x, 100)
}

func (v *validator) bytes(n int64, what string) int64 {
	if n < 0 {
		v.bad(what)
		return 0
	}
	return n
}

func (v *validator) count(n int32, what string) int32 {
	if n < 0 || n > 1<<20 {
		v.bad(what)
		return 0
	}
	return n
}

func (v *validator) text(s, what string) string {
	if len(s) > maxWireText {
		v.bad(what + " length")
		return ""
	}
	return s
}

func (v *validator) proc(p *pb.TelemetryProcess, what string) Process {
	if p == nil {
		return Process{}
	}
	return Process{Count: int(v.count(p.Count, what+" count")), CPUPct: v.num(p.CpuPct, what+" cpu"), CPUPctMax: v.num(p.CpuPctMax, what+" cpu max"),
		RSSMax: v.bytes(p.RssMaxBytes, what+" rss"), ThreadsMax: int(v.count(p.ThreadsMax, what+" threads")), FilesMax: int(v.count(p.OpenFilesMax, what+" files")),
		ReadBps: v.num(p.ReadBytesPerSec, what+" read"), WriteBps: v.num(p.WriteBytesPerSec, what+" write"), WriteBytes: v.bytes(p.WriteBytes, what+" write bytes")}
}

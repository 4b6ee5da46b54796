package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// The report's hosts section: what every load generator's host did, on
// the run's time axis (the x of the throughput and latency charts), and a
// short account of where the time went.

// hostPanel is one host's charts.
type hostPanel struct {
	Name      string
	Notes     []string
	Charts    []template.HTML
	Product   string
	Internals []kv
}

// hostRow is one host in the "where the time went" table.
type hostRow struct {
	Name, Busy, BusyMax, IOWait, DiskW, DiskUtil, Net, DBCPU, DBRSS, DBWritten, Client, Share string
	Hot                                                                                       bool
}

// wentLine is one sentence of the account; Warn marks a verdict.
type wentLine struct {
	Text string
	Warn bool
}

// hosts is the record's hosts, or nil.
func (r *Run) hosts() []telemetry.Host {
	if t := r.B.Run.Telemetry; t != nil {
		return t.Hosts
	}
	return nil
}

// measuredHosts are the hosts with figures (see telemetry.Host.Measured).
func measuredHosts(hs []telemetry.Host) []telemetry.Host {
	var out []telemetry.Host
	for _, h := range hs {
		if h.Measured() {
			out = append(out, h)
		}
	}
	return out
}

// noReading says why a host has no figures.
const noReading = "No 1 s reading of this host fell inside the measured run (shorter than a second): no figures."

func hostName(h telemetry.Host) string {
	switch {
	case h.Hostname != "" && h.Address != "" && h.Address != "local" && h.Address != h.Hostname:
		return fmt.Sprintf("agent %d · %s (%s)", h.Agent, h.Hostname, h.Address)
	case h.Hostname != "":
		return fmt.Sprintf("agent %d · %s", h.Agent, h.Hostname)
	}
	return fmt.Sprintf("agent %d · %s", h.Agent, h.Address)
}

func mbps(v float64) string { return trimFloat(roundSig(v/1e6, 3)) + " MB/s" }
func mb(v int64) string     { return fmtNumber(math.Round(float64(v)/1e6)) + " MB" }
func pctf(v float64) string { return trimFloat(roundSig(v, 3)) + "%" }

// hostPanels draws each host: CPU stacked by user, system, iowait and
// steal; disk MB/s and the busiest disk's utilisation; network MB/s; the
// database's processes and the load generator, CPU and memory.
func hostPanels(r *Run) []hostPanel {
	var out []hostPanel
	for _, h := range r.hosts() {
		p := hostPanel{Name: hostName(h), Notes: h.Notes}
		if h.Summary != nil {
			p.Product = h.Summary.Database
		}
		if !h.Measured() {
			p.Notes = append(append([]string(nil), h.Notes...), noReading)
			out = append(out, p)
			continue
		}
		mk := func(id, title, ylabel string, yf func(float64) string, series ...Series) *LineChart {
			return &LineChart{ID: fmt.Sprintf("host%d-%s", h.Agent, id), Title: title, XLabel: "elapsed", YLabel: ylabel,
				Width: 390, Height: 230, Series: series, XFormat: fmtSeconds, YFormat: yf}
		}
		user, sys, iow, steal := Series{Name: "user", Color: "#0072B2"}, Series{Name: "system", Color: "#E69F00"},
			Series{Name: "iowait", Color: "#D55E00"}, Series{Name: "steal", Color: "#999999"}
		rd, wr, util := Series{Name: "read"}, Series{Name: "write"}, Series{Name: "busiest disk", Color: "#D55E00"}
		rx, tx := Series{Name: "in"}, Series{Name: "out"}
		dbCPU, cliCPU := Series{Name: "database"}, Series{Name: "load generator", Color: "#009E73"}
		dbRSS, cliRSS := Series{Name: "database"}, Series{Name: "load generator", Color: "#009E73"}
		for _, iv := range h.Intervals {
			x := float64(iv.EndUnixNs-r.StartNs) / 1e9
			add := func(s *Series, y float64) { s.X, s.Y = append(s.X, x), append(s.Y, y) }
			add(&user, iv.CPU.User)
			add(&sys, iv.CPU.System)
			add(&iow, iv.CPU.IOWait)
			add(&steal, iv.CPU.Steal)
			add(&rd, iv.DiskReadBps()/1e6)
			add(&wr, iv.DiskWriteBps()/1e6)
			u := 0.0
			for _, d := range iv.Disks {
				u = math.Max(u, d.UtilPct)
			}
			add(&util, u)
			in, outb := iv.NetBps()
			add(&rx, in/1e6)
			add(&tx, outb/1e6)
			if iv.DB.Count > 0 {
				// No point where no database process was read (gone,
				// not yet started): not a 0.
				add(&dbCPU, iv.DB.CPUPct)
				add(&dbRSS, float64(iv.DB.RSSMax)/1e6)
			}
			add(&cliCPU, iv.Client.CPUPct)
			add(&cliRSS, float64(iv.Client.RSSMax)/1e6)
		}
		pctFmt := func(v float64) string { return trimFloat(roundSig(v, 3)) + "%" }
		mbFmt := func(v float64) string { return fmtNumber(v) }
		cpu := mk("cpu", "CPU (% of all cores)", "%", pctFmt, user, sys, iow, steal)
		cpu.Stacked, cpu.YCap = true, 100
		utilChart := mk("util", "Busiest disk utilisation", "%", pctFmt, util)
		utilChart.YCap = 100
		procCPU, procRSS := []Series{dbCPU, cliCPU}, []Series{dbRSS, cliRSS}
		if !h.Summary.DBRead() {
			// No database process on this host: only the load generator.
			procCPU, procRSS = procCPU[1:], procRSS[1:]
		}
		charts := []*LineChart{
			cpu,
			mk("disk", "Disk (MB/s)", "MB/s", mbFmt, rd, wr),
			utilChart,
			mk("net", "Network (MB/s)", "MB/s", mbFmt, rx, tx),
			mk("proc-cpu", "Process CPU (% of all cores)", "%", pctFmt, procCPU...),
			mk("proc-rss", "Process memory (RSS, MB)", "MB", mbFmt, procRSS...),
		}
		for _, c := range charts {
			p.Charts = append(p.Charts, template.HTML(c.SVG()))
		}
		p.Internals = internalsRows(h)
		out = append(out, p)
	}
	return out
}

// internalsRows summarises each internals metric over the run: its mean
// and its largest value.
func internalsRows(h telemetry.Host) []kv {
	type acc struct {
		sum, max float64
		n        int
	}
	m := map[string]*acc{}
	for _, iv := range h.Intervals {
		if iv.Internals == nil {
			continue
		}
		for _, x := range iv.Internals.Metrics {
			a := m[x.Name]
			if a == nil {
				a = &acc{max: math.Inf(-1)}
				m[x.Name] = a
			}
			a.sum += x.Value
			a.max = math.Max(a.max, x.Value)
			a.n++
		}
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]kv, 0, len(names))
	for _, k := range names {
		a := m[k]
		out = append(out, kv{k, fmt.Sprintf("mean %s · max %s · %d readings", fmtNumber(roundSig(a.sum/float64(a.n), 4)), fmtNumber(roundSig(a.max, 4)), a.n)})
	}
	return out
}

// timeWent is the account: the busiest host, the highest iowait, the load
// generators' share of their hosts' CPU, and the verdicts.
func timeWent(r *Run) ([]wentLine, []hostRow) {
	if len(r.hosts()) == 0 {
		return nil, nil
	}
	hs := measuredHosts(r.hosts())
	if len(hs) == 0 {
		return []wentLine{{Text: "No 1 s reading of any host fell inside the measured run (shorter than a second): no host figures."}}, nil
	}
	var lines []wentLine
	busiest, iow := 0, 0
	for i, h := range hs {
		if h.Summary.CPUBusyPct > hs[busiest].Summary.CPUBusyPct {
			busiest = i
		}
		if h.Summary.IOWaitPct > hs[iow].Summary.IOWaitPct {
			iow = i
		}
	}
	b := hs[busiest]
	cores := ""
	if b.Cores > 0 {
		cores = fmt.Sprintf("; %d cores", b.Cores)
	}
	lines = append(lines, wentLine{Text: fmt.Sprintf("Busiest host: %s, %s busy on average (worst interval %s%s).",
		hostName(b), pctf(b.Summary.CPUBusyPct), pctf(b.Summary.CPUBusyMax), cores)})
	w := hs[iow]
	lines = append(lines, wentLine{Text: fmt.Sprintf("Highest iowait: %s, %s on average (worst interval %s); disks written at %s, the busiest up to %s utilised.",
		hostName(w), pctf(w.Summary.IOWaitPct), pctf(w.Summary.IOWaitMax), mbps(w.Summary.DiskWriteBps), pctf(w.Summary.DiskUtilMax))})
	var shares []string
	for _, h := range hs {
		shares = append(shares, fmt.Sprintf("%s on %s", pctf(100*h.Summary.ClientShare), hostName(h)))
	}
	lines = append(lines, wentLine{Text: "The load generator's share of its host's busy CPU: " + strings.Join(shares, "; ") + "."})
	for _, h := range hs {
		if h.Summary.DBRead() {
			lines = append(lines, wentLine{Text: fmt.Sprintf("Database on %s: %s of CPU on average (worst %s), up to %s resident, %s written to storage%s.",
				hostName(h), pctf(h.Summary.DBCPUPct), pctf(h.Summary.DBCPUMax), mb(h.Summary.DBRSSMax), mb(h.Summary.DBWriteBytes), productNote(h.Summary.Database))})
		}
	}
	for _, v := range r.B.Run.Telemetry.Verdicts {
		lines = append(lines, wentLine{Text: strings.ToUpper(v.Kind[:1]) + v.Kind[1:] + ": " + v.Text, Warn: true})
	}
	var rows []hostRow
	hot := map[int]bool{}
	for _, v := range r.B.Run.Telemetry.Verdicts {
		hot[v.Agent] = true
	}
	for _, h := range hs {
		s := h.Summary
		dbCPU, dbRSS, dbWritten := dbCells(s)
		rows = append(rows, hostRow{Name: hostName(h), Busy: pctf(s.CPUBusyPct), BusyMax: pctf(s.CPUBusyMax), IOWait: pctf(s.IOWaitPct),
			DiskW: mbps(s.DiskWriteBps), DiskUtil: pctf(s.DiskUtilMax), Net: mbps(s.NetRxBps + s.NetTxBps), DBCPU: dbCPU,
			DBRSS: dbRSS, DBWritten: dbWritten, Client: pctf(s.ClientCPUPct), Share: pctf(100 * s.ClientShare), Hot: hot[h.Agent]})
	}
	return lines, rows
}

// notRead stands where a figure was not read (a host's database it found
// no process of): a blank, never a 0.
const notRead = "–"

// dbCells are a host's database CPU, memory and writes, or notRead.
func dbCells(s *telemetry.HostSummary) (cpu, rss, written string) {
	if !s.DBRead() {
		return notRead, notRead, notRead
	}
	return pctf(s.DBCPUPct), mb(s.DBRSSMax), mb(s.DBWriteBytes)
}

func productNote(p string) string {
	if p == "" {
		return ""
	}
	return " (" + p + ")"
}

package workbook

import (
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// SheetHosts is what every load generator's host did in each step.
const SheetHosts = "Hosts"

// HostsHeader are the Hosts sheet's columns: database × step × host.
var HostsHeader = []string{"Database", "Step", "Sweep", "Agent", "Host", "Address", "Cores", "Intervals",
	"CPU busy (%)", "CPU busy max (%)", "iowait (%)", "iowait max (%)", "Disk read (MB/s)", "Disk write (MB/s)", "Disk util max (%)",
	"Net in (MB/s)", "Net out (MB/s)", "DB CPU (%)", "DB CPU max (%)", "DB RSS max (MB)", "DB written (MB)",
	"Client CPU (%)", "Client CPU max (%)", "Client RSS max (MB)", "Client share of busy CPU", "Server", "Verdicts"}

// HostRows returns one row per database × step × load generator host of
// the steps that recorded telemetry.
func (d *Data) HostRows() [][]Cell {
	var rows [][]Cell
	for _, s := range d.Steps {
		t := s.Bundle.Run.Telemetry
		if t == nil {
			continue
		}
		for _, h := range t.Hosts {
			var vs []string
			for _, v := range t.Verdicts {
				if v.Agent == h.Agent {
					vs = append(vs, v.Kind)
				}
			}
			row := []Cell{s.State.Database, s.StepName(), s.SweepText(), int64(h.Agent), h.Hostname, h.Address, countOrEmpty(h.Cores)}
			row = append(row, hostFigures(h.Summary)...)
			rows = append(rows, append(row, strings.Join(vs, ", ")))
		}
	}
	return normalize(rows)
}

// hostFigures are a host's cells from Intervals to Server: empty where
// nothing was read (a host never read, a database no process of which
// was found), never a 0 that was not measured.
func hostFigures(m *telemetry.HostSummary) []Cell {
	if m == nil {
		out := []Cell{int64(0)} // intervals read: none, truly
		for len(out) < hostFigureCells {
			out = append(out, "")
		}
		return out
	}
	db := []Cell{"", "", "", ""}
	if m.DBRead() {
		db = []Cell{m.DBCPUPct, m.DBCPUMax, float64(m.DBRSSMax) / 1e6, float64(m.DBWriteBytes) / 1e6}
	}
	out := []Cell{int64(m.Intervals), m.CPUBusyPct, m.CPUBusyMax, m.IOWaitPct, m.IOWaitMax, m.DiskReadBps / 1e6, m.DiskWriteBps / 1e6, m.DiskUtilMax,
		m.NetRxBps / 1e6, m.NetTxBps / 1e6}
	out = append(out, db...)
	return append(out, m.ClientCPUPct, m.ClientCPUMax, float64(m.ClientRSSMax)/1e6, m.ClientShare, m.Database)
}

// hostFigureCells is how many cells hostFigures gives: the Hosts
// columns from Intervals to Server, between the host's names and Cores
// (seven) and the Verdicts.
var hostFigureCells = len(HostsHeader) - 8

// countOrEmpty is a count that is never 0 when read (a host's cores),
// empty when it was not.
func countOrEmpty(n int) Cell {
	if n <= 0 {
		return ""
	}
	return int64(n)
}

// periodHostsHeader are the host columns of the Periods sheet.
var periodHostsHeader = []string{"Busiest host", "Busiest host CPU (%)", "iowait max (%)", "Disk write, all hosts (MB/s)",
	"Net in, all hosts (MB/s)", "DB CPU max (%)", "DB RSS, all hosts (MB)", "Client CPU max (%)"}

// periodHosts are the host columns of one interval: the busiest host and
// the worst or summed figures across hosts; empty cells when the step
// recorded no telemetry for it.
func periodHosts(t *telemetry.Record, seq int64) []Cell {
	out := make([]Cell, len(periodHostsHeader))
	for i := range out {
		out[i] = ""
	}
	if t == nil {
		return out
	}
	found, dbRead := false, false
	var busiest string
	var busy, iow, diskW, netIn, dbCPU, dbRSS, client float64
	for _, h := range t.Hosts {
		for _, iv := range h.Intervals {
			if iv.Seq != seq {
				continue
			}
			found = true
			if b := iv.CPU.Busy(); b >= busy {
				busy, busiest = b, h.Hostname
				if busiest == "" {
					busiest = h.Address
				}
			}
			iow = max(iow, iv.IOWaitMax)
			diskW += iv.DiskWriteBps() / 1e6
			rx, _ := iv.NetBps()
			netIn += rx / 1e6
			if iv.DB.Count > 0 {
				dbRead = true
				dbCPU = max(dbCPU, iv.DB.CPUPct)
				dbRSS += float64(iv.DB.RSSMax) / 1e6
			}
			client = max(client, iv.Client.CPUPct)
		}
	}
	if !found {
		return out
	}
	if !dbRead {
		// No host read a database process in this interval: unknown.
		return []Cell{busiest, busy, iow, diskW, netIn, "", "", client}
	}
	return []Cell{busiest, busy, iow, diskW, netIn, dbCPU, dbRSS, client}
}

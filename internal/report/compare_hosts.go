package report

import (
	"strings"
)

// compareHostRow is one host of one run in the comparison's hosts table:
// what the hosts were doing, per step across databases.
type compareHostRow struct {
	Scenario, Label, Host, Busy, BusyMax, IOWait, DiskW, DiskUtil, Net, DBCPU, DBRSS, DBWritten, Client, Database, Verdicts string
	Hot                                                                                                                     bool
}

// hostRows lists every run's hosts, scenario by scenario.
func (c *Comparison) hostRows() []compareHostRow {
	var out []compareHostRow
	for _, sc := range c.Scenarios {
		for _, r := range c.Rows {
			if r.Scenario != sc {
				continue
			}
			t := r.Run.B.Run.Telemetry
			if t == nil {
				continue
			}
			for _, h := range measuredHosts(t.Hosts) {
				s := h.Summary
				var vs []string
				for _, v := range t.Verdicts {
					if v.Agent == h.Agent {
						vs = append(vs, v.Kind)
					}
				}
				dbCPU, dbRSS, dbWritten := dbCells(s)
				out = append(out, compareHostRow{Scenario: sc, Label: r.Label, Host: hostName(h), Busy: pctf(s.CPUBusyPct), BusyMax: pctf(s.CPUBusyMax),
					IOWait: pctf(s.IOWaitPct), DiskW: mbps(s.DiskWriteBps), DiskUtil: pctf(s.DiskUtilMax), Net: mbps(s.NetRxBps + s.NetTxBps),
					DBCPU: dbCPU, DBRSS: dbRSS, DBWritten: dbWritten, Client: pctf(s.ClientCPUPct),
					Database: s.Database, Verdicts: strings.Join(vs, ", "), Hot: len(vs) > 0})
			}
		}
	}
	return out
}

// hostBars: per scenario and database, the busiest host's mean CPU, the
// database's memory over all its hosts, and what it wrote.
func (c *Comparison) hostBars() []*BarChart {
	have := false
	for _, r := range c.Rows {
		have = have || (r.Run.B.Run.Telemetry != nil && len(measuredHosts(r.Run.B.Run.Telemetry.Hosts)) > 0)
	}
	if !have {
		return nil
	}
	busy := &BarChart{ID: "compare-host-cpu", Title: "Busiest host's CPU (mean, % of all cores)", YLabel: "%", Width: 590, Height: 320, Groups: c.Scenarios,
		YFormat: func(v float64) string { return trimFloat(roundSig(v, 3)) + "%" }}
	rss := &BarChart{ID: "compare-db-rss", Title: "Database memory (RSS, all hosts, MB)", YLabel: "MB", Width: 590, Height: 320, Groups: c.Scenarios}
	wr := &BarChart{ID: "compare-db-written", Title: "Written to storage by the database (MB)", YLabel: "MB", Width: 590, Height: 320, Groups: c.Scenarios}
	for i, l := range c.labels() {
		b := Bar{Name: l, Color: color(i), Values: make([]float64, len(c.Scenarios))}
		m := Bar{Name: l, Color: color(i), Values: make([]float64, len(c.Scenarios))}
		w := Bar{Name: l, Color: color(i), Values: make([]float64, len(c.Scenarios))}
		for g, sc := range c.Scenarios {
			for _, r := range c.Rows {
				if r.Scenario != sc || r.Label != l || r.Run.B.Run.Telemetry == nil {
					continue
				}
				for _, h := range measuredHosts(r.Run.B.Run.Telemetry.Hosts) {
					b.Values[g] = max(b.Values[g], h.Summary.CPUBusyPct)
					m.Values[g] += float64(h.Summary.DBRSSMax) / 1e6
					w.Values[g] += float64(h.Summary.DBWriteBytes) / 1e6
				}
			}
		}
		busy.Bars, rss.Bars, wr.Bars = append(busy.Bars, b), append(rss.Bars, m), append(wr.Bars, w)
	}
	var out []*BarChart
	// No database process on any host (a remote server, an in-process
	// store): its memory and writes were not measured, so not drawn; nor
	// is a chart whose every bar is a step too short to be sampled.
	for _, ch := range []*BarChart{busy, rss, wr} {
		if anyValue(ch) {
			out = append(out, ch)
		}
	}
	return out
}

func anyValue(ch *BarChart) bool {
	for _, b := range ch.Bars {
		for _, v := range b.Values {
			if v > 0 {
				return true
			}
		}
	}
	return false
}

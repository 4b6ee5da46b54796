package tui

import (
	"fmt"

	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// Host is one load generator's host in the latest interval (telemetry).
type Host struct {
	Name string
	// Busy and IOWait are percent of all the host's cores.
	Busy, IOWait float64
	// DiskBps is read plus write over the host's disks.
	DiskBps float64
	// DBCPU is the database processes' CPU in percent of all cores; DBRSS
	// their memory in bytes (0: none found on the host).
	DBCPU float64
	DBRSS int64
	// Client is the load generator's own CPU in percent of all cores.
	Client float64
}

// hostsOf reads the hosts of an update, by agent index.
func hostsOf(u *run.Update) []Host {
	var out []Host
	for i, iv := range u.Telemetry {
		if iv == nil || iv.Samples == 0 {
			continue
		}
		name := run.LocalAgent
		if i < len(u.Agents) {
			name = u.Agents[i].Hostname
			if name == "" {
				name = u.Agents[i].Address
			}
		}
		out = append(out, Host{Name: name, Busy: iv.CPU.Busy(), IOWait: iv.CPU.IOWait, DiskBps: iv.DiskReadBps() + iv.DiskWriteBps(),
			DBCPU: iv.DB.CPUPct, DBRSS: iv.DB.RSSMax, Client: iv.Client.CPUPct})
	}
	return out
}

// hostTable shows what each host did in the last interval; the hottest
// host (busiest CPU) is highlighted, a saturated one in red.
func hostTable(hosts []Host) []string {
	out := []string{" " + stySect.Render(fmt.Sprintf("Hosts (%d)", len(hosts)))}
	out = append(out, styHead.Render(fmt.Sprintf(" %-22s %7s %7s %10s %7s %9s %7s", "HOST", "CPU", "IOWAIT", "DISK MB/S", "DB CPU", "DB RSS", "CLIENT")))
	hottest := 0
	for i, h := range hosts {
		if h.Busy > hosts[hottest].Busy {
			hottest = i
		}
	}
	for i, h := range hosts {
		name := h.Name
		if len(name) > 22 {
			name = name[:21] + "…"
		}
		rss := "-"
		if h.DBRSS > 0 {
			rss = fmt.Sprintf("%.0f MB", float64(h.DBRSS)/1e6)
		}
		line := fmt.Sprintf(" %-22s %6.0f%% %6.1f%% %10.1f %6.0f%% %9s %6.0f%%", name, h.Busy, h.IOWait, h.DiskBps/1e6, h.DBCPU, rss, h.Client)
		switch {
		case h.Busy >= telemetry.SaturatedPct:
			line = styBad.Render(line + "  SATURATED")
		case i == hottest && len(hosts) > 1:
			line = styWarn.Render(line + "  HOTTEST")
		}
		out = append(out, line)
	}
	return out
}

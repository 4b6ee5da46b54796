package telemetry

import (
	"math"
	"sort"
)

// Bounds that keep an interval's summary a few KB whatever the host: the
// busiest devices and interfaces are kept, the idle ones left out.
const (
	MaxDevices = 8
	MaxLinks   = 8
)

// summarize turns an interval's samples into its summary. Means are
// weighted by the time each sample covers, so a short boundary sample
// counts for what it covers.
func summarize(ss []sample) *Interval {
	iv := &Interval{Samples: len(ss)}
	if len(ss) == 0 {
		return iv
	}
	var total float64
	for i := range ss {
		total += ss[i].span
	}
	type devAcc struct {
		d            Device
		ios, awaitIO float64
	}
	devs := map[string]*devAcc{}
	lnks := map[string]*Link{}
	errs, drops := map[string]float64{}, map[string]float64{}
	var retrans, dbWrite float64
	iv.MemAvailableMin = math.MaxInt64
	for i := range ss {
		s := &ss[i]
		w := s.span / total
		iv.Cores = max(iv.Cores, s.cores)
		iv.CPU.User += s.cpu.User * w
		iv.CPU.System += s.cpu.System * w
		iv.CPU.IOWait += s.cpu.IOWait * w
		iv.CPU.Steal += s.cpu.Steal * w
		iv.CPU.Idle += s.cpu.Idle * w
		iv.BusyMax = max(iv.BusyMax, s.cpu.Busy())
		iv.IOWaitMax = max(iv.IOWaitMax, s.cpu.IOWait)
		iv.Load1Max = max(iv.Load1Max, s.load1)
		iv.MemTotal = max(iv.MemTotal, s.mem.total)
		iv.MemAvailableMin = min(iv.MemAvailableMin, s.mem.available)
		iv.MemCached += int64(float64(s.mem.cached) * w)
		iv.SwapUsedMax = max(iv.SwapUsedMax, s.mem.swapUsed)
		p := Point{UnixNs: s.ns, CPU: s.cpu, Load1: s.load1, MemAvailable: s.mem.available,
			DBCPUPct: s.db.cpuPct, DBRSS: s.db.rss, DBWriteBps: s.db.wrBps, ClientCPUPct: s.client.cpuPct, ClientRSS: s.client.rss}
		for _, d := range s.disks {
			a := devs[d.name]
			if a == nil {
				a = &devAcc{d: Device{Name: d.name}}
				devs[d.name] = a
			}
			a.d.ReadBps += d.rdBps * w
			a.d.WriteBps += d.wrBps * w
			a.d.WriteBpsMax = max(a.d.WriteBpsMax, d.wrBps)
			a.d.ReadIOPS += d.rdIOPS * w
			a.d.WriteIOPS += d.wrIOPS * w
			a.d.UtilPct += d.util * w
			a.d.UtilPctMax = max(a.d.UtilPctMax, d.util)
			ios := (d.rdIOPS + d.wrIOPS) * s.span
			a.ios += ios
			a.awaitIO += d.await * ios
			p.DiskReadBps += d.rdBps
			p.DiskWriteBps += d.wrBps
			p.DiskUtilMax = max(p.DiskUtilMax, d.util)
		}
		for _, l := range s.links {
			a := lnks[l.name]
			if a == nil {
				a = &Link{Name: l.name}
				lnks[l.name] = a
			}
			a.RxBps += l.rxBps * w
			a.TxBps += l.txBps * w
			a.RxPps += l.rxPps * w
			a.TxPps += l.txPps * w
			errs[l.name] += l.errs
			drops[l.name] += l.drops
			p.NetRxBps += l.rxBps
			p.NetTxBps += l.txBps
		}
		retrans += s.retrans
		addProc(&iv.DB, s.db, w)
		addProc(&iv.Client, s.client, w)
		dbWrite += s.db.wrBps * s.span
		iv.Points = append(iv.Points, p)
	}
	if iv.MemAvailableMin == math.MaxInt64 {
		iv.MemAvailableMin = 0
	}
	iv.TCPRetransmits = int64(math.Round(retrans))
	iv.DB.WriteBytes = int64(math.Round(dbWrite))
	for _, a := range devs {
		if a.ios > 0 {
			a.d.AwaitMs = a.awaitIO / a.ios
		}
		iv.Disks = append(iv.Disks, a.d)
	}
	for name, l := range lnks {
		l.Errors, l.Drops = int64(math.Round(errs[name])), int64(math.Round(drops[name]))
		iv.Links = append(iv.Links, *l)
	}
	iv.Disks = busiestDevices(iv.Disks)
	iv.Links = busiestLinks(iv.Links)
	return iv
}

func addProc(p *Process, r procRate, w float64) {
	p.Count = max(p.Count, r.count)
	p.CPUPct += r.cpuPct * w
	p.CPUPctMax = max(p.CPUPctMax, r.cpuPct)
	p.RSSMax = max(p.RSSMax, r.rss)
	p.ThreadsMax = max(p.ThreadsMax, r.threads)
	p.FilesMax = max(p.FilesMax, r.files)
	p.ReadBps += r.rdBps * w
	p.WriteBps += r.wrBps * w
}

// busiestDevices keeps the devices that moved data, busiest first (by
// name when equal), at most MaxDevices; a host whose disks were all idle
// keeps its first disk at zero, so that "no disk I/O" is on record.
func busiestDevices(ds []Device) []Device {
	sort.Slice(ds, func(i, j int) bool {
		ai, aj := ds[i].ReadBps+ds[i].WriteBps+ds[i].UtilPct, ds[j].ReadBps+ds[j].WriteBps+ds[j].UtilPct
		if ai != aj {
			return ai > aj
		}
		return ds[i].Name < ds[j].Name
	})
	n := 0
	for n < len(ds) && ds[n].ReadBps+ds[n].WriteBps+ds[n].UtilPct > 0 {
		n++
	}
	if n == 0 && len(ds) > 0 {
		n = 1
	}
	return ds[:min(n, MaxDevices)]
}

// busiestLinks keeps the interfaces that carried traffic, busiest first,
// at most MaxLinks (and one idle interface when all were idle).
func busiestLinks(ls []Link) []Link {
	sort.Slice(ls, func(i, j int) bool {
		ai, aj := ls[i].RxBps+ls[i].TxBps, ls[j].RxBps+ls[j].TxBps
		if ai != aj {
			return ai > aj
		}
		return ls[i].Name < ls[j].Name
	})
	n := 0
	for n < len(ls) && (ls[n].RxBps+ls[n].TxBps > 0 || ls[n].Errors+ls[n].Drops > 0) {
		n++
	}
	if n == 0 && len(ls) > 0 {
		n = 1
	}
	return ls[:min(n, MaxLinks)]
}

package telemetry

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// source reads one host's counters from a proc file system (the real
// /proc, or a recorded snapshot in tests).
type source struct {
	fs  procfs.FS
	bfs *blockdevice.FS
	// self is the load generator's pid; its network namespace is the
	// host's (an agent in a container sees its container's interfaces).
	self int
}

func newSource(proc, sys string, self int) (*source, error) {
	fs, err := procfs.NewFS(proc)
	if err != nil {
		return nil, err
	}
	s := &source{fs: fs, self: self}
	if b, err := blockdevice.NewFS(proc, sys); err == nil {
		s.bfs = &b
	}
	return s, nil
}

// reading is one read of every counter; rates come from two of them.
type reading struct {
	ns      int64
	cpu     procfs.CPUStat
	cores   int
	load1   float64
	mem     memReading
	disks   []diskCounters
	links   []linkCounters
	retrans float64
	db      []procCounters
	client  procCounters
	// missing names what could not be read this time; hiddenIO is set
	// when a database process hides its I/O and descriptors (another
	// user's process, read without CAP_SYS_PTRACE).
	missing  []string
	hiddenIO error
}

type memReading struct{ total, available, cached, swapUsed int64 }

type diskCounters struct {
	name                               string
	rdSectors, wrSectors, rdIOs, wrIOs uint64
	ioTicks, rdTicks, wrTicks          uint64
}

type linkCounters struct {
	name                            string
	rxB, txB, rxP, txP, errs, drops uint64
}

type procCounters struct {
	pid            int
	start          uint64
	cpu            float64 // seconds, user+system
	rss            int64
	threads, files int
	readB, writeB  uint64
	hasIO          bool
	ioErr          error
	ok             bool
}

// read takes one reading; the processes are db (found by discovery) and
// the load generator itself. What cannot be read is left empty and named.
func (s *source) read(ns int64, db []int) reading {
	r := reading{ns: ns}
	if st, err := s.fs.Stat(); err == nil {
		r.cpu, r.cores = st.CPUTotal, len(st.CPU)
	} else {
		r.missing = append(r.missing, "cpu: "+err.Error())
	}
	if la, err := s.fs.LoadAvg(); err == nil {
		r.load1 = la.Load1
	}
	if mi, err := s.fs.Meminfo(); err == nil {
		r.mem = memReading{total: b64(mi.MemTotalBytes), available: b64(mi.MemAvailableBytes), cached: b64(mi.CachedBytes),
			swapUsed: b64(mi.SwapTotalBytes) - b64(mi.SwapFreeBytes)}
	} else {
		r.missing = append(r.missing, "memory: "+err.Error())
	}
	if s.bfs != nil {
		if ds, err := s.bfs.ProcDiskstats(); err == nil {
			r.disks = disks(ds)
		} else {
			r.missing = append(r.missing, "disks: "+err.Error())
		}
	}
	if p, err := s.fs.Proc(s.self); err == nil {
		if nd, err := p.NetDev(); err == nil {
			r.links = links(nd)
		} else {
			r.missing = append(r.missing, "network: "+err.Error())
		}
		if sn, err := p.Snmp(); err == nil && sn.RetransSegs != nil {
			r.retrans = *sn.RetransSegs
		}
	}
	r.client = s.proc(s.self)
	for _, pid := range db {
		if pc := s.proc(pid); pc.ok {
			r.db = append(r.db, pc)
			if pc.ioErr != nil && r.hiddenIO == nil {
				r.hiddenIO = pc.ioErr
			}
		}
	}
	return r
}

func b64(p *uint64) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// proc reads one process; ok is false when it is gone.
func (s *source) proc(pid int) procCounters {
	pc := procCounters{pid: pid}
	p, err := s.fs.Proc(pid)
	if err != nil {
		return pc
	}
	st, err := p.Stat()
	if err != nil {
		return pc
	}
	pc.ok = true
	pc.start, pc.cpu, pc.rss, pc.threads = st.Starttime, st.CPUTime(), int64(st.ResidentMemory()), st.NumThreads
	// Another user's process (a database run as its own user, an agent
	// not run as root) hides its I/O and descriptors: left at zero.
	if io, err := p.IO(); err == nil {
		pc.readB, pc.writeB, pc.hasIO = io.ReadBytes, io.WriteBytes, true
	} else {
		pc.ioErr = err
	}
	if n, err := p.FileDescriptorsLen(); err == nil {
		pc.files = n
	}
	return pc
}

// disks keeps whole disks: loop, RAM, compressed-RAM and optical devices
// are not storage, partitions and device-mapper or md devices repeat the
// I/O of the disks under them.
func disks(ds []blockdevice.Diskstats) []diskCounters {
	names := make(map[string]bool, len(ds))
	for _, d := range ds {
		names[d.DeviceName] = true
	}
	var out []diskCounters
	for _, d := range ds {
		n := d.DeviceName
		if skipDevice(n) || isPartition(n, names) {
			continue
		}
		out = append(out, diskCounters{name: n, rdSectors: d.ReadSectors, wrSectors: d.WriteSectors, rdIOs: d.ReadIOs, wrIOs: d.WriteIOs,
			ioTicks: d.IOsTotalTicks, rdTicks: d.ReadTicks, wrTicks: d.WriteTicks})
	}
	return out
}

func skipDevice(n string) bool {
	for _, p := range []string{"loop", "ram", "zram", "sr", "fd", "dm-", "md", "nbd"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// isPartition reports whether n is a partition of another listed device:
// sda1 of sda, nvme0n1p2 of nvme0n1, mmcblk0p1 of mmcblk0.
func isPartition(n string, names map[string]bool) bool {
	i := len(n)
	for i > 0 && n[i-1] >= '0' && n[i-1] <= '9' {
		i--
	}
	if i == len(n) || i == 0 {
		return false
	}
	if names[n[:i]] {
		return true
	}
	return n[i-1] == 'p' && i > 1 && names[n[:i-1]]
}

func links(nd procfs.NetDev) []linkCounters {
	out := make([]linkCounters, 0, len(nd))
	for name, l := range nd {
		out = append(out, linkCounters{name: name, rxB: l.RxBytes, txB: l.TxBytes, rxP: l.RxPackets, txP: l.TxPackets,
			errs: l.RxErrors + l.TxErrors, drops: l.RxDropped + l.TxDropped})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// sample is the rates between two readings: one second of the host.
type sample struct {
	ns    int64
	span  float64 // seconds
	cores int
	cpu   CPU
	load1 float64
	mem   memReading
	disks []diskRate
	links []linkRate
	// retrans is the segments retransmitted in the span.
	retrans float64
	db      procRate
	client  procRate
}

type diskRate struct {
	name                         string
	rdBps, wrBps, rdIOPS, wrIOPS float64
	util, await                  float64
}

type linkRate struct {
	name                       string
	rxBps, txBps, rxPps, txPps float64
	errs, drops                float64 // in the span
}

type procRate struct {
	count          int
	cpuPct         float64
	rss            int64
	threads, files int
	rdBps, wrBps   float64
}

var errNoSpan = errors.New("readings out of order")

// rates turns two readings into a sample.
func rates(prev, cur *reading) (sample, error) {
	span := float64(cur.ns-prev.ns) / 1e9
	if span <= 0 {
		return sample{}, errNoSpan
	}
	s := sample{ns: cur.ns, span: span, cores: cur.cores, load1: cur.load1, mem: cur.mem}
	s.cpu = cpuShares(prev.cpu, cur.cpu)
	for _, d := range cur.disks {
		p, ok := findDisk(prev.disks, d.name)
		if !ok {
			continue
		}
		ios := float64(sub(d.rdIOs, p.rdIOs) + sub(d.wrIOs, p.wrIOs))
		r := diskRate{name: d.name, rdBps: float64(sub(d.rdSectors, p.rdSectors)) * 512 / span, wrBps: float64(sub(d.wrSectors, p.wrSectors)) * 512 / span,
			rdIOPS: float64(sub(d.rdIOs, p.rdIOs)) / span, wrIOPS: float64(sub(d.wrIOs, p.wrIOs)) / span,
			util: min(100, float64(sub(d.ioTicks, p.ioTicks))/(span*1000)*100)}
		if ios > 0 {
			r.await = float64(sub(d.rdTicks, p.rdTicks)+sub(d.wrTicks, p.wrTicks)) / ios
		}
		s.disks = append(s.disks, r)
	}
	for _, l := range cur.links {
		p, ok := findLink(prev.links, l.name)
		if !ok {
			continue
		}
		s.links = append(s.links, linkRate{name: l.name, rxBps: float64(sub(l.rxB, p.rxB)) / span, txBps: float64(sub(l.txB, p.txB)) / span,
			rxPps: float64(sub(l.rxP, p.rxP)) / span, txPps: float64(sub(l.txP, p.txP)) / span,
			errs: float64(sub(l.errs, p.errs)), drops: float64(sub(l.drops, p.drops))})
	}
	s.retrans = max(cur.retrans-prev.retrans, 0)
	s.db = procRates(prev.db, cur.db, span, cur.cores)
	s.client = procRates([]procCounters{prev.client}, []procCounters{cur.client}, span, cur.cores)
	if !cur.client.ok {
		s.client.count = 0
	}
	return s, nil
}

// sub is a counter's growth; a counter that went back (a device or
// interface re-created) grew by nothing.
func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func cpuShares(p, c procfs.CPUStat) CPU {
	// Guest time is already counted in user time by the kernel.
	user := (c.User + c.Nice) - (p.User + p.Nice)
	system := (c.System + c.IRQ + c.SoftIRQ) - (p.System + p.IRQ + p.SoftIRQ)
	iowait, steal, idle := c.Iowait-p.Iowait, c.Steal-p.Steal, c.Idle-p.Idle
	// iowait can go backwards on some kernels (it is sampled per CPU).
	user, system, iowait, steal, idle = max(user, 0), max(system, 0), max(iowait, 0), max(steal, 0), max(idle, 0)
	total := user + system + iowait + steal + idle
	if total <= 0 {
		return CPU{}
	}
	f := 100 / total
	return CPU{User: user * f, System: system * f, IOWait: iowait * f, Steal: steal * f, Idle: idle * f}
}

func findDisk(ds []diskCounters, name string) (diskCounters, bool) {
	for _, d := range ds {
		if d.name == name {
			return d, true
		}
	}
	return diskCounters{}, false
}

func findLink(ls []linkCounters, name string) (linkCounters, bool) {
	for _, l := range ls {
		if l.name == name {
			return l, true
		}
	}
	return linkCounters{}, false
}

// procRates adds up a group of processes: CPU and I/O from those present
// in both readings (the same process: pid and start time agree), memory,
// threads and descriptors from the current one.
func procRates(prev, cur []procCounters, span float64, cores int) procRate {
	var r procRate
	for _, c := range cur {
		if !c.ok {
			continue
		}
		r.count++
		r.rss += c.rss
		r.threads += c.threads
		r.files += c.files
		for _, p := range prev {
			if p.ok && p.pid == c.pid && p.start == c.start {
				if cores > 0 {
					r.cpuPct += max(c.cpu-p.cpu, 0) / span / float64(cores) * 100
				}
				if c.hasIO && p.hasIO {
					r.rdBps += float64(sub(c.readB, p.readB)) / span
					r.wrBps += float64(sub(c.writeB, p.writeB)) / span
				}
				break
			}
		}
	}
	return r
}

// describe says what a reading could not read, for a note.
func (r *reading) describe() string {
	if len(r.missing) == 0 {
		return ""
	}
	return fmt.Sprintf("could not read %s", strings.Join(r.missing, "; "))
}

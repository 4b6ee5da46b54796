package telemetry

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Record is run.json's telemetry section: every load generator's host
// over the run, and the verdicts drawn from them.
type Record struct {
	Hosts    []Host    `json:"hosts"`
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// RawFile names the bundle's file of raw 1 s samples.
	RawFile string `json:"raw_file,omitempty"`
}

// Host is one load generator's host over the run.
type Host struct {
	Agent    int    `json:"agent"`
	Address  string `json:"address"`
	Hostname string `json:"hostname"`
	// Cores and MemTotal are left out (0) when no reading of the host
	// fell inside the run: unknown, not none.
	Cores    int   `json:"cores,omitempty"`
	MemTotal int64 `json:"mem_total_bytes,omitempty"`
	// Notes are what its sampler said once (processes found or not,
	// internals that could not be read).
	Notes []string `json:"notes,omitempty"`
	// Summary is nil when the host was never read (Measured): a record
	// of zeros would read as an idle host.
	Summary   *HostSummary   `json:"summary,omitempty"`
	Intervals []HostInterval `json:"intervals"`
}

// Measured says whether any 1 s reading of the host fell inside the
// measured run (a run shorter than a second may hold none: the host then
// has its notes only, and no figures to show).
func (h Host) Measured() bool { return len(h.Intervals) > 0 && h.Summary != nil }

// HostInterval is one interval of a host, on the run's clock.
type HostInterval struct {
	Seq         int64 `json:"seq"`
	StartUnixNs int64 `json:"start_unix_ns"`
	EndUnixNs   int64 `json:"end_unix_ns"`
	Interval
}

// HostSummary is a host over the measured run: means over its intervals
// (weighted by their length) and the worst interval's figures. The
// database's figures are over the intervals in which a process of it was
// read (DBIntervals); with none they are not known (DBRead), and shown
// blank, not 0.
type HostSummary struct {
	Intervals    int     `json:"intervals"`
	CPUBusyPct   float64 `json:"cpu_busy_pct"`
	CPUBusyMax   float64 `json:"cpu_busy_pct_max"`
	IOWaitPct    float64 `json:"cpu_iowait_pct"`
	IOWaitMax    float64 `json:"cpu_iowait_pct_max"`
	DiskReadBps  float64 `json:"disk_read_bytes_per_sec"`
	DiskWriteBps float64 `json:"disk_write_bytes_per_sec"`
	DiskUtilMax  float64 `json:"disk_util_pct_max"`
	NetRxBps     float64 `json:"net_rx_bytes_per_sec"`
	NetTxBps     float64 `json:"net_tx_bytes_per_sec"`
	DBIntervals  int     `json:"db_intervals"`
	DBCPUPct     float64 `json:"db_cpu_pct"`
	DBCPUMax     float64 `json:"db_cpu_pct_max"`
	DBRSSMax     int64   `json:"db_rss_max_bytes"`
	DBWriteBytes int64   `json:"db_write_bytes"`
	ClientCPUPct float64 `json:"client_cpu_pct"`
	ClientCPUMax float64 `json:"client_cpu_pct_max"`
	ClientRSSMax int64   `json:"client_rss_max_bytes"`
	// ClientShare is the load generator's part of the CPU the host used.
	ClientShare float64 `json:"client_share_of_busy"`
	// Database names the server as its internals answered.
	Database string `json:"database,omitempty"`
}

// DBRead says the database's processes were read on the host in some
// interval (a record older than DBIntervals says so by their memory).
func (s *HostSummary) DBRead() bool { return s != nil && (s.DBIntervals > 0 || s.DBRSSMax > 0) }

// Verdict kinds.
const (
	ClientBound = "client-bound"
	DiskBound   = "disk-bound"
)

// Thresholds of the verdicts, on an interval's means.
const (
	// SaturatedPct: a host this busy (user+system+steal, of all cores)
	// leaves its load generator waiting for CPU, which its latencies
	// then include.
	SaturatedPct = 90.0
	// IOWaitHighPct and UtilHighPct: a host waiting this much for I/O,
	// or a disk this busy, is limited by its storage.
	IOWaitHighPct = 20.0
	UtilHighPct   = 80.0
)

// Verdict is one finding from the hosts' figures.
type Verdict struct {
	Kind      string `json:"kind"`
	Agent     int    `json:"agent"`
	Host      string `json:"host"`
	Intervals int    `json:"intervals"`
	Of        int    `json:"of"`
	Text      string `json:"text"`
}

// Builder collects the hosts' intervals of a run, from the spool at the
// end (package bundle) or from the live updates (the session), and makes
// the Record: one place decides the verdicts whichever reads them.
type Builder struct {
	hosts []*Host
	// tallies hold, by host, what the verdicts are drawn from, added up
	// as intervals arrive.
	tallies []tally
	// verdictsOnly keeps no intervals (the live session's builder): its
	// memory stays flat however long the run, and it answers Lines only.
	verdictsOnly bool
}

// NewVerdictBuilder draws the verdicts of a run as its intervals arrive
// without keeping them: a session's summary needs the verdicts only,
// while run.json's full record is built from the spool at the end.
func NewVerdictBuilder() *Builder { return &Builder{verdictsOnly: true} }

// NewBuilder starts the record of a run's agents; names are their
// addresses and host names, by index.
func NewBuilder(addresses, hostnames []string) *Builder {
	b := &Builder{}
	for i, a := range addresses {
		h := &Host{Agent: i, Address: a}
		if i < len(hostnames) {
			h.Hostname = hostnames[i]
		}
		b.hosts = append(b.hosts, h)
	}
	return b
}

// Name names an agent (a live run learns its agents from its updates).
func (b *Builder) Name(agent int, address, hostname string) {
	for len(b.hosts) <= agent {
		b.hosts = append(b.hosts, &Host{Agent: len(b.hosts)})
	}
	b.sizeTallies()
	h := b.hosts[agent]
	h.Address, h.Hostname = address, hostname
}

// Add records agent's interval seq, with times on the run's clock. The
// raw points are not kept (they go to the raw file).
func (b *Builder) Add(agent int, seq, startNs, endNs int64, iv *Interval) {
	if iv == nil || agent < 0 || agent >= len(b.hosts) {
		return
	}
	h := b.hosts[agent]
	h.Notes = append(h.Notes, iv.Notes...)
	if iv.Samples == 0 {
		return
	}
	b.sizeTallies()
	b.tallies[agent].add(iv)
	h.Cores = max(h.Cores, iv.Cores)
	h.MemTotal = max(h.MemTotal, iv.MemTotal)
	if b.verdictsOnly {
		return
	}
	c := *iv
	c.Points, c.Notes = nil, nil
	h.Intervals = append(h.Intervals, HostInterval{Seq: seq, StartUnixNs: startNs, EndUnixNs: endNs, Interval: c})
}

func (b *Builder) sizeTallies() {
	for len(b.tallies) < len(b.hosts) {
		b.tallies = append(b.tallies, tally{})
	}
}

// Lines are the verdicts as the summary prints them (what Record().Lines()
// says, for a builder of either kind).
func (b *Builder) Lines() []string {
	b.sizeTallies()
	var out []string
	for i, h := range b.hosts {
		for _, v := range b.tallies[i].verdicts(h) {
			out = append(out, v.line())
		}
	}
	return out
}

// Record summarises every host and draws the verdicts. Nil when no host
// reported telemetry (it was off, or every agent predates it).
func (b *Builder) Record() *Record {
	b.sizeTallies()
	r := &Record{}
	some := false
	for i, h := range b.hosts {
		if b.tallies[i].n == 0 && len(h.Notes) == 0 {
			continue
		}
		some = true
		sort.Slice(h.Intervals, func(i, j int) bool { return h.Intervals[i].Seq < h.Intervals[j].Seq })
		h.Summary = nil
		if len(h.Intervals) > 0 {
			h.Summary = summarizeHost(h.Intervals)
		}
		r.Hosts = append(r.Hosts, *h)
		r.Verdicts = append(r.Verdicts, b.tallies[i].verdicts(h)...)
	}
	if !some {
		return nil
	}
	return r
}

func summarizeHost(ivs []HostInterval) *HostSummary {
	s := &HostSummary{Intervals: len(ivs)}
	var total, dbTotal float64
	for _, iv := range ivs {
		total += float64(iv.EndUnixNs - iv.StartUnixNs)
		if iv.DB.Count > 0 {
			s.DBIntervals++
			dbTotal += float64(iv.EndUnixNs - iv.StartUnixNs)
		}
	}
	weight := func(iv HostInterval, total float64, n int) float64 {
		if total > 0 {
			return float64(iv.EndUnixNs-iv.StartUnixNs) / total
		}
		return 1 / float64(n)
	}
	for _, iv := range ivs {
		w := weight(iv, total, len(ivs))
		s.CPUBusyPct += iv.CPU.Busy() * w
		s.CPUBusyMax = max(s.CPUBusyMax, iv.BusyMax)
		s.IOWaitPct += iv.CPU.IOWait * w
		s.IOWaitMax = max(s.IOWaitMax, iv.IOWaitMax)
		s.DiskReadBps += iv.DiskReadBps() * w
		s.DiskWriteBps += iv.DiskWriteBps() * w
		s.DiskUtilMax = max(s.DiskUtilMax, iv.DiskUtilMax())
		rx, tx := iv.NetBps()
		s.NetRxBps += rx * w
		s.NetTxBps += tx * w
		if iv.DB.Count > 0 {
			// A database that exited (or came) mid-run is averaged over
			// the intervals it was there, not diluted by the others.
			s.DBCPUPct += iv.DB.CPUPct * weight(iv, dbTotal, s.DBIntervals)
			s.DBCPUMax = max(s.DBCPUMax, iv.DB.CPUPctMax)
			s.DBRSSMax = max(s.DBRSSMax, iv.DB.RSSMax)
			s.DBWriteBytes += iv.DB.WriteBytes
		}
		s.ClientCPUPct += iv.Client.CPUPct * w
		s.ClientCPUMax = max(s.ClientCPUMax, iv.Client.CPUPctMax)
		s.ClientRSSMax = max(s.ClientRSSMax, iv.Client.RSSMax)
		if iv.Internals != nil && iv.Internals.Product != "" {
			s.Database = iv.Internals.Product
		}
	}
	if s.CPUBusyPct > 0 {
		s.ClientShare = min(1, s.ClientCPUPct/s.CPUBusyPct)
	}
	return s
}

// name is how a host is named in verdicts (which YCSB's [NOTE] lines
// carry: no commas).
func (h *Host) name() string {
	switch {
	case h.Hostname != "" && h.Address != "" && h.Address != h.Hostname && h.Address != "local":
		return fmt.Sprintf("agent %d (%s at %s)", h.Agent, h.Hostname, h.Address)
	case h.Hostname != "":
		return fmt.Sprintf("agent %d (%s)", h.Agent, h.Hostname)
	}
	return fmt.Sprintf("agent %d (%s)", h.Agent, h.Address)
}

// tally is one host's measured intervals as the verdicts need them,
// added up one interval at a time so that no interval need be kept.
type tally struct {
	// sat counts the intervals that make a host client-bound (its host
	// saturated or the load generator held, below); hostSat those with the
	// host saturated, satBusy and satClient summed over them.
	n, sat, hostSat, disk int
	satBusy, satClient    float64
	worstUtil, ioSum      float64
	worstDisk             string
	// held counts the intervals in which the load generator used at
	// least SaturatedPct of the CPUs it may use, fewer than the host's
	// cores; heldCPUs and heldCores are the allowance and the cores last
	// seen, heldUsed the CPUs it used, summed over those intervals.
	held                        int
	heldCPUs, heldUsed, heldPct float64
	heldCores                   int
}

// allowancePct is the share of the host's cores the load generator may
// use, in percent: its CPUs (ClientCPUs) of the host's cores, or all of
// them when the agent did not say.
func allowancePct(iv *Interval) float64 {
	if iv.ClientCPUs <= 0 || iv.Cores <= 0 {
		return 100
	}
	return min(100, 100*iv.ClientCPUs/float64(iv.Cores))
}

func (t *tally) add(iv *Interval) {
	t.n++
	allow := allowancePct(iv)
	// Held to its own allowance: a load generator capped below the
	// host's cores saturates long before its host does.
	held := allow < 100 && iv.Client.CPUPct >= SaturatedPct/100*allow
	hostSat := iv.CPU.Busy() >= SaturatedPct
	if hostSat || held {
		t.sat++
	}
	if hostSat {
		t.hostSat++
		t.satBusy += iv.CPU.Busy()
		t.satClient += iv.Client.CPUPct
	}
	if held {
		t.held++
		t.heldCPUs, t.heldCores = iv.ClientCPUs, iv.Cores
		t.heldUsed += iv.Client.CPUPct / 100 * float64(iv.Cores)
		t.heldPct += 100 * iv.Client.CPUPct / allow
	}
	hot := iv.CPU.IOWait >= IOWaitHighPct
	for _, d := range iv.Disks {
		if d.UtilPct >= UtilHighPct {
			hot = true
		}
		// Ties go to the first name in order, so that the verdict does
		// not depend on the order the intervals arrived in.
		if d.UtilPct > t.worstUtil || (d.UtilPct == t.worstUtil && t.worstDisk != "" && d.Name < t.worstDisk) {
			t.worstUtil, t.worstDisk = d.UtilPct, d.Name
		}
	}
	if hot {
		t.disk++
		t.ioSum += iv.CPU.IOWait
	}
}

// verdicts: client-bound when, in at least half of the measured
// intervals, the load generator's host was saturated or the load
// generator used nearly all the CPUs it may use (GOMAXPROCS or a cgroup
// quota below the host's cores); disk-bound (a hint: the disk may be
// another tenant's) when iowait or a disk's utilisation was high in at
// least a third of them.
func (t *tally) verdicts(h *Host) []Verdict {
	n, sat, disk := t.n, t.sat, t.disk
	if n == 0 {
		return nil
	}
	var out []Verdict
	if 2*sat >= n && sat > 0 {
		var why []string
		if t.hostSat > 0 {
			why = append(why, fmt.Sprintf("the load generator's host was CPU-saturated (≥ %.0f%% busy) in %d of %d measured intervals (mean %.0f%% busy; the load generator itself %.0f%%)",
				SaturatedPct, t.hostSat, n, t.satBusy/float64(t.hostSat), t.satClient/float64(t.hostSat)))
		}
		if t.held > 0 {
			// Said in CPUs, the unit of GOMAXPROCS and of a quota.
			why = append(why, fmt.Sprintf("the load generator may use %s of its host's %d cores (GOMAXPROCS or its cgroup's CPU quota) and used ≥ %.0f%% of them in %d of %d measured intervals (mean %s CPUs: %.0f%% of its allowance)",
				cpus(t.heldCPUs), t.heldCores, SaturatedPct, t.held, n, cpus(t.heldUsed/float64(t.held)), t.heldPct/float64(t.held)))
		}
		out = append(out, Verdict{Kind: ClientBound, Agent: h.Agent, Host: h.Hostname, Intervals: sat, Of: n,
			Text: fmt.Sprintf("%s: %s: latencies include waiting for CPU on the client", h.name(), strings.Join(why, "; and "))})
	}
	if 3*disk >= n && disk > 0 {
		detail := fmt.Sprintf("iowait %.0f%% on average in those intervals", t.ioSum/float64(disk))
		if t.worstUtil >= UtilHighPct {
			detail += fmt.Sprintf("; disk %s up to %.0f%% utilised", t.worstDisk, t.worstUtil)
		}
		out = append(out, Verdict{Kind: DiskBound, Agent: h.Agent, Host: h.Hostname, Intervals: disk, Of: n,
			Text: fmt.Sprintf("%s: hint: storage was busy (iowait ≥ %.0f%% or a disk ≥ %.0f%% utilised) in %d of %d measured intervals (%s)",
				h.name(), IOWaitHighPct, UtilHighPct, disk, n, detail)})
	}
	return out
}

// cpus writes a CPU count as GOMAXPROCS or a quota reads: 2, 1.5, 1.92.
func cpus(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

func (v Verdict) line() string { return strings.ToUpper(v.Kind[:1]) + v.Kind[1:] + ": " + v.Text }

// Lines are the verdicts as the summary prints them.
func (r *Record) Lines() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, v := range r.Verdicts {
		out = append(out, v.line())
	}
	return out
}

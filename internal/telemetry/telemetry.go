// Package telemetry explains a run's numbers: what every load generator's
// host, the database server processes on it and the load generator itself
// were doing, interval by interval, beside the latencies.
//
// A Sampler reads /proc (through github.com/prometheus/procfs) once a
// second on a goroutine of its own, never on the workers' path; the
// engine's reporter asks it for the interval it has just cut (Cut), and
// gets a summary of that interval's samples (means, and maxima where a
// peak matters) with the raw 1 s points. Agents send it in their interval
// record (the Telemetry message) and a single host spools it the same way,
// so the one bundle builder turns it into run.json's telemetry section and
// the raw samples file, and every live sink reads it from run.Update.
//
// The database server's processes are found by the adapter's knowledge
// (adapters.ServerProcesses) or by ycsbctl.telemetry.pids; its internals
// are read about once per interval on connections of their own
// (adapters.InternalsSource). Neither ever fails a run: what cannot be
// read is said once.
package telemetry

// CPU is how the host's cores spent a span of time, in percent of all
// cores (the five add up to 100).
type CPU struct {
	User   float64 `json:"user_pct"`
	System float64 `json:"system_pct"`
	IOWait float64 `json:"iowait_pct"`
	Steal  float64 `json:"steal_pct"`
	Idle   float64 `json:"idle_pct"`
}

// Busy is everything but idle and iowait: the share of the host's CPU
// that ran something.
func (c CPU) Busy() float64 { return c.User + c.System + c.Steal }

// Device is one block device's summary over an interval; rates are per
// second.
type Device struct {
	Name        string  `json:"name"`
	ReadBps     float64 `json:"read_bytes_per_sec"`
	WriteBps    float64 `json:"write_bytes_per_sec"`
	WriteBpsMax float64 `json:"write_bytes_per_sec_max"`
	ReadIOPS    float64 `json:"read_iops"`
	WriteIOPS   float64 `json:"write_iops"`
	UtilPct     float64 `json:"util_pct"`
	UtilPctMax  float64 `json:"util_pct_max"`
	AwaitMs     float64 `json:"await_ms"`
}

// Link is one network interface's summary over an interval.
type Link struct {
	Name   string  `json:"name"`
	RxBps  float64 `json:"rx_bytes_per_sec"`
	TxBps  float64 `json:"tx_bytes_per_sec"`
	RxPps  float64 `json:"rx_packets_per_sec"`
	TxPps  float64 `json:"tx_packets_per_sec"`
	Errors int64   `json:"errors"`
	Drops  int64   `json:"drops"`
}

// Process summarises a group of processes over an interval: the database
// server's processes found on the host together, or the load generator.
// CPU is in percent of all the host's cores.
type Process struct {
	Count      int     `json:"count"`
	CPUPct     float64 `json:"cpu_pct"`
	CPUPctMax  float64 `json:"cpu_pct_max"`
	RSSMax     int64   `json:"rss_max_bytes"`
	ThreadsMax int     `json:"threads_max"`
	FilesMax   int     `json:"open_files_max"`
	ReadBps    float64 `json:"read_bytes_per_sec"`
	WriteBps   float64 `json:"write_bytes_per_sec"`
	// WriteBytes is what the processes wrote to storage in the interval
	// (/proc/PID/io write_bytes: page cache dirtied on a disk-backed file
	// system; tmpfs writes are not counted).
	WriteBytes int64 `json:"write_bytes"`
}

// Metric is one figure of the database's internals.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Internals are the database server's own figures read in an interval.
type Internals struct {
	Product string   `json:"product"`
	Source  string   `json:"source"`
	Metrics []Metric `json:"metrics"`
}

// Value returns the named metric.
func (in *Internals) Value(name string) (float64, bool) {
	if in == nil {
		return 0, false
	}
	for _, m := range in.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// Point is one raw 1 s sample, host totals only: what the bundle's
// telemetry.csv holds.
type Point struct {
	UnixNs int64
	CPU    CPU
	Load1  float64
	// MemAvailable in bytes.
	MemAvailable int64
	// Disk totals over the host's disks; DiskUtilMax the busiest one's.
	DiskReadBps, DiskWriteBps, DiskUtilMax float64
	// Net totals over the host's interfaces.
	NetRxBps, NetTxBps float64
	DBCPUPct           float64
	DBRSS              int64
	DBWriteBps         float64
	ClientCPUPct       float64
	ClientRSS          int64
}

// Interval is what one host did in one interval of the run.
type Interval struct {
	// Samples is how many 1 s readings the summary covers; 0 means none
	// (an interval shorter than a reading) and the rest is empty.
	Samples int `json:"samples"`
	Cores   int `json:"cores"`
	// CPU holds the means; BusyMax and IOWaitMax the worst second.
	CPU       CPU     `json:"cpu"`
	BusyMax   float64 `json:"cpu_busy_pct_max"`
	IOWaitMax float64 `json:"cpu_iowait_pct_max"`
	Load1Max  float64 `json:"load1_max"`
	// Memory in bytes: total, the least available, the mean page cache,
	// the most swap used.
	MemTotal        int64    `json:"mem_total_bytes"`
	MemAvailableMin int64    `json:"mem_available_min_bytes"`
	MemCached       int64    `json:"mem_cached_bytes"`
	SwapUsedMax     int64    `json:"swap_used_max_bytes"`
	Disks           []Device `json:"disks,omitempty"`
	Links           []Link   `json:"links,omitempty"`
	TCPRetransmits  int64    `json:"tcp_retransmits"`
	DB              Process  `json:"db"`
	Client          Process  `json:"client"`
	// ClientCPUs is how many CPUs the load generator may use: the least
	// of its GOMAXPROCS and its cgroup's CPU quota (0: not known, as from
	// an agent that does not say). Client's CPU is a share of all cores;
	// this is what it is judged against (the client-bound verdict).
	ClientCPUs float64    `json:"client_cpus,omitempty"`
	Internals  *Internals `json:"internals,omitempty"`
	// Points are the raw samples; run.json leaves them to telemetry.csv.
	Points []Point `json:"-"`
	// Notes are said once per run (processes found or not, internals that
	// could not be read).
	Notes []string `json:"-"`
}

// DiskReadBps is the mean read rate over all the host's disks.
func (iv *Interval) DiskReadBps() float64 {
	var s float64
	for _, d := range iv.Disks {
		s += d.ReadBps
	}
	return s
}

// DiskWriteBps is the mean write rate over all the host's disks.
func (iv *Interval) DiskWriteBps() float64 {
	var s float64
	for _, d := range iv.Disks {
		s += d.WriteBps
	}
	return s
}

// DiskUtilMax is the busiest disk's worst second.
func (iv *Interval) DiskUtilMax() float64 {
	var m float64
	for _, d := range iv.Disks {
		m = max(m, d.UtilPctMax)
	}
	return m
}

// NetBps is the mean traffic over all the host's interfaces, both ways.
func (iv *Interval) NetBps() (rx, tx float64) {
	for _, l := range iv.Links {
		rx += l.RxBps
		tx += l.TxBps
	}
	return rx, tx
}

// Property names (declared and parsed by package spec).
const (
	// PropEnabled switches telemetry off (false); it is on by default.
	PropEnabled = "ycsbctl.telemetry"
	// PropPids names the database server's processes on each host: a pid
	// file, pids, or a process name pattern (ParsePids).
	PropPids = "ycsbctl.telemetry.pids"
	// PropHostMetrics exposes host-wide figures on /metrics too (off:
	// node_exporter serves them).
	PropHostMetrics = "ycsbctl.telemetry.hostmetrics"
)

package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// Telemetry on /metrics: the database's processes and the load generator
// on each host, labelled by the agent's address and the host's name (the
// name node_exporter reports as nodename, for joins), and the database's
// internals. Host-wide CPU, disk and network figures only with
// ycsbctl.telemetry.hostmetrics: node_exporter already serves them.
var (
	hostLabels         = []string{"run_id", "agent", "host"}
	descDBProcesses    = prometheus.NewDesc("ycsbctl_db_processes", "Database server processes found on the load generator's host (0: none, a remote database).", hostLabels, nil)
	descDBCPU          = prometheus.NewDesc("ycsbctl_db_process_cpu_ratio", "CPU the database server's processes on the host used in the latest interval, as a share of all the host's cores (1 = every core busy).", hostLabels, nil)
	descDBRSS          = prometheus.NewDesc("ycsbctl_db_process_resident_memory_bytes", "Resident memory of the database server's processes on the host (the interval's largest).", hostLabels, nil)
	descDBThreads      = prometheus.NewDesc("ycsbctl_db_process_threads", "Threads of the database server's processes on the host.", hostLabels, nil)
	descDBFDs          = prometheus.NewDesc("ycsbctl_db_process_open_fds", "Open file descriptors of the database server's processes on the host.", hostLabels, nil)
	descDBWritten      = prometheus.NewDesc("ycsbctl_db_process_write_bytes_total", "Bytes the database server's processes on the host wrote to storage during the run (/proc/PID/io write_bytes).", hostLabels, nil)
	descClientCPU      = prometheus.NewDesc("ycsbctl_load_generator_cpu_ratio", "CPU the load generator used in the latest interval, as a share of all its host's cores.", hostLabels, nil)
	descClientRSS      = prometheus.NewDesc("ycsbctl_load_generator_resident_memory_bytes", "Resident memory of the load generator.", hostLabels, nil)
	descInternals      = prometheus.NewDesc("ycsbctl_db_internal", "The database's own figures read once per interval (Cassandra system_views, HBase JMX, MongoDB or FerretDB serverStatus); product names the server as it answered.", []string{"run_id", "agent", "host", "product", "name"}, nil)
	descHostCPU        = prometheus.NewDesc("ycsbctl_host_cpu_ratio", "Share of all the host's cores by mode in the latest interval (ycsbctl.telemetry.hostmetrics).", []string{"run_id", "agent", "host", "mode"}, nil)
	descHostDiskRead   = prometheus.NewDesc("ycsbctl_host_disk_read_bytes_per_second", "Bytes read per second over the host's disks in the latest interval (ycsbctl.telemetry.hostmetrics).", hostLabels, nil)
	descHostDiskWrite  = prometheus.NewDesc("ycsbctl_host_disk_written_bytes_per_second", "Bytes written per second over the host's disks in the latest interval (ycsbctl.telemetry.hostmetrics).", hostLabels, nil)
	descHostDiskUtil   = prometheus.NewDesc("ycsbctl_host_disk_utilization_ratio", "The busiest disk's share of time busy in the latest interval (ycsbctl.telemetry.hostmetrics).", hostLabels, nil)
	descHostNetRx      = prometheus.NewDesc("ycsbctl_host_network_receive_bytes_per_second", "Bytes received per second over the host's interfaces (ycsbctl.telemetry.hostmetrics).", hostLabels, nil)
	descHostNetTx      = prometheus.NewDesc("ycsbctl_host_network_transmit_bytes_per_second", "Bytes sent per second over the host's interfaces (ycsbctl.telemetry.hostmetrics).", hostLabels, nil)
	descHostMemAvail   = prometheus.NewDesc("ycsbctl_host_memory_available_bytes", "The host's least available memory in the latest interval (ycsbctl.telemetry.hostmetrics).", hostLabels, nil)
	descHostRetransmit = prometheus.NewDesc("ycsbctl_host_tcp_retransmits_total", "TCP segments the host retransmitted during the run (ycsbctl.telemetry.hostmetrics).", hostLabels, nil)
)

// hostData is one agent's host as /metrics shows it: the latest interval
// and the run's counters.
type hostData struct {
	host       string
	latest     *telemetry.Interval
	written    int64
	retransmit int64
}

// SetTelemetry records an agent's host in the latest interval.
func (e *Exporter) SetTelemetry(agent, host string, iv *telemetry.Interval) {
	if iv == nil || iv.Samples == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hosts == nil {
		e.hosts = map[string]*hostData{}
	}
	h := e.hosts[agent]
	if h == nil {
		h = &hostData{}
		e.hosts[agent] = h
	}
	h.host, h.latest = host, iv
	h.written += iv.DB.WriteBytes
	h.retransmit += iv.TCPRetransmits
}

// collectHosts sends the hosts' series; e.mu is held.
func (e *Exporter) collectHosts(ch chan<- prometheus.Metric) {
	info := e.run
	names := make([]string, 0, len(e.hosts))
	for n := range e.hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	g := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, agent := range names {
		h := e.hosts[agent]
		iv := h.latest
		l := []string{info.RunID, agent, h.host}
		g(descDBProcesses, float64(iv.DB.Count), l...)
		if iv.DB.Count > 0 {
			g(descDBCPU, iv.DB.CPUPct/100, l...)
			g(descDBRSS, float64(iv.DB.RSSMax), l...)
			g(descDBThreads, float64(iv.DB.ThreadsMax), l...)
			g(descDBFDs, float64(iv.DB.FilesMax), l...)
			ch <- counter(descDBWritten, float64(h.written), info.Start, l...)
		}
		g(descClientCPU, iv.Client.CPUPct/100, l...)
		g(descClientRSS, float64(iv.Client.RSSMax), l...)
		if in := iv.Internals; in != nil {
			for _, m := range in.Metrics {
				g(descInternals, m.Value, info.RunID, agent, h.host, in.Product, m.Name)
			}
		}
		if !info.HostMetrics {
			continue
		}
		for _, m := range []struct {
			mode string
			v    float64
		}{{"user", iv.CPU.User}, {"system", iv.CPU.System}, {"iowait", iv.CPU.IOWait}, {"steal", iv.CPU.Steal}, {"idle", iv.CPU.Idle}} {
			g(descHostCPU, m.v/100, info.RunID, agent, h.host, m.mode)
		}
		rx, tx := iv.NetBps()
		g(descHostDiskRead, iv.DiskReadBps(), l...)
		g(descHostDiskWrite, iv.DiskWriteBps(), l...)
		util := 0.0
		for _, d := range iv.Disks {
			util = max(util, d.UtilPct)
		}
		g(descHostDiskUtil, util/100, l...)
		g(descHostNetRx, rx, l...)
		g(descHostNetTx, tx, l...)
		g(descHostMemAvail, float64(iv.MemAvailableMin), l...)
		ch <- counter(descHostRetransmit, float64(h.retransmit), info.Start, l...)
	}
}

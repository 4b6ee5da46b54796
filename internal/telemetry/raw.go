package telemetry

import (
	"encoding/csv"
	"io"
	"strconv"
)

// RawFile is the bundle's file of raw 1 s samples.
const RawFile = "telemetry.csv"

// rawHeader names the columns of telemetry.csv: one row per host per
// second, times in Unix ns on the run's clock.
var rawHeader = []string{"agent", "host", "unix_ns", "cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "cpu_steal_pct", "cpu_idle_pct",
	"load1", "mem_available_bytes", "disk_read_bytes_per_sec", "disk_write_bytes_per_sec", "disk_util_pct_max",
	"net_rx_bytes_per_sec", "net_tx_bytes_per_sec", "db_cpu_pct", "db_rss_bytes", "db_write_bytes_per_sec", "client_cpu_pct", "client_rss_bytes"}

// RawWriter writes telemetry.csv as the bundle builder replays the spool.
type RawWriter struct {
	w    *csv.Writer
	rows int
	row  []string
}

// NewRawWriter starts the file with its header.
func NewRawWriter(w io.Writer) (*RawWriter, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(rawHeader); err != nil {
		return nil, err
	}
	return &RawWriter{w: cw, row: make([]string, len(rawHeader))}, nil
}

// Add writes an interval's points of one host; offsetNs (agent minus run
// clock) moves them to the run's clock.
func (rw *RawWriter) Add(agent int, host string, offsetNs int64, points []Point) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 32) }
	for _, p := range points {
		r := rw.row[:0]
		r = append(r, strconv.Itoa(agent), host, strconv.FormatInt(p.UnixNs-offsetNs, 10), f(p.CPU.User), f(p.CPU.System), f(p.CPU.IOWait),
			f(p.CPU.Steal), f(p.CPU.Idle), f(p.Load1), strconv.FormatInt(p.MemAvailable, 10), f(p.DiskReadBps), f(p.DiskWriteBps),
			f(p.DiskUtilMax), f(p.NetRxBps), f(p.NetTxBps), f(p.DBCPUPct), strconv.FormatInt(p.DBRSS, 10), f(p.DBWriteBps),
			f(p.ClientCPUPct), strconv.FormatInt(p.ClientRSS, 10))
		if err := rw.w.Write(r); err != nil {
			return err
		}
		rw.rows++
	}
	return nil
}

// Rows is how many samples were written.
func (rw *RawWriter) Rows() int { return rw.rows }

// Flush ends the file.
func (rw *RawWriter) Flush() error {
	rw.w.Flush()
	return rw.w.Error()
}

// Package environ describes what a run ran on, for the appendix of a
// study: the load-generating hosts (read here, from the machine itself)
// and the database (product, version, topology and the benchmark schema
// as created, read from the server by its adapter). Run bundles record
// both; a suite's workbook lists them on its Environment sheet.
//
// A description is a record, never a condition of the run: whatever
// cannot be read is noted in the description and the run goes on.
package environ

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Host is one load-generating machine: the single host, or an agent's.
type Host struct {
	// Address is how the run reached the host: the agent address given
	// to --agents, or "local" for a single-host run.
	Address  string `json:"address,omitempty"`
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	// Cores counts logical CPUs; CPUModel is the first CPU's model name.
	Cores       int    `json:"cores"`
	CPUModel    string `json:"cpu_model,omitempty"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	// ClockSource is the kernel's current clocksource (tsc, hpet,
	// kvm-clock...): it decides what a nanosecond timestamp costs.
	ClockSource string `json:"clock_source,omitempty"`
	// FDLimit is the soft limit on open files (connections count).
	FDLimit uint64 `json:"fd_limit,omitempty"`
	// Errors says what could not be read.
	Errors []string `json:"errors,omitempty"`
}

// Database is a database server as its adapter read it.
type Database struct {
	// Adapter is the ycsbctl adapter that described it.
	Adapter string `json:"adapter"`
	// Product and Version are the server's own names ("Apache Cassandra",
	// "5.0.9").
	Product string `json:"product,omitempty"`
	Version string `json:"version,omitempty"`
	// Nodes is the topology: Cassandra nodes, HBase master and region
	// servers, MongoDB shards or replica set members.
	Nodes []Node `json:"nodes,omitempty"`
	// Partitions are the benchmark table's parts where the database
	// exposes them (HBase regions).
	Partitions []Partition `json:"partitions,omitempty"`
	// Schema is the benchmark schema as created, one setting a line
	// (keyspace replication, table options, column family options,
	// sharding).
	Schema []Setting `json:"schema,omitempty"`
	// DescribedBy is where the description was read from: "local", or
	// the address of the agent that read it.
	DescribedBy string `json:"described_by,omitempty"`
	// Error says why the description is missing or incomplete.
	Error string `json:"error,omitempty"`
}

// Node is one server of the database.
type Node struct {
	Address string `json:"address"`
	// Role is "node", "master", "region server", "shard", "PRIMARY"...
	Role string `json:"role,omitempty"`
	// Status is the server's own word for its state (UP, live, ...).
	Status     string `json:"status,omitempty"`
	DataCenter string `json:"datacenter,omitempty"`
	Rack       string `json:"rack,omitempty"`
	Version    string `json:"version,omitempty"`
	// Tokens are a Cassandra node's ring tokens.
	Tokens []string `json:"tokens,omitempty"`
	// Detail is anything else worth a line (regions served, host id).
	Detail string `json:"detail,omitempty"`
}

// Partition is one part of the benchmark table (an HBase region).
type Partition struct {
	Name  string `json:"name"`
	Start string `json:"start"`
	End   string `json:"end"`
	Node  string `json:"node,omitempty"`
}

// Setting is one line of a schema description.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// LocalHost describes this machine.
func LocalHost() Host {
	h := Host{Address: "local", OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
	var err error
	if h.Hostname, err = os.Hostname(); err != nil {
		h.Errors = append(h.Errors, "hostname: "+err.Error())
	}
	fail := func(what string, err error) { h.Errors = append(h.Errors, what+": "+err.Error()) }
	if runtime.GOOS != "linux" {
		h.Errors = append(h.Errors, "CPU model, memory, kernel and clock source are only read on Linux")
	} else {
		if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
			h.CPUModel = cpuModel(string(b))
		} else {
			fail("cpu model", err)
		}
		if b, err := os.ReadFile("/proc/meminfo"); err == nil {
			h.MemoryBytes = memTotal(string(b))
		} else {
			fail("memory", err)
		}
		if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
			h.Kernel = strings.TrimSpace(string(b))
		} else {
			fail("kernel", err)
		}
		if b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err == nil {
			h.ClockSource = strings.TrimSpace(string(b))
		} else {
			fail("clock source", err)
		}
	}
	if n, err := fdLimit(); err == nil {
		h.FDLimit = n
	} else {
		fail("file-descriptor limit", err)
	}
	return h
}

// cpuModel is the first "model name" of /proc/cpuinfo (x86), else its
// first "Model" or "cpu model" (ARM, MIPS).
func cpuModel(cpuinfo string) string {
	var fallback string
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			return strings.TrimSpace(v)
		case "Model", "cpu model", "Hardware":
			if fallback == "" {
				fallback = strings.TrimSpace(v)
			}
		}
	}
	return fallback
}

// memTotal reads MemTotal (kB) from /proc/meminfo, in bytes.
func memTotal(meminfo string) int64 {
	for _, line := range strings.Split(meminfo, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

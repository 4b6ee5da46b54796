package adapters

import "context"

// Telemetry capabilities: what a binding knows about its server that lets
// the load generator explain its numbers (package telemetry). Both are
// optional and found by type assertion on the opened DB.

// ServerProcess describes how one kind of database server process looks
// on its host.
type ServerProcess struct {
	// Role names the process for people: "cassandra", "hbase-master".
	Role string
	// Name matches the process name (/proc/PID/comm) exactly.
	Name string
	// MainClass matches a JVM whose command line runs this main class.
	MainClass string
	// Listen are the addresses ("host:port"; an empty host is any
	// address of the host) the adapter reaches this process at. When one
	// of them is on this host, only a process listening there is the
	// server: another of the same name or main class on the host (a
	// second cluster's node, another namespace's) is not. None on this
	// host, or none of the processes seen listening (their sockets cannot
	// be read), leaves the name or main class alone to decide.
	Listen []string
}

// ServerProcesses is implemented by bindings whose server runs as known
// processes (Cassandra and HBase JVMs by main class, mongod by name), so
// that an agent on a database host finds them without being told.
type ServerProcesses interface {
	ServerProcesses() []ServerProcess
}

// Host is what a load generator knows of the host it runs on, for a
// binding that reads its server's internals.
type Host struct {
	// Addrs are the host's own IP addresses, loopback included.
	Addrs []string
	// Roles are the server processes found on the host (ServerProcess.Role).
	Roles []string
	// Remote says no server process runs on this host and this load
	// generator is the one that reads a remote server's internals (a
	// single host, or agent 0 of a distributed run).
	Remote bool
}

// Local reports whether addr (a host, host:port or URL host) names one of
// the host's own addresses.
func (h Host) Local(addr string) bool {
	for _, a := range h.Addrs {
		if a == addr {
			return true
		}
	}
	return addr == "localhost"
}

// Metric is one figure of a server's internals. A Counter only grows
// (operations since the server started); the reader turns counters into
// rates per second between two readings.
type Metric struct {
	Name    string
	Value   float64
	Counter bool
}

// InternalsReading is one reading of a server's internals.
type InternalsReading struct {
	// Product names the server as it answered ("Cassandra 5.0.9",
	// "FerretDB 1.24.0"): a wire-compatible server is never named after
	// the product it imitates.
	Product string
	// Source says where the figures came from ("system_views on
	// 10.77.0.11", "JMX http://127.0.0.1:16030/jmx").
	Source  string
	Metrics []Metric
}

// Internals reads a server's internals on connections of its own, apart
// from the workers' pool. Read is called about once per interval from one
// goroutine; Close ends its connections. A Read that got some figures but
// not others returns them with an error naming what it could not read: the
// figures are kept and the error said once (a missing figure whose cause
// nobody sees is not found).
type Internals interface {
	Read(ctx context.Context) (InternalsReading, error)
	Close() error
}

// InternalsSource is implemented by bindings that can read their server's
// internals cheaply (Cassandra's system_views, HBase's JMX servlet,
// MongoDB's serverStatus). OpenInternals returns nil, nil when there is
// nothing to read for this host: no node of the server runs on it and it
// is not the host that reads a remote server (Host.Remote).
type InternalsSource interface {
	OpenInternals(ctx context.Context, host Host) (Internals, error)
}

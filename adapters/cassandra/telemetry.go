package cassandra

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/adapters"
)

var (
	_ adapters.ServerProcesses = (*DB)(nil)
	_ adapters.InternalsSource = (*DB)(nil)
)

// ServerProcesses: a Cassandra node is a JVM running CassandraDaemon, the
// one serving CQL at a contact point where one is on this host.
func (d *DB) ServerProcesses() []adapters.ServerProcess {
	var listen []string
	if d.cfg != nil {
		for _, h := range d.cfg.hosts {
			if _, _, err := net.SplitHostPort(h); err != nil {
				h = net.JoinHostPort(h, strconv.Itoa(d.cfg.port))
			}
			listen = append(listen, h)
		}
	}
	return []adapters.ServerProcess{{Role: "cassandra", MainClass: "org.apache.cassandra.service.CassandraDaemon", Listen: listen}}
}

// internalsPools are the thread pools whose queues explain latencies:
// writes, reads, client requests, compaction and memtable flushes.
var internalsPools = []string{"MutationStage", "ReadStage", "Native-Transport-Requests", "CompactionExecutor", "MemtableFlushWriter", "CounterMutationStage", "ViewMutationStage"}

// OpenInternals opens a session of one connection to the node on this
// host (a contact point that is one of the host's addresses, else the
// host's own addresses: a node listens on one of them), or, for the host
// that reads a remote cluster, to the first contact point. The session
// never looks up the ring, so its one host is the node it reads: virtual
// tables are node-local.
func (d *DB) OpenInternals(ctx context.Context, h adapters.Host) (adapters.Internals, error) {
	c := d.cfg
	if c == nil {
		return nil, errors.New("no configuration")
	}
	var contact string
	for _, host := range c.hosts {
		if h.Local(hostPart(host)) {
			contact = host
			break
		}
	}
	hasNode := false
	for _, r := range h.Roles {
		hasNode = hasNode || r == "cassandra"
	}
	cl := gocql.NewCluster()
	switch {
	case contact != "":
		cl.Hosts = []string{contact}
	case hasNode:
		// The node here is not a contact point (the ring was reached
		// through another node): it listens on one of the host's own
		// addresses, its own address before loopback. A filter on the
		// ring would not do: gocql's control connection goes to a
		// contact point first, and a filter refuses it.
		for _, a := range h.Addrs {
			if ip := net.ParseIP(a); ip != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
				cl.Hosts = append(cl.Hosts, a)
			}
		}
		cl.Hosts = append(cl.Hosts, "127.0.0.1")
	case h.Remote:
		cl.Hosts = c.hosts[:1]
	default:
		return nil, nil
	}
	cl.DisableInitialHostLookup = true
	cl.Port = c.port
	cl.NumConns = 1
	cl.ConnectTimeout = c.connectTimeout
	cl.Timeout = c.readTimeout
	cl.Consistency = gocql.One
	cl.ReconnectInterval = 5 * time.Second
	if c.tls != nil {
		cl.SslOpts = &gocql.SslOptions{Config: c.tls, EnableHostVerification: !c.tls.InsecureSkipVerify}
	}
	if c.username != "" {
		cl.Authenticator = gocql.PasswordAuthenticator{Username: c.username, Password: c.password}
	}
	type result struct {
		s   *gocql.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := cl.CreateSession()
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		return &internals{s: r.s, keyspace: c.keyspace}, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.s != nil {
				r.s.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

func hostPart(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// internals reads one node's system_views.
type internals struct {
	s        *gocql.Session
	keyspace string // the benchmark's (cassandra.keyspace)
	product  string
	node     string
}

func (in *internals) Close() error {
	in.s.Close()
	return nil
}

// Read takes thread pools (pending and blocked tasks, completed as a
// counter), compactions (the compaction executor's queue: Cassandra's
// pending compactions; running ones from sstable_tasks), data on disk
// (disk_usage: the node's and the benchmark keyspace's) and the key
// cache's hit ratio. A table that cannot be read is left out and named in
// the error that comes with the rest.
func (in *internals) Read(ctx context.Context) (adapters.InternalsReading, error) {
	if in.product == "" {
		var v string
		var addr net.IP
		if err := in.s.Query("SELECT release_version, rpc_address FROM system.local").ScanContext(ctx, &v, &addr); err != nil {
			return adapters.InternalsReading{}, err
		}
		in.product, in.node = "Cassandra "+v, addr.String()
	}
	r := adapters.InternalsReading{Product: in.product, Source: "system_views on " + in.node}
	var errs []string
	var pending, blocked float64
	iter := in.s.Query("SELECT name, active_tasks, pending_tasks, blocked_tasks, completed_tasks FROM system_views.thread_pools").IterContext(ctx)
	var name string
	var active, pend, blk int64
	var completed int64
	for iter.Scan(&name, &active, &pend, &blk, &completed) {
		pending += float64(pend)
		blocked += float64(blk)
		for _, p := range internalsPools {
			if name == p {
				r.Metrics = append(r.Metrics, adapters.Metric{Name: "thread_pool." + name + ".active", Value: float64(active)},
					adapters.Metric{Name: "thread_pool." + name + ".pending", Value: float64(pend)},
					adapters.Metric{Name: "thread_pool." + name + ".blocked", Value: float64(blk)},
					adapters.Metric{Name: "thread_pool." + name + ".completed", Value: float64(completed), Counter: true})
				if name == "CompactionExecutor" {
					r.Metrics = append(r.Metrics, adapters.Metric{Name: "compactions_pending", Value: float64(pend)})
				}
			}
		}
	}
	if err := iter.Close(); err != nil {
		errs = append(errs, "thread_pools: "+err.Error())
	} else {
		r.Metrics = append(r.Metrics, adapters.Metric{Name: "thread_pools.pending", Value: pending}, adapters.Metric{Name: "thread_pools.blocked", Value: blocked})
	}
	var running float64
	iter = in.s.Query("SELECT kind FROM system_views.sstable_tasks").IterContext(ctx)
	var kind string
	for iter.Scan(&kind) {
		if strings.Contains(strings.ToLower(kind), "compaction") {
			running++
		}
	}
	if err := iter.Close(); err != nil {
		errs = append(errs, "sstable_tasks: "+err.Error())
	} else {
		r.Metrics = append(r.Metrics, adapters.Metric{Name: "compactions_running", Value: running})
	}
	// disk_usage has a row per table: its SSTables' bytes on disk
	// (TableMetrics.totalDiskSpaceUsed, which counts compacted SSTables
	// not yet deleted), rounded up to whole MiB by the server. Memtables
	// and the commit log are not in it: a load shows there once flushed.
	// The column is a bigint: scanned into a float64, every read failed
	// ("can not unmarshal int-like into *float64").
	var ks string
	var mib, total, bench int64
	iter = in.s.Query("SELECT keyspace_name, mebibytes FROM system_views.disk_usage").IterContext(ctx)
	for iter.Scan(&ks, &mib) {
		total += mib
		if ks == in.keyspace {
			bench += mib
		}
	}
	if err := iter.Close(); err != nil {
		errs = append(errs, "disk_usage: "+err.Error())
	} else {
		r.Metrics = append(r.Metrics, adapters.Metric{Name: "disk_usage_bytes", Value: float64(total << 20)},
			adapters.Metric{Name: "keyspace_disk_usage_bytes", Value: float64(bench << 20)})
	}
	var ratio float64
	iter = in.s.Query("SELECT hit_ratio FROM system_views.caches WHERE name = 'keys'").IterContext(ctx)
	if iter.Scan(&ratio) && !math.IsNaN(ratio) {
		r.Metrics = append(r.Metrics, adapters.Metric{Name: "key_cache.hit_ratio", Value: ratio})
	}
	if err := iter.Close(); err != nil {
		errs = append(errs, "caches: "+err.Error())
	}
	if len(errs) > 0 {
		return r, fmt.Errorf("system_views: %s", strings.Join(errs, "; "))
	}
	return r, nil
}

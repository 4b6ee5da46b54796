package hbase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// HBase's own names of the daemons' web UI ports, whose /jmx servlet
// serves the figures telemetry reads.
const (
	propMasterInfoPort = "hbase.master.info.port"
	propRSInfoPort     = "hbase.regionserver.info.port"
)

var (
	_ adapters.ServerProcesses = (*DB)(nil)
	_ adapters.InternalsSource = (*DB)(nil)
)

// jmxPorts are the info ports of the master and the region servers.
type jmxPorts struct{ master, regionServer int }

func parseJMXPorts(p *properties.Properties) (jmxPorts, error) {
	var j jmxPorts
	for _, x := range []struct {
		prop string
		def  int64
		into *int
	}{{propMasterInfoPort, 16010, &j.master}, {propRSInfoPort, 16030, &j.regionServer}} {
		v, err := p.Int64(x.prop, x.def)
		if err != nil {
			return j, err
		}
		if v < -1 || v == 0 || v > 65535 {
			return j, &properties.Error{Property: x.prop, Value: strconv.FormatInt(v, 10), Expected: "the daemon's web UI port (1-65535), or -1 where it is off"}
		}
		*x.into = int(v)
	}
	return j, nil
}

// ServerProcesses: the master and region servers are JVMs by main class
// (standalone HBase runs both in the master's JVM), each the one serving
// its web UI port on this host (where the JMX servlet is read).
func (d *DB) ServerProcesses() []adapters.ServerProcess {
	return []adapters.ServerProcess{
		{Role: "hbase-master", MainClass: "org.apache.hadoop.hbase.master.HMaster", Listen: anyAddr(d.jmx.master)},
		{Role: "hbase-regionserver", MainClass: "org.apache.hadoop.hbase.regionserver.HRegionServer", Listen: anyAddr(d.jmx.regionServer)},
	}
}

// anyAddr is port on any address of the host; none for a port that is off (-1).
func anyAddr(port int) []string {
	if port <= 0 {
		return nil
	}
	return []string{net.JoinHostPort("", strconv.Itoa(port))}
}

// OpenInternals finds the JMX servlets of the HBase daemons on this host
// (their info ports, on the loopback address or one of the host's), or,
// for the host that reads a remote cluster, the master's on the first
// ZooKeeper host (where a small cluster usually runs it).
func (d *DB) OpenInternals(ctx context.Context, h adapters.Host) (adapters.Internals, error) {
	type target struct {
		role  string
		hosts []string
		port  int
	}
	var targets []target
	local := []string{"127.0.0.1"}
	for _, a := range h.Addrs {
		if ip := net.ParseIP(a); ip != nil && !ip.IsLoopback() && ip.To4() != nil {
			local = append(local, a)
		}
	}
	for _, r := range h.Roles {
		switch r {
		case "hbase-master":
			targets = append(targets, target{"master", local, d.jmx.master})
		case "hbase-regionserver":
			targets = append(targets, target{"regionserver", local, d.jmx.regionServer})
		}
	}
	if len(targets) == 0 {
		if !h.Remote {
			return nil, nil
		}
		zk := strings.Split(d.quorum, ",")[0]
		if host, _, err := net.SplitHostPort(zk); err == nil {
			zk = host
		}
		targets = append(targets, target{"master", []string{zk}, d.jmx.master})
	}
	in := &internals{client: &http.Client{}}
	var errs []string
	for _, t := range targets {
		if t.port < 0 {
			errs = append(errs, fmt.Sprintf("the %s's info port is off (%s or %s -1)", t.role, propMasterInfoPort, propRSInfoPort))
			continue
		}
		var found string
		var last error
		for _, host := range t.hosts {
			url := "http://" + net.JoinHostPort(host, strconv.Itoa(t.port)) + "/jmx"
			if _, err := in.beans(ctx, url, "java.lang:type=Runtime"); err != nil {
				last = err
				continue
			}
			found = url
			break
		}
		if found == "" {
			errs = append(errs, fmt.Sprintf("no %s JMX servlet on port %d (%v; set %s/%s to the daemons' info ports)", t.role, t.port, last, propMasterInfoPort, propRSInfoPort))
			continue
		}
		in.endpoints = append(in.endpoints, endpoint{role: t.role, url: found})
	}
	if len(in.endpoints) == 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return in, nil
}

type endpoint struct{ role, url string }

// internals reads the daemons' JMX JSON over HTTP (each its own
// connection, apart from gohbase's RPC connections).
type internals struct {
	client    *http.Client
	endpoints []endpoint
	product   string
}

func (in *internals) Close() error {
	in.client.CloseIdleConnections()
	return nil
}

// beans fetches the beans matching qry from a /jmx servlet.
func (in *internals) beans(ctx context.Context, url, qry string) ([]map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"?qry="+qry, nil)
	if err != nil {
		return nil, err
	}
	resp, err := in.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	var body struct {
		Beans []map[string]any `json:"beans"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return body.Beans, nil
}

// jmxMetric maps a bean attribute to a metric.
type jmxMetric struct {
	attr, name string
	counter    bool
}

// The region server's memstore, block cache, queues and requests, the
// master's view of the cluster, and every daemon's garbage collection.
var (
	rsServer = []jmxMetric{
		{"memStoreSize", "memstore_bytes", false},
		{"blockCacheCountHitPercent", "block_cache_hit_pct", false},
		{"blockCacheSize", "block_cache_bytes", false},
		{"compactionQueueLength", "compaction_queue", false},
		{"flushQueueLength", "flush_queue", false},
		{"regionCount", "regions", false},
		{"storeFileCount", "store_files", false},
		{"storeFileSize", "store_file_bytes", false},
		{"readRequestCount", "read_requests", true},
		{"writeRequestCount", "write_requests", true},
	}
	masterServer = []jmxMetric{
		{"numRegionServers", "region_servers", false},
		{"numDeadRegionServers", "dead_region_servers", false},
		{"averageLoad", "average_load", false},
	}
	jvm = []jmxMetric{
		{"GcTimeMillis", "gc_time_ms", true},
		{"GcCount", "gcs", true},
		{"MemHeapUsedM", "heap_used_mb", false},
	}
)

// Read takes every endpoint's beans; an endpoint that fails is named in
// the error only when nothing could be read.
func (in *internals) Read(ctx context.Context) (adapters.InternalsReading, error) {
	r := adapters.InternalsReading{Product: "HBase"}
	var sources, errs []string
	for _, ep := range in.endpoints {
		n, failed := len(r.Metrics), len(errs)
		for _, q := range []struct {
			qry    string
			prefix string
			ms     []jmxMetric
		}{
			{"Hadoop:service=HBase,name=RegionServer,sub=Server", "regionserver.", rsServer},
			{"Hadoop:service=HBase,name=Master,sub=Server", "master.", masterServer},
			{"Hadoop:service=HBase,name=JvmMetrics", ep.role + ".jvm.", jvm},
		} {
			beans, err := in.beans(ctx, ep.url, q.qry)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			for _, b := range beans {
				for _, m := range q.ms {
					if v, ok := b[m.attr].(float64); ok {
						r.Metrics = append(r.Metrics, adapters.Metric{Name: q.prefix + m.name, Value: v, Counter: m.counter})
					}
				}
				if v, ok := b["tag.Version"].(string); ok && in.product == "" {
					in.product = "HBase " + v
				}
			}
		}
		switch {
		case len(r.Metrics) > n:
			sources = append(sources, ep.url)
		case len(errs) == failed:
			// A daemon serves /jmx some seconds before it registers
			// its HBase beans.
			errs = append(errs, "no HBase beans yet at "+ep.url)
		}
	}
	if in.product == "" {
		in.product = in.version(ctx)
	}
	r.Product = in.product
	r.Source = "JMX " + strings.Join(sources, ", ")
	sort.Slice(r.Metrics, func(i, j int) bool { return r.Metrics[i].Name < r.Metrics[j].Name })
	if len(r.Metrics) == 0 {
		return r, fmt.Errorf("JMX: %s", strings.Join(errs, "; "))
	}
	return r, nil
}

// version reads the HBase version from the Info bean of the first
// endpoint that has one; "HBase" when none says.
func (in *internals) version(ctx context.Context) string {
	for _, ep := range in.endpoints {
		for _, qry := range []string{"Hadoop:service=HBase,name=Info", "Hadoop:service=HBase,name=RegionServer,sub=Server"} {
			beans, err := in.beans(ctx, ep.url, qry)
			if err != nil {
				continue
			}
			for _, b := range beans {
				for _, k := range []string{"version", "Version", "tag.version"} {
					if v, ok := b[k].(string); ok && v != "" {
						return "HBase " + v
					}
				}
			}
		}
	}
	// HBase 2.x registers no bean with its version, but the configuration
	// servlet beside /jmx lists hbase.defaults.for.version: the version
	// the running HBase's defaults were built for (it refuses to start
	// with defaults of another).
	for _, ep := range in.endpoints {
		if v := in.confVersion(ctx, strings.TrimSuffix(ep.url, "/jmx")+"/conf?format=json"); v != "" {
			return "HBase " + v
		}
	}
	return "HBase"
}

// confVersion reads hbase.defaults.for.version from a /conf servlet
// (about 200 KB: read once per run).
func (in *internals) confVersion(ctx context.Context, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ""
	}
	resp, err := in.client.Do(req)
	if err != nil {
		return ""
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	var body struct {
		Properties []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"properties"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&body); err != nil {
		return ""
	}
	for _, p := range body.Properties {
		if p.Key == "hbase.defaults.for.version" {
			return p.Value
		}
	}
	return ""
}

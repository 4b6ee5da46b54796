package mongodb

import (
	"context"
	"errors"
	"net"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/ycsbctl/ycsbctl/adapters"
)

var (
	_ adapters.ServerProcesses = (*DB)(nil)
	_ adapters.InternalsSource = (*DB)(nil)
)

// ServerProcesses: mongod, mongos and FerretDB by process name, the one
// listening at a host of the connection string where one is on this host.
func (d *DB) ServerProcesses() []adapters.ServerProcess {
	var listen []string
	if d.cfg != nil && d.cfg.cs != nil && d.cfg.cs.Scheme != connstring.SchemeMongoDBSRV {
		for _, hp := range d.cfg.cs.Hosts {
			if _, _, err := net.SplitHostPort(hp); err != nil {
				hp = net.JoinHostPort(hp, "27017")
			}
			listen = append(listen, hp)
		}
	}
	return []adapters.ServerProcess{{Role: "mongod", Name: "mongod", Listen: listen}, {Role: "mongos", Name: "mongos", Listen: listen},
		{Role: "ferretdb", Name: "ferretdb", Listen: listen}}
}

// OpenInternals opens a client of its own, one connection, to the server
// on this host (a host of the connection string that is one of this
// host's addresses, connected to directly), or for the host that reads a
// remote server, to the connection string's servers as the workers are.
func (d *DB) OpenInternals(ctx context.Context, h adapters.Host) (adapters.Internals, error) {
	var local string
	for _, hp := range d.cfg.cs.Hosts {
		host := hp
		if x, _, err := net.SplitHostPort(hp); err == nil {
			host = x
		}
		if h.Local(host) {
			local = hp
			break
		}
	}
	opts := options.Client().ApplyURI(d.cfg.url).SetMaxPoolSize(1).SetAppName("ycsbctl-telemetry").SetConnectTimeout(d.cfg.connectTimeout)
	switch {
	case local != "":
		opts.SetHosts([]string{local}).SetDirect(true)
	case h.Remote:
	default:
		return nil, nil
	}
	c, err := mongo.Connect(opts)
	if err != nil {
		return nil, errors.New(d.cfg.scrub(err.Error()))
	}
	return &internals{c: c, scrub: d.cfg.scrub, node: firstOr(local, d.cfg.redactedURL)}, nil
}

func firstOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

type internals struct {
	c     *mongo.Client
	scrub func(string) string
	node  string
}

func (in *internals) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return in.c.Disconnect(ctx)
}

// serverStatus fields read, by path, as a mongod 7.0 reports them:
// opcounters (counters), the WiredTiger cache, connections, the global
// lock's queues and active clients, resident memory. A mongos has no
// storage engine: its reply lacks the cache, and those figures are left
// out rather than read as zero.
var mongoStatus = []struct {
	path    []string
	name    string
	counter bool
}{
	{[]string{"opcounters", "insert"}, "opcounters.insert", true},
	{[]string{"opcounters", "query"}, "opcounters.query", true},
	{[]string{"opcounters", "update"}, "opcounters.update", true},
	{[]string{"opcounters", "delete"}, "opcounters.delete", true},
	{[]string{"opcounters", "getmore"}, "opcounters.getmore", true},
	{[]string{"opcounters", "command"}, "opcounters.command", true},
	{[]string{"wiredTiger", "cache", "bytes currently in the cache"}, "cache_bytes", false},
	{[]string{"wiredTiger", "cache", "tracked dirty bytes in the cache"}, "cache_dirty_bytes", false},
	{[]string{"wiredTiger", "cache", "maximum bytes configured"}, "cache_max_bytes", false},
	{[]string{"connections", "current"}, "connections.current", false},
	{[]string{"connections", "available"}, "connections.available", false},
	{[]string{"globalLock", "currentQueue", "readers"}, "queued.readers", false},
	{[]string{"globalLock", "currentQueue", "writers"}, "queued.writers", false},
	{[]string{"globalLock", "activeClients", "readers"}, "active.readers", false},
	{[]string{"globalLock", "activeClients", "writers"}, "active.writers", false},
	{[]string{"mem", "resident"}, "mem.resident_mb", false},
}

// ticketSections are where a server reports its storage-engine tickets
// (the operations admitted into the storage engine at once; none
// available means operations queue for one): 7.0 and earlier under
// wiredTiger.concurrentTransactions, which 7.0 sizes dynamically; later
// servers moved the same read and write documents to queues.execution.
// The first section present is read.
var ticketSections = [][]string{{"wiredTiger", "concurrentTransactions"}, {"queues", "execution"}}

// Read runs serverStatus.
func (in *internals) Read(ctx context.Context) (adapters.InternalsReading, error) {
	raw, err := in.c.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
	if err != nil {
		return adapters.InternalsReading{}, errors.New(in.scrub(err.Error()))
	}
	return statusReading(raw, in.node), nil
}

// statusReading turns a serverStatus reply into a reading. FerretDB
// answers serverStatus in part (its own command counters, no opcounters
// or cache): what it gives is recorded under its own name, never as
// MongoDB's.
func statusReading(raw bson.Raw, node string) adapters.InternalsReading {
	r := adapters.InternalsReading{Source: "serverStatus on " + node}
	version, _ := raw.Lookup("version").StringValueOK()
	if fv, ok := raw.Lookup("ferretdbVersion").StringValueOK(); ok {
		r.Product = "FerretDB " + fv
		if version != "" {
			r.Product += " (answering as MongoDB " + version + ")"
		}
		// Its command counters stand in for opcounters.
		if cmds, ok := raw.Lookup("metrics", "commands").DocumentOK(); ok {
			elems, _ := cmds.Elements()
			for _, e := range elems {
				if v, ok := e.Value().Document().Lookup("total").AsFloat64OK(); ok {
					r.Metrics = append(r.Metrics, adapters.Metric{Name: "commands." + e.Key(), Value: v, Counter: true})
				}
			}
		}
		if v, ok := raw.Lookup("catalogStats", "collections").AsFloat64OK(); ok {
			r.Metrics = append(r.Metrics, adapters.Metric{Name: "collections", Value: v})
		}
	} else {
		r.Product = strings.TrimSpace("MongoDB " + version)
		if p, ok := raw.Lookup("process").StringValueOK(); ok && p == "mongos" {
			r.Product += " (mongos)"
		}
	}
	for _, f := range mongoStatus {
		if v, ok := raw.Lookup(f.path...).AsFloat64OK(); ok {
			r.Metrics = append(r.Metrics, adapters.Metric{Name: f.name, Value: v, Counter: f.counter})
		}
	}
	for _, sec := range ticketSections {
		doc, ok := raw.Lookup(sec...).DocumentOK()
		if !ok {
			continue
		}
		for _, rw := range []string{"read", "write"} {
			for _, k := range []string{"out", "available"} {
				if v, ok := doc.Lookup(rw, k).AsFloat64OK(); ok {
					r.Metrics = append(r.Metrics, adapters.Metric{Name: "tickets." + rw + "." + k, Value: v})
				}
			}
		}
		break
	}
	sort.Slice(r.Metrics, func(i, j int) bool { return r.Metrics[i].Name < r.Metrics[j].Name })
	return r
}

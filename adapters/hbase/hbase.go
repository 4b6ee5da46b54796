// Package hbase is the Apache HBase binding, compatible with YCSB's
// HBaseClient2 ("hbase2"): row key = YCSB key, one column family (the
// required `columnfamily` property), qualifier = field name, value = field
// value, so data loaded by either tool is readable by the other.
//
// It uses gohbase (a pure-Go HBase client that speaks to ZooKeeper and the
// RegionServers directly). gohbase can wait forever for an unavailable
// region when a call has no deadline, so every call here carries one
// (`hbase.timeout`).
package hbase

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// Property names, as YCSB's HBaseClient2 and hbase-site.xml spell them.
const (
	propTable          = "table"
	propColumnFamily   = "columnfamily"
	propQuorum         = "hbase.zookeeper.quorum"
	propHosts          = "hosts"
	propClientPort     = "hbase.zookeeper.property.clientPort"
	propZnodeParent    = "zookeeper.znode.parent"
	propClientBuffer   = "clientbuffering"
	propWriteBuffer    = "writebuffersize"
	propDurability     = "durability"
	propTimeout        = "hbase.timeout"
	propUsePageFilter  = "hbase.usepagefilter"
	propFieldCount     = "fieldcount"
	propPresplitN      = "hbase.presplit.regions"
	propPresplitKeys   = "hbase.presplit.keys"
	propRPCQueueSize   = "hbase.rpcqueuesize"
	propFlushInterval  = "hbase.flushintervalmillis"
	propBatchParallel  = "hbase.batchparallelism"
	propKerberosPrinc  = "principal"
	propKerberosKeytab = "keytab"
	propScanValueFilt  = "hbase.usescanvaluefiltering"
	propScanFilterOp   = "hbase.scanfilteroperator"
	propScanFilterVal  = "hbase.scanfiltervalue"
	propCompression    = "hbase.compression"
	propBlockEncoding  = "hbase.datablockencoding"
	propBlockCache     = "hbase.blockcache"
	propInMemory       = "hbase.inmemory"
	propMaxFileSize    = "hbase.maxfilesize"
)

const (
	defaultTimeout       = 10000 // ms
	defaultWriteBuffer   = 12 * 1024 * 1024
	defaultPresplit      = 10
	defaultBatchParallel = 64
)

func init() {
	// gohbase logs every new region client at INFO through the global
	// logrus logger; that would interleave with benchmark output. During an
	// outage it also logs an error per failed region lookup, i.e. per
	// operation: those are rate-limited (the binding reports failures
	// itself, see fail).
	logrus.SetLevel(logrus.WarnLevel)
	logrus.SetOutput(&limitedWriter{w: os.Stderr, per: errLogInterval, burst: 5})
	adapters.Register(adapters.Info{
		Name:    "hbase",
		Aliases: []string{"hbase2", "hbase1", "hbase10", "hbase12", "hbase14", "hbase20"},
		Classes: []string{
			"site.ycsb.db.hbase2.HBaseClient2", "site.ycsb.db.hbase1.HBaseClient1",
			"site.ycsb.db.HBaseClient10", "com.yahoo.ycsb.db.HBaseClient10",
			"site.ycsb.db.hbase12.HBaseClient12", "com.yahoo.ycsb.db.hbase12.HBaseClient12",
			"site.ycsb.db.hbase14.HBaseClient14", "com.yahoo.ycsb.db.hbase14.HBaseClient14",
			"site.ycsb.db.hbase20.HBaseClient20", "com.yahoo.ycsb.db.hbase20.HBaseClient20",
			"site.ycsb.db.HBaseClient", "com.yahoo.ycsb.db.HBaseClient",
		},
		Description: "Apache HBase via gohbase, compatible with YCSB's hbase2 binding",
		Properties: []properties.Known{
			{Name: propTable, Default: "usertable", Help: "table"},
			{Name: propColumnFamily, Help: "column family holding the fields (required)"},
			{Name: propQuorum, Default: "127.0.0.1", Help: "ZooKeeper quorum, comma list of host or host:port"},
			{Name: propHosts, Help: "used as the ZooKeeper quorum when hbase.zookeeper.quorum is unset"},
			{Name: propClientPort, Default: "2181", Help: "ZooKeeper port for quorum hosts without one"},
			{Name: propZnodeParent, Default: "/hbase", Help: "HBase root znode"},
			{Name: propClientBuffer, Default: "false", Help: "true: each client thread buffers its puts and deletes (YCSB's BufferedMutator): a write returns once buffered; the buffer is sent when it reaches writebuffersize and at cleanup"},
			{Name: propWriteBuffer, Default: strconv.Itoa(defaultWriteBuffer), Help: "with clientbuffering: bytes (HBase heap-size estimate) buffered per thread before it is sent"},
			{Name: propDurability, Default: "USE_DEFAULT", Help: "USE_DEFAULT, SKIP_WAL, ASYNC_WAL, SYNC_WAL or FSYNC_WAL for puts and deletes"},
			{Name: propUsePageFilter, Default: "true", Help: "scans add a PageFilter so regions stop after the requested rows"},
			{Name: propScanValueFilt, Default: "false", Help: "true: scans add a ValueFilter (hbase.scanfilteroperator, hbase.scanfiltervalue), as YCSB"},
			{Name: propScanFilterOp, Default: "less_or_equal", Help: "ValueFilter comparison: less, less_or_equal, equal, not_equal, greater_or_equal, greater, no_op"},
			{Name: propScanFilterVal, Default: defaultScanFilterValue, Help: "ValueFilter operand as hex (binary comparison); default 0x7F then 99 0xFF bytes"},
			{Name: propTimeout, Default: strconv.Itoa(defaultTimeout), Help: "per-call timeout in ms (ycsbctl addition: gohbase waits forever without one)"},
			{Name: propFieldCount, Default: "10", Help: "accepted for compatibility (HBase rows are schemaless)"},
			{Name: propPresplitN, Default: strconv.Itoa(defaultPresplit), Schema: true, Help: "init: number of regions, split evenly over hashed YCSB keys"},
			{Name: propPresplitKeys, Schema: true, Help: "init: explicit comma list of split keys, e.g. user1,user2,...,user9 (overrides hbase.presplit.regions)"},
			{Name: propCompression, Default: "NONE", Schema: true, Help: "init: column family compression (NONE, GZ; SNAPPY, LZ4, ZSTD, LZO, BZIP2 need codecs on the servers)"},
			{Name: propBlockEncoding, Default: "NONE", Schema: true, Help: "init: data block encoding: NONE, PREFIX, DIFF, FAST_DIFF or ROW_INDEX_V1"},
			{Name: propBlockCache, Default: "true", Schema: true, Help: "init: cache the family's data blocks on read"},
			{Name: propInMemory, Default: "false", Schema: true, Help: "init: give the family's blocks in-memory priority in the block cache"},
			{Name: propMaxFileSize, Schema: true, Help: "init: table MAX_FILESIZE in bytes, the store size at which a region splits (default: the server's hbase.hregion.max.filesize)"},
			{Name: propRPCQueueSize, Help: "override gohbase's RPC queue size (advanced)"},
			{Name: propFlushInterval, Help: "override gohbase's flush interval in ms (advanced)"},
			{Name: propBatchParallel, Default: strconv.Itoa(defaultBatchParallel), Help: "puts in flight per BatchInsert call or buffer flush"},
			{Name: propMasterInfoPort, Default: "16010", Help: "telemetry: the master's web UI port, whose /jmx is read once per interval (-1: off)"},
			{Name: propRSInfoPort, Default: "16030", Help: "telemetry: the region servers' web UI port, whose /jmx is read once per interval (-1: off)"},
			{Name: propKerberosPrinc, Help: "Kerberos principal: not supported (an error when set)"},
			{Name: propKerberosKeytab, Help: "Kerberos keytab: not supported (an error when set)"},
		},
		Differences: []string{
			"clientbuffering: gohbase has no BufferedMutator; ycsbctl keeps a per-thread buffer of puts and deletes, flushed at writebuffersize bytes (HBase's heap-size estimate of the mutations) and at cleanup by sending them concurrently so that gohbase batches them per RegionServer. Failed buffered writes are retried by gohbase until hbase.timeout, then counted and reported (the insert that triggered the flush, or cleanup, fails).",
			"clientbuffering: YCSB also records the cleanup flush as an UPDATE sample; ycsbctl records it only as CLEANUP, so UPDATE counts equal the operations issued.",
			"batchsize: YCSB's HBase binding ignores it (each insert is its own put and INSERT sample); ycsbctl's load with batchsize > 1 sends a batch as concurrent puts and records one INSERT sample per batch, so leave batchsize at 1 (or use clientbuffering) to compare with YCSB.",
			"principal/keytab: Kerberos is not supported by gohbase; setting them is an error instead of a login.",
			"debug: YCSB's per-operation printing is not implemented (it would distort timings).",
			"hbase.timeout, hbase.rpcqueuesize, hbase.flushintervalmillis, hbase.batchparallelism are ycsbctl additions (gohbase's knobs); HBase client settings of hbase-site.xml other than the ZooKeeper ones are not read.",
			"Schema: YCSB's binding creates nothing; ycsbctl init creates the table with one version per cell and HBase's defaults (DATA_BLOCK_ENCODING NONE, not gohbase's FAST_DIFF) unless the hbase.* init properties say otherwise.",
		},
		Driver: adapters.DriverFunc(open),
		Check:  check,
	})
}

// DB is the HBase binding; safe for concurrent use (gohbase multiplexes all
// calls over one connection per RegionServer).
type DB struct {
	client gohbase.Client
	// rpc sends the workers' own calls (worker.go); nil if the client
	// cannot, and then workers share the DB.
	rpc        gohbase.RPCClient
	quorum     string
	znode      string
	opts       []gohbase.Option
	table      string
	tableBytes []byte
	family     string
	// wholeFamily asks for every qualifier of the family (a read or scan
	// of all fields); made once, since gohbase only reads it.
	wholeFamily map[string][]string
	familyBytes []byte
	timeout     time.Duration
	durability  hrpc.DurabilityType
	pageFilter  bool
	// valueFilter is YCSB's optional scan ValueFilter (nil: off).
	valueFilter filter.Filter
	buffering   bool
	writeBuffer int64
	// failedBuffered counts buffered writes that could not be written.
	failedBuffered atomic.Int64
	batchPar       int
	names          nameInterner
	errLog         errLimiter

	adminMu sync.Mutex
	admin   gohbase.AdminClient
	// jmx are the daemons' info ports, for telemetry (telemetry.go).
	jmx jmxPorts
}

var (
	_ adapters.DB            = (*DB)(nil)
	_ adapters.Closer        = (*DB)(nil)
	_ adapters.SchemaManager = (*DB)(nil)
	_ adapters.RecordCounter = (*DB)(nil)
	_ adapters.BatchInserter = (*DB)(nil)
	_ adapters.ProcsAdvisor  = (*DB)(nil)
)

func open(ctx context.Context, p *properties.Properties) (adapters.DB, error) {
	d, err := configure(p)
	if err != nil {
		return nil, err
	}
	d.client = gohbase.NewClient(d.quorum, d.opts...)
	d.rpc, _ = d.client.(gohbase.RPCClient)

	// gohbase connects lazily; Open must fail on an unreachable cluster, so
	// locate hbase:meta now (ZooKeeper, then the RegionServer holding meta).
	pctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	get, err := hrpc.NewGetStr(pctx, "hbase:meta", "ycsbctl-probe")
	if err == nil {
		_, err = d.client.Get(get)
	}
	if err != nil {
		d.client.Close()
		return nil, fmt.Errorf("hbase: cannot reach HBase through ZooKeeper %s (property %s): %w", d.quorum, propQuorum, err)
	}
	return d, nil
}

// Close closes the client. The admin client (made by schema calls) is only
// dropped: this gohbase version's admin client panics in Close (it never
// creates the channel Close closes); its one master connection goes with
// the process.
func (d *DB) Close() error {
	d.client.Close()
	d.adminMu.Lock()
	d.admin = nil
	d.adminMu.Unlock()
	return nil
}

// opCtx bounds every call by hbase.timeout (or the caller's earlier
// deadline): gohbase otherwise waits forever for an unavailable region.
func (d *DB) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d.timeout)
}

// Procs implements adapters.ProcsAdvisor: one P per 32 workers, as for
// Cassandra and MongoDB. Every call is handed to gohbase's region client
// goroutines and its result back, and with a second P each hand-off wakes
// the idle one (a futex call, then a spinning thread that goes back to
// sleep). Against one HBase 2.6.4 region server, workload A, 16 threads,
// 100k operations (2-core machine, load 6-8 from other work): client CPU
// per operation 34.9 / 30.3 / 48.9 us with two Ps against 24.5 / 26.4 /
// 26.8 us with one (alternating runs), throughput 15-16k against 9-16k
// ops/s, voluntary context switches 1.6-2.9 -> 0.7-1.0 per operation and
// system calls 6.4 -> 4.0 per operation (strace -f -c: futex 0.99 ->
// 0.11, nanosleep 1.05 -> 0.26, epoll_pwait 1.28 -> 0.40). An earlier
// measurement, before the worker's calls were reused (bd9937d), found one
// P no better; it is now clearly so.
func (d *DB) Procs(workers int) int { return adapters.NetworkProcs(workers) }

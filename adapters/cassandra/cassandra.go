// Package cassandra is the Apache Cassandra binding, compatible with YCSB's
// CassandraCQLClient ("cassandra-cql"): same properties, same table layout
// (y_id varchar PRIMARY KEY, field0..fieldN varchar) and the same CQL for
// each operation, so data loaded by either tool is readable by the other.
//
// It uses the Apache gocql driver (v2) with a token-aware host policy. CQL
// text is built once per (operation, table, field list) and cached; gocql
// then prepares each distinct statement once per connection and reuses it.
// Each worker (see ForWorker) keeps one gocql query per statement and binds
// reused arguments to it, so the adapter adds no allocation per operation
// to gocql's own.
package cassandra

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// Property names, as YCSB's CassandraCQLClient spells them.
const (
	propHosts          = "hosts"
	propPort           = "port"
	propKeyspace       = "cassandra.keyspace"
	propTable          = "table"
	propUsername       = "cassandra.username"
	propPassword       = "cassandra.password"
	propReadCL         = "cassandra.readconsistencylevel"
	propWriteCL        = "cassandra.writeconsistencylevel"
	propMaxConns       = "cassandra.maxconnections"
	propCoreConns      = "cassandra.coreconnections"
	propConnectTimeout = "cassandra.connecttimeoutmillis"
	propReadTimeout    = "cassandra.readtimeoutmillis"
	propTracing        = "cassandra.tracing"
	propFieldCount     = "fieldcount"
	propFieldPrefix    = "fieldnameprefix"
	propReplClass      = "cassandra.replication.class"
	propReplFactor     = "cassandra.replicationfactor"
	propReplDCs        = "cassandra.replication.dcs"
	propDrop           = "cassandra.drop"
	propBatchParallel  = "cassandra.batchparallelism"
	propUseSSL         = "cassandra.useSSL"
	propSSLCA          = "cassandra.ssl.ca"
	propSSLCert        = "cassandra.ssl.cert"
	propSSLKey         = "cassandra.ssl.key"
	propSSLVerifyHost  = "cassandra.ssl.verifyhost"
	propCompression    = "cassandra.compression"
	propCompaction     = "cassandra.compactionstrategy"
	propWriteCoalesce  = "cassandra.writecoalescemicros"
)

// defaultConsistency is YCSB's CassandraCQLClient default for both reads
// and writes.
const defaultConsistency = "QUORUM"

// keyColumn is YCSB's primary key column name.
const keyColumn = "y_id"

// Defaults follow the DataStax 3.x driver that YCSB's binding uses
// (connect 5 s, read 12 s), so timeouts behave as in a Java YCSB run.
const (
	defaultConnectTimeout = 5000
	defaultReadTimeout    = 12000
	defaultBatchParallel  = 32
	defaultConns          = 1
)

func init() {
	adapters.Register(adapters.Info{
		Name:        "cassandra",
		Aliases:     []string{"cassandra-cql", "cassandra2-cql"},
		Classes:     []string{"site.ycsb.db.CassandraCQLClient", "com.yahoo.ycsb.db.CassandraCQLClient"},
		Description: "Apache Cassandra via CQL (gocql v2, token-aware), compatible with YCSB's cassandra-cql binding",
		Properties: []properties.Known{
			{Name: propHosts, Help: "comma-separated contact points, host or host:port (required)"},
			{Name: propPort, Default: "9042", Help: "CQL native port for hosts without one"},
			{Name: propKeyspace, Default: "ycsb", Help: "keyspace"},
			{Name: propTable, Default: "usertable", Help: "table"},
			{Name: propUsername, Help: "user for PasswordAuthenticator (optional)"},
			{Name: propPassword, Help: "password for PasswordAuthenticator (optional, never logged)"},
			{Name: propReadCL, Default: defaultConsistency, Help: "consistency of reads and scans (YCSB's default)"},
			{Name: propWriteCL, Default: defaultConsistency, Help: "consistency of inserts, updates and deletes (YCSB's default)"},
			{Name: propMaxConns, Help: "connections per host (gocql's fixed pool: the larger of max and core; default 1, as the DataStax 3.x driver's with protocol v3+)"},
			{Name: propCoreConns, Help: "connections per host (see maxconnections)"},
			{Name: propConnectTimeout, Default: strconv.Itoa(defaultConnectTimeout), Help: "connect timeout in ms"},
			{Name: propReadTimeout, Default: strconv.Itoa(defaultReadTimeout), Help: "per-request timeout in ms"},
			{Name: propTracing, Default: "false", Help: "true: ask the server to trace every statement (system_traces), as YCSB"},
			{Name: propUseSSL, Default: "false", Help: "true: connect with TLS (client encryption)"},
			{Name: propSSLCA, Help: "with useSSL: PEM file of the CA(s) that signed the server certificate (default: system roots)"},
			{Name: propSSLCert, Help: "with useSSL: PEM client certificate, for servers that require client auth (with cassandra.ssl.key)"},
			{Name: propSSLKey, Help: "with useSSL: PEM private key of cassandra.ssl.cert"},
			{Name: propSSLVerifyHost, Default: "true", Help: "with useSSL: check that the server certificate names the host dialled"},
			{Name: propFieldCount, Default: "10", Schema: true, Help: "init: number of fields"},
			{Name: propFieldPrefix, Default: "field", Schema: true, Help: "init: field name prefix"},
			{Name: propReplClass, Default: "SimpleStrategy", Schema: true, Help: "init: keyspace replication class, SimpleStrategy or NetworkTopologyStrategy"},
			{Name: propReplFactor, Default: "1", Schema: true, Help: "init: replication factor"},
			{Name: propReplDCs, Schema: true, Help: "init with NetworkTopologyStrategy: datacenter:replicas list, e.g. dc1:3,dc2:3"},
			{Name: propCompression, Default: "LZ4Compressor", Schema: true, Help: "init: table compression: LZ4Compressor, SnappyCompressor, DeflateCompressor, ZstdCompressor or none"},
			{Name: propCompaction, Default: "SizeTieredCompactionStrategy", Schema: true, Help: "init: table compaction: SizeTieredCompactionStrategy, LeveledCompactionStrategy, TimeWindowCompactionStrategy or UnifiedCompactionStrategy"},
			{Name: propDrop, Default: "table", Help: "drop: table or keyspace"},
			{Name: propBatchParallel, Default: strconv.Itoa(defaultBatchParallel), Help: "inserts in flight per BatchInsert call (batchsize > 1)"},
			{Name: propWriteCoalesce, Default: "0", Help: "ycsbctl only: > 0 uses gocql's own write merging, holding each request up to this many microseconds (gocql's default 200); 0: ycsbctl merges the requests that are ready without waiting"},
		},
		Differences: []string{
			"cassandra.maxconnections and cassandra.coreconnections: the DataStax driver grows a pool from core to max connections per host; gocql keeps a fixed pool, so ycsbctl opens the larger of the two (1 when neither is set, DataStax 3.x's default with protocol v3+; gocql's own default would be 2).",
			"cassandra.useSSL: YCSB's binding uses the JVM's default SSL context (javax.net.ssl.trustStore/keyStore system properties) and applies useSSL only when cassandra.username is set; ycsbctl applies it always and takes PEM files in cassandra.ssl.ca/cert/key instead of JVM trust stores.",
			"cassandra.ssl.verifyhost: the DataStax 3.x driver checks the certificate chain but not the host name by default; ycsbctl checks both unless cassandra.ssl.verifyhost=false.",
			"cassandra.tracing: traces are requested from the server as YCSB does, but (like YCSB) not fetched or printed; they land in system_traces. gocql also traces each statement's PREPARE (once per connection), which the DataStax driver does not.",
			"batchsize: YCSB's Cassandra binding ignores it (every insert is its own statement and its own INSERT sample); ycsbctl's load with batchsize > 1 sends a batch as concurrent single-row inserts and records one INSERT sample per batch, so leave batchsize at 1 to compare with YCSB.",
			"debug: YCSB's statement logging is not implemented (it would distort timings); errors are logged rate-limited.",
			"Schema: YCSB's binding creates nothing (the keyspace and table must exist); ycsbctl init creates them with the replication, compression and compaction properties.",
		},
		Driver: adapters.DriverFunc(open),
		Check:  check,
	})
}

// identRE limits keyspace and table names to unquoted CQL identifiers, which
// also keeps them safe to splice into statement text.
var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,47}$`)

// DB is the Cassandra binding. It is safe for concurrent use: the gocql
// session pools connections and the statement cache is lock-free to read.
type DB struct {
	// tracer is non-nil with cassandra.tracing=true: every statement then
	// carries the tracing flag, as YCSB's enableTracing does.
	tracer    gocql.Tracer
	session   *gocql.Session
	keyspace  string
	table     string
	readCL    gocql.Consistency
	writeCL   gocql.Consistency
	opTimeout time.Duration
	batchPar  int
	stmts     stmtCache
	errLog    errLimiter
	// cfg opens the telemetry's own session (telemetry.go).
	cfg *config
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
	c, err := parseConfig(p)
	if err != nil {
		return nil, err
	}
	cluster := gocql.NewCluster(c.hosts...)
	cluster.Port = c.port
	cluster.NumConns = c.numConns
	cluster.ConnectTimeout = c.connectTimeout
	cluster.Timeout = c.readTimeout
	cluster.Consistency = c.writeCL
	// Every connection is dialled by hostDialer (TLS included, with
	// c.tls's host-name checking) and wrapped in a batchConn, which batches
	// writes and reads without timers (see wire.go).
	cluster.HostDialer = &hostDialer{
		dialer:       net.Dialer{Timeout: c.connectTimeout},
		tls:          c.tls,
		writeTimeout: c.readTimeout,
		plain:        c.writeCoalesce > 0,
	}
	// Protocol v4, as the DataStax 3.x driver under Java YCSB speaks; v5
	// (gocql's choice with Cassandra 4+) wraps every frame in a segment
	// with two CRCs to compute on each side, for nothing a benchmark uses.
	cluster.ProtoVersion = 4
	// Token awareness sends each key to a replica that owns it, saving the
	// coordinator hop, as the DataStax driver does by default.
	// (see hostPolicy for its shortcut when one host is up).
	cluster.PoolConfig.HostSelectionPolicy = newHostPolicy()
	// The keyspace may not exist yet (init runs through this same Open), so
	// the session has none and statements use qualified names instead.
	if c.username != "" {
		cluster.Authenticator = gocql.PasswordAuthenticator{Username: c.username, Password: c.password}
	}
	// A dead cluster must not stall Open for gocql's minute-long default
	// reconnect cadence; retry downed hosts often instead.
	cluster.ReconnectInterval = 2 * time.Second
	// gocql's default holds each request up to 200 us to merge writes,
	// which costs a hand-off to a flusher goroutine and back per request
	// and a timer that, on a busy host, fires late: at 1 thread it raised
	// the median latency from about 0.27 ms to 1.5 ms and the client CPU per
	// operation from about 125 us to 290 us. batchConn (wire.go) merges
	// writes without a timer instead; cassandra.writecoalescemicros > 0
	// brings gocql's own merging back, on plain connections.
	cluster.WriteCoalesceWaitTime = c.writeCoalesce

	type result struct {
		s   *gocql.Session
		err error
	}
	// CreateSession takes no context; run it aside so that ctx can cut it
	// short (it is bounded by ConnectTimeout anyway).
	done := make(chan result, 1)
	go func() {
		s, err := cluster.CreateSession()
		done <- result{s, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		go func() {
			if r := <-done; r.s != nil {
				r.s.Close()
			}
		}()
		return nil, fmt.Errorf("cassandra: connecting to %s (property %s): %w", hostList(c), propHosts, ctx.Err())
	}
	if r.err != nil {
		// gocql's errors name hosts and causes, never the credentials.
		return nil, fmt.Errorf("cassandra: connecting to %s (property %s): %w", hostList(c), propHosts, r.err)
	}
	var tracer gocql.Tracer
	if c.tracing {
		tracer = &traceCounter{}
	}
	return &DB{
		tracer:    tracer,
		session:   r.s,
		keyspace:  c.keyspace,
		table:     c.table,
		readCL:    c.readCL,
		writeCL:   c.writeCL,
		opTimeout: c.readTimeout + time.Second,
		batchPar:  c.batchPar,
		cfg:       c,
	}, nil
}

func hostList(c *config) string {
	out := make([]string, len(c.hosts))
	for i, h := range c.hosts {
		if _, _, err := net.SplitHostPort(h); err == nil {
			out[i] = h
		} else {
			out[i] = net.JoinHostPort(h, strconv.Itoa(c.port))
		}
	}
	return strings.Join(out, ",")
}

// query makes a statement, with the tracing flag when cassandra.tracing
// is on.
func (d *DB) query(cql string, args ...interface{}) *gocql.Query {
	q := d.session.Query(cql, args...)
	if d.tracer != nil {
		q = q.Trace(d.tracer)
	}
	return q
}

// traceCounter receives the trace session IDs of traced statements. YCSB
// does not fetch traces either (that would add queries to every
// operation); they stay in system_traces for whoever wants them.
type traceCounter struct{ n atomic.Int64 }

func (t *traceCounter) Trace([]byte) { t.n.Add(1) }

// Close ends the session.
func (d *DB) Close() error {
	d.session.Close()
	return nil
}

package hbase

import (
	"encoding/hex"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// defaultScanFilterValue is YCSB's: 0x7F followed by 99 0xFF bytes, so that
// LESS_OR_EQUAL keeps practically every value.
var defaultScanFilterValue = "7F" + strings.Repeat("FF", 99)

// compareOps maps YCSB's (Java CompareOperator) names to gohbase's.
var compareOps = map[string]filter.CompareType{
	"LESS":             filter.Less,
	"LESS_OR_EQUAL":    filter.LessOrEqual,
	"EQUAL":            filter.Equal,
	"NOT_EQUAL":        filter.NotEqual,
	"GREATER_OR_EQUAL": filter.GreaterOrEqual,
	"GREATER":          filter.Greater,
	"NO_OP":            filter.NoOp,
}

var durabilities = map[string]hrpc.DurabilityType{
	"USE_DEFAULT": hrpc.UseDefault,
	"SKIP_WAL":    hrpc.SkipWal,
	"ASYNC_WAL":   hrpc.AsyncWal,
	"SYNC_WAL":    hrpc.SyncWal,
	"FSYNC_WAL":   hrpc.FsyncWal,
}

// quorumFrom builds gohbase's "host:port,host:port" quorum string.
func quorumFrom(p *properties.Properties) (string, error) {
	q := p.String(propQuorum, "")
	if q == "" {
		q = p.String(propHosts, "127.0.0.1")
	}
	port, err := p.PositiveInt64(propClientPort, 2181)
	if err != nil {
		return "", err
	}
	if port > 65535 {
		return "", &properties.Error{Property: propClientPort, Value: strconv.FormatInt(port, 10), Expected: "a TCP port"}
	}
	var out []string
	for _, h := range strings.Split(q, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(strings.Trim(h, "[]"), strconv.FormatInt(port, 10))
		}
		out = append(out, h)
	}
	if len(out) == 0 {
		return "", &properties.Error{Property: propQuorum, Value: q, Expected: "a comma list of ZooKeeper hosts"}
	}
	return strings.Join(out, ","), nil
}

// check checks the properties as open and init do, without connecting
// (adapters.Info.Check).
func check(p *properties.Properties) error {
	if _, err := configure(p); err != nil {
		return err
	}
	if _, _, err := splitKeys(p); err != nil {
		return err
	}
	_, err := schemaOptionsFrom(p)
	return err
}

// configure reads and checks the properties into a DB not yet connected:
// open's and check's.
func configure(p *properties.Properties) (*DB, error) {
	d := &DB{
		table:  p.String(propTable, "usertable"),
		family: p.String(propColumnFamily, ""),
	}
	d.wholeFamily = map[string][]string{d.family: nil}
	if d.family == "" {
		return nil, &properties.Error{Property: propColumnFamily, Expected: "the column family to use (required, as in YCSB), e.g. -p columnfamily=family"}
	}
	if p.String(propKerberosPrinc, "") != "" || p.String(propKerberosKeytab, "") != "" {
		return nil, &properties.Error{Property: propKerberosPrinc, Expected: "unset: Kerberos authentication is not supported by the gohbase client"}
	}
	d.tableBytes = []byte(d.table)
	d.familyBytes = []byte(d.family)
	var err error
	if d.quorum, err = quorumFrom(p); err != nil {
		return nil, err
	}
	ms, err := p.PositiveInt64(propTimeout, defaultTimeout)
	if err != nil {
		return nil, err
	}
	d.timeout = time.Duration(ms) * time.Millisecond
	durName := strings.ToUpper(p.String(propDurability, "USE_DEFAULT"))
	dur, ok := durabilities[durName]
	if !ok {
		return nil, &properties.Error{Property: propDurability, Value: durName, Expected: "one of USE_DEFAULT, SKIP_WAL, ASYNC_WAL, SYNC_WAL, FSYNC_WAL"}
	}
	d.durability = dur
	if d.pageFilter, err = p.Bool(propUsePageFilter, true); err != nil {
		return nil, err
	}
	if d.valueFilter, err = scanValueFilter(p); err != nil {
		return nil, err
	}
	if _, err := p.NonNegInt64(propFieldCount, 10); err != nil {
		return nil, err
	}
	bp, err := p.PositiveInt64(propBatchParallel, defaultBatchParallel)
	if err != nil {
		return nil, err
	}
	d.batchPar = int(bp)
	if d.jmx, err = parseJMXPorts(p); err != nil {
		return nil, err
	}

	// YCSB's write buffering is done by each worker handle (see
	// buffered.go); the shared client sends every call at once
	// (FlushInterval 0: gohbase's default 20 ms timer costs a lone caller
	// ~20 ms per put), while calls queued at the same moment, such as a
	// buffer being flushed, still share a MultiRequest per RegionServer.
	if d.buffering, err = p.Bool(propClientBuffer, false); err != nil {
		return nil, err
	}
	if d.writeBuffer, err = p.PositiveInt64(propWriteBuffer, defaultWriteBuffer); err != nil {
		return nil, err
	}
	queue, flush := 100, time.Duration(0)
	if p.Has(propRPCQueueSize) {
		n, err := p.PositiveInt64(propRPCQueueSize, 100)
		if err != nil {
			return nil, err
		}
		queue = int(n)
	}
	if p.Has(propFlushInterval) {
		n, err := p.NonNegInt64(propFlushInterval, 0)
		if err != nil {
			return nil, err
		}
		flush = time.Duration(n) * time.Millisecond
	}
	d.znode = p.String(propZnodeParent, "/hbase")
	d.opts = []gohbase.Option{
		gohbase.ZookeeperRoot(d.znode),
		gohbase.RpcQueueSize(queue),
		gohbase.FlushInterval(flush),
		// Bound internal waits by the call timeout too, so a dead
		// RegionServer or ZooKeeper is noticed within one call.
		gohbase.RegionLookupTimeout(d.timeout),
		gohbase.RegionReadTimeout(d.timeout),
		gohbase.ZookeeperTimeout(max(d.timeout, 5*time.Second)),
	}
	return d, nil
}

// scanValueFilter builds YCSB's optional scan ValueFilter from
// hbase.usescanvaluefiltering, hbase.scanfilteroperator and
// hbase.scanfiltervalue (hex); blank operator or value take YCSB's defaults.
func scanValueFilter(p *properties.Properties) (filter.Filter, error) {
	on, err := p.Bool(propScanValueFilt, false)
	if err != nil {
		return nil, err
	}
	opName := p.String(propScanFilterOp, "")
	if opName == "" {
		opName = "less_or_equal"
	}
	op, ok := compareOps[strings.ToUpper(opName)]
	if !ok {
		return nil, &properties.Error{Property: propScanFilterOp, Value: opName, Expected: "one of less, less_or_equal, equal, not_equal, greater_or_equal, greater, no_op"}
	}
	hexVal := p.String(propScanFilterVal, "")
	if hexVal == "" {
		hexVal = defaultScanFilterValue
	}
	val, err := hex.DecodeString(hexVal)
	if err != nil {
		return nil, &properties.Error{Property: propScanFilterVal, Value: hexVal, Expected: "a hexadecimal byte string, e.g. 7FFF"}
	}
	if !on {
		return nil, nil
	}
	return filter.NewValueFilter(filter.NewCompareFilter(op, filter.NewBinaryComparator(filter.NewByteArrayComparable(val)))), nil
}

package hbase

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// schemaTimeout bounds schema changes when the caller set no deadline:
// creating a pre-split table assigns every region before it returns.
const schemaTimeout = 3 * time.Minute

// countTimeout bounds CountRecords when the caller set no deadline; a full
// scan of a large table is slow, but must never hang on a dead cluster.
const countTimeout = time.Hour

func (d *DB) adminClient() gohbase.AdminClient {
	d.adminMu.Lock()
	defer d.adminMu.Unlock()
	if d.admin == nil {
		d.admin = sharedAdmin(d.quorum+"\x00"+d.znode, func() gohbase.AdminClient { return gohbase.NewAdminClient(d.quorum, d.opts...) })
	}
	return d.admin
}

// admins are this process' admin clients, one per cluster (quorum and
// root znode). This gohbase's admin client cannot be closed (its Close
// closes a nil channel) and keeps a connection to the master, so one per
// DB would leak a connection for every run of a long-lived agent (which
// opens, describes and closes a DB per run). Calls carry their own
// contexts, so one client serves every caller.
var admins struct {
	sync.Mutex
	m map[string]gohbase.AdminClient
}

func sharedAdmin(key string, create func() gohbase.AdminClient) gohbase.AdminClient {
	admins.Lock()
	defer admins.Unlock()
	if a, ok := admins.m[key]; ok {
		return a
	}
	if admins.m == nil {
		admins.m = map[string]gohbase.AdminClient{}
	}
	a := create()
	admins.m[key] = a
	return a
}

func (d *DB) schemaCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, schemaTimeout)
}

// retryable reports master states that pass on their own: right after
// start the master answers DDL with PleaseHoldException until it has
// finished initializing, and gohbase does not retry that.
func retryable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "PleaseHoldException") ||
		strings.Contains(msg, "ServerNotRunningYetException") ||
		strings.Contains(msg, "master is initializing") ||
		strings.Contains(msg, "Master is initializing")
}

// withRetry runs fn until it succeeds, fails for good, or ctx ends.
func withRetry(ctx context.Context, fn func(ctx context.Context) error) error {
	backoff := 250 * time.Millisecond
	for {
		// Each attempt gets its own bounded context so one stuck RPC does
		// not use up the whole budget.
		actx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := fn(actx)
		cancel()
		if err == nil || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (still failing when the deadline passed: %v)", ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// tableExists asks the master for the table by exact name.
func (d *DB) tableExists(ctx context.Context, table string) (bool, error) {
	ns, name, hasNS := strings.Cut(table, ":")
	if !hasNS {
		ns, name = "default", table
	}
	var found bool
	err := withRetry(ctx, func(ctx context.Context) error {
		req, err := hrpc.NewListTableNames(ctx, hrpc.ListNamespace(ns),
			hrpc.ListRegex("^"+regexp.QuoteMeta(name)+"$"))
		if err != nil {
			return err
		}
		names, err := d.adminClient().ListTableNames(req)
		if err != nil {
			return err
		}
		found = false
		for _, t := range names {
			if string(t.GetQualifier()) == name {
				found = true
			}
		}
		return nil
	})
	return found, err
}

// CreateSchema implements adapters.SchemaManager: it creates the table
// with the column family (one version kept: YCSB reads only the latest),
// pre-split (see splitKeys). An existing table is left as it is.
func (d *DB) CreateSchema(ctx context.Context, p *properties.Properties) (string, error) {
	table := p.String(propTable, d.table)
	family := p.String(propColumnFamily, d.family)
	if family == "" {
		return "", &properties.Error{Property: propColumnFamily, Expected: "the column family to create (required)"}
	}
	splits, how, err := splitKeys(p)
	if err != nil {
		return "", err
	}
	opts, err := schemaOptionsFrom(p)
	if err != nil {
		return "", err
	}
	ctx, cancel := d.schemaCtx(ctx)
	defer cancel()
	exists, err := d.tableExists(ctx, table)
	if err != nil {
		return "", fmt.Errorf("hbase: checking table %s: %w", table, err)
	}
	if exists {
		return fmt.Sprintf("table %s already exists (left unchanged)", table), nil
	}
	err = withRetry(ctx, func(ctx context.Context) error {
		var so []func(*hrpc.CreateTable)
		if len(splits) > 0 {
			so = append(so, hrpc.SplitKeys(splits))
		}
		ct := hrpc.NewCreateTable(ctx, []byte(table),
			map[string]map[string]string{family: opts.familyAttrs()}, so...)
		return d.createTable(ctx, createTableCall{CreateTable: ct, tableAttrs: opts.tableAttrs()})
	})
	if err != nil {
		if strings.Contains(err.Error(), "TableExistsException") {
			// Created concurrently by another client since the check.
			return fmt.Sprintf("table %s already exists (left unchanged)", table), nil
		}
		return "", fmt.Errorf("hbase: creating table %s: %w", table, err)
	}
	return fmt.Sprintf("created table %s with column family %s (%s), %s (%s)", table, family, opts.describe(), plural.Count(len(splits)+1, "region"), how), nil
}

// schemaOptions are the storage settings init applies (the ones the YCSB
// studies vary).
type schemaOptions struct {
	compression string
	encoding    string
	blockCache  bool
	inMemory    bool
	maxFileSize int64 // 0: the server's default
}

var (
	compressions = []string{"NONE", "GZ", "SNAPPY", "LZ4", "ZSTD", "LZO", "BZIP2"}
	encodings    = []string{"NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"}
)

func oneOfUpper(p *properties.Properties, key, def string, allowed []string) (string, error) {
	v := strings.ToUpper(p.String(key, def))
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", &properties.Error{Property: key, Value: p.String(key, def), Expected: "one of " + strings.Join(allowed, ", ")}
}

func schemaOptionsFrom(p *properties.Properties) (schemaOptions, error) {
	var o schemaOptions
	var err error
	if o.compression, err = oneOfUpper(p, propCompression, "NONE", compressions); err != nil {
		return o, err
	}
	if o.encoding, err = oneOfUpper(p, propBlockEncoding, "NONE", encodings); err != nil {
		return o, err
	}
	if o.blockCache, err = p.Bool(propBlockCache, true); err != nil {
		return o, err
	}
	if o.inMemory, err = p.Bool(propInMemory, false); err != nil {
		return o, err
	}
	if p.Has(propMaxFileSize) {
		// HBase refuses regions smaller than 2 MiB (hbase.hregion.max.filesize.limit checks).
		if o.maxFileSize, err = p.PositiveInt64(propMaxFileSize, 0); err != nil {
			return o, err
		}
		if o.maxFileSize < 2<<20 {
			return o, &properties.Error{Property: propMaxFileSize, Value: strconv.FormatInt(o.maxFileSize, 10), Expected: "at least 2097152 bytes (HBase's lower limit)"}
		}
	}
	return o, nil
}

// familyAttrs are the column family's attributes. gohbase fills in its own
// defaults for every attribute not given, and its DATA_BLOCK_ENCODING
// default (FAST_DIFF) is not HBase's (NONE), so all are explicit.
func (o schemaOptions) familyAttrs() map[string]string {
	return map[string]string{
		"VERSIONS":            "1", // YCSB reads only the latest
		"COMPRESSION":         o.compression,
		"DATA_BLOCK_ENCODING": o.encoding,
		"BLOCKCACHE":          strconv.FormatBool(o.blockCache),
		"IN_MEMORY":           strconv.FormatBool(o.inMemory),
	}
}

func (o schemaOptions) tableAttrs() map[string]string {
	if o.maxFileSize == 0 {
		return nil
	}
	return map[string]string{"MAX_FILESIZE": strconv.FormatInt(o.maxFileSize, 10)}
}

func (o schemaOptions) describe() string {
	s := fmt.Sprintf("COMPRESSION %s, DATA_BLOCK_ENCODING %s, BLOCKCACHE %t, IN_MEMORY %t, VERSIONS 1",
		o.compression, o.encoding, o.blockCache, o.inMemory)
	if o.maxFileSize > 0 {
		s += fmt.Sprintf(", MAX_FILESIZE %d", o.maxFileSize)
	}
	return s
}

// createTableCall is gohbase's CreateTable with table-level attributes
// (MAX_FILESIZE), which this gohbase version cannot express.
type createTableCall struct {
	*hrpc.CreateTable
	tableAttrs map[string]string
}

// ToProto adds the table attributes to gohbase's request.
func (c createTableCall) ToProto() proto.Message {
	m := c.CreateTable.ToProto().(*pb.CreateTableRequest)
	keys := make([]string, 0, len(c.tableAttrs))
	for k := range c.tableAttrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m.TableSchema.Attributes = append(m.TableSchema.Attributes, &pb.BytesBytesPair{First: []byte(k), Second: []byte(c.tableAttrs[k])})
	}
	return m
}

// rpcSender is the admin client's generic call, which gohbase's
// AdminClient interface does not list.
type rpcSender interface {
	SendRPC(hrpc.Call) (proto.Message, error)
}

// sendAdmin sends a call gohbase's AdminClient has no method for to the
// master.
func (d *DB) sendAdmin(c hrpc.Call) (proto.Message, error) {
	s, ok := d.adminClient().(rpcSender)
	if !ok {
		return nil, fmt.Errorf("hbase: this gohbase admin client cannot send %s", c.Name())
	}
	return s.SendRPC(c)
}

// createTable sends the request to the master and waits for the create
// procedure to finish, as AdminClient.CreateTable does.
func (d *DB) createTable(ctx context.Context, c createTableCall) error {
	msg, err := d.sendAdmin(c)
	if err != nil {
		return err
	}
	resp, ok := msg.(*pb.CreateTableResponse)
	if !ok {
		return fmt.Errorf("hbase: unexpected reply %T to CreateTable", msg)
	}
	backoff := 50 * time.Millisecond
	for {
		msg, err := d.sendAdmin(hrpc.NewGetProcedureState(ctx, resp.GetProcId()))
		if err != nil {
			return err
		}
		st, ok := msg.(*pb.GetProcedureResultResponse)
		if !ok {
			return fmt.Errorf("hbase: unexpected reply %T to GetProcedureState", msg)
		}
		switch st.GetState() {
		case pb.GetProcedureResultResponse_NOT_FOUND:
			return fmt.Errorf("hbase: create procedure %d not found", resp.GetProcId())
		case pb.GetProcedureResultResponse_FINISHED:
			if fe := st.GetException(); fe != nil {
				ge := fe.GetGenericException()
				return fmt.Errorf("hbase: create table failed: %s: %s", ge.GetClassName(), ge.GetMessage())
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Second)
	}
}

// DropSchema implements adapters.SchemaManager: disable, then delete the
// table; a missing table is reported, not an error.
func (d *DB) DropSchema(ctx context.Context, p *properties.Properties) (string, error) {
	table := p.String(propTable, d.table)
	ctx, cancel := d.schemaCtx(ctx)
	defer cancel()
	exists, err := d.tableExists(ctx, table)
	if err != nil {
		return "", fmt.Errorf("hbase: checking table %s: %w", table, err)
	}
	if !exists {
		return fmt.Sprintf("table %s does not exist", table), nil
	}
	err = withRetry(ctx, func(ctx context.Context) error {
		return d.adminClient().DisableTable(hrpc.NewDisableTable(ctx, []byte(table)))
	})
	if err != nil && !strings.Contains(err.Error(), "TableNotEnabledException") {
		return "", fmt.Errorf("hbase: disabling table %s: %w", table, err)
	}
	err = withRetry(ctx, func(ctx context.Context) error {
		return d.adminClient().DeleteTable(hrpc.NewDeleteTable(ctx, []byte(table)))
	})
	if err != nil {
		if strings.Contains(err.Error(), "TableNotFoundException") {
			return fmt.Sprintf("table %s does not exist", table), nil
		}
		return "", fmt.Errorf("hbase: deleting table %s: %w", table, err)
	}
	return fmt.Sprintf("dropped table %s", table), nil
}

// CountRecords implements adapters.RecordCounter with a full scan that
// returns only the first cell of each row, without its value
// (FirstKeyOnlyFilter + KeyOnlyFilter), counting rows.
func (d *DB) CountRecords(ctx context.Context, table string) (int64, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, countTimeout)
		defer cancel()
	}
	f := filter.NewList(filter.MustPassAll, filter.NewFirstKeyOnlyFilter(), filter.NewKeyOnlyFilter(false))
	scan, err := hrpc.NewScanStr(ctx, table, hrpc.Filters(f), hrpc.NumberOfRows(5000))
	if err != nil {
		return 0, err
	}
	sc := d.client.Scan(scan)
	// The count comes from Next; Close only releases the server's scanner.
	defer func() { _ = sc.Close() }()
	var n int64
	for {
		res, err := sc.Next()
		if err == errEOF {
			return n, nil
		}
		if err != nil {
			return 0, fmt.Errorf("hbase: counting %s: %w", table, err)
		}
		if len(res.Cells) > 0 {
			n++
		}
	}
}

// splitKeys returns the region split points for CreateSchema and a short
// description of where they came from.
//
// hbase.presplit.keys gives them literally. Otherwise hbase.presplit.regions
// (default 10) cuts the key space of hashed YCSB keys into that many equal
// parts. Such keys are "user" + the decimal form of a hash that is uniform
// over [0, 2^63), and they sort as strings, so split points evenly spaced
// over first digits (user1 .. user9) would not be even: 19-digit hashes
// starting with 9 only reach 9.22e18, so "user9..." holds about 3.6% of the
// keys while "user1..." holds about 12%. The points are therefore computed
// from that distribution (see fractionBelow) as quantiles, with prefixes
// long enough to tell the regions apart. Ordered inserts (insertorder other
// than hashed) have another distribution: give explicit keys for those.
func splitKeys(p *properties.Properties) ([][]byte, string, error) {
	if raw := p.String(propPresplitKeys, ""); raw != "" {
		var out [][]byte
		var prev string
		for _, k := range strings.Split(raw, ",") {
			k = strings.TrimSpace(k)
			if k == "" {
				continue
			}
			if prev != "" && k <= prev {
				return nil, "", &properties.Error{Property: propPresplitKeys, Value: raw, Expected: "split keys in strictly increasing order"}
			}
			prev = k
			out = append(out, []byte(k))
		}
		return out, "split at " + propPresplitKeys, nil
	}
	n, err := p.PositiveInt64(propPresplitN, defaultPresplit)
	if err != nil {
		return nil, "", err
	}
	if n > 10000 {
		return nil, "", &properties.Error{Property: propPresplitN, Value: strconv.FormatInt(n, 10), Expected: "at most 10000 regions"}
	}
	if n == 1 {
		return nil, "not pre-split", nil
	}
	out := make([][]byte, 0, n-1)
	for _, s := range hashedSplitPoints(int(n)) {
		out = append(out, []byte("user"+s))
	}
	return out, fmt.Sprintf("split evenly over hashed YCSB keys, %s=%d", propPresplitN, n), nil
}

// hashedSplitPoints returns n-1 digit strings d such that about k/n of the
// hashed YCSB keys sort before "user"+d, for k = 1..n-1.
func hashedSplitPoints(n int) []string {
	// Prefix length: enough digits that adjacent quantiles get distinct
	// prefixes (9*10^(L-1) candidates for n regions).
	l := 4
	for math.Pow(10, float64(l-1)) < float64(20*n) {
		l++
	}
	lo := uint64(math.Pow10(l - 1))
	hi := uint64(math.Pow10(l)) - 1
	out := make([]string, 0, n-1)
	for k := 1; k < n; k++ {
		target := float64(k) / float64(n)
		// Smallest L-digit prefix with at least target of the keys below
		// it: fractionBelow grows with the prefix, so bisect.
		a, b := lo, hi
		for a < b {
			m := a + (b-a)/2
			if fractionBelow(strconv.FormatUint(m, 10)) >= target {
				b = m
			} else {
				a = m + 1
			}
		}
		s := strconv.FormatUint(a, 10)
		if len(out) == 0 || out[len(out)-1] < s {
			out = append(out, s)
		}
	}
	return out
}

// fractionBelow returns the fraction of v in [0, 2^63) whose decimal form
// sorts (as a string) before prefix, a digit string without leading zero.
// It sums, per number of digits ℓ, the ℓ-digit values that sort lower:
// for ℓ >= len(prefix) those below prefix·10^(ℓ-len); for shorter ones those
// at most prefix's first ℓ digits (a proper prefix sorts first).
func fractionBelow(prefix string) float64 {
	const limit = uint64(1) << 63
	pl := len(prefix)
	var below uint64
	pow := uint64(1) // 10^(ℓ-1)
	for l := 1; l <= 19; l++ {
		lo := pow
		if l == 1 {
			lo = 0 // "0" is the only number with a 0 first digit
		}
		hi := min(pow*10, limit) // pow*10 <= 10^19 fits in uint64
		if lo >= hi {
			break
		}
		var bound uint64
		if l >= pl {
			p, _ := strconv.ParseUint(prefix, 10, 64)
			for i := pl; i < l; i++ {
				p *= 10
			}
			bound = p
		} else {
			p, _ := strconv.ParseUint(prefix[:l], 10, 64)
			bound = p + 1
		}
		bound = min(max(bound, lo), hi)
		below += bound - lo
		pow *= 10
	}
	return float64(below) / float64(limit)
}

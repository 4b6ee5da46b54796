// Package mongodb is ycsbctl's MongoDB binding ("mongodb"), modelled on
// YCSB's MongoDbClient and built on the official Go driver (v2).
//
// Data layout is YCSB's, so data loaded by either tool reads back in the
// other: one document per record in collection <table> of the URL's
// database, _id = the key as a string, one field per column holding the
// value as BSON binary subtype 0. Reads also accept string values.
//
// Operations: read = FindOne by _id (projected when fields are named);
// scan = Find {_id: {$gte: start}} sorted by _id with a limit (no rows is
// ERROR, as in YCSB); update = UpdateOne $set (no match is NOT_FOUND);
// insert = InsertOne, or ReplaceOne with upsert when mongodb.upsert=true;
// batch insert = unordered InsertMany (or unordered bulk replace-upserts);
// delete = DeleteOne (nothing deleted is NOT_FOUND).
//
// Properties: mongodb.url (write concern, read preference, pool size and
// the rest come from the URL), table, batchsize, mongodb.upsert, YCSB's
// legacy mongodb.writeConcern / mongodb.readPreference /
// mongodb.maxconnections, and ycsbctl's mongodb.timeout (deadline of every
// operation, ms, default 10000), mongodb.connecttimeout (ms, default 10000)
// and mongodb.shard.initialchunks. See propertyHelp.
//
// Errors: duplicate key is ERROR; deadlines, network and server-selection
// failures, shutdown and step-down are SERVICE_UNAVAILABLE; authorization
// failures are FORBIDDEN. Failures are logged at most once a second with
// credentials removed; the URL is only ever shown redacted.
package mongodb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ycsbctl/ycsbctl/internal/netconn"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

func init() {
	adapters.Register(adapters.Info{
		Name:        "mongodb",
		Classes:     []string{"site.ycsb.db.MongoDbClient", "com.yahoo.ycsb.db.MongoDbClient"},
		Description: "MongoDB (official Go driver v2); YCSB MongoDbClient semantics",
		Properties:  knownProperties,
		Differences: differences,
		Driver:      adapters.DriverFunc(Open),
		Check:       Check,
	})
}

// Check checks the properties as Open and init do, without connecting
// (adapters.Info.Check); a mongodb+srv URL's name is resolved, as
// connecting would.
func Check(p *properties.Properties) error {
	_, err := parseConfig(p)
	return err
}

// DB is the binding. It is safe for concurrent use: the driver pools
// connections, and per-call buffers come from a pool.
type DB struct {
	cfg    *config
	client *mongo.Client
	db     *mongo.Database

	colls   atomic.Pointer[map[string]*mongo.Collection]
	collsMu sync.Mutex

	bufs   sync.Pool // *opBuf
	names  interner
	errLog errLog

	closeOnce sync.Once
	closeErr  error
}

var (
	_ adapters.DB            = (*DB)(nil)
	_ adapters.Closer        = (*DB)(nil)
	_ adapters.ProcsAdvisor  = (*DB)(nil)
	_ adapters.BatchInserter = (*DB)(nil)
	_ adapters.RecordCounter = (*DB)(nil)
	_ adapters.SchemaManager = (*DB)(nil)
)

// Shared, read-only option builders (the driver only reads them).
var (
	replaceUpsert   = options.Replace().SetUpsert(true)
	insertUnordered = options.InsertMany().SetOrdered(false)
	bulkUnordered   = options.BulkWrite().SetOrdered(false)
)

// Open connects and pings the server, so that a wrong URL or a dead server
// fails here rather than as a stream of errors during the measurement.
func Open(ctx context.Context, p *properties.Properties) (adapters.DB, error) {
	cfg, err := parseConfig(p)
	if err != nil {
		return nil, err
	}
	opts := options.Client().ApplyURI(cfg.url)
	if !cfg.cs.ConnectTimeoutSet {
		opts.SetConnectTimeout(cfg.connectTimeout)
	}
	if cfg.cs.AppName == "" {
		opts.SetAppName("ycsbctl") // shows up in server logs and currentOp
	}
	opts.SetDialer(&readBufferDialer{})
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("mongodb: %s (%s): %s", cfg.redactedURL, propURL, cfg.scrub(err.Error()))
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.connectTimeout)
	defer cancel()
	if err := client.Ping(pctx, nil); err != nil {
		dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
		defer dcancel()
		_ = client.Disconnect(dctx)
		return nil, fmt.Errorf("mongodb: cannot use %s (%s; %s=%d ms): %s",
			cfg.redactedURL, propURL, propConnTimout, cfg.connectTimeout.Milliseconds(), cfg.scrub(err.Error()))
	}
	return &DB{cfg: cfg, client: client, db: client.Database(cfg.database)}, nil
}

// Close disconnects; it is idempotent.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.connectTimeout)
		defer cancel()
		if err := d.client.Disconnect(ctx); err != nil {
			d.closeErr = fmt.Errorf("mongodb: disconnect: %s", d.cfg.scrub(err.Error()))
		}
	})
	return d.closeErr
}

// coll returns the cached collection handle; Database.Collection allocates
// and merges options, which is wasted work on every operation.
func (d *DB) coll(table string) *mongo.Collection {
	if m := d.colls.Load(); m != nil {
		if c, ok := (*m)[table]; ok {
			return c
		}
	}
	d.collsMu.Lock()
	defer d.collsMu.Unlock()
	old := d.colls.Load()
	if old != nil {
		if c, ok := (*old)[table]; ok {
			return c
		}
	}
	next := map[string]*mongo.Collection{}
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	c := d.db.Collection(table)
	next[table] = c
	d.colls.Store(&next)
	return c
}

// opBuf holds the reusable encoding buffers of one call.
type opBuf struct {
	a, b   []byte
	ends   []int
	docs   []any
	models []mongo.WriteModel
}

// maxKeptBuf keeps a freak huge batch from pinning its memory in the pool.
const maxKeptBuf = 4 << 20

func (d *DB) getBuf() *opBuf {
	if b, ok := d.bufs.Get().(*opBuf); ok {
		return b
	}
	return &opBuf{}
}

func (d *DB) putBuf(b *opBuf) {
	if cap(b.a) > maxKeptBuf || cap(b.b) > maxKeptBuf {
		return
	}
	clear(b.docs) // drop references into the byte buffers
	clear(b.models)
	b.docs, b.models = b.docs[:0], b.models[:0]
	d.bufs.Put(b)
}

// opCtx bounds one operation by mongodb.timeout.
func (d *DB) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d.cfg.timeout)
}

// Read is FindOne by _id, projected to the named fields.
func (d *DB) Read(ctx context.Context, table string, key []byte, fields []string, into *adapters.Record) adapters.Status {
	into.Reset()
	if len(fields) == 0 {
		fields = nil // YCSB: an empty projection means all fields
	}
	for _, f := range fields {
		if !validName(f) {
			return adapters.BadRequest
		}
	}
	b := d.getBuf()
	defer d.putBuf(b)
	b.a = appendIDFilter(b.a[:0], key)
	octx, cancel := d.opCtx(ctx)
	defer cancel()
	var res *mongo.SingleResult
	if fields != nil {
		b.b = appendProjection(b.b[:0], fields)
		res = d.coll(table).FindOne(octx, bson.Raw(b.a), options.FindOne().SetProjection(bson.Raw(b.b)))
	} else {
		res = d.coll(table).FindOne(octx, bson.Raw(b.a))
	}
	raw, err := res.Raw()
	if err != nil {
		return d.status(ctx, "read", err)
	}
	if !fillRecord(raw, fields, &d.names, into) {
		return d.status(ctx, "read", errMalformed)
	}
	return adapters.OK
}

var errMalformed = errors.New("malformed BSON document in reply")

// Scan is Find {_id: {$gte: startKey}} sorted by _id, limited to count. As
// in YCSB, a scan that finds nothing is an ERROR.
func (d *DB) Scan(ctx context.Context, table string, startKey []byte, count int, fields []string, into *adapters.Rows) adapters.Status {
	into.Reset()
	if count < 1 {
		return adapters.BadRequest // a limit of 0 would mean "no limit"
	}
	if len(fields) == 0 {
		fields = nil
	}
	for _, f := range fields {
		if !validName(f) {
			return adapters.BadRequest
		}
	}
	b := d.getBuf()
	defer d.putBuf(b)
	b.a = appendScanFilter(b.a[:0], startKey)
	// One batch holds the whole result, so no getMore/killCursors trips.
	batch := int32(min(count, 1<<20))
	fo := options.Find().SetSort(bson.Raw(sortByID)).SetLimit(int64(count)).SetBatchSize(batch)
	if fields != nil {
		b.b = appendProjection(b.b[:0], fields)
		fo.SetProjection(bson.Raw(b.b))
	}
	octx, cancel := d.opCtx(ctx)
	defer cancel()
	cur, err := d.coll(table).Find(octx, bson.Raw(b.a), fo)
	if err != nil {
		return d.status(ctx, "scan", err)
	}
	defer func() { _ = cur.Close(octx) }()
	for cur.Next(octx) {
		if !fillRow(cur.Current, fields, &d.names, into) {
			return d.status(ctx, "scan", errMalformed)
		}
	}
	if err := cur.Err(); err != nil {
		return d.status(ctx, "scan", err)
	}
	if into.N == 0 {
		return adapters.Error
	}
	return adapters.OK
}

// fillRow appends one scan row keyed by the document's _id.
func fillRow(doc []byte, fields []string, names *interner, into *adapters.Rows) bool {
	// A non-string _id (written by another tool) gives an empty row key;
	// malformed documents are caught by fillRecord.
	id, _ := idOf(doc)
	return fillRecord(doc, fields, names, into.Next(id))
}

// Update is UpdateOne {_id: key} {$set: values}; no match is NOT_FOUND.
func (d *DB) Update(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if len(values) == 0 || !validFields(values) {
		return adapters.BadRequest // MongoDB rejects an empty $set
	}
	b := d.getBuf()
	defer d.putBuf(b)
	b.a = appendIDFilter(b.a[:0], key)
	b.b = appendSetUpdate(b.b[:0], values)
	octx, cancel := d.opCtx(ctx)
	defer cancel()
	res, err := d.coll(table).UpdateOne(octx, bson.Raw(b.a), bson.Raw(b.b))
	if err != nil {
		return d.status(ctx, "update", err)
	}
	// An unacknowledged write (w=0) reports nothing; YCSB counts it OK.
	if res.Acknowledged && res.MatchedCount == 0 {
		return adapters.NotFound
	}
	return adapters.OK
}

// Insert is InsertOne, or ReplaceOne with upsert when mongodb.upsert=true.
// A duplicate key is an ERROR, as in YCSB.
func (d *DB) Insert(ctx context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	if !validFields(values) {
		return adapters.BadRequest
	}
	b := d.getBuf()
	defer d.putBuf(b)
	b.a = appendRecord(b.a[:0], key, values)
	octx, cancel := d.opCtx(ctx)
	defer cancel()
	var err error
	if d.cfg.upsert {
		b.b = appendIDFilter(b.b[:0], key)
		_, err = d.coll(table).ReplaceOne(octx, bson.Raw(b.b), bson.Raw(b.a), replaceUpsert)
	} else {
		_, err = d.coll(table).InsertOne(octx, bson.Raw(b.a))
	}
	if err != nil {
		return d.status(ctx, "insert", err)
	}
	return adapters.OK
}

// BatchInsert is an unordered InsertMany (or an unordered bulk of upserting
// replaces). As in YCSB, any failure makes the whole batch an ERROR, though
// an unordered batch may have stored the other records.
func (d *DB) BatchInsert(ctx context.Context, table string, keys [][]byte, values [][]adapters.Field) adapters.Status {
	if st, done := adapters.CheckBatch(keys, values); done {
		return st
	}
	for i := range values {
		if !validFields(values[i]) {
			return adapters.BadRequest
		}
	}
	b := d.getBuf()
	defer d.putBuf(b)
	// Encode everything into one buffer first and slice it afterwards:
	// appending may move the buffer, so offsets are kept, not slices.
	ends := b.ends[:0] // per record: document end, then (upsert) filter end
	b.a = b.a[:0]
	for i, k := range keys {
		b.a = appendRecord(b.a, k, values[i])
		ends = append(ends, len(b.a))
		if d.cfg.upsert {
			b.a = appendIDFilter(b.a, k)
			ends = append(ends, len(b.a))
		}
	}
	b.ends = ends
	octx, cancel := d.opCtx(ctx)
	defer cancel()
	var err error
	start := 0
	if d.cfg.upsert {
		for i := 0; i < len(ends); i += 2 {
			doc := bson.Raw(b.a[start:ends[i]])
			filter := bson.Raw(b.a[ends[i]:ends[i+1]])
			start = ends[i+1]
			b.models = append(b.models, mongo.NewReplaceOneModel().SetFilter(filter).SetReplacement(doc).SetUpsert(true))
		}
		_, err = d.coll(table).BulkWrite(octx, b.models, bulkUnordered)
	} else {
		for _, end := range ends {
			b.docs = append(b.docs, bson.Raw(b.a[start:end]))
			start = end
		}
		_, err = d.coll(table).InsertMany(octx, b.docs, insertUnordered)
	}
	if err != nil {
		return d.status(ctx, "batchinsert", err)
	}
	return adapters.OK
}

// Delete is DeleteOne {_id: key}; nothing deleted is NOT_FOUND.
func (d *DB) Delete(ctx context.Context, table string, key []byte) adapters.Status {
	b := d.getBuf()
	defer d.putBuf(b)
	b.a = appendIDFilter(b.a[:0], key)
	octx, cancel := d.opCtx(ctx)
	defer cancel()
	res, err := d.coll(table).DeleteOne(octx, bson.Raw(b.a))
	if err != nil {
		return d.status(ctx, "delete", err)
	}
	if res.Acknowledged && res.DeletedCount == 0 {
		return adapters.NotFound
	}
	return adapters.OK
}

// CountRecords counts the documents exactly (CountDocuments, not the
// collection-metadata estimate).
func (d *DB) CountRecords(ctx context.Context, table string) (int64, error) {
	octx, cancel := context.WithTimeout(ctx, d.adminTimeout())
	defer cancel()
	n, err := d.coll(table).CountDocuments(octx, bson.D{})
	if err != nil {
		return 0, fmt.Errorf("mongodb: count %s.%s: %s", d.cfg.database, table, d.cfg.scrub(err.Error()))
	}
	return n, nil
}

// adminTimeout bounds schema and count commands, which may legitimately
// take longer than one benchmark operation (counting a big collection,
// sharding a collection with many initial chunks).
func (d *DB) adminTimeout() time.Duration {
	return max(d.cfg.timeout, time.Minute)
}

// readBufferDialer dials as the driver does and gives each connection a
// read buffer: the driver reads every reply as a 4-byte length and then the
// body, two read system calls, and sets a read deadline before each reply;
// with the buffer one system call brings the whole reply and the deadline
// reaches the socket only when a read waits (internal/netconn). TLS, when
// configured, is layered by the driver on top, as before.
type readBufferDialer struct{ net.Dialer }

// replyBuffer holds a YCSB reply (a 10-field document is about 1.2 KB)
// several times over.
const replyBuffer = 16 << 10

func (d *readBufferDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return netconn.NewReader(c, replyBuffer), nil
}

// Procs implements adapters.ProcsAdvisor: the driver starts a goroutine
// per reply read (its cancellation listener), and every hand-off wakes an
// idle P when there is one.
func (d *DB) Procs(workers int) int { return adapters.NetworkProcs(workers) }

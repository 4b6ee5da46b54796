//go:build integration

package integration

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ycsbctl/ycsbctl/adapters"
	_ "github.com/ycsbctl/ycsbctl/adapters/mongodb"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// mongoOpTimeout is mongodb.timeout for these tests. It must leave room for
// FerretDB's scans, which read and sort the whole collection in memory
// (16 of them at once on 2 cores), yet keep the outage check short.
const mongoOpTimeout = 10 * time.Second

// TestMongoDB runs MongoDB-specific checks and then the shared adapter
// suite against FerretDB (a MongoDB wire-protocol stand-in on SQLite)
// started by servers.sh. The suite's last step stops the server.
//
// Timings logged here are FerretDB's, not MongoDB's.
func TestMongoDB(t *testing.T) {
	endpoint := startServer(t, "mongodb")
	t.Cleanup(func() { stopServer(t, "mongodb") })

	const table = "usertable"
	props := properties.FromMap(map[string]string{
		"mongodb.url":            endpoint,
		"table":                  table,
		"fieldcount":             "10",
		"mongodb.timeout":        "10000",
		"mongodb.connecttimeout": "5000",
	})
	info, err := adapters.Lookup("mongodb")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := info.Driver.Open(ctx, props)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.(adapters.Closer).Close() })

	// A plain driver client to look at what the binding stored.
	raw, err := mongo.Connect(options.Client().ApplyURI(endpoint))
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = raw.Disconnect(ctx)
	})

	t.Run("Specifics", func(t *testing.T) {
		mongoSpecifics(t, info, props, db, raw.Database("ycsb"))
	})

	suite := &adapterSuite{
		db:         db,
		props:      props,
		table:      table,
		fieldCount: 10,
		// _id strings compare bytewise, so scans follow sorted key order.
		scanOrder: func(t *testing.T, keys []string) []string {
			out := append([]string(nil), keys...)
			sort.Strings(out)
			return out
		},
		stop:      func(t *testing.T) { stopServer(t, "mongodb") },
		opTimeout: mongoOpTimeout,
		// FerretDB v1 answers every scan by reading, decoding and sorting
		// the whole collection (~0.3 s per scan at 2000 documents on an idle
		// machine), so the suite's 240 concurrent scans alone took about two
		// minutes; 32 (two per worker) still exercise scans under
		// concurrency and keep the phase well inside the suite's deadline.
		concurrentScanEvery: 75,
	}
	suite.run(t)
}

// mongoSpecifics checks behaviour the shared suite does not cover, in its
// own collections so that the suite's counts stay exact.
func mongoSpecifics(t *testing.T, info *adapters.Info, props *properties.Properties, db adapters.DB, rawDB *mongo.Database) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const table = "extras"
	vals := func(k string, v int) []adapters.Field {
		return []adapters.Field{
			{Name: "field0", Value: suiteValue(k, 0, v)},
			{Name: "field1", Value: suiteValue(k, 1, v)},
		}
	}
	k := ycsbKeyFor(0)

	t.Run("DuplicateInsertIsError", func(t *testing.T) {
		require.Equal(t, adapters.OK, db.Insert(ctx, table, []byte(k), vals(k, 0)))
		assert.Equal(t, adapters.Error, db.Insert(ctx, table, []byte(k), vals(k, 1)))
		var rec adapters.Record
		require.Equal(t, adapters.OK, db.Read(ctx, table, []byte(k), nil, &rec))
		assert.Equal(t, string(suiteValue(k, 1, 0)), string(mustGet(&rec, "field1")), "the duplicate must not overwrite")
	})

	// YCSB's Java binding stores byte[] as BSON binary subtype 0 under a
	// string _id; ycsbctl must write the same so either can read the other.
	t.Run("StoredLikeYCSB", func(t *testing.T) {
		var doc bson.Raw
		require.NoError(t, rawDB.Collection(table).FindOne(ctx, bson.D{{Key: "_id", Value: k}}).Decode(&doc))
		id := doc.Lookup("_id")
		assert.Equal(t, bson.TypeString, id.Type)
		f0 := doc.Lookup("field0")
		require.Equal(t, bson.TypeBinary, f0.Type, "field0 is %v", f0.Type)
		sub, data := f0.Binary()
		assert.Equal(t, byte(0), sub)
		assert.Equal(t, string(suiteValue(k, 0, 0)), string(data))
	})

	t.Run("StringValuesReadBack", func(t *testing.T) {
		_, err := rawDB.Collection(table).InsertOne(ctx, bson.D{
			{Key: "_id", Value: "userstr"}, {Key: "field0", Value: "text0"}, {Key: "n", Value: 7},
		})
		require.NoError(t, err)
		var rec adapters.Record
		require.Equal(t, adapters.OK, db.Read(ctx, table, []byte("userstr"), nil, &rec))
		require.Len(t, rec.Fields, 1, "non-string/binary fields are skipped: %v", fieldNames(&rec))
		assert.Equal(t, "text0", string(mustGet(&rec, "field0")))
	})

	t.Run("MissingKeys", func(t *testing.T) {
		assert.Equal(t, adapters.NotFound, db.Update(ctx, table, []byte("user_missing"), vals("x", 0)))
		assert.Equal(t, adapters.NotFound, db.Delete(ctx, table, []byte("user_missing")))
		var rows adapters.Rows
		// YCSB's MongoDbClient reports an empty scan as ERROR.
		assert.Equal(t, adapters.Error, db.Scan(ctx, table, []byte("zzzz"), 5, nil, &rows))
		assert.Equal(t, 0, rows.N)
	})

	t.Run("BatchWithDuplicate", func(t *testing.T) {
		bi := db.(adapters.BatchInserter)
		keys := [][]byte{[]byte("userb1"), []byte(k), []byte("userb2")}
		vs := [][]adapters.Field{vals("userb1", 0), vals(k, 0), vals("userb2", 0)}
		assert.Equal(t, adapters.Error, bi.BatchInsert(ctx, table, keys, vs))
		// Unordered: the records around the duplicate are stored anyway.
		var rec adapters.Record
		assert.Equal(t, adapters.OK, db.Read(ctx, table, []byte("userb1"), nil, &rec))
		assert.Equal(t, adapters.OK, db.Read(ctx, table, []byte("userb2"), nil, &rec))
	})

	t.Run("Upsert", func(t *testing.T) {
		p := props.Clone()
		p.Set("mongodb.upsert", "true")
		up, err := info.Driver.Open(ctx, p)
		require.NoError(t, err)
		defer func() { _ = up.(adapters.Closer).Close() }()
		const ut = "extras_upsert"
		require.Equal(t, adapters.OK, up.Insert(ctx, ut, []byte(k), vals(k, 0)))
		require.Equal(t, adapters.OK, up.Insert(ctx, ut, []byte(k), vals(k, 3)), "upsert replaces")
		var rec adapters.Record
		require.Equal(t, adapters.OK, up.Read(ctx, ut, []byte(k), nil, &rec))
		assert.Equal(t, string(suiteValue(k, 0, 3)), string(mustGet(&rec, "field0")))
		bi := up.(adapters.BatchInserter)
		keys := [][]byte{[]byte(k), []byte("useru1"), []byte("useru2")}
		vs := [][]adapters.Field{vals(k, 4), vals("useru1", 4), vals("useru2", 4)}
		require.Equal(t, adapters.OK, bi.BatchInsert(ctx, ut, keys, vs))
		n, err := up.(adapters.RecordCounter).CountRecords(ctx, ut)
		require.NoError(t, err)
		assert.Equal(t, int64(3), n)
		require.Equal(t, adapters.OK, up.Read(ctx, ut, []byte(k), []string{"field1"}, &rec))
		assert.Equal(t, string(suiteValue(k, 1, 4)), string(mustGet(&rec, "field1")))
	})

	t.Run("DatabaseFromURL", func(t *testing.T) {
		// The endpoint names database ycsb; the binding must have used it.
		names, err := rawDB.ListCollectionNames(ctx, bson.D{{Key: "name", Value: table}})
		require.NoError(t, err)
		assert.Equal(t, []string{table}, names)
	})
}

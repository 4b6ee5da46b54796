//go:build integration

package integration

import (
	"context"
	"net/url"
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

// TestMongoDBFidelity checks each property YCSB's MongoDbClient reads
// against FerretDB, the MongoDB wire-protocol stand-in (timings here are
// FerretDB's, never MongoDB's), including batchsize in the run phase.
func TestMongoDBFidelity(t *testing.T) {
	endpoint := startServer(t, "mongodb")
	t.Cleanup(func() { stopServer(t, "mongodb") })
	info, err := adapters.Lookup("site.ycsb.db.MongoDbClient")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	raw, err := mongo.Connect(options.Client().ApplyURI(endpoint))
	require.NoError(t, err)
	defer func() { _ = raw.Disconnect(context.Background()) }()
	props := func(extra ...string) *properties.Properties {
		p := properties.FromMap(map[string]string{"mongodb.url": endpoint})
		p.SetPairs(extra...)
		return p
	}
	open := func(t *testing.T, p *properties.Properties) adapters.DB {
		t.Helper()
		db, err := info.Driver.Open(ctx, p)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.(adapters.Closer).Close() })
		return db
	}
	count := func(t *testing.T, db, coll string) int64 {
		t.Helper()
		n, err := raw.Database(db).Collection(coll).CountDocuments(ctx, bson.D{})
		require.NoError(t, err)
		return n
	}

	rows := []fidelityCheck{
		{prop: "mongodb.url", check: func(t *testing.T) {
			// The URL's path names the database.
			u, err := url.Parse(endpoint)
			require.NoError(t, err)
			u.Path = "/fidelitydb"
			p := props("mongodb.url", u.String(), "table", "urlcheck", "mongodb.shard.balancer", "false", "mongodb.shard.initialchunks", "8")
			p.TrackReads()
			db := open(t, p)
			msg, err := db.(adapters.SchemaManager).CreateSchema(ctx, p)
			require.NoError(t, err)
			t.Logf("init: %s", msg)
			assert.Contains(t, msg, "mongodb.shard.balancer=false not applied: the server is not a mongos", "init says the sharding options were not applicable")
			assert.Contains(t, msg, "mongodb.shard.initialchunks=8 not applied")
			require.Equal(t, adapters.OK, db.Insert(ctx, "urlcheck", []byte("user1"), []adapters.Field{{Name: "field0", Value: []byte("x")}}))
			assert.Equal(t, int64(1), count(t, "fidelitydb", "urlcheck"))
			_, err = db.(adapters.SchemaManager).DropSchema(ctx, p)
			require.NoError(t, err)
			assert.Empty(t, info.Undeclared(p.ReadKeys()), "read but not declared")
		}},
		{prop: "mongodb.upsert", check: func(t *testing.T) {
			k := []byte("user_upsert")
			v := []adapters.Field{{Name: "field0", Value: []byte("x")}}
			plain := open(t, props("table", "upsertcheck"))
			require.Equal(t, adapters.OK, plain.Insert(ctx, "upsertcheck", k, v))
			assert.Equal(t, adapters.Error, plain.Insert(ctx, "upsertcheck", k, v), "duplicate _id without upsert")
			up := open(t, props("table", "upsertcheck", "mongodb.upsert", "true"))
			assert.Equal(t, adapters.OK, up.Insert(ctx, "upsertcheck", k, v), "upsert replaces")
			assert.Equal(t, int64(1), count(t, "ycsb", "upsertcheck"))
		}},
		{prop: "batchsize", check: func(t *testing.T) { mongoRunPhaseBatching(t, endpoint, count) }},
	}
	runFidelityTable(t, info, rows)
}

// mongoRunPhaseBatching loads 300 records one by one, then runs 103 inserts
// with batchsize=10 in one thread: as in YCSB, each insert that only fills
// the thread's buffer is BATCHED_OK and every tenth sends the batch (OK);
// unlike YCSB, the last 3 are written at cleanup instead of being dropped.
func mongoRunPhaseBatching(t *testing.T, endpoint string, count func(*testing.T, string, string) int64) {
	const table, records, inserts = "batchrun", 300, 103
	base := []string{"-db", "site.ycsb.db.MongoDbClient", "-P", "workloada", "-p", "mongodb.url=" + endpoint,
		"-p", "table=" + table, "-p", "recordcount=300"}
	r := runCLI(t, cmdTimeout, "", append([]string{"drop"}, base...)...)
	requireExit(t, r, 0)
	r = runCLI(t, cmdTimeout, "", append(append([]string{"-load"}, base...), "-threads", "2")...)
	requireExit(t, r, 0)
	require.Equal(t, int64(records), count(t, "ycsb", table))
	r = runCLI(t, cmdTimeout, "", append(append([]string{"-t"}, base...), "-threads", "1", "-p", "batchsize=10",
		"-p", "operationcount=103", "-p", "readproportion=0", "-p", "updateproportion=0", "-p", "insertproportion=1")...)
	requireExit(t, r, 0)
	s := parseSummary(t, r.stdout)
	got := s.returns("INSERT")
	t.Logf("run-phase INSERT returns with batchsize=10: %v; CLEANUP %d samples, max %.0f us (FerretDB timings)", got, s.int("CLEANUP", "Operations"), s.float("CLEANUP", "MaxLatency(us)"))
	assert.Equal(t, map[string]int64{"OK": inserts / 10, "BATCHED_OK": inserts - inserts/10}, got)
	assert.Equal(t, int64(records+inserts), count(t, "ycsb", table), "every run-phase insert written, the last partial batch at cleanup")
}

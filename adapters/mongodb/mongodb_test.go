package mongodb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

func props(kv ...string) *properties.Properties {
	p := properties.New()
	p.SetPairs(kv...)
	return p
}

func TestRegistered(t *testing.T) {
	info, err := adapters.Lookup("mongodb")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{propURL, propUpsert, propTimeout, propConnTimout, propInitChunks, propBatchSize} {
		if kn, ok := properties.FindKnown(info.Properties, k); !ok || kn.Help == "" {
			t.Errorf("property %s is not documented", k)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := parseConfig(properties.New())
	if err != nil {
		t.Fatal(err)
	}
	if c.url != defaultURL || c.database != "ycsb" || c.table != "usertable" || c.upsert ||
		c.batchSize != 1 || c.timeout != 10*time.Second || c.connectTimeout != 10*time.Second || c.initialChunks != 0 {
		t.Fatalf("defaults: %+v", c)
	}
	if c.cs.WString != "" || !c.cs.WNumberSet || c.cs.WNumber != 1 {
		t.Errorf("default URL should carry w=1: %+v", c.cs)
	}
}

func TestDatabaseFromURL(t *testing.T) {
	for url, want := range map[string]string{
		"mongodb://h:1/bench":             "bench",
		"mongodb://h:1/bench?w=majority":  "bench",
		"mongodb://h:1/admin":             "ycsb", // YCSB treats admin as "no database"
		"mongodb://h:1/":                  "ycsb",
		"mongodb://h:1":                   "ycsb",
		"mongodb://u:p@h:1,h2:2/x?w=1":    "x",
		"mongodb://h:1/?authSource=admin": "ycsb",
	} {
		c, err := parseConfig(props(propURL, url))
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		if c.database != want {
			t.Errorf("%s: database %q, want %q", url, c.database, want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	cases := map[string]string{
		"mongodb://localhost:27017/ycsb?w=1":                           "mongodb://localhost:27017/ycsb?w=1",
		"mongodb://bob:hunter22@h1:1,h2:2/db?w=1":                      "mongodb://REDACTED:REDACTED@h1:1,h2:2/db?w=1",
		"mongodb+srv://bob:p%40ss@cluster.example/":                    "mongodb+srv://REDACTED:REDACTED@cluster.example/",
		"mongodb://x509user@h/db":                                      "mongodb://REDACTED@h/db",
		"mongodb://bob:pa@ss/word@h/db":                                "mongodb://REDACTED:REDACTED@h/db", // unescaped: still covered
		"mongodb://h/db?tlsCertificateKeyFilePassword=topsecret&w=1":   "mongodb://h/db?tlsCertificateKeyFilePassword=REDACTED&w=1",
		"mongodb://h/db?authMechanismProperties=AWS_SESSION_TOKEN:tok": "mongodb://h/db?authMechanismProperties=REDACTED",
	}
	for in, want := range cases {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScrub(t *testing.T) {
	c := &config{secrets: secretsOf("mongodb://alice:p%40ssw0rd@h/db?tlsCertificateKeyFilePassword=kfp123")}
	msg := "auth failed for alice with p@ssw0rd / p%40ssw0rd, key kfp123, uri mongodb://alice:p%40ssw0rd@h/db"
	got := c.scrub(msg)
	for _, secret := range []string{"alice", "p@ssw0rd", "p%40ssw0rd", "kfp123"} {
		if strings.Contains(got, secret) {
			t.Errorf("scrubbed message still contains %q: %s", secret, got)
		}
	}
}

// Every configuration error names the property at fault and never shows a
// password.
func TestConfigErrors(t *testing.T) {
	const pw = "Sup3rSecretPw"
	cases := []struct {
		prop  string
		props *properties.Properties
	}{
		{propURL, props(propURL, "http://bob:"+pw+"@h/db")},
		{propURL, props(propURL, "mongodb://bob:"+pw+"@h/db?w=0&journal=true")},
		{propURL, props(propURL, "mongodb://bob:"+pw+"@h/db?connectTimeoutMS=banana")},
		{propTimeout, props(propTimeout, "0")},
		{propTimeout, props(propTimeout, "10s")},
		{propConnTimout, props(propConnTimout, "-1")},
		{propInitChunks, props(propInitChunks, "-5")},
		{propInitChunks, props(propInitChunks, "99999999999")},
		{propUpsert, props(propUpsert, "yes")},
		{propBatchSize, props(propBatchSize, "0")},
		{propTable, props(propTable, "user$table")},
		{propWriteConc, props(propWriteConc, "sometimes")},
		{propReadPref, props(propReadPref, "secondaryish")},
		{propMaxConns, props(propMaxConns, "0")},
	}
	for _, tc := range cases {
		_, err := parseConfig(tc.props)
		if err == nil {
			t.Errorf("%v: no error", tc.props.Map())
			continue
		}
		var pe *properties.Error
		if !errors.As(err, &pe) || pe.Property != tc.prop {
			t.Errorf("%v: error %q does not name %s", tc.props.Map(), err, tc.prop)
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("error leaks the password: %s", err)
		}
	}
}

func TestLegacyOptions(t *testing.T) {
	cases := []struct {
		url  string
		kv   []string
		want string
	}{
		{"mongodb://h/db", []string{propWriteConc, "majority"}, "mongodb://h/db?w=majority"},
		{"mongodb://h", []string{propWriteConc, "acknowledged"}, "mongodb://h/?w=1"},
		{"mongodb://h/db?w=1", []string{propWriteConc, "majority"}, "mongodb://h/db?w=1"}, // URL wins
		{"mongodb://h/db?w=1", []string{propWriteConc, "JOURNALED"}, "mongodb://h/db?w=1&journal=true"},
		{"mongodb://h/db?", []string{propReadPref, "secondary_preferred"}, "mongodb://h/db?readPreference=secondaryPreferred"},
		{"mongodb://h/db?readpreference=nearest", []string{propReadPref, "primary"}, "mongodb://h/db?readpreference=nearest"},
		{"mongodb://h/db", []string{propMaxConns, "64"}, "mongodb://h/db?maxPoolSize=64"},
		{"mongodb://h/db", []string{propWaitQueue, "5"}, "mongodb://h/db"}, // accepted, ignored
	}
	for _, tc := range cases {
		c, err := parseConfig(props(append([]string{propURL, tc.url}, tc.kv...)...))
		if err != nil {
			t.Errorf("%s %v: %v", tc.url, tc.kv, err)
			continue
		}
		if c.url != tc.want {
			t.Errorf("%s %v: url %q, want %q", tc.url, tc.kv, c.url, tc.want)
		}
	}
}

func extJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := bson.MarshalExtJSON(v, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The sharding path cannot run here (no mongos), so pin the exact command
// documents: the command name must be the first key.
func TestShardCommands(t *testing.T) {
	if got, want := extJSON(t, enableShardingCmd("ycsb")), `{"enableSharding":"ycsb"}`; got != want {
		t.Errorf("enableSharding: %s, want %s", got, want)
	}
	if got, want := extJSON(t, shardCollectionCmd("ycsb", "usertable", 0)),
		`{"shardCollection":"ycsb.usertable","key":{"_id":"hashed"}}`; got != want {
		t.Errorf("shardCollection: %s, want %s", got, want)
	}
	if got, want := extJSON(t, shardCollectionCmd("db1", "t", 64)),
		`{"shardCollection":"db1.t","key":{"_id":"hashed"},"numInitialChunks":{"$numberInt":"64"}}`; got != want {
		t.Errorf("shardCollection with chunks: %s, want %s", got, want)
	}
	if !isMongosReply(helloReply{Msg: "isdbgrid"}) || isMongosReply(helloReply{}) {
		t.Error("isMongosReply")
	}
	// The hello decoding must pick msg out of a real-looking reply.
	raw, _ := bson.Marshal(bson.D{{Key: "isWritablePrimary", Value: true}, {Key: "msg", Value: "isdbgrid"}, {Key: "ok", Value: 1.0}})
	var r helloReply
	if err := bson.Unmarshal(raw, &r); err != nil || !isMongosReply(r) {
		t.Errorf("decode hello: %v %+v", err, r)
	}
}

func TestSchemaProps(t *testing.T) {
	d := &DB{cfg: &config{table: "usertable", initialChunks: 8}}
	table, chunks, err := d.schemaProps(props(propTable, "t2"))
	if err != nil || table != "t2" || chunks != 8 {
		t.Errorf("got %q %d %v", table, chunks, err)
	}
	if _, _, err := d.schemaProps(props(propInitChunks, "x")); err == nil || !strings.Contains(err.Error(), propInitChunks) {
		t.Errorf("bad chunks: %v", err)
	}
}

// The hand-built documents must be byte-identical to what the driver's
// marshaller makes of the equivalent bson.D.
func TestBSONEncoding(t *testing.T) {
	bin := func(s string) bson.Binary { return bson.Binary{Subtype: 0, Data: []byte(s)} }
	vals := []adapters.Field{{Name: "field0", Value: []byte("abc")}, {Name: "field1", Value: []byte{}}}
	cases := []struct {
		name string
		got  []byte
		want bson.D
	}{
		{"id filter", appendIDFilter(nil, []byte("user1")), bson.D{{Key: "_id", Value: "user1"}}},
		{"scan filter", appendScanFilter(nil, []byte("user1")), bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: "user1"}}}}},
		{"projection", appendProjection(nil, []string{"field2", "field7"}), bson.D{{Key: "field2", Value: int32(1)}, {Key: "field7", Value: int32(1)}}},
		{"record", appendRecord(nil, []byte("user9"), vals), bson.D{{Key: "_id", Value: "user9"}, {Key: "field0", Value: bin("abc")}, {Key: "field1", Value: bin("")}}},
		{"set", appendSetUpdate(nil, vals), bson.D{{Key: "$set", Value: bson.D{{Key: "field0", Value: bin("abc")}, {Key: "field1", Value: bin("")}}}}},
		{"sort", sortByID, bson.D{{Key: "_id", Value: int32(1)}}},
	}
	for _, tc := range cases {
		want, err := bson.Marshal(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tc.got, want) {
			t.Errorf("%s: %x, want %x", tc.name, tc.got, want)
		}
	}
	// Appending after existing bytes must not disturb them.
	buf := appendIDFilter(nil, []byte("a"))
	n := len(buf)
	buf = appendIDFilter(buf, []byte("bb"))
	if err := bson.Raw(buf[:n]).Validate(); err != nil {
		t.Error(err)
	}
	if err := bson.Raw(buf[n:]).Validate(); err != nil {
		t.Error(err)
	}
}

func TestFillRecord(t *testing.T) {
	raw, _ := bson.Marshal(bson.D{
		{Key: "_id", Value: "user5"},
		{Key: "field0", Value: bson.Binary{Data: []byte("v0")}},
		{Key: "field1", Value: "v1"}, // strings are accepted too
		{Key: "n", Value: int32(7)},  // other types are ignored, as in YCSB
		{Key: "field2", Value: bson.Binary{Subtype: 0x80, Data: []byte("v2")}},
	})
	var in interner
	var rec adapters.Record
	if !fillRecord(raw, nil, &in, &rec) {
		t.Fatal("fillRecord failed")
	}
	got := map[string]string{}
	for _, f := range rec.Fields {
		got[f.Name] = string(f.Value)
	}
	want := map[string]string{"field0": "v0", "field1": "v1", "field2": "v2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("all fields: %v, want %v", got, want)
	}
	rec.Reset()
	fillRecord(raw, []string{"field1"}, &in, &rec)
	if len(rec.Fields) != 1 || rec.Fields[0].Name != "field1" || string(rec.Fields[0].Value) != "v1" {
		t.Errorf("subset: %+v", rec.Fields)
	}
	if id, ok := idOf(raw); !ok || string(id) != "user5" {
		t.Errorf("idOf: %q %v", id, ok)
	}
	// Malformed input is reported, never a panic.
	for _, bad := range [][]byte{nil, {1, 2}, raw[:len(raw)-3], append(append([]byte{}, raw[:len(raw)-1]...), 9)} {
		rec.Reset()
		if fillRecord(bad, nil, &in, &rec) {
			t.Errorf("malformed %x accepted", bad)
		}
		idOf(bad)
	}
}

// A read of all fields into a reused Record must not allocate (the hot
// path of every YCSB read).
func TestFillRecordAllocs(t *testing.T) {
	vals := make([]adapters.Field, 10)
	for i := range vals {
		vals[i] = adapters.Field{Name: fmt.Sprintf("field%d", i), Value: bytes.Repeat([]byte{'x'}, 100)}
	}
	raw := appendRecord(nil, []byte("user1"), vals)
	var in interner
	var rec adapters.Record
	fillRecord(raw, nil, &in, &rec)
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		rec.Reset()
		fillRecord(raw, nil, &in, &rec)
		buf = appendRecord(buf[:0], []byte("user1"), vals)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per read+encode, want 0", allocs)
	}
}

func TestClassify(t *testing.T) {
	dup := mongo.WriteException{WriteErrors: []mongo.WriteError{{Code: 11000, Message: "E11000 duplicate key"}}}
	cases := []struct {
		err  error
		want adapters.Status
	}{
		{nil, adapters.OK},
		{mongo.ErrNoDocuments, adapters.NotFound},
		{fmt.Errorf("wrapped: %w", mongo.ErrNoDocuments), adapters.NotFound},
		{dup, adapters.Error},
		{context.DeadlineExceeded, adapters.ServiceUnavailable},
		{topology.ServerSelectionError{Wrapped: errors.New("connection refused")}, adapters.ServiceUnavailable},
		{mongo.CommandError{Code: 91, Message: "shutting down"}, adapters.ServiceUnavailable},
		{mongo.CommandError{Code: 10107, Message: "not primary"}, adapters.ServiceUnavailable},
		{mongo.CommandError{Code: 13, Message: "unauthorized"}, adapters.Forbidden},
		{mongo.CommandError{Code: 2, Message: "bad value"}, adapters.Error},
		{mongo.ErrClientDisconnected, adapters.Error},
		{errors.New("something else"), adapters.Error},
	}
	for _, tc := range cases {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// Open must fail fast, naming the property and hiding the password, when
// nothing listens (port 1 on loopback is closed).
func TestOpenUnreachable(t *testing.T) {
	const pw = "Sup3rSecretPw"
	p := props(propURL, "mongodb://bob:"+pw+"@127.0.0.1:1/db", propConnTimout, "300")
	start := time.Now()
	db, err := Open(context.Background(), p)
	if err == nil {
		t.Fatalf("Open succeeded against a closed port (close: %v)", db.(adapters.Closer).Close())
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Open took %v with a 300 ms connect timeout", el)
	}
	msg := err.Error()
	if !strings.Contains(msg, propURL) || !strings.Contains(msg, "127.0.0.1:1") || strings.Contains(msg, pw) || strings.Contains(msg, "bob") {
		t.Errorf("error: %s", msg)
	}
}

func TestBalancerAndBatchProperties(t *testing.T) {
	c, err := parseConfig(props(propBalancer, "false", propBatchSize, "3"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.stopBalancer || c.batchSize != 3 {
		t.Fatalf("config %+v", c)
	}
	if c, _ := parseConfig(properties.New()); c.stopBalancer {
		t.Fatal("balancer stopped by default")
	}
	if _, err := parseConfig(props(propBalancer, "off")); err == nil || !strings.Contains(err.Error(), propBalancer) {
		t.Fatalf("bad balancer value: %v", err)
	}
	if got := fmt.Sprint(balancerStopCmd()); got != `{"balancerStop":{"$numberInt":"1"}}` {
		t.Fatalf("balancerStop command %s", got)
	}
	if got := fmt.Sprint(shardCollectionCmd("ycsb", "usertable", 8)); !strings.Contains(got, `"numInitialChunks":{"$numberInt":"8"}`) {
		t.Fatalf("shardCollection command %s", got)
	}
}

// TestWorkerBuffersRunPhaseInserts checks the per-thread buffer without a
// server: with batchsize 3 the first two inserts are BATCHED_OK and only
// buffered (copies of the caller's reused memory).
func TestWorkerBuffersRunPhaseInserts(t *testing.T) {
	c, err := parseConfig(props(propBatchSize, "3"))
	if err != nil {
		t.Fatal(err)
	}
	d := &DB{cfg: c}
	h, err := d.ForWorker(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := h.(*batchWorker)
	key := []byte("user1")
	val := []byte("abc")
	for i := 0; i < 2; i++ {
		if st := w.Insert(context.Background(), "usertable", key, []adapters.Field{{Name: "field0", Value: val}}); st != adapters.BatchedOK {
			t.Fatalf("insert %d: %v", i, st)
		}
		key[4]++
		val[0]++
	}
	if len(w.keys) != 2 || string(w.keys[0]) != "user1" || string(w.keys[1]) != "user2" || string(w.values[0][0].Value) != "abc" {
		t.Fatalf("buffer %q %v", w.keys, w.values)
	}
	one, _ := parseConfig(properties.New())
	if h, _ := (&DB{cfg: one}).ForWorker(context.Background(), 0, 1); h.(*DB) == nil {
		t.Fatal("batchsize 1 should share the DB")
	}
}

func TestDeclaresEveryPropertyRead(t *testing.T) {
	info, err := adapters.Lookup("site.ycsb.db.MongoDbClient")
	if err != nil {
		t.Fatal(err)
	}
	p := properties.New()
	p.TrackReads()
	c, err := parseConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	d := &DB{cfg: c}
	if _, _, err := d.schemaProps(p); err != nil {
		t.Fatal(err)
	}
	if _, err := parseStopBalancer(p, false); err != nil {
		t.Fatal(err)
	}
	if u := info.Undeclared(p.ReadKeys()); len(u) > 0 {
		t.Errorf("read but not declared: %v (read %v)", u, p.ReadKeys())
	}
}

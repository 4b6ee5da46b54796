package cassandra

import (
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

func TestParseConfig(t *testing.T) {
	c, err := parseConfig(properties.FromMap(map[string]string{
		"hosts": " 10.0.0.1, 10.0.0.2:9043 ", "cassandra.readconsistencylevel": "quorum",
		"cassandra.coreconnections": "3", "cassandra.maxconnections": "5",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.hosts) != 2 || c.port != 9042 || c.keyspace != "ycsb" || c.table != "usertable" {
		t.Errorf("unexpected config %+v", c)
	}
	// YCSB's CassandraCQLClient defaults both levels to QUORUM.
	if c.readCL != gocql.Quorum || c.writeCL != gocql.Quorum || c.numConns != 5 {
		t.Errorf("consistency/conns: %v %v %d", c.readCL, c.writeCL, c.numConns)
	}
	// Neither connection property: one connection per host, as the
	// DataStax 3.x driver under Java YCSB opens with protocol v3+.
	if d, err := parseConfig(properties.FromMap(map[string]string{"hosts": "h"})); err != nil || d.numConns != 1 {
		t.Errorf("default connections per host: %+v, %v; want 1", d, err)
	}
	if got := hostList(c); got != "10.0.0.1:9042,10.0.0.2:9043" {
		t.Errorf("hostList = %s", got)
	}
	for props, want := range map[string]string{
		"":                                             "hosts",
		"hosts=h;cassandra.tracing=maybe":              "cassandra.tracing",
		"hosts=h;cassandra.maxconnections=0":           "cassandra.maxconnections",
		"hosts=h;cassandra.username=u":                 "cassandra.username",
		"hosts=h;table=user-table":                     "table",
		"hosts=h;cassandra.readtimeoutmillis=x":        "cassandra.readtimeoutmillis",
		"hosts=h;cassandra.writeconsistencylevel=most": "cassandra.writeconsistencylevel",
		"hosts=h;cassandra.useSSL=yes":                 "cassandra.useSSL",
		"hosts=h;cassandra.ssl.ca=/x.pem":              "cassandra.ssl.ca",
		"hosts=h;cassandra.useSSL=true;cassandra.ssl.ca=/nonexistent.pem": "cassandra.ssl.ca",
		"hosts=h;cassandra.useSSL=true;cassandra.ssl.cert=/c.pem":         "cassandra.ssl.cert",
		"hosts=h;cassandra.useSSL=true;cassandra.ssl.verifyhost=no":       "cassandra.ssl.verifyhost",
		"hosts=h;cassandra.writecoalescemicros=-1":                        "cassandra.writecoalescemicros",
		"hosts=h;cassandra.writecoalescemicros=2000000":                   "cassandra.writecoalescemicros",
	} {
		m := map[string]string{}
		for _, kv := range strings.Split(props, ";") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				m[k] = v
			}
		}
		_, err := parseConfig(properties.FromMap(m))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one naming %s", props, err, want)
		}
	}
	// The password is never part of an error.
	_, err = parseConfig(properties.FromMap(map[string]string{"hosts": "h", "cassandra.password": "pw-secret"}))
	if err == nil || strings.Contains(err.Error(), "pw-secret") {
		t.Errorf("error %v", err)
	}
}

func TestStatementCache(t *testing.T) {
	d := &DB{keyspace: "ycsb"}
	read := func(fields []string) *stmt {
		return lookup(&d.stmts, opRead, "usertable", nameList(fields), d.buildRead)
	}
	all := read(nil)
	if all.cql != "SELECT * FROM ycsb.usertable WHERE y_id = ?" {
		t.Errorf("read all: %s", all.cql)
	}
	two := read([]string{"field1", "field2"})
	if two.cql != "SELECT field1, field2 FROM ycsb.usertable WHERE y_id = ?" {
		t.Errorf("read two: %s", two.cql)
	}
	if read([]string{"field1", "field2"}) != two || read(nil) != all {
		t.Error("cache miss for a known list")
	}
	if read([]string{"field2", "field1"}) == two || read([]string{}) == all {
		t.Error("different lists share a statement")
	}
	vals := []adapters.Field{{Name: "field0"}, {Name: "field3"}}
	ins := lookup(&d.stmts, opInsert, "usertable", fieldList(vals), d.buildInsert)
	if ins.cql != "INSERT INTO ycsb.usertable (y_id, field0, field3) VALUES (?, ?, ?)" {
		t.Errorf("insert: %s", ins.cql)
	}
	upd := lookup(&d.stmts, opUpdate, "usertable", fieldList(vals), d.buildUpdate)
	if upd.cql != "UPDATE ycsb.usertable SET field0 = ?, field3 = ? WHERE y_id = ?" {
		t.Errorf("update: %s", upd.cql)
	}
	scan := lookup(&d.stmts, opScan, "usertable", nameList([]string{"field5"}), d.buildScan)
	if scan.cql != "SELECT y_id, field5 FROM ycsb.usertable WHERE token(y_id) >= token(?) LIMIT ?" {
		t.Errorf("scan: %s", scan.cql)
	}
	fields := []string{"field1", "field2"}
	if n := testing.AllocsPerRun(100, func() { read(fields) }); n > 0 {
		t.Errorf("cached lookup allocates %.0f times", n)
	}
}

func TestStatusOf(t *testing.T) {
	if statusOf(gocql.ErrNoConnections) != adapters.ServiceUnavailable ||
		statusOf(gocql.ErrTimeoutNoResponse) != adapters.ServiceUnavailable ||
		statusOf(gocql.ErrNotFound) != adapters.NotFound {
		t.Error("wrong mapping")
	}
}

func TestDefaultsFollowYCSB(t *testing.T) {
	c, err := parseConfig(properties.FromMap(map[string]string{"hosts": "h"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.readCL != gocql.Quorum || c.writeCL != gocql.Quorum {
		t.Errorf("default consistency read %v write %v, want QUORUM (YCSB's default)", c.readCL, c.writeCL)
	}
	if c.tls != nil || c.tracing {
		t.Errorf("TLS or tracing on by default")
	}
	// Requests go out at once, as with the DataStax driver, unless write
	// coalescing is asked for.
	if c.writeCoalesce != 0 {
		t.Errorf("default write coalescing %v, want 0", c.writeCoalesce)
	}
	c, err = parseConfig(properties.FromMap(map[string]string{"hosts": "h", "cassandra.writecoalescemicros": "200"}))
	if err != nil || c.writeCoalesce != 200*time.Microsecond {
		t.Errorf("writecoalescemicros=200: %v %v", c, err)
	}
	info, err := adapters.Lookup("site.ycsb.db.CassandraCQLClient")
	if err != nil || info.Name != "cassandra" {
		t.Fatalf("class lookup: %v %v", info, err)
	}
	for _, k := range info.Properties {
		if k.Name == propReadCL && k.Default != "QUORUM" {
			t.Errorf("declared default of %s is %q", propReadCL, k.Default)
		}
	}
}

func TestSchemaOptions(t *testing.T) {
	d := &DB{keyspace: "ycsb", table: "usertable"}
	s, err := d.schemaFrom(properties.FromMap(map[string]string{propCompression: "ZstdCompressor", propCompaction: "LeveledCompactionStrategy"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.tableOptions(); got != " WITH compression = {'class': 'ZstdCompressor'} AND compaction = {'class': 'LeveledCompactionStrategy'}" {
		t.Errorf("options %q", got)
	}
	s, err = d.schemaFrom(properties.FromMap(map[string]string{propCompression: "none"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.tableOptions(), "'enabled': 'false'") {
		t.Errorf("none: %q", s.tableOptions())
	}
	for k, v := range map[string]string{propCompression: "gzip", propCompaction: "Leveled"} {
		_, err := d.schemaFrom(properties.FromMap(map[string]string{k: v}))
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: error %v", k, v, err)
		}
	}
}

// TestDeclaresEveryPropertyRead parses the configuration and the schema
// properties with read tracking on; the integration test also covers Open,
// init and drop against a real server.
func TestDeclaresEveryPropertyRead(t *testing.T) {
	info, err := adapters.Lookup("cassandra")
	if err != nil {
		t.Fatal(err)
	}
	p := properties.FromMap(map[string]string{"hosts": "h"})
	p.TrackReads()
	if _, err := parseConfig(p); err != nil {
		t.Fatal(err)
	}
	d := &DB{keyspace: "ycsb", table: "usertable"}
	if _, err := d.schemaFrom(p); err != nil {
		t.Fatal(err)
	}
	if len(p.ReadKeys()) < 10 {
		t.Fatalf("tracking saw only %v", p.ReadKeys())
	}
	if u := info.Undeclared(p.ReadKeys()); len(u) > 0 {
		t.Errorf("read but not declared: %v", u)
	}
}

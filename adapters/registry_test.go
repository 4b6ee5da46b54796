package adapters_test

import (
	"strings"
	"testing"

	"github.com/ycsbctl/ycsbctl/adapters"
	_ "github.com/ycsbctl/ycsbctl/adapters/all"
)

// TestYCSBClassNames checks that the class names of YCSB's bindings
// (bin/bindings.properties, old com.yahoo and current site.ycsb packages)
// select the adapters.
func TestYCSBClassNames(t *testing.T) {
	for class, want := range map[string]string{
		"site.ycsb.BasicDB":                  "basic",
		"com.yahoo.ycsb.BasicDB":             "basic",
		"site.ycsb.db.CassandraCQLClient":    "cassandra",
		"site.ycsb.db.MongoDbClient":         "mongodb",
		"site.ycsb.db.hbase2.HBaseClient2":   "hbase",
		"site.ycsb.db.hbase1.HBaseClient1":   "hbase",
		"site.ycsb.db.HBaseClient10":         "hbase",
		"com.yahoo.ycsb.db.HBaseClient10":    "hbase",
		"cassandra-cql":                      "cassandra",
		"hbase2":                             "hbase",
		"site.ycsb.db.hbase20.HBaseClient20": "hbase",
	} {
		info, err := adapters.Lookup(class)
		if err != nil || info.Name != want {
			t.Errorf("%s: %v %v, want %s", class, info, err, want)
		}
	}
	_, err := adapters.Lookup("site.ycsb.db.RedisClient")
	if err == nil || !strings.Contains(err.Error(), "site.ycsb.db.CassandraCQLClient") || !strings.Contains(err.Error(), "embedded") {
		t.Errorf("unknown class: %v", err)
	}
	for _, n := range adapters.Names() {
		info, _ := adapters.Lookup(n)
		for _, k := range info.Properties {
			if k.Name == "" || k.Help == "" {
				t.Errorf("%s declares a property without a name or help: %+v", info.Name, k)
			}
		}
	}
}

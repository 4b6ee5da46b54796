package mongodb

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// rawDoc turns Extended JSON into the raw reply RunCommand hands back.
func rawDoc(t *testing.T, extJSON []byte) bson.Raw {
	t.Helper()
	var d bson.D
	require.NoError(t, bson.UnmarshalExtJSON(extJSON, true, &d))
	raw, err := bson.Marshal(d)
	require.NoError(t, err)
	return raw
}

// metricsOf indexes a reading's figures by name.
func metricsOf(r adapters.InternalsReading) map[string]adapters.Metric {
	out := map[string]adapters.Metric{}
	for _, m := range r.Metrics {
		out[m.Name] = m
	}
	return out
}

// The CI has only FerretDB, which answers serverStatus in part: the
// mapping of a real mongod's reply is checked here on a reply shaped as
// a standalone mongod 7.0 gives it (testdata/serverstatus-mongod-7.0.json,
// written from the documented field names and types: opcounters and the
// WiredTiger statistics as 64-bit integers, connections, queues and
// tickets as 32-bit ones, mem.resident in MiB). 7.0 has no "queues"
// section: its storage-engine tickets are in
// wiredTiger.concurrentTransactions, its lock queues in globalLock.
func TestServerStatusOfMongod70(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "serverstatus-mongod-7.0.json"))
	require.NoError(t, err)
	r := statusReading(rawDoc(t, b), "127.0.0.1:27017")
	assert.Equal(t, "MongoDB 7.0.14", r.Product)
	assert.Equal(t, "serverStatus on 127.0.0.1:27017", r.Source)
	want := map[string]adapters.Metric{
		"opcounters.insert":       {Value: 1000000, Counter: true},
		"opcounters.query":        {Value: 2481733, Counter: true},
		"opcounters.update":       {Value: 2479102, Counter: true},
		"opcounters.delete":       {Value: 0, Counter: true},
		"opcounters.getmore":      {Value: 41, Counter: true},
		"opcounters.command":      {Value: 10233, Counter: true},
		"cache_bytes":             {Value: 1610612736},
		"cache_dirty_bytes":       {Value: 201326592},
		"cache_max_bytes":         {Value: 3221225472},
		"connections.current":     {Value: 38},
		"connections.available":   {Value: 838822},
		"queued.readers":          {Value: 3},
		"queued.writers":          {Value: 2},
		"active.readers":          {Value: 12},
		"active.writers":          {Value: 8},
		"mem.resident_mb":         {Value: 1843},
		"tickets.read.out":        {Value: 12},
		"tickets.read.available":  {Value: 116},
		"tickets.write.out":       {Value: 8},
		"tickets.write.available": {Value: 120},
	}
	got := metricsOf(r)
	for name, w := range want {
		w.Name = name
		assert.Equal(t, w, got[name], name)
	}
	assert.Len(t, got, len(want), "no figure beyond those named: %v", r.Metrics)
	assert.IsNonDecreasing(t, names(r), "figures sorted by name")
}

func names(r adapters.InternalsReading) []string {
	var out []string
	for _, m := range r.Metrics {
		out = append(out, m.Name)
	}
	return out
}

// A mongos has no storage engine: no cache or ticket figures are made up
// (zeros would read as an empty cache), and the product says mongos.
func TestServerStatusOfMongos(t *testing.T) {
	r := statusReading(rawDoc(t, []byte(`{"version": "7.0.14", "process": "mongos",
		"connections": {"current": {"$numberInt": "9"}, "available": {"$numberInt": "838851"}},
		"opcounters": {"insert": {"$numberLong": "5"}, "query": {"$numberLong": "7"}, "update": {"$numberLong": "0"},
			"delete": {"$numberLong": "0"}, "getmore": {"$numberLong": "0"}, "command": {"$numberLong": "31"}},
		"mem": {"bits": {"$numberInt": "64"}, "resident": {"$numberInt": "61"}, "virtual": {"$numberInt": "1220"}, "supported": true},
		"ok": {"$numberDouble": "1.0"}}`)), "r1:27017")
	assert.Equal(t, "MongoDB 7.0.14 (mongos)", r.Product)
	got := metricsOf(r)
	assert.Equal(t, 5.0, got["opcounters.insert"].Value)
	for _, absent := range []string{"cache_bytes", "cache_dirty_bytes", "tickets.read.out", "queued.readers"} {
		assert.NotContains(t, got, absent)
	}
}

// Servers after 7.0 report the storage-engine tickets under
// queues.execution instead of wiredTiger.concurrentTransactions; the same
// figures are read from there.
func TestServerStatusTicketsMoved(t *testing.T) {
	r := statusReading(rawDoc(t, []byte(`{"version": "8.0.4", "process": "mongod",
		"queues": {"execution": {
			"write": {"out": {"$numberInt": "3"}, "available": {"$numberInt": "0"}, "totalTickets": {"$numberInt": "3"}},
			"read": {"out": {"$numberInt": "1"}, "available": {"$numberInt": "6"}, "totalTickets": {"$numberInt": "7"}}}},
		"ok": {"$numberDouble": "1.0"}}`)), "127.0.0.1:27017")
	got := metricsOf(r)
	assert.Equal(t, 3.0, got["tickets.write.out"].Value)
	assert.Equal(t, 0.0, got["tickets.write.available"].Value)
	assert.Contains(t, got, "tickets.write.available", "a figure of 0 is kept: no ticket left is the finding")
	assert.Equal(t, 6.0, got["tickets.read.available"].Value)
}

// BenchmarkServerStatusReading is ycsbctl's side of a serverStatus read,
// once per interval: the reply's bytes (a mongod 7.0's, as the driver
// hands them over) looked up into a reading. The fixture holds the
// sections read and a few others; a full reply is tens of KB more, which
// the lookups skip over, so a real one costs somewhat more. The command's
// round trip is the server's time. Printed, never asserted.
func BenchmarkServerStatusReading(b *testing.B) {
	ext, err := os.ReadFile(filepath.Join("testdata", "serverstatus-mongod-7.0.json"))
	require.NoError(b, err)
	var d bson.D
	require.NoError(b, bson.UnmarshalExtJSON(ext, true, &d))
	raw, err := bson.Marshal(d)
	require.NoError(b, err)
	for b.Loop() {
		_ = statusReading(raw, "127.0.0.1:27017")
	}
}

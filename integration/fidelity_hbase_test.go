//go:build integration

package integration

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
	_ "github.com/ycsbctl/ycsbctl/adapters/hbase"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// hbaseTableDescriptor reads the descriptor HBase wrote for table under its
// root directory (standalone mode keeps it on the local disk):
// data/default/<table>/.tabledesc/.tableinfo.*, "PBUF" then a TableSchema.
func hbaseTableDescriptor(t *testing.T, table string) (family, tableAttrs map[string]string) {
	t.Helper()
	dir := filepath.Join(serversDir(t), "hbase", "run", "data", "hbase", "data", "default", table, ".tabledesc")
	files, err := filepath.Glob(filepath.Join(dir, ".tableinfo.*"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no descriptor in %s", dir)
	b, err := os.ReadFile(files[len(files)-1])
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "PBUF"), "descriptor magic")
	var ts pb.TableSchema
	require.NoError(t, proto.Unmarshal(b[4:], &ts))
	tableAttrs = map[string]string{}
	for _, a := range ts.GetAttributes() {
		tableAttrs[string(a.GetFirst())] = string(a.GetSecond())
	}
	require.Len(t, ts.GetColumnFamilies(), 1)
	family = map[string]string{}
	for _, a := range ts.GetColumnFamilies()[0].GetAttributes() {
		family[string(a.GetFirst())] = string(a.GetSecond())
	}
	return family, tableAttrs
}

// hbaseRegionDirs counts the region directories of table on disk.
func hbaseRegionDirs(t *testing.T, table string) int {
	t.Helper()
	dir := filepath.Join(serversDir(t), "hbase", "run", "data", "hbase", "data", "default", table)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// TestHBaseFidelity checks, against a real standalone HBase 2.6.4, each
// property YCSB's HBaseClient2 reads, the init options, and the buffered
// write mode (latency against unbuffered, nothing lost, CLEANUP reported).
func TestHBaseFidelity(t *testing.T) {
	quorum := startServer(t, "hbase")
	info, err := adapters.Lookup("site.ycsb.db.hbase2.HBaseClient2")
	require.NoError(t, err)
	base := map[string]string{"hbase.zookeeper.quorum": quorum, "columnfamily": "family", "hbase.timeout": "20000"}
	props := func(extra ...string) *properties.Properties {
		p := properties.FromMap(base)
		p.SetPairs(extra...)
		return p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	open := func(t *testing.T, p *properties.Properties) adapters.DB {
		t.Helper()
		db, err := info.Driver.Open(ctx, p)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.(adapters.Closer).Close() })
		return db
	}
	admin := open(t, props())
	sm := admin.(adapters.SchemaManager)

	t.Run("InitOptions", func(t *testing.T) {
		p := props("table", "fidopts", "hbase.compression", "GZ", "hbase.datablockencoding", "FAST_DIFF",
			"hbase.blockcache", "false", "hbase.inmemory", "true", "hbase.maxfilesize", "10737418240", "hbase.presplit.regions", "4")
		p.TrackReads()
		db := open(t, p)
		msg, err := db.(adapters.SchemaManager).CreateSchema(ctx, p)
		require.NoError(t, err)
		t.Logf("init: %s", msg)
		for _, w := range []string{"COMPRESSION GZ", "DATA_BLOCK_ENCODING FAST_DIFF", "BLOCKCACHE false", "IN_MEMORY true", "MAX_FILESIZE 10737418240", "4 regions"} {
			assert.Contains(t, msg, w)
		}
		fam, tab := hbaseTableDescriptor(t, "fidopts")
		t.Logf("descriptor read back: family %v table %v", fam, tab)
		assert.Equal(t, "GZ", fam["COMPRESSION"])
		assert.Equal(t, "FAST_DIFF", fam["DATA_BLOCK_ENCODING"])
		assert.Equal(t, "false", fam["BLOCKCACHE"])
		assert.Equal(t, "true", fam["IN_MEMORY"])
		assert.Equal(t, "1", fam["VERSIONS"])
		assert.Equal(t, "10737418240", tab["MAX_FILESIZE"])
		assert.Equal(t, 4, hbaseRegionDirs(t, "fidopts"), "pre-split regions on disk")
		// Data written through the options reads back (GZ really works).
		k := []byte("user42")
		require.Equal(t, adapters.OK, db.Insert(ctx, "fidopts", k, []adapters.Field{{Name: "field0", Value: []byte("gz")}}))
		var rec adapters.Record
		require.Equal(t, adapters.OK, db.Read(ctx, "fidopts", k, nil, &rec))
		_, err = db.(adapters.SchemaManager).DropSchema(ctx, p)
		require.NoError(t, err)
		assert.Empty(t, info.Undeclared(p.ReadKeys()), "read but not declared")

		// The defaults are HBase's, not gohbase's.
		p = props("table", "fiddefaults", "hbase.presplit.regions", "1")
		_, err = sm.CreateSchema(ctx, p)
		require.NoError(t, err)
		fam, tab = hbaseTableDescriptor(t, "fiddefaults")
		assert.Equal(t, "NONE", fam["DATA_BLOCK_ENCODING"])
		assert.Equal(t, "NONE", fam["COMPRESSION"])
		assert.Empty(t, tab["MAX_FILESIZE"])
		_, err = sm.DropSchema(ctx, p)
		require.NoError(t, err)

		// Which codecs this HBase (no native libraries) accepts.
		for _, c := range []string{"SNAPPY", "LZ4", "ZSTD", "BZIP2"} {
			tbl := "fidcodec" + strings.ToLower(c)
			p := props("table", tbl, "hbase.compression", c, "hbase.presplit.regions", "1")
			cctx, ccancel := context.WithTimeout(ctx, 90*time.Second)
			msg, err := sm.CreateSchema(cctx, p)
			ccancel()
			if err != nil {
				t.Logf("compression %s: refused by the server: %.200s", c, err)
				assert.Contains(t, err.Error(), tbl, "the error names the table")
			} else {
				t.Logf("compression %s: %s", c, msg)
			}
			_, _ = sm.DropSchema(ctx, p)
		}
	})

	// The main table for the remaining checks.
	_, err = sm.CreateSchema(ctx, props())
	require.NoError(t, err)

	rows := []fidelityCheck{
		{prop: "columnfamily", check: func(t *testing.T) {
			fam, _ := hbaseTableDescriptor(t, "usertable")
			assert.Equal(t, "1", fam["VERSIONS"])
			_, err := info.Driver.Open(ctx, properties.FromMap(map[string]string{"hbase.zookeeper.quorum": quorum}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "columnfamily")
		}},
		{prop: "table", check: func(t *testing.T) {
			var rec adapters.Record
			st := admin.Read(ctx, "no_such_table", []byte("k"), nil, &rec)
			assert.NotEqual(t, adapters.OK, st, "a read of a missing table fails")
		}},
		{prop: "clientbuffering", check: func(t *testing.T) {
			// Buffered writes are not on the server until the buffer is
			// sent; the unbuffered adapter (admin) reads the server.
			db := open(t, props("clientbuffering", "true"))
			w, err := db.(adapters.Threader).ForWorker(ctx, 0, 1)
			require.NoError(t, err)
			k := []byte("user_buffered_1")
			require.Equal(t, adapters.OK, w.Insert(ctx, "usertable", k, []adapters.Field{{Name: "field0", Value: []byte("b")}}))
			var rec adapters.Record
			assert.Equal(t, adapters.NotFound, admin.Read(ctx, "usertable", k, nil, &rec), "buffered, not yet sent")
			require.NoError(t, w.(adapters.Closer).Close())
			assert.Equal(t, adapters.OK, admin.Read(ctx, "usertable", k, nil, &rec), "sent at cleanup")
		}},
		{prop: "writebuffersize", check: func(t *testing.T) {
			db := open(t, props("clientbuffering", "true", "writebuffersize", "100000"))
			w, err := db.(adapters.Threader).ForWorker(ctx, 0, 1)
			require.NoError(t, err)
			defer func() { _ = w.(adapters.Closer).Close() }()
			var rec adapters.Record
			firstVisible := -1
			for i := 0; i < 200 && firstVisible < 0; i++ {
				k := []byte(fmt.Sprintf("user_wbs_%03d", i))
				vals := make([]adapters.Field, 10)
				for f := range vals {
					vals[f] = adapters.Field{Name: "field" + strconv.Itoa(f), Value: make([]byte, 100)}
				}
				require.Equal(t, adapters.OK, w.Insert(ctx, "usertable", k, vals))
				if admin.Read(ctx, "usertable", []byte("user_wbs_000"), nil, &rec) == adapters.OK {
					firstVisible = i
				}
			}
			t.Logf("with writebuffersize=100000 the first buffered record reached the server after insert #%d", firstVisible)
			// ~1.9 KB per 10x100-byte record: the buffer fills at ~50.
			assert.Greater(t, firstVisible, 30)
			assert.Less(t, firstVisible, 80)
		}},
		{prop: "hbase.usescanvaluefiltering", check: func(t *testing.T) {
			for _, k := range []string{"userscan1", "userscan2", "userscan3"} {
				v := map[string]string{"userscan1": "aaa", "userscan2": "mmm", "userscan3": "zzz"}[k]
				require.Equal(t, adapters.OK, admin.Insert(ctx, "usertable", []byte(k), []adapters.Field{{Name: "field0", Value: []byte(v)}}))
			}
			scan := func(extra ...string) []string {
				db := open(t, props(extra...))
				var rows adapters.Rows
				require.Equal(t, adapters.OK, db.Scan(ctx, "usertable", []byte("userscan1"), 3, nil, &rows))
				var out []string
				for i := 0; i < rows.N; i++ {
					if strings.HasPrefix(string(rows.Keys[i]), "userscan") {
						out = append(out, string(rows.Keys[i]))
					}
				}
				return out
			}
			assert.Equal(t, []string{"userscan1", "userscan2", "userscan3"}, scan("hbase.usescanvaluefiltering", "false"))
			// YCSB's defaults (LESS_OR_EQUAL 0x7FFF...) keep printable values.
			assert.Equal(t, []string{"userscan1", "userscan2", "userscan3"}, scan("hbase.usescanvaluefiltering", "true"))
			m := hex.EncodeToString([]byte("mmm"))
			assert.Equal(t, []string{"userscan1", "userscan2"}, scan("hbase.usescanvaluefiltering", "true", "hbase.scanfiltervalue", m))
			assert.Equal(t, []string{"userscan3"}, scan("hbase.usescanvaluefiltering", "true", "hbase.scanfilteroperator", "greater", "hbase.scanfiltervalue", m))
		}},
		{prop: "hbase.scanfilteroperator", check: func(t *testing.T) {
			_, err := info.Driver.Open(ctx, props("hbase.usescanvaluefiltering", "true", "hbase.scanfilteroperator", "like"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "hbase.scanfilteroperator")
		}},
		{prop: "hbase.scanfiltervalue", check: func(t *testing.T) {
			_, err := info.Driver.Open(ctx, props("hbase.usescanvaluefiltering", "true", "hbase.scanfiltervalue", "0xZZ"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "hbase.scanfiltervalue")
		}},
		{prop: "hbase.usepagefilter", unverified: "a server-side PageFilter only trims what each region returns; the result a scan returns is the same either way"},
		{prop: "durability", unverified: "sent with every mutation; a standalone server does not expose the WAL mode per write"},
		{prop: "principal", differs: true},
		{prop: "keytab", differs: true},
		{prop: "debug", differs: true},
	}
	runFidelityTable(t, info, rows)

	t.Run("BufferedLoad", func(t *testing.T) { hbaseBufferedLoad(t, quorum, admin) })
}

// hbaseBufferedLoad loads the same number of records through the CLI
// unbuffered and buffered, prints the insert latencies of both, checks that
// the buffered load lost nothing (exact count and every record read back)
// and that its cleanup flush is reported as CLEANUP.
func hbaseBufferedLoad(t *testing.T, quorum string, admin adapters.DB) {
	const records, threads = 20000, 4
	sm := admin.(adapters.SchemaManager)
	type result struct {
		name           string
		p50, p99, max  float64
		cleanupAvg     float64
		cleanupMax     float64
		throughput     float64
		table          string
		cleanupSamples int64
	}
	var results []result
	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"unbuffered", nil},
		{"buffered, writebuffersize=1MiB", []string{"-p", "clientbuffering=true", "-p", "writebuffersize=1048576"}},
		{"buffered, writebuffersize=12MiB (YCSB default)", []string{"-p", "clientbuffering=true"}},
	} {
		table := "load" + strconv.Itoa(len(results))
		p := properties.FromMap(map[string]string{"table": table, "columnfamily": "family"})
		_, err := sm.CreateSchema(context.Background(), p)
		require.NoError(t, err)
		args := []string{"load", "-db", "site.ycsb.db.hbase2.HBaseClient2", "-P", "workloada",
			"-p", "hbase.zookeeper.quorum=" + quorum, "-p", "columnfamily=family", "-p", "table=" + table,
			"-p", "recordcount=" + strconv.Itoa(records), "-threads", strconv.Itoa(threads)}
		r := runCLI(t, cmdTimeout, "", append(args, c.extra...)...)
		requireExit(t, r, 0)
		s := parseSummary(t, r.stdout)
		require.Equal(t, map[string]int64{"OK": records}, s.returns("INSERT"), "%s", r)
		res := result{name: c.name, table: table,
			p50: s.float("INSERT", "50thPercentileLatency(us)"), p99: s.float("INSERT", "99thPercentileLatency(us)"),
			max: s.float("INSERT", "MaxLatency(us)"), throughput: s.float("OVERALL", "Throughput(ops/sec)"),
			cleanupAvg: s.float("CLEANUP", "AverageLatency(us)"), cleanupMax: s.float("CLEANUP", "MaxLatency(us)"),
			cleanupSamples: s.int("CLEANUP", "Operations")}
		results = append(results, res)

		// Nothing buffered is lost: the exact count, and every record.
		n, err := admin.(adapters.RecordCounter).CountRecords(context.Background(), table)
		require.NoError(t, err)
		require.Equal(t, int64(records), n, "%s: records in %s", c.name, table)
		var rec adapters.Record
		missing := 0
		for i := int64(0); i < records; i++ {
			if admin.Read(context.Background(), table, []byte(ycsbKeyFor(i)), nil, &rec) != adapters.OK || len(rec.Fields) != 10 {
				missing++
			}
		}
		require.Zero(t, missing, "%s: records that do not read back with 10 fields", c.name)
		_, err = sm.DropSchema(context.Background(), p)
		require.NoError(t, err)
	}
	for _, r := range results {
		t.Logf("HBase load of %d records, %d threads, %s: INSERT p50 %.0f us, p99 %.0f us, max %.0f us; %.0f records/s; CLEANUP %d samples, avg %.0f us, max %.0f us; all %d records read back",
			records, threads, r.name, r.p50, r.p99, r.max, r.throughput, r.cleanupSamples, r.cleanupAvg, r.cleanupMax, records)
	}
	unbuf, buf1, buf12 := results[0], results[1], results[2]
	assert.Less(t, buf1.p50*10, unbuf.p50, "buffered insert p50 well below unbuffered")
	assert.Less(t, buf12.p50*10, unbuf.p50, "buffered insert p50 well below unbuffered")
	assert.Equal(t, int64(threads), buf12.cleanupSamples)
	// With 12 MiB per thread and 5000 records each, nothing is sent before
	// cleanup: the whole load is written in CLEANUP, which must show it.
	assert.Greater(t, buf12.cleanupMax, 100*buf12.p50, "the cleanup flush is where the writes went")
	assert.Greater(t, buf12.cleanupMax, unbuf.cleanupMax)
}

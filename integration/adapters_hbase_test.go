//go:build integration

package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/ycsbctl/ycsbctl/adapters"
	_ "github.com/ycsbctl/ycsbctl/adapters/hbase"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// TestHBase runs the adapter suite against a real standalone HBase started
// by servers.sh, then stops it (the outage check is the last step).
func TestHBase(t *testing.T) {
	quorum := startServer(t, "hbase")
	t.Cleanup(func() { stopServer(t, "hbase") })

	const table = "usertable"
	props := properties.FromMap(map[string]string{
		"hbase.zookeeper.quorum": quorum,
		"table":                  table,
		"columnfamily":           "family",
		"fieldcount":             "10",
		"hbase.timeout":          "5000",
	})
	info, err := adapters.Lookup("hbase2")
	require.NoError(t, err)
	require.Equal(t, "hbase", info.Name)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := info.Driver.Open(ctx, props)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.(adapters.Closer).Close() })

	suite := &adapterSuite{
		db:         db,
		props:      props,
		table:      table,
		fieldCount: 10,
		// HBase scans rows in byte order of their keys.
		scanOrder: func(t *testing.T, keys []string) []string {
			out := append([]string(nil), keys...)
			sort.Strings(out)
			return out
		},
		stop:      func(t *testing.T) { stopServer(t, "hbase") },
		opTimeout: 5 * time.Second,
	}
	// HBase-specific: a scan may start at a key that does not exist, and
	// must then return the rows that sort after it, across regions (the
	// table is pre-split in 10 regions).
	suite.extra = func(t *testing.T, keys []string) {
		ordered := append([]string(nil), keys...)
		sort.Strings(ordered)
		var rows adapters.Rows
		for _, start := range []string{"user", "user5", "user9999"} {
			i := sort.SearchStrings(ordered, start)
			want := ordered[i:min(i+30, len(ordered))]
			require.Equal(t, adapters.OK, db.Scan(context.Background(), table, []byte(start), 30, nil, &rows))
			require.Equal(t, len(want), rows.N, "scan from %s", start)
			for j := range want {
				assert.Equal(t, want[j], string(rows.Keys[j]))
			}
		}
		t.Run("Workers", func(t *testing.T) { hbaseWorkers(t, db, quorum, table, keys) })
	}
	suite.run(t)
}

// TestHBaseConfigErrors checks property validation without a server.
func TestHBaseConfigErrors(t *testing.T) {
	info, err := adapters.Lookup("hbase")
	require.NoError(t, err)
	ctx := context.Background()
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, "columnfamily"},
		{map[string]string{"columnfamily": "f", "durability": "SOMETIMES"}, "durability"},
		{map[string]string{"columnfamily": "f", "hbase.timeout": "-1"}, "hbase.timeout"},
		{map[string]string{"columnfamily": "f", "clientbuffering": "maybe"}, "clientbuffering"},
	} {
		_, err := info.Driver.Open(ctx, properties.FromMap(c.props))
		require.Error(t, err, "%v", c.props)
		require.Contains(t, err.Error(), c.want)
	}
	// Unreachable quorum: Open fails within its timeout, naming the quorum.
	t0 := time.Now()
	_, err = info.Driver.Open(ctx, properties.FromMap(map[string]string{
		"columnfamily": "f", "hbase.zookeeper.quorum": "127.0.0.1:1", "hbase.timeout": "2000",
	}))
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "hbase.zookeeper.quorum"), err.Error())
	require.Less(t, time.Since(t0), 10*time.Second)
}

// hbaseWorkers checks the handles the engine gives its threads
// (adapters.Threader: each worker's reused Get and Put calls), which the
// suite above, calling the DB itself, does not reach. 16 workers at once
// insert, update and read rows of their own, overwriting one key buffer
// and one set of value buffers between calls as the engine does. Every
// read returns exactly the fields and bytes written; the DB's own reads
// (gohbase's Get) see the same records and the workers read the rows the
// suite wrote through the DB; on the server every cell is what Java YCSB's
// HBase binding writes: the row, the family, the field name as qualifier,
// the value, a Put stamped by the server.
func hbaseWorkers(t *testing.T, db adapters.DB, quorum, table string, suiteKeys []string) {
	const workers, rows, fields = 16, 40, 10
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	rowKey := func(w, i int) string { return fmt.Sprintf("userworker%02d_%04d", w, i) }
	// want is the record row (w, i) holds once its worker is done:
	// field9 is empty on every third row, field1 and field7 were updated.
	want := func(w, i int) map[string]string {
		k := rowKey(w, i)
		out := map[string]string{}
		for f := 0; f < fields; f++ {
			v := string(suiteValue(k, f, 0))
			switch {
			case f == 1 || f == 7:
				v = string(suiteValue(k, f, 1))
			case f == 9 && i%3 == 0:
				v = ""
			}
			out[suiteField(f)] = v
		}
		return out
	}
	asMap := func(rec *adapters.Record) map[string]string {
		out := map[string]string{}
		for _, f := range rec.Fields {
			out[f.Name] = string(f.Value)
		}
		return out
	}

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		h, err := db.(adapters.Threader).ForWorker(ctx, w, workers)
		require.NoError(t, err)
		require.NotSame(t, db, h)
		wg.Add(1)
		go func(w int, h adapters.DB) {
			defer wg.Done()
			errs <- func() error {
				key := make([]byte, 0, 32)
				bufs := make([][]byte, fields)
				vals := make([]adapters.Field, fields)
				for f := range vals {
					bufs[f] = make([]byte, 100)
					vals[f].Name = suiteField(f)
				}
				var rec adapters.Record
				for i := 0; i < rows; i++ {
					k := rowKey(w, i)
					key = append(key[:0], k...)
					for f := range vals {
						vals[f].Value = bufs[f][:copy(bufs[f], suiteValue(k, f, 0))]
					}
					if i%3 == 0 {
						vals[9].Value = bufs[9][:0]
					}
					if st := h.Insert(ctx, table, key, vals); st != adapters.OK {
						return fmt.Errorf("insert %s: %s", k, st)
					}
					upd := vals[:2]
					upd[0].Name, upd[0].Value = "field7", bufs[0][:copy(bufs[0], suiteValue(k, 7, 1))]
					upd[1].Name, upd[1].Value = "field1", bufs[1][:copy(bufs[1], suiteValue(k, 1, 1))]
					if st := h.Update(ctx, table, key, upd); st != adapters.OK {
						return fmt.Errorf("update %s: %s", k, st)
					}
					vals[0].Name, vals[1].Name = suiteField(0), suiteField(1)
					// The caller's buffers change before the reads.
					copy(key, "xxxx")
					for f := range bufs {
						copy(bufs[f], "overwritten")
					}
					key = append(key[:0], k...)
					exp := want(w, i)
					if st := h.Read(ctx, table, key, nil, &rec); st != adapters.OK {
						return fmt.Errorf("read %s: %s", k, st)
					}
					if got := asMap(&rec); fmt.Sprint(got) != fmt.Sprint(exp) {
						return fmt.Errorf("read %s:\n got %v\nwant %v", k, got, exp)
					}
					named := []string{"field7", "field9", "field0"}
					if st := h.Read(ctx, table, key, named, &rec); st != adapters.OK {
						return fmt.Errorf("read %s %v: %s", k, named, st)
					}
					got := asMap(&rec)
					if len(rec.Fields) != len(named) {
						return fmt.Errorf("read %s %v: fields %v", k, named, got)
					}
					for _, n := range named {
						if v, ok := got[n]; !ok || v != exp[n] {
							return fmt.Errorf("read %s %v: %s = %q, want %q", k, named, n, v, exp[n])
						}
					}
					missing := []byte(k + "_missing")
					if st := h.Read(ctx, table, missing, nil, &rec); st != adapters.NotFound || len(rec.Fields) != 0 {
						return fmt.Errorf("read of missing %s: %s with %d fields", missing, st, len(rec.Fields))
					}
				}
				return nil
			}()
		}(w, h)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%d workers: %d rows inserted, updated and read back (%d operations) in %s", workers, workers*rows,
		workers*rows*5, time.Since(t0).Round(time.Millisecond))
	// The DB's own Get reads what the workers wrote, and a worker reads
	// what the DB wrote.
	h0, err := db.(adapters.Threader).ForWorker(ctx, 0, 1)
	require.NoError(t, err)
	var rec, viaDB adapters.Record
	for w := 0; w < workers; w += 5 {
		for _, i := range []int{0, 1, rows - 1} {
			k := []byte(rowKey(w, i))
			require.Equal(t, adapters.OK, db.Read(ctx, table, k, nil, &viaDB))
			assert.Equal(t, want(w, i), asMap(&viaDB), "%s through the DB", k)
		}
	}
	for _, k := range suiteKeys[:20] {
		require.Equal(t, adapters.OK, h0.Read(ctx, table, []byte(k), nil, &rec))
		require.Equal(t, adapters.OK, db.Read(ctx, table, []byte(k), nil, &viaDB))
		assert.Equal(t, asMap(&viaDB), asMap(&rec), "%s", k)
		assert.Len(t, rec.Fields, fields)
	}

	// The cells on the server, read with gohbase's plain client.
	client := gohbase.NewClient(quorum)
	defer client.Close()
	for _, i := range []int{0, 1} {
		k := rowKey(3, i)
		get, err := hrpc.NewGetStr(ctx, table, k)
		require.NoError(t, err)
		res, err := client.Get(get)
		require.NoError(t, err)
		exp := want(3, i)
		require.Len(t, res.Cells, len(exp), "cells of %s", k)
		for _, hc := range res.Cells {
			c := (*pb.Cell)(hc)
			assert.Equal(t, k, string(c.GetRow()))
			assert.Equal(t, "family", string(c.Family))
			assert.Equal(t, exp[string(c.Qualifier)], string(c.Value), "%s/%s", k, c.Qualifier)
			assert.Equal(t, pb.CellType_PUT, c.GetCellType())
			ts := time.UnixMilli(int64(c.GetTimestamp()))
			assert.WithinRange(t, ts, t0.Add(-time.Minute), time.Now().Add(time.Minute),
				"%s/%s is stamped by the server (%d)", k, c.Qualifier, c.GetTimestamp())
		}
	}

	// The suite counts its own rows next: the workers delete theirs, and
	// read each back as missing.
	errs = make(chan error, workers)
	for w := 0; w < workers; w++ {
		h, err := db.(adapters.Threader).ForWorker(ctx, w, workers)
		require.NoError(t, err)
		wg.Add(1)
		go func(w int, h adapters.DB) {
			defer wg.Done()
			errs <- func() error {
				var rec adapters.Record
				for i := 0; i < rows; i++ {
					k := []byte(rowKey(w, i))
					if st := h.Delete(ctx, table, k); st != adapters.OK {
						return fmt.Errorf("delete %s: %s", k, st)
					}
					if st := h.Read(ctx, table, k, nil, &rec); st != adapters.NotFound {
						return fmt.Errorf("read of deleted %s: %s", k, st)
					}
				}
				return nil
			}()
		}(w, h)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

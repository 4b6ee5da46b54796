package workload_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/adapters/embedded"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/engine"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/workload"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// call is one database call seen by fakeDB.
type call struct {
	op     string
	table  string
	key    string
	fields []string // nil = all fields
	values map[string][]byte
	count  int // scan length
}

// fakeDB records every call and optionally stores records so that reads
// see earlier writes. It is safe for concurrent use.
type fakeDB struct {
	mu    sync.Mutex
	calls []call
	store map[string]map[string][]byte // nil: no store, reads return OK
	// insertStatus, when set, is returned by Insert.
	insertStatus adapters.Status
	inserts      int
}

func newFakeDB(withStore bool) *fakeDB {
	d := &fakeDB{}
	if withStore {
		d.store = map[string]map[string][]byte{}
	}
	return d
}

func copyValues(vals []adapters.Field) map[string][]byte {
	m := make(map[string][]byte, len(vals))
	for _, f := range vals {
		m[f.Name] = append([]byte(nil), f.Value...)
	}
	return m
}

func (d *fakeDB) add(c call) {
	d.mu.Lock()
	d.calls = append(d.calls, c)
	d.mu.Unlock()
}

func (d *fakeDB) Read(_ context.Context, table string, key []byte, fields []string, into *adapters.Record) adapters.Status {
	c := call{op: "READ", table: table, key: string(key)}
	if fields != nil {
		c.fields = append([]string(nil), fields...)
	}
	d.add(c)
	if d.store == nil {
		return adapters.OK
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	rec, ok := d.store[string(key)]
	if !ok {
		return adapters.NotFound
	}
	for name, v := range rec {
		if fields == nil || contains(fields, name) {
			into.Add(name, v)
		}
	}
	return adapters.OK
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (d *fakeDB) Scan(_ context.Context, table string, key []byte, n int, fields []string, _ *adapters.Rows) adapters.Status {
	c := call{op: "SCAN", table: table, key: string(key), count: n}
	if fields != nil {
		c.fields = append([]string(nil), fields...)
	}
	d.add(c)
	return adapters.OK
}

func (d *fakeDB) Update(_ context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	d.add(call{op: "UPDATE", table: table, key: string(key), values: copyValues(values)})
	if d.store != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		rec, ok := d.store[string(key)]
		if !ok {
			return adapters.NotFound
		}
		for _, f := range values {
			rec[f.Name] = append([]byte(nil), f.Value...)
		}
	}
	return adapters.OK
}

func (d *fakeDB) Insert(_ context.Context, table string, key []byte, values []adapters.Field) adapters.Status {
	d.add(call{op: "INSERT", table: table, key: string(key), values: copyValues(values)})
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inserts++
	if d.insertStatus != adapters.OK {
		return d.insertStatus
	}
	if d.store != nil {
		d.store[string(key)] = copyValues(values)
	}
	return adapters.OK
}

func (d *fakeDB) Delete(_ context.Context, table string, key []byte) adapters.Status {
	d.add(call{op: "DELETE", table: table, key: string(key)})
	return adapters.OK
}

func (d *fakeDB) byOp(op string) []call {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []call
	for _, c := range d.calls {
		if c.op == op {
			out = append(out, c)
		}
	}
	return out
}

func props(t testing.TB, builtin string, kv ...string) *properties.Properties {
	t.Helper()
	p := properties.New()
	if builtin != "" {
		w, ok := workloads.Lookup(builtin)
		require.True(t, ok, builtin)
		require.NoError(t, p.Load(strings.NewReader(w.Text)))
	}
	require.Zero(t, len(kv)%2)
	p.SetPairs(kv...)
	return p
}

func newWorkload(t testing.TB, p *properties.Properties) *workload.Workload {
	t.Helper()
	w, err := workload.New(p, clock.NewReal())
	require.NoError(t, err)
	return w
}

// load inserts n records with one worker and returns its measurements.
func load(t testing.TB, w *workload.Workload, db adapters.DB, n int) *measurement.Interval {
	t.Helper()
	rec := measurement.NewRecorder(measurement.ModeOp)
	wk := w.NewWorker(0, db, rec, 42)
	ctx := context.Background()
	for i := 0; i < n; i++ {
		require.True(t, wk.DoInsert(ctx), "insert %d", i)
	}
	require.True(t, wk.FlushBatch(ctx))
	rec.Flush()
	iv := measurement.NewInterval(0, 0, 0)
	rec.Drain(iv)
	return iv
}

// run performs n transactions on each of `workers` goroutines.
func runWorkers(t testing.TB, w *workload.Workload, db adapters.DB, workers, n int) *measurement.Interval {
	t.Helper()
	recs := make([]*measurement.Recorder, workers)
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = measurement.NewRecorder(measurement.ModeOp)
		wk := w.NewWorker(i, db, recs[i], uint64(1000+i))
		wg.Add(1)
		go func(wk *workload.Worker, rec *measurement.Recorder) {
			defer wg.Done()
			for j := 0; j < n; j++ {
				wk.DoTransaction(context.Background())
			}
			rec.Flush()
		}(wk, recs[i])
	}
	wg.Wait()
	iv := measurement.NewInterval(0, 0, 0)
	for _, r := range recs {
		r.Drain(iv)
	}
	return iv
}

func TestGoldenKeys(t *testing.T) {
	// Java YCSB's keys for record numbers 0,1,2,3 and 99999,100000
	// (insertorder=hashed, the default).
	tests := []struct {
		start, count int64
		want         []string
	}{
		{0, 4, []string{"user6284781860667377211", "user8517097267634966620", "user1820151046732198393", "user4052466453699787802"}},
		{99999, 2, []string{"user7592201923306675823", "user2382277743992889674"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.start), func(t *testing.T) {
			db := newFakeDB(false)
			w := newWorkload(t, props(t, "", "recordcount", "100001", "insertorder", "hashed",
				"insertstart", fmt.Sprint(tc.start), "insertcount", fmt.Sprint(tc.count)))
			iv := load(t, w, db, int(tc.count))
			var keys []string
			for _, c := range db.byOp("INSERT") {
				keys = append(keys, c.key)
				assert.Equal(t, "usertable", c.table)
			}
			assert.Equal(t, tc.want, keys)
			assert.Equal(t, tc.count, iv.Ops)
			assert.Equal(t, tc.count, iv.Returns[measurement.Insert][adapters.OK])
		})
	}
}

func TestGoldenKeysEmbeddedStore(t *testing.T) {
	dir := t.TempDir()
	p := props(t, "", "recordcount", "4", "embedded.dir", dir)
	db, err := embedded.Open(context.Background(), p)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.(adapters.Closer).Close()) }()
	load(t, newWorkload(t, p), db, 4)
	var rows adapters.Rows
	require.Equal(t, adapters.OK, db.Scan(context.Background(), "usertable", []byte("user"), 10, nil, &rows))
	var keys []string
	for i := 0; i < rows.N; i++ {
		keys = append(keys, string(rows.Keys[i]))
		assert.Len(t, rows.Records[i].Fields, 10)
	}
	// Scans return byte order.
	assert.Equal(t, []string{"user1820151046732198393", "user4052466453699787802", "user6284781860667377211", "user8517097267634966620"}, keys)
}

func TestOrderedKeysAndZeroPadding(t *testing.T) {
	tests := []struct {
		pad   string
		start int64
		want  []string
	}{
		{"1", 0, []string{"user0", "user1", "user2"}},
		{"5", 0, []string{"user00000", "user00001", "user00002"}},
		{"3", 12345, []string{"user12345", "user12346", "user12347"}},
		{"19", 7, []string{"user0000000000000000007", "user0000000000000000008", "user0000000000000000009"}},
	}
	for _, tc := range tests {
		t.Run(tc.pad, func(t *testing.T) {
			db := newFakeDB(false)
			w := newWorkload(t, props(t, "", "recordcount", "100000", "insertorder", "ordered", "zeropadding", tc.pad,
				"insertstart", fmt.Sprint(tc.start), "insertcount", "3"))
			load(t, w, db, 3)
			var keys []string
			for _, c := range db.byOp("INSERT") {
				keys = append(keys, c.key)
			}
			assert.Equal(t, tc.want, keys)
		})
	}
	// The 2014 comparison's 23-byte keys.
	db := newFakeDB(false)
	load(t, newWorkload(t, props(t, "comparison2014-load", "recordcount", "10")), db, 1)
	assert.Len(t, db.byOp("INSERT")[0].key, 23)
}

// opMix counts the transactions of each kind from a run's measurements.
func opMix(iv *measurement.Interval) map[string]float64 {
	rmw := float64(iv.Count(measurement.SeriesOf(measurement.ReadModifyWrite, measurement.Service, false)))
	total := float64(iv.Ops)
	return map[string]float64{
		"read":   (float64(iv.ReturnTotal(measurement.Read)) - rmw) / total,
		"update": (float64(iv.ReturnTotal(measurement.Update)) - rmw) / total,
		"insert": float64(iv.ReturnTotal(measurement.Insert)) / total,
		"scan":   float64(iv.ReturnTotal(measurement.Scan)) / total,
		"rmw":    rmw / total,
		"delete": float64(iv.ReturnTotal(measurement.Delete)) / total,
	}
}

func TestOperationMix(t *testing.T) {
	tests := []struct {
		workload string
		extra    []string
		want     map[string]float64
	}{
		{"workloada", nil, map[string]float64{"read": 0.5, "update": 0.5}},
		{"workloadb", nil, map[string]float64{"read": 0.95, "update": 0.05}},
		{"workloadc", nil, map[string]float64{"read": 1}},
		{"workloadd", nil, map[string]float64{"read": 0.95, "insert": 0.05}},
		{"workloade", nil, map[string]float64{"scan": 0.95, "insert": 0.05}},
		{"workloadf", nil, map[string]float64{"read": 0.5, "rmw": 0.5}},
		{"workloadg", nil, map[string]float64{"read": 0.6, "update": 0.2, "insert": 0.2}},
		// Proportions need not sum to 1: YCSB normalises the weights.
		{"", []string{"recordcount", "1000", "readproportion", "2", "updateproportion", "0", "insertproportion", "0"}, nil},
		{"", []string{"recordcount", "1000", "readproportion", "0.3", "updateproportion", "0.1", "deleteproportion", "0.1"},
			map[string]float64{"read": 0.6, "update": 0.2, "delete": 0.2}},
	}
	const perWorker, workers = 10000, 2
	for _, tc := range tests {
		name := tc.workload
		if name == "" {
			name = strings.Join(tc.extra, " ")
		}
		t.Run(name, func(t *testing.T) {
			p := props(t, tc.workload, tc.extra...)
			if tc.want == nil {
				// readproportion=2 is rejected: proportions are in [0,1].
				_, err := workload.New(p, clock.NewReal())
				var pe *properties.Error
				require.True(t, errors.As(err, &pe), "%v", err)
				assert.Equal(t, "readproportion", pe.Property)
				return
			}
			db := newFakeDB(false)
			iv := runWorkers(t, newWorkload(t, p), db, workers, perWorker)
			require.Equal(t, int64(workers*perWorker), iv.Ops)
			got := opMix(iv)
			for op, share := range got {
				assert.InDelta(t, tc.want[op], share, 0.015, "%s share", op)
			}
			// Every call is a return code of the right op.
			assert.Equal(t, int64(len(db.byOp("READ"))), iv.ReturnTotal(measurement.Read))
			assert.Equal(t, int64(len(db.byOp("UPDATE"))), iv.ReturnTotal(measurement.Update))
			assert.Equal(t, int64(len(db.byOp("INSERT"))), iv.ReturnTotal(measurement.Insert))
			assert.Equal(t, int64(len(db.byOp("SCAN"))), iv.ReturnTotal(measurement.Scan))
		})
	}
}

func TestReadModifyWriteMeasured(t *testing.T) {
	db := newFakeDB(false)
	iv := runWorkers(t, newWorkload(t, props(t, "workloadf")), db, 1, 2000)
	rmw := iv.Count(measurement.SeriesOf(measurement.ReadModifyWrite, measurement.Service, false))
	require.Greater(t, rmw, int64(0))
	// Each RMW is one transaction with a READ and an UPDATE of the same key.
	assert.Equal(t, rmw, iv.ReturnTotal(measurement.Update))
	assert.Equal(t, iv.Ops, iv.ReturnTotal(measurement.Read))
	assert.Zero(t, iv.ReturnTotal(measurement.ReadModifyWrite), "RMW has no return code of its own")
	calls := db.calls
	for i, c := range calls {
		if c.op == "UPDATE" {
			require.Greater(t, i, 0)
			assert.Equal(t, "READ", calls[i-1].op)
			assert.Equal(t, calls[i-1].key, c.key, "RMW updates the key it read")
		}
	}
}

func TestFieldSelection(t *testing.T) {
	all := []string{"field0", "field1", "field2", "field3", "field4", "field5", "field6", "field7", "field8", "field9"}
	tests := []struct {
		name string
		kv   []string
		// check gets the calls of a run of reads, scans and updates.
		check func(t *testing.T, reads, scans, updates []call)
	}{
		{"readallfields default passes nil", nil, func(t *testing.T, reads, scans, updates []call) {
			for _, c := range append(reads, scans...) {
				assert.Nil(t, c.fields)
			}
		}},
		{"readallfieldsbyname names every field", []string{"readallfieldsbyname", "true"}, func(t *testing.T, reads, scans, updates []call) {
			for _, c := range append(reads, scans...) {
				assert.Equal(t, all, c.fields)
			}
		}},
		{"readallfieldsbyname needs readallfields", []string{"readallfields", "false", "readallfieldsbyname", "true"}, func(t *testing.T, reads, scans, updates []call) {
			for _, c := range append(reads, scans...) {
				assert.Len(t, c.fields, 1)
			}
		}},
		{"readallfields=false reads one random field", []string{"readallfields", "false"}, func(t *testing.T, reads, scans, updates []call) {
			seen := map[string]bool{}
			for _, c := range append(reads, scans...) {
				require.Len(t, c.fields, 1)
				assert.Contains(t, all, c.fields[0])
				seen[c.fields[0]] = true
			}
			assert.Len(t, seen, 10, "every field gets picked")
		}},
		{"updates write one random field", nil, func(t *testing.T, reads, scans, updates []call) {
			seen := map[string]bool{}
			for _, c := range updates {
				require.Len(t, c.values, 1)
				for name := range c.values {
					assert.Contains(t, all, name)
					seen[name] = true
				}
			}
			assert.Len(t, seen, 10)
		}},
		{"writeallfields updates every field", []string{"writeallfields", "true"}, func(t *testing.T, reads, scans, updates []call) {
			for _, c := range updates {
				assert.Len(t, c.values, 10)
				for _, f := range all {
					assert.Contains(t, c.values, f)
				}
			}
		}},
		{"fieldcount and fieldnameprefix", []string{"fieldcount", "3", "fieldnameprefix", "col", "readallfieldsbyname", "true", "writeallfields", "true"},
			func(t *testing.T, reads, scans, updates []call) {
				for _, c := range reads {
					assert.Equal(t, []string{"col0", "col1", "col2"}, c.fields)
				}
				for _, c := range updates {
					assert.Len(t, c.values, 3)
					assert.Contains(t, c.values, "col2")
				}
			}},
		{"table", []string{"table", "t2"}, func(t *testing.T, reads, scans, updates []call) {
			for _, c := range append(append(reads, scans...), updates...) {
				assert.Equal(t, "t2", c.table)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kv := append([]string{"recordcount", "100", "readproportion", "0.4", "scanproportion", "0.2", "updateproportion", "0.4", "maxscanlength", "10"}, tc.kv...)
			db := newFakeDB(false)
			runWorkers(t, newWorkload(t, props(t, "", kv...)), db, 1, 600)
			reads, scans, updates := db.byOp("READ"), db.byOp("SCAN"), db.byOp("UPDATE")
			require.NotEmpty(t, reads)
			require.NotEmpty(t, scans)
			require.NotEmpty(t, updates)
			tc.check(t, reads, scans, updates)
		})
	}
}

func TestInsertsWriteAllFields(t *testing.T) {
	db := newFakeDB(false)
	w := newWorkload(t, props(t, "", "recordcount", "10", "fieldcount", "4", "fieldlength", "7"))
	load(t, w, db, 10)
	for _, c := range db.byOp("INSERT") {
		require.Len(t, c.values, 4)
		for _, v := range c.values {
			assert.Len(t, v, 7)
		}
	}
}

// checkYCSBBytes checks value bytes against YCSB's RandomByteIterator:
// printable 0x20..0x7F, and when aligned, the per-position ranges of its
// six-bytes-per-int layout (masks 31, 63, 95, 31, 63, 95).
func checkYCSBBytes(t *testing.T, v []byte, aligned bool) {
	t.Helper()
	masks := [6]byte{31, 63, 95, 31, 63, 95}
	for i, b := range v {
		if b < 0x20 || b > 0x7f {
			t.Fatalf("byte %d = %#x out of YCSB's range in %q", i, b, v)
		}
		if aligned && b > 0x20+masks[i%6] {
			t.Fatalf("byte %d = %#x above its position's range in %q", i, b, v)
		}
	}
}

func TestValueBytesAndLengths(t *testing.T) {
	histFile := filepath.Join(t.TempDir(), "hist.txt")
	require.NoError(t, os.WriteFile(histFile, []byte("BlockSize\t10\n0\t5\n1\t0\n2\t5\n"), 0o644))
	tests := []struct {
		name     string
		kv       []string
		min, max int
		aligned  bool
	}{
		{"constant pool", []string{"fieldlength", "100"}, 100, 100, false},
		{"constant fresh", []string{"fieldlength", "100", "ycsbctl.values", "fresh"}, 100, 100, true},
		{"short fresh", []string{"fieldlength", "5", "ycsbctl.values", "fresh"}, 5, 5, true},
		{"uniform", []string{"fieldlengthdistribution", "uniform", "minfieldlength", "10", "fieldlength", "40"}, 10, 40, false},
		{"uniform fresh", []string{"fieldlengthdistribution", "uniform", "fieldlength", "40", "ycsbctl.values", "fresh"}, 1, 40, true},
		{"zipfian", []string{"fieldlengthdistribution", "zipfian", "minfieldlength", "3", "fieldlength", "50"}, 3, 50, false},
		{"histogram", []string{"fieldlengthdistribution", "histogram", "fieldlengthhistogram", histFile}, 10, 30, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := newFakeDB(false)
			w := newWorkload(t, props(t, "", append([]string{"recordcount", "300", "updateproportion", "1", "readproportion", "0", "writeallfields", "true"}, tc.kv...)...))
			load(t, w, db, 300)
			runWorkers(t, w, db, 1, 300)
			lengths := map[int]bool{}
			n := 0
			for _, c := range db.calls {
				for _, v := range c.values {
					n++
					lengths[len(v)] = true
					require.GreaterOrEqual(t, len(v), tc.min)
					require.LessOrEqual(t, len(v), tc.max)
					checkYCSBBytes(t, v, tc.aligned)
				}
			}
			assert.Equal(t, 600*10, n)
			if tc.min != tc.max {
				assert.Greater(t, len(lengths), 1, "lengths vary")
			}
			if strings.HasPrefix(tc.name, "histogram") {
				// (bucket+1)*BlockSize of the non-empty buckets.
				assert.Equal(t, map[int]bool{10: true, 30: true}, lengths)
			}
		})
	}
}

func TestValuesDiffer(t *testing.T) {
	for _, mode := range []string{"pool", "fresh"} {
		db := newFakeDB(false)
		load(t, newWorkload(t, props(t, "", "recordcount", "50", "ycsbctl.values", mode)), db, 50)
		seen := map[string]bool{}
		for _, c := range db.byOp("INSERT") {
			for _, v := range c.values {
				seen[string(v)] = true
			}
		}
		assert.Greater(t, len(seen), 490, "%s: values repeat", mode)
	}
}

func openEmbedded(t *testing.T, p *properties.Properties) adapters.DB {
	t.Helper()
	p = p.Clone()
	p.Set(embedded.PropDir, t.TempDir())
	db, err := embedded.Open(context.Background(), p)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.(adapters.Closer).Close()) })
	return db
}

func TestDataIntegrity(t *testing.T) {
	const records = 200
	p := props(t, "workloada", "recordcount", fmt.Sprint(records), "dataintegrity", "true", "fieldlength", "30",
		"requestdistribution", "uniform")
	for _, backend := range []string{"embedded", "fake"} {
		t.Run(backend, func(t *testing.T) {
			var db adapters.DB
			if backend == "embedded" {
				db = openEmbedded(t, p)
			} else {
				db = newFakeDB(true)
			}
			w := newWorkload(t, p)
			load(t, w, db, records)
			// Runs with reads and (deterministic) updates verify cleanly.
			iv := runWorkers(t, w, db, 2, 500)
			reads := iv.Returns[measurement.Read][adapters.OK]
			require.Greater(t, reads, int64(300))
			assert.Equal(t, reads, iv.ReturnTotal(measurement.Read), "every read found its record")
			assert.Equal(t, reads, iv.Returns[measurement.Verify][adapters.OK])
			assert.Zero(t, iv.Returns[measurement.Verify][adapters.UnexpectedState])
			assert.Zero(t, iv.Returns[measurement.Verify][adapters.Error])
			assert.Equal(t, reads, iv.Count(measurement.SeriesOf(measurement.Verify, measurement.Service, false)), "VERIFY latency per verified read")

			// Corrupt one field of every record: every verification fails.
			ctx := context.Background()
			for i := int64(0); i < records; i++ {
				key := fmt.Sprintf("user%d", fnv(i))
				require.Equal(t, adapters.OK, db.Update(ctx, "usertable", []byte(key), []adapters.Field{{Name: "field3", Value: []byte("corrupted-value-of-30-bytes!!!")}}))
			}
			pc := p.Clone()
			pc.Set("readproportion", "1")
			pc.Set("updateproportion", "0")
			w2 := newWorkload(t, pc)
			iv = runWorkers(t, w2, db, 1, 300)
			assert.Equal(t, int64(300), iv.Returns[measurement.Verify][adapters.UnexpectedState])
			assert.Zero(t, iv.Returns[measurement.Verify][adapters.OK])
		})
	}
}

func fnv(i int64) int64 {
	// FNV-1a 64, LSB first, abs: YCSB's key hash.
	h := uint64(0xCBF29CE484222325)
	u := uint64(i)
	for k := 0; k < 8; k++ {
		h ^= u & 0xff
		h *= 1099511628211
		u >>= 8
	}
	s := int64(h)
	if s < 0 {
		s = -s
	}
	return s
}

func TestDataIntegrityReadOfOneField(t *testing.T) {
	p := props(t, "workloadc", "recordcount", "50", "dataintegrity", "true", "readallfields", "false", "requestdistribution", "uniform")
	db := newFakeDB(true)
	w := newWorkload(t, p)
	load(t, w, db, 50)
	iv := runWorkers(t, w, db, 1, 200)
	assert.Equal(t, int64(200), iv.Returns[measurement.Verify][adapters.OK])
}

func TestDataIntegrityValuesAreDeterministic(t *testing.T) {
	p := props(t, "", "recordcount", "5", "dataintegrity", "true", "fieldlength", "40")
	a, b := newFakeDB(false), newFakeDB(false)
	load(t, newWorkload(t, p), a, 5)
	load(t, newWorkload(t, p), b, 5)
	ia, ib := a.byOp("INSERT"), b.byOp("INSERT")
	require.Len(t, ia, 5)
	for i := range ia {
		assert.Equal(t, ia[i].values, ib[i].values)
		for name, v := range ia[i].values {
			assert.Len(t, v, 40)
			assert.True(t, strings.HasPrefix(string(v), ia[i].key+":"+name+":"), "%s", v)
		}
	}
}

// limitDB fails the test when a read, update or scan names a key whose
// insert has not returned yet.
type limitDB struct {
	t        *testing.T
	mu       sync.Mutex
	present  map[string]bool
	inserted []string
	bad      []string
}

func (d *limitDB) check(key []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.present[string(key)] {
		d.bad = append(d.bad, string(key))
	}
}

func (d *limitDB) Read(_ context.Context, _ string, key []byte, _ []string, _ *adapters.Record) adapters.Status {
	d.check(key)
	return adapters.OK
}
func (d *limitDB) Scan(_ context.Context, _ string, key []byte, _ int, _ []string, _ *adapters.Rows) adapters.Status {
	d.check(key)
	return adapters.OK
}
func (d *limitDB) Update(_ context.Context, _ string, key []byte, _ []adapters.Field) adapters.Status {
	d.check(key)
	return adapters.OK
}
func (d *limitDB) Insert(_ context.Context, _ string, key []byte, _ []adapters.Field) adapters.Status {
	time.Sleep(time.Duration(len(key)%3) * time.Microsecond)
	d.mu.Lock()
	d.present[string(key)] = true
	d.inserted = append(d.inserted, string(key))
	d.mu.Unlock()
	return adapters.OK
}
func (d *limitDB) Delete(context.Context, string, []byte) adapters.Status { return adapters.OK }

func TestRunPhaseInsertsAndAcknowledgedLimit(t *testing.T) {
	for _, wl := range []string{"workloadd", "workloade", "workloadg"} {
		t.Run(wl, func(t *testing.T) {
			const records = 500
			p := props(t, wl, "recordcount", fmt.Sprint(records), "operationcount", "20000", "insertorder", "ordered")
			db := &limitDB{t: t, present: map[string]bool{}}
			w := newWorkload(t, p)
			load(t, w, db, records)
			db.inserted = nil
			iv := runWorkers(t, w, db, 4, 2500)
			assert.Empty(t, db.bad, "keys read before their insert was acknowledged")
			n := len(db.inserted)
			require.Greater(t, n, 100)
			assert.Equal(t, int64(n), iv.ReturnTotal(measurement.Insert))
			// Run-phase inserts take recordcount, recordcount+1, ...
			got := map[string]bool{}
			for _, k := range db.inserted {
				got[k] = true
			}
			for i := 0; i < n; i++ {
				assert.True(t, got[fmt.Sprintf("user%d", records+i)], "missing insert of key %d", records+i)
			}
			assert.Equal(t, int64(records+n-1), w.LastAcknowledged())
			assert.Equal(t, int64(n), w.LocalInsertsAcknowledged())
		})
	}
}

func TestRunPhaseInsertKeysHashed(t *testing.T) {
	db := newFakeDB(false)
	w := newWorkload(t, props(t, "", "recordcount", "100000", "insertproportion", "1", "readproportion", "0", "updateproportion", "0"))
	runWorkers(t, w, db, 1, 3)
	var keys []string
	for _, c := range db.byOp("INSERT") {
		keys = append(keys, c.key)
	}
	assert.Equal(t, []string{"user2382277743992889674", fmt.Sprintf("user%d", fnv(100001)), fmt.Sprintf("user%d", fnv(100002))}, keys)
}

func TestLatestReadsFavourNewKeys(t *testing.T) {
	db := newFakeDB(false)
	w := newWorkload(t, props(t, "workloadd", "recordcount", "1000", "insertorder", "ordered", "insertproportion", "0", "readproportion", "1"))
	runWorkers(t, w, db, 1, 5000)
	newest := 0
	for _, c := range db.byOp("READ") {
		n, err := strconv.Atoi(strings.TrimPrefix(c.key, "user"))
		require.NoError(t, err)
		require.Less(t, n, 1000)
		if n == 999 {
			newest++
		}
	}
	assert.Greater(t, newest, 500, "the newest key is the most popular")
}

func TestInsertStripes(t *testing.T) {
	const records = 1000
	var sets [3]map[string]bool
	for i := range sets {
		p := props(t, "", "recordcount", fmt.Sprint(records), "insertorder", "ordered",
			"insertproportion", "0.5", "readproportion", "0.5", "updateproportion", "0",
			"ycsbctl.insertstripe.index", fmt.Sprint(i), "ycsbctl.insertstripe.count", "3")
		db := newFakeDB(false)
		w := newWorkload(t, p)
		runWorkers(t, w, db, 2, 300)
		sets[i] = map[string]bool{}
		for _, c := range db.byOp("INSERT") {
			n, err := strconv.Atoi(strings.TrimPrefix(c.key, "user"))
			require.NoError(t, err)
			assert.Equal(t, i, (n-records)%3, "key %d outside stripe %d", n, i)
			assert.GreaterOrEqual(t, n, records)
			sets[i][c.key] = true
		}
		// Without the coordinator's limit, reads stay in the loaded range.
		for _, c := range db.byOp("READ") {
			n, _ := strconv.Atoi(strings.TrimPrefix(c.key, "user"))
			assert.Less(t, n, records)
		}
		assert.Equal(t, int64(records-1), w.LastAcknowledged())
		w.SetExternalLimit(records + 10)
		assert.Equal(t, int64(records+10), w.LastAcknowledged())
	}
	for i := range sets {
		require.NotEmpty(t, sets[i])
		for j := i + 1; j < len(sets); j++ {
			for k := range sets[i] {
				assert.False(t, sets[j][k], "stripes %d and %d both inserted %s", i, j, k)
			}
		}
	}
}

func TestKeyRangesByDistribution(t *testing.T) {
	for _, dist := range []string{"uniform", "zipfian", "hotspot", "sequential", "exponential", "latest"} {
		t.Run(dist, func(t *testing.T) {
			db := newFakeDB(false)
			p := props(t, "", "recordcount", "1000", "insertstart", "200", "insertcount", "300", "operationcount", "1000",
				"insertorder", "ordered", "requestdistribution", dist, "readproportion", "1", "updateproportion", "0")
			runWorkers(t, newWorkload(t, p), db, 1, 3000)
			lo, hi := 200, 499
			if dist == "zipfian" {
				// YCSB's zipfian range is inclusive of insertstart+insertcount
				// (the next client's first key), redrawn only above the
				// acknowledged limit recordcount-1.
				hi = 500
			}
			if dist == "exponential" || dist == "latest" {
				// These ignore insertstart, as YCSB.
				lo, hi = 0, 999
			}
			seen := map[int]bool{}
			for _, c := range db.byOp("READ") {
				n, err := strconv.Atoi(strings.TrimPrefix(c.key, "user"))
				require.NoError(t, err)
				require.GreaterOrEqual(t, n, lo, c.key)
				require.LessOrEqual(t, n, hi, c.key)
				seen[n] = true
			}
			assert.Greater(t, len(seen), 5)
		})
	}
}

func TestScanLengths(t *testing.T) {
	for _, dist := range []string{"uniform", "zipfian"} {
		db := newFakeDB(false)
		p := props(t, "workloade", "recordcount", "1000", "minscanlength", "5", "maxscanlength", "20", "scanlengthdistribution", dist, "insertproportion", "0")
		runWorkers(t, newWorkload(t, p), db, 1, 2000)
		seen := map[int]bool{}
		for _, c := range db.byOp("SCAN") {
			require.GreaterOrEqual(t, c.count, 5)
			require.LessOrEqual(t, c.count, 20)
			seen[c.count] = true
		}
		assert.Greater(t, len(seen), 10, dist)
	}
	// constant (ycsbctl's): every scan asks for maxscanlength rows.
	db := newFakeDB(false)
	p := props(t, "workloade", "recordcount", "1000", "maxscanlength", "100", "scanlengthdistribution", "constant", "insertproportion", "0")
	runWorkers(t, newWorkload(t, p), db, 1, 500)
	scans := db.byOp("SCAN")
	require.NotEmpty(t, scans)
	for _, c := range scans {
		require.Equal(t, 100, c.count)
	}
}

func TestInsertRetryAndKeepGoing(t *testing.T) {
	tests := []struct {
		name      string
		kv        []string
		wantCalls int
		wantOK    bool
	}{
		{"no retry stops", nil, 1, false},
		{"retries then stops", []string{"core_workload_insertion_retry_limit", "2", "core_workload_insertion_retry_interval", "0"}, 3, false},
		{"keep going", []string{"core_workload_insertion_keep_going_on_error", "true"}, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := newFakeDB(false)
			db.insertStatus = adapters.ServiceUnavailable
			w := newWorkload(t, props(t, "", append([]string{"recordcount", "10"}, tc.kv...)...))
			rec := measurement.NewRecorder(measurement.ModeOp)
			wk := w.NewWorker(0, db, rec, 1)
			assert.Equal(t, tc.wantOK, wk.DoInsert(context.Background()))
			assert.Equal(t, tc.wantCalls, db.inserts)
			rec.Flush()
			iv := measurement.NewInterval(0, 0, 0)
			rec.Drain(iv)
			assert.Equal(t, int64(tc.wantCalls), iv.Returns[measurement.Insert][adapters.ServiceUnavailable])
			assert.Equal(t, int64(tc.wantCalls), iv.Count(measurement.SeriesOf(measurement.Insert, measurement.Service, true)), "failures are measured as INSERT-FAILED")
			assert.Equal(t, int64(1), iv.Ops)
		})
	}
}

func TestBatchInsertsEmbedded(t *testing.T) {
	const records = 100
	p := props(t, "", "recordcount", fmt.Sprint(records), "batchsize", "7")
	db := openEmbedded(t, p)
	w := newWorkload(t, p)
	var logs []string
	r, err := engine.Prepare(context.Background(), engine.Options{
		Phase: run.Load, DB: db, Workload: w, Threads: 3, OpCount: records,
		Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) },
	})
	require.NoError(t, err)
	r.Start(time.Time{})
	res := r.Wait()
	assert.Empty(t, logs, "the embedded store batches: no fallback warning")
	n, err := db.(adapters.RecordCounter).CountRecords(context.Background(), "usertable")
	require.NoError(t, err)
	assert.Equal(t, int64(records), n, "every record inserted, including the last partial batches")
	assert.Equal(t, int64(records), res.Total.Ops)
	calls := res.Total.Returns[measurement.Insert][adapters.OK]
	batched := res.Total.Returns[measurement.Insert][adapters.BatchedOK]
	assert.Equal(t, int64(records), calls+batched)
	// 100 records over 3 workers (34, 33, 33) in batches of 7: 5 calls each.
	assert.Equal(t, int64(15), calls)
	assert.Equal(t, calls, res.Total.Count(measurement.SeriesOf(measurement.Insert, measurement.Service, false)), "one latency per batch call")
	// Every golden key is there.
	for i := int64(0); i < records; i++ {
		var rec adapters.Record
		require.Equal(t, adapters.OK, db.Read(context.Background(), "usertable", []byte(fmt.Sprintf("user%d", fnv(i))), nil, &rec), "record %d", i)
		assert.Len(t, rec.Fields, 10)
	}
}

func TestBatchInsertFallbackWarnsOnce(t *testing.T) {
	const records = 50
	p := props(t, "", "recordcount", fmt.Sprint(records), "batchsize", "7")
	db := newFakeDB(false)
	var mu sync.Mutex
	var logs []string
	r, err := engine.Prepare(context.Background(), engine.Options{
		Phase: run.Load, DB: db, Workload: newWorkload(t, p), Threads: 4, OpCount: records,
		Logf: func(f string, a ...any) { mu.Lock(); logs = append(logs, fmt.Sprintf(f, a...)); mu.Unlock() },
	})
	require.NoError(t, err)
	r.Start(time.Time{})
	res := r.Wait()
	warnings := 0
	for _, l := range logs {
		if strings.Contains(l, "batch") {
			warnings++
			assert.Contains(t, l, "batchsize=7")
		}
	}
	assert.Equal(t, 1, warnings, "logs: %q", logs)
	assert.Equal(t, records, db.inserts, "single inserts instead")
	assert.Equal(t, int64(records), res.Total.Returns[measurement.Insert][adapters.OK])
	assert.Equal(t, int64(records), res.Total.Ops)
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := workload.ParseConfig(properties.New())
	require.NoError(t, err)
	assert.Equal(t, "usertable", c.Table)
	assert.Equal(t, 10, c.FieldCount)
	assert.Equal(t, "field", c.FieldNamePrefix)
	assert.Equal(t, int64(100), c.FieldLength)
	assert.Equal(t, int64(1), c.MinFieldLength)
	assert.Equal(t, "constant", c.FieldLengthDist)
	assert.True(t, c.ReadAllFields)
	assert.False(t, c.ReadAllFieldsByName)
	assert.False(t, c.WriteAllFields)
	assert.False(t, c.DataIntegrity)
	assert.Equal(t, 0.95, c.ReadProp)
	assert.Equal(t, 0.05, c.UpdateProp)
	assert.Equal(t, "uniform", c.RequestDist)
	assert.Equal(t, 0.2, c.HotspotData)
	assert.Equal(t, 0.8, c.HotspotOpn)
	assert.Equal(t, 95.0, c.ExpPercentile)
	assert.Equal(t, 0.8571428571, c.ExpFrac)
	assert.Equal(t, 1, c.ZeroPadding)
	assert.False(t, c.OrderedInserts)
	assert.Equal(t, int64(math.MaxInt64), c.RecordCount)
	assert.Equal(t, int64(1), c.MinScanLength)
	assert.Equal(t, int64(1000), c.MaxScanLength)
	assert.Equal(t, "uniform", c.ScanLengthDist)
	assert.Equal(t, int64(0), c.InsertRetryLimit)
	assert.Equal(t, 3.0, c.InsertRetryInterval)
	assert.Equal(t, int64(1), c.BatchSize)
	assert.Equal(t, "user", c.KeyPrefix)
	assert.False(t, c.HasOperationCount)
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		kv   []string
		prop string
	}{
		{[]string{"recordcount", "ten"}, "recordcount"},
		{[]string{"recordcount", "-1"}, "recordcount"},
		{[]string{"operationcount", "-5"}, "operationcount"},
		{[]string{"fieldcount", "0"}, "fieldcount"},
		{[]string{"fieldlength", "0"}, "fieldlength"},
		{[]string{"readproportion", "0", "updateproportion", "0"}, "readproportion"},
		{[]string{"readproportion", "x"}, "readproportion"},
		{[]string{"requestdistribution", "gaussian"}, "requestdistribution"},
		{[]string{"requestdistribution", "zipfian"}, "operationcount"},
		{[]string{"recordcount", "10", "insertstart", "5", "insertcount", "6"}, "insertcount"},
		// insertstart past recordcount is refused as insertstart, the
		// property set, not as the insertcount derived from it.
		{[]string{"recordcount", "10", "insertstart", "11"}, "insertstart"},
		{[]string{"recordcount", "10", "insertstart", "11", "insertcount", "1"}, "insertstart"},
		{[]string{"dataintegrity", "true", "fieldlengthdistribution", "uniform"}, "fieldlengthdistribution"},
		{[]string{"fieldlengthdistribution", "normal"}, "fieldlengthdistribution"},
		{[]string{"fieldlengthdistribution", "uniform", "minfieldlength", "200"}, "minfieldlength"},
		{[]string{"fieldlengthdistribution", "histogram", "fieldlengthhistogram", "/nonexistent/hist.txt"}, "fieldlengthhistogram"},
		{[]string{"readallfields", "yes"}, "readallfields"},
		{[]string{"minscanlength", "10", "maxscanlength", "5"}, "minscanlength"},
		{[]string{"scanlengthdistribution", "latest"}, "scanlengthdistribution"},
		{[]string{"zeropadding", "0"}, "zeropadding"},
		{[]string{"batchsize", "0"}, "batchsize"},
		{[]string{"exponential.percentile", "100"}, "exponential.percentile"},
		{[]string{"core_workload_insertion_retry_interval", "-1"}, "core_workload_insertion_retry_interval"},
		{[]string{"ycsbctl.insertstripe.index", "2", "ycsbctl.insertstripe.count", "2"}, "ycsbctl.insertstripe.index"},
		{[]string{"ycsbctl.values", "random"}, "ycsbctl.values"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.kv, "="), func(t *testing.T) {
			p := props(t, "", tc.kv...)
			_, err := workload.ParseConfig(p)
			require.Error(t, err)
			var pe *properties.Error
			require.True(t, errors.As(err, &pe), "%T %v", err, err)
			assert.Equal(t, tc.prop, pe.Property, err.Error())
			assert.Contains(t, err.Error(), tc.prop)
		})
	}
}

func TestZipfianWithOperationCountZeroIsAllowed(t *testing.T) {
	// operationcount=0 with maxexecutiontime is YCSB's timed-run recipe.
	_, err := workload.ParseConfig(props(t, "", "requestdistribution", "zipfian", "operationcount", "0", "recordcount", "10"))
	assert.NoError(t, err)
}

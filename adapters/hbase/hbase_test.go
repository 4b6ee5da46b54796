package hbase

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

func TestScanValueFilterProperties(t *testing.T) {
	f, err := scanValueFilter(properties.New())
	if err != nil || f != nil {
		t.Fatalf("off by default: %v %v", f, err)
	}
	f, err = scanValueFilter(properties.FromMap(map[string]string{propScanValueFilt: "true"}))
	if err != nil || f == nil {
		t.Fatalf("on: %v %v", f, err)
	}
	vf := f.(*filter.ValueFilter)
	pbf, err := vf.ConstructPBFilter()
	if err != nil {
		t.Fatal(err)
	}
	if pbf.GetName() != "org.apache.hadoop.hbase.filter.ValueFilter" {
		t.Errorf("filter %s", pbf.GetName())
	}
	for k, v := range map[string]string{propScanFilterOp: "between", propScanFilterVal: "xyz", propScanValueFilt: "yes"} {
		_, err := scanValueFilter(properties.FromMap(map[string]string{k: v}))
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	if len(defaultScanFilterValue) != 200 || !strings.HasPrefix(defaultScanFilterValue, "7FFF") {
		t.Errorf("default value %s", defaultScanFilterValue)
	}
}

func TestSchemaOptions(t *testing.T) {
	o, err := schemaOptionsFrom(properties.New())
	if err != nil {
		t.Fatal(err)
	}
	a := o.familyAttrs()
	if a["COMPRESSION"] != "NONE" || a["DATA_BLOCK_ENCODING"] != "NONE" || a["BLOCKCACHE"] != "true" || a["IN_MEMORY"] != "false" || a["VERSIONS"] != "1" || o.tableAttrs() != nil {
		t.Errorf("defaults %v %v", a, o.tableAttrs())
	}
	o, err = schemaOptionsFrom(properties.FromMap(map[string]string{propCompression: "gz", propBlockEncoding: "fast_diff",
		propBlockCache: "false", propInMemory: "true", propMaxFileSize: "10737418240"}))
	if err != nil {
		t.Fatal(err)
	}
	a = o.familyAttrs()
	if a["COMPRESSION"] != "GZ" || a["DATA_BLOCK_ENCODING"] != "FAST_DIFF" || a["BLOCKCACHE"] != "false" || a["IN_MEMORY"] != "true" {
		t.Errorf("attrs %v", a)
	}
	ct := hrpc.NewCreateTable(context.Background(), []byte("t"), map[string]map[string]string{"f": a})
	req := createTableCall{CreateTable: ct, tableAttrs: o.tableAttrs()}.ToProto().(*pb.CreateTableRequest)
	found := false
	for _, at := range req.GetTableSchema().GetAttributes() {
		if string(at.GetFirst()) == "MAX_FILESIZE" && string(at.GetSecond()) == "10737418240" {
			found = true
		}
	}
	if !found {
		t.Errorf("MAX_FILESIZE missing from %v", req.GetTableSchema())
	}
	for k, v := range map[string]string{propCompression: "brotli", propBlockEncoding: "rle", propBlockCache: "on", propMaxFileSize: "1000"} {
		_, err := schemaOptionsFrom(properties.FromMap(map[string]string{k: v}))
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}

// TestBufferedWorkerBuffers checks, without a server, that buffered writes
// return OK at once and keep their own copies until the buffer is full.
func TestBufferedWorkerBuffers(t *testing.T) {
	d := &DB{buffering: true, writeBuffer: 1 << 30, family: "family", table: "usertable", tableBytes: []byte("usertable")}
	h, err := d.ForWorker(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := h.(*bufferedWorker)
	key := []byte("user1")
	val := []byte("v")
	for i := 0; i < 3; i++ {
		if st := w.Insert(context.Background(), "usertable", key, []adapters.Field{{Name: "field0", Value: val}}); st != adapters.OK {
			t.Fatalf("insert: %v", st)
		}
		key[4]++
		val[0]++
	}
	if st := w.Delete(context.Background(), "usertable", []byte("user9")); st != adapters.OK {
		t.Fatalf("delete: %v", st)
	}
	if len(w.pending) != 4 || string(w.pending[0].key) != "user1" || string(w.pending[2].cols["field0"]) != "x" || w.pending[3].cols != nil {
		t.Fatalf("pending %+v", w.pending)
	}
	if w.bytes != w.pending[0].size*3+w.pending[3].size || w.pending[0].size < 100 {
		t.Errorf("bytes %d sizes %d %d", w.bytes, w.pending[0].size, w.pending[3].size)
	}
}

// closeCounter is a gohbase client that only counts Close calls.
type closeCounter struct {
	gohbase.Client
	closed int
}

func (c *closeCounter) Close() { c.closed++ }

// TestWorkerCloseKeepsTheClient: a worker handle (with or without
// clientbuffering) is closed at each thread's cleanup; the client all
// workers share must stay open until the DB is closed.
func TestWorkerCloseKeepsTheClient(t *testing.T) {
	for _, buffering := range []bool{false, true} {
		c := &closeCounter{}
		d := &DB{client: c, buffering: buffering, table: "usertable", tableBytes: []byte("usertable"), family: "family"}
		h, err := d.ForWorker(context.Background(), 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if h == adapters.DB(d) {
			t.Fatal("a worker shares the DB instead of its own handle")
		}
		if err := h.(adapters.Closer).Close(); err != nil || c.closed != 0 {
			t.Fatalf("buffering=%v: worker Close: %v, client closed %d times", buffering, err, c.closed)
		}
		_ = d.Close()
		if c.closed != 1 {
			t.Fatalf("buffering=%v: DB Close closed the client %d times", buffering, c.closed)
		}
	}
}

// TestDeclaresEveryPropertyRead runs Open (against a closed port: it reads
// every property before it connects) and the init option parsing with read
// tracking on.
func TestDeclaresEveryPropertyRead(t *testing.T) {
	info, err := adapters.Lookup("site.ycsb.db.hbase2.HBaseClient2")
	if err != nil {
		t.Fatal(err)
	}
	p := properties.FromMap(map[string]string{propColumnFamily: "family", propQuorum: "127.0.0.1:1", propTimeout: "300",
		propRPCQueueSize: "10", propFlushInterval: "0"})
	p.TrackReads()
	if _, err := open(context.Background(), p); err == nil {
		t.Fatal("open of a closed port succeeded")
	}
	if _, err := schemaOptionsFrom(p); err != nil {
		t.Fatal(err)
	}
	if _, _, err := splitKeys(p); err != nil {
		t.Fatal(err)
	}
	if len(p.ReadKeys()) < 15 {
		t.Fatalf("tracking saw only %v", p.ReadKeys())
	}
	if u := info.Undeclared(p.ReadKeys()); len(u) > 0 {
		t.Errorf("read but not declared: %v", u)
	}
}

// TestBufferedFlushFailureIsReported sends buffered writes to a cluster
// that does not exist: the write that fills the buffer fails, the failed
// writes are counted, and Close reports the ones still buffered.
func TestBufferedFlushFailureIsReported(t *testing.T) {
	timeout := 300 * time.Millisecond
	d := &DB{buffering: true, writeBuffer: 3000, family: "family", table: "usertable", tableBytes: []byte("usertable"),
		timeout: timeout, batchPar: 4,
		client: gohbase.NewClient("127.0.0.1:1", gohbase.ZookeeperTimeout(timeout), gohbase.RegionLookupTimeout(timeout))}
	defer d.client.Close()
	h, err := d.ForWorker(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	vals := []adapters.Field{{Name: "field0", Value: make([]byte, 1000)}}
	var statuses []adapters.Status
	for i := 0; i < 3; i++ {
		statuses = append(statuses, h.Insert(context.Background(), "usertable", []byte("user"+strconv.Itoa(i)), vals))
	}
	// ~1.2 KB each: the third fills the 3000-byte buffer and its flush fails.
	if statuses[0] != adapters.OK || statuses[1] != adapters.OK || statuses[2] != adapters.Error {
		t.Fatalf("statuses %v", statuses)
	}
	if n := d.FailedBufferedWrites(); n != 3 {
		t.Fatalf("failed buffered writes %d, want 3", n)
	}
	if st := h.Insert(context.Background(), "usertable", []byte("user9"), vals); st != adapters.OK {
		t.Fatalf("buffered insert: %v", st)
	}
	err = h.(adapters.Closer).Close()
	if err == nil || !strings.Contains(err.Error(), "1 of 1 buffered writes failed") {
		t.Fatalf("Close: %v", err)
	}
	if n := d.FailedBufferedWrites(); n != 4 {
		t.Fatalf("failed buffered writes %d, want 4", n)
	}
}

// TestWorkerFailedCallIsNotReused sends a worker's reads and writes to a
// cluster that does not exist: each fails within its timeout, and the
// worker puts new calls in place of the ones gohbase may still hold (a late answer must not land in a call that is
// carrying the next operation).
func TestWorkerFailedCallIsNotReused(t *testing.T) {
	timeout := 300 * time.Millisecond
	c := gohbase.NewClient("127.0.0.1:1", gohbase.ZookeeperTimeout(timeout), gohbase.RegionLookupTimeout(timeout))
	defer c.Close()
	d := &DB{client: c, rpc: c.(gohbase.RPCClient), family: "family", familyBytes: []byte("family"),
		table: "usertable", tableBytes: []byte("usertable"), timeout: timeout}
	h, err := d.ForWorker(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := h.(*worker)
	var rec adapters.Record
	for i := 0; i < 2; i++ {
		get, put := w.get, w.put
		t0 := time.Now()
		if st := w.Read(context.Background(), "usertable", []byte("user1"), nil, &rec); st.IsOK() {
			t.Fatalf("read from no cluster: %v", st)
		}
		if st := w.Update(context.Background(), "usertable", []byte("user1"), []adapters.Field{{Name: "field0", Value: []byte("v")}}); st.IsOK() {
			t.Fatalf("update on no cluster: %v", st)
		}
		// Generous: two operations of 300 ms each on a loaded machine.
		if el := time.Since(t0); el > 20*time.Second {
			t.Fatalf("two failed operations took %s with a %s timeout", el, timeout)
		}
		if w.get == get || w.put == put || w.get == nil || w.put == nil {
			t.Fatalf("round %d: failed calls kept (get %p -> %p, put %p -> %p)", i, get, w.get, put, w.put)
		}
	}
}

// TestBatchInsertFansOutAndFails sends a batch to a cluster that does not
// exist: every put fails within its own timeout and the batch's status
// is the binding's word for that failure, the one a single insert of the
// same record gets. A buffered worker's batch is checked by the same
// guard as the DB's.
func TestBatchInsertFansOutAndFails(t *testing.T) {
	timeout := 300 * time.Millisecond
	d := &DB{family: "family", table: "usertable", tableBytes: []byte("usertable"), timeout: timeout, batchPar: 4,
		client: gohbase.NewClient("127.0.0.1:1", gohbase.ZookeeperTimeout(timeout), gohbase.RegionLookupTimeout(timeout))}
	defer d.client.Close()
	vals := []adapters.Field{{Name: "field0", Value: []byte("v")}}
	keys := [][]byte{[]byte("user1"), []byte("user2"), []byte("user3")}
	single := d.Insert(context.Background(), "usertable", keys[0], vals)
	if single.IsOK() {
		t.Fatalf("insert into no cluster: %v", single)
	}
	t0 := time.Now()
	if st := d.BatchInsert(context.Background(), "usertable", keys, [][]adapters.Field{vals, vals, vals}); st != single {
		t.Fatalf("batch into no cluster: %v, a single insert %v", st, single)
	}
	// Generous: one round of 300 ms puts (4 in flight) on a loaded machine.
	if el := time.Since(t0); el > 20*time.Second {
		t.Fatalf("a failed batch took %s with a %s timeout per put", el, timeout)
	}

	d.buffering, d.writeBuffer = true, 1<<20
	h, err := d.ForWorker(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := h.(adapters.BatchInserter)
	if st := b.BatchInsert(context.Background(), "usertable", keys, [][]adapters.Field{vals}); st != adapters.BadRequest {
		t.Fatalf("buffered batch of 3 keys and 1 value: %v", st)
	}
	if st := b.BatchInsert(context.Background(), "usertable", nil, nil); st != adapters.OK {
		t.Fatalf("empty buffered batch: %v", st)
	}
}

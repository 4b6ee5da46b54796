package hbase

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"github.com/tsuna/gohbase/region"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
)

var testRegion = region.NewInfo(0, nil, []byte("usertable"), []byte("usertable,,1.abc."), nil, nil)

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCallsAreGohbasesRequests: the reused calls put the same bytes on the
// wire as gohbase's NewGet and NewPut (request protobuf and cell block),
// operation after operation, so HBase sees exactly what it saw before.
func TestCallsAreGohbasesRequests(t *testing.T) {
	table, family := []byte("usertable"), []byte("family")
	g := newGetCall(table, family)
	p := newPutCall(table, family, hrpc.SkipWal)
	for i, op := range []struct {
		key    string
		fields []string
		value  string
	}{{"user1", nil, "a"}, {"user22", []string{"field3", "field7"}, ""}, {"user333", nil, "ccc"}} {
		g.start(context.Background(), []byte(op.key), op.fields)
		g.SetRegion(testRegion)
		fams := map[string][]string{"family": op.fields}
		want, err := hrpc.NewGet(context.Background(), table, []byte(op.key), hrpc.Families(fams))
		if err != nil {
			t.Fatal(err)
		}
		want.SetRegion(testRegion)
		if got, exp := marshal(t, g.ToProto()), marshal(t, want.ToProto()); !bytes.Equal(got, exp) {
			t.Fatalf("op %d: Get request\n%x\nwant\n%x", i, got, exp)
		}

		// One field per put: gohbase orders cells by map iteration.
		vals := []adapters.Field{{Name: "field1", Value: []byte(op.value)}}
		p.start(context.Background(), []byte(op.key), vals)
		p.SetRegion(testRegion)
		wantPut, err := hrpc.NewPut(context.Background(), table, []byte(op.key),
			map[string]map[string][]byte{"family": {"field1": []byte(op.value)}}, hrpc.Durability(hrpc.SkipWal))
		if err != nil {
			t.Fatal(err)
		}
		wantPut.SetRegion(testRegion)
		gm, gcb, gn := p.SerializeCellBlocks()
		wm, wcb, wn := wantPut.SerializeCellBlocks()
		if got, exp := marshal(t, gm), marshal(t, wm); !bytes.Equal(got, exp) || gn != wn ||
			!bytes.Equal(bytes.Join(gcb, nil), bytes.Join(wcb, nil)) {
			t.Fatalf("op %d: Put request %x (%d cell bytes)\nwant %x (%d)", i, got, gn, exp, wn)
		}
		if got, exp := marshal(t, p.ToProto()), marshal(t, wantPut.ToProto()); !bytes.Equal(got, exp) {
			t.Fatalf("op %d: Put as protobuf\n%x\nwant\n%x", i, got, exp)
		}
	}
}

// TestCellBlockRoundTrip: cells the put call encodes decode, through
// gohbase's own cell block reader, to the same row, family, qualifiers
// and values, and the get call's decoder reads them back.
func TestCellBlockRoundTrip(t *testing.T) {
	p := newPutCall([]byte("usertable"), []byte("family"), hrpc.UseDefault)
	vals := []adapters.Field{{Name: "field0", Value: []byte("v0")}, {Name: "f", Value: nil}, {Name: "field9", Value: bytes.Repeat([]byte{0xff}, 300)}}
	p.start(context.Background(), []byte("user42"), vals)
	p.SetRegion(testRegion)
	_, blocks, n := p.SerializeCellBlocks()
	block := bytes.Join(blocks, nil)
	if int(n) != len(block) {
		t.Fatalf("cell block length %d, stated %d", len(block), n)
	}
	count := int32(len(vals))
	resp := &pb.GetResponse{Result: &pb.Result{AssociatedCellCount: &count}}
	read, err := (&hrpc.Get{}).DeserializeCellBlocks(resp, block)
	if err != nil || int(read) != len(block) || len(resp.Result.Cell) != len(vals) {
		t.Fatalf("gohbase read %d of %d bytes, %d cells: %v", read, len(block), len(resp.Result.Cell), err)
	}
	for i, c := range resp.Result.Cell {
		if string(c.Row) != "user42" || string(c.Family) != "family" || string(c.Qualifier) != vals[i].Name ||
			!bytes.Equal(c.Value, vals[i].Value) || c.GetCellType() != pb.CellType_PUT || c.GetTimestamp() != latestTimestamp {
			t.Fatalf("cell %d: %v", i, c)
		}
	}

	g := newGetCall([]byte("usertable"), []byte("family"))
	g.start(context.Background(), []byte("user42"), nil)
	resp = &pb.GetResponse{Result: &pb.Result{AssociatedCellCount: &count}}
	if read, err := g.DeserializeCellBlocks(resp, block); err != nil || int(read) != len(block) {
		t.Fatalf("get call read %d of %d: %v", read, len(block), err)
	}
	var got []adapters.Field
	if g.eachCell(resp, func(q, v []byte) { got = append(got, adapters.Field{Name: string(q), Value: v}) }) != len(vals) {
		t.Fatal("wrong cell count")
	}
	for i := range vals {
		if got[i].Name != vals[i].Name || !bytes.Equal(got[i].Value, vals[i].Value) {
			t.Fatalf("field %d: %q=%q, want %q=%q", i, got[i].Name, got[i].Value, vals[i].Name, vals[i].Value)
		}
	}

	// Every truncation, and a corrupted length, is an error, never a
	// panic or a short read.
	for cut := 0; cut < len(block); cut++ {
		if _, err := g.DeserializeCellBlocks(resp, block[:cut]); !errors.Is(err, errCellBlock) {
			t.Fatalf("block cut at %d: %v", cut, err)
		}
	}
	bad := append([]byte(nil), block...)
	bad[7]++ // the first cell's key length
	if _, err := g.DeserializeCellBlocks(resp, bad); !errors.Is(err, errCellBlock) {
		t.Fatalf("corrupted key length: %v", err)
	}
}

// TestWorkerCallsSkipBatching: a worker's get and put go out as plain Get
// and Mutate requests, as Java YCSB's client sends them, not through
// gohbase's batching queue (whose MultiRequest held one call at a time).
func TestWorkerCallsSkipBatching(t *testing.T) {
	calls := []hrpc.Call{
		newGetCall([]byte("usertable"), []byte("family")),
		newPutCall([]byte("usertable"), []byte("family"), hrpc.UseDefault),
	}
	for _, c := range calls {
		b, ok := c.(hrpc.Batchable)
		if !ok || !b.SkipBatch() {
			t.Errorf("%s: SkipBatch() false (batchable %v), want true", c.Name(), ok)
		}
	}
}

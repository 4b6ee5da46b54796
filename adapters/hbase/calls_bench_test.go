package hbase

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/opctx"
)

// The adapter's own work per operation, without the network: the request
// built and marshalled as gohbase's region client marshals it, the reply
// unmarshalled and its cell block read as gohbase reads it, and the record
// filled. "gohbase" is the DB's own path (NewGet/NewPut and a timeout
// context per operation), "reused" the worker's (calls.go). Run with
// -benchmem: allocations per operation are the point.

// benchReply is a Get's reply for a 10-field row of 100-byte values.
func benchReply(b *testing.B) (resp []byte, cells []byte) {
	b.Helper()
	var refs []cellRef
	for f := 0; f < 10; f++ {
		cells, refs = appendCell(cells, refs, []byte("user6284781860667377211"), []byte("family"),
			"field"+strconv.Itoa(f), make([]byte, 100))
	}
	n := int32(len(refs))
	resp, err := proto.Marshal(&pb.GetResponse{Result: &pb.Result{AssociatedCellCount: &n}})
	if err != nil {
		b.Fatal(err)
	}
	return resp, cells
}

func BenchmarkReadPath(b *testing.B) {
	d := &DB{table: "usertable", tableBytes: []byte("usertable"), family: "family", familyBytes: []byte("family"), timeout: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	key := []byte("user6284781860667377211")
	reply, cells := benchReply(b)
	var rec adapters.Record
	b.Run("gohbase", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			octx, cancel := d.opCtx(ctx)
			g, err := hrpc.NewGet(octx, d.tableBytes, clone(key), hrpc.Families(d.families(nil)))
			if err != nil {
				b.Fatal(err)
			}
			g.SetRegion(testRegion)
			if _, err := proto.Marshal(g.ToProto()); err != nil {
				b.Fatal(err)
			}
			resp := g.NewResponse()
			if err := proto.Unmarshal(reply, resp); err != nil {
				b.Fatal(err)
			}
			if _, err := g.DeserializeCellBlocks(resp, cells); err != nil {
				b.Fatal(err)
			}
			res := hrpc.ToLocalResult(resp.(*pb.GetResponse).Result)
			rec.Reset()
			for _, c := range res.Cells {
				d.addCell(&rec, c.Qualifier, c.Value, nil)
			}
			cancel()
		}
		if len(rec.Fields) != 10 {
			b.Fatalf("%d fields", len(rec.Fields))
		}
	})
	b.Run("reused", func(b *testing.B) {
		b.ReportAllocs()
		g := newGetCall(d.tableBytes, d.familyBytes)
		g.SetRegion(testRegion)
		dl := opctx.New(d.timeout)
		for i := 0; i < b.N; i++ {
			g.start(dl.Start(ctx), key, nil)
			if _, err := proto.Marshal(g.ToProto()); err != nil {
				b.Fatal(err)
			}
			resp := g.NewResponse()
			if err := proto.Unmarshal(reply, resp); err != nil {
				b.Fatal(err)
			}
			if _, err := g.DeserializeCellBlocks(resp, cells); err != nil {
				b.Fatal(err)
			}
			dl.Stop()
			rec.Reset()
			g.eachCell(resp.(*pb.GetResponse), func(q, v []byte) { d.addCell(&rec, q, v, nil) })
		}
		if len(rec.Fields) != 10 {
			b.Fatalf("%d fields", len(rec.Fields))
		}
	})
}

func BenchmarkUpdatePath(b *testing.B) {
	d := &DB{table: "usertable", tableBytes: []byte("usertable"), family: "family", familyBytes: []byte("family"), timeout: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	key := []byte("user6284781860667377211")
	vals := []adapters.Field{{Name: "field3", Value: make([]byte, 100)}}
	reply, err := proto.Marshal(&pb.MutateResponse{Processed: proto.Bool(true)})
	if err != nil {
		b.Fatal(err)
	}
	// send is what the region client does with a mutation: marshal the
	// request, write it with its cell blocks, read the reply.
	send := func(c hrpc.Call) {
		m, _, _ := c.(interface {
			SerializeCellBlocks() (proto.Message, [][]byte, uint32)
		}).SerializeCellBlocks()
		if _, err := proto.Marshal(m); err != nil {
			b.Fatal(err)
		}
		if err := proto.Unmarshal(reply, c.NewResponse()); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("gohbase", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			octx, cancel := d.opCtx(ctx)
			// DB.put's request, without its SendRPC.
			size := len(key) + len(vals[0].Value)
			buf := append(make([]byte, 0, size), key...)
			k := buf[:len(key):len(key)]
			cols := make(map[string][]byte, len(vals))
			for j := range vals {
				start := len(buf)
				buf = append(buf, vals[j].Value...)
				cols[vals[j].Name] = buf[start:len(buf):len(buf)]
			}
			p, err := hrpc.NewPut(octx, d.tableBytes, k, map[string]map[string][]byte{d.family: cols}, hrpc.Durability(d.durability))
			if err != nil {
				b.Fatal(err)
			}
			p.SetRegion(testRegion)
			send(p)
			cancel()
		}
	})
	b.Run("reused", func(b *testing.B) {
		b.ReportAllocs()
		p := newPutCall(d.tableBytes, d.familyBytes, d.durability)
		p.SetRegion(testRegion)
		dl := opctx.New(d.timeout)
		for i := 0; i < b.N; i++ {
			p.start(dl.Start(ctx), key, vals)
			send(p)
			dl.Stop()
		}
	})
}

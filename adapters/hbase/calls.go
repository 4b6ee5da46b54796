package hbase

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// gohbase's NewGet and NewPut build every request from scratch: a
// qualifier map per put, a map of families, a protobuf message per field
// and per cell, a result channel and a Result per call, and for a read one
// Cell per returned field. The calls here are hrpc.Calls of the binding's
// own that a worker reuses from one operation to the next: the request
// protobufs are filled in place, a put's cells are written into one reused
// cell block, and a read's cell block is decoded straight into the
// caller's record. gohbase sends them as its own (gohbase.RPCClient's
// SendRPC: region lookup, retries).
//
// They skip gohbase's batching (hrpc.SkipBatch): each is written to the
// RegionServer by the worker's own goroutine as a plain Get or Mutate
// request, which is what Java YCSB's HBase client sends for a get or an
// unbuffered put, instead of being handed to the region client's queue
// goroutine and wrapped in a MultiRequest. With one operation in flight
// per worker gohbase's queue rarely found more than one call to batch (a
// write per operation either way), so the hand-off and the MultiRequest
// wrapping were pure cost: against one HBase 2.6.4, workload A, 16
// threads, one P, callgrind counts 62.9k -> 59.4k instructions per
// operation, and client CPU per operation fell 1-1.6 us (24.5-26.8 ->
// 23.6-25.8 us, alternating runs). Writes buffered for clientbuffering
// are gohbase's own puts and still share MultiRequests (buffered.go).
//
// A call is only reused after gohbase is done with it: after a successful
// SendRPC its request went out and its one result came back. After a
// failure (a timeout above all) gohbase may still hold it, queued or
// awaiting a late response, so the worker drops it and makes a new one.

// call is the part of hrpc.Call that reads and gets are alike in.
type call struct {
	ctxMu sync.Mutex // gohbase's reader goroutine reads the context too
	ctx   context.Context

	table  []byte
	key    []byte // the call's own copy: gohbase may send it late
	region hrpc.RegionInfo
	result chan hrpc.RPCResult
	spec   pb.RegionSpecifier
}

func (c *call) init(table []byte) {
	c.table = table
	c.result = make(chan hrpc.RPCResult, 1)
	c.spec.Type = hrpc.RegionSpecifierRegionName
}

// start sets the context and key of the next operation.
func (c *call) start(ctx context.Context, key []byte) {
	c.SetContext(ctx)
	c.key = append(c.key[:0], key...)
}

func (c *call) Table() []byte                        { return c.table }
func (c *call) Key() []byte                          { return c.key }
func (c *call) Region() hrpc.RegionInfo              { return c.region }
func (c *call) SetRegion(r hrpc.RegionInfo)          { c.region = r }
func (c *call) ResultChan() chan hrpc.RPCResult      { return c.result }
func (c *call) regionSpecifier() *pb.RegionSpecifier { c.spec.Value = c.region.Name(); return &c.spec }

func (c *call) Context() context.Context {
	c.ctxMu.Lock()
	defer c.ctxMu.Unlock()
	return c.ctx
}

func (c *call) SetContext(ctx context.Context) {
	c.ctxMu.Lock()
	c.ctx = ctx
	c.ctxMu.Unlock()
}

// getCall is a reusable Get of one family (all of it, or named
// qualifiers). The embedded hrpc.Get only lends it gohbase's Batchable
// interface (whose setter is unexported), set to skip batching; every
// hrpc.Call method is the getCall's.
type getCall struct {
	*hrpc.Get
	call
	req    pb.GetRequest
	get    pb.Get
	column pb.Column
	cols   [1]*pb.Column
	tr     pb.TimeRange
	resp   pb.GetResponse
	// cells is the response's cell block holding the row's cells, and
	// ncells their number (set by DeserializeCellBlocks).
	cells  []byte
	ncells int
}

var (
	_ hrpc.Call      = (*getCall)(nil)
	_ hrpc.Batchable = (*getCall)(nil)
	_ hrpc.Call      = (*putCall)(nil)
	_ hrpc.Batchable = (*putCall)(nil)
)

func newGetCall(table, family []byte) *getCall {
	g := &getCall{}
	// NewGet fails only on a bad option; SkipBatch applies to a Get.
	g.Get, _ = hrpc.NewGet(context.Background(), table, nil, hrpc.SkipBatch())
	g.init(table)
	g.column.Family = family
	g.cols[0] = &g.column
	g.get.Column = g.cols[:]
	// gohbase sends an empty time range on every Get; so does this.
	g.get.TimeRange = &g.tr
	g.req.Get = &g.get
	return g
}

// start prepares the call for a read of key: the whole family when fields
// is nil, else the named qualifiers.
func (g *getCall) start(ctx context.Context, key []byte, fields []string) {
	g.call.start(ctx, key)
	g.column.Qualifier = g.column.Qualifier[:0]
	for _, f := range fields {
		g.column.Qualifier = append(g.column.Qualifier, []byte(f))
	}
	g.cells, g.ncells = nil, 0
}

func (g *getCall) Table() []byte                   { return g.call.Table() }
func (g *getCall) Key() []byte                     { return g.call.Key() }
func (g *getCall) Region() hrpc.RegionInfo         { return g.call.Region() }
func (g *getCall) SetRegion(r hrpc.RegionInfo)     { g.call.SetRegion(r) }
func (g *getCall) ResultChan() chan hrpc.RPCResult { return g.call.ResultChan() }
func (g *getCall) Context() context.Context        { return g.call.Context() }
func (g *getCall) SetContext(ctx context.Context)  { g.call.SetContext(ctx) }
func (g *getCall) Name() string                    { return "Get" }
func (g *getCall) Description() string             { return "Get" }

// ToProto fills the reused request: gohbase marshals it at once, in the
// goroutine that sends it.
func (g *getCall) ToProto() proto.Message {
	g.req.Region = g.regionSpecifier()
	g.get.Row = g.key
	return &g.req
}

// NewResponse returns the reused response; proto.Unmarshal resets it.
func (g *getCall) NewResponse() proto.Message { return &g.resp }

// DeserializeCellBlocks takes the row's cells from the response's cell
// block, which gohbase allocated for this response alone, checking that
// they are whole; the worker decodes them once the call has returned.
func (g *getCall) DeserializeCellBlocks(m proto.Message, b []byte) (uint32, error) {
	r := m.(*pb.GetResponse).GetResult()
	if r == nil {
		return 0, nil
	}
	n := int(r.GetAssociatedCellCount())
	size, err := cellBlockSize(b, n)
	if err != nil {
		return 0, err
	}
	g.cells, g.ncells = b[:size:size], n
	return uint32(size), nil
}

// eachCell calls f with the qualifier and value of every cell of the
// response: those in its protobuf (a server without cell blocks) and
// those of its cell block.
func (g *getCall) eachCell(resp *pb.GetResponse, f func(qualifier, value []byte)) int {
	pbCells := resp.GetResult().GetCell()
	for _, c := range pbCells {
		f(c.Qualifier, c.Value)
	}
	b := g.cells
	for i := 0; i < g.ncells; i++ {
		q, v, n := splitCell(b)
		f(q, v)
		b = b[n:]
	}
	return len(pbCells) + g.ncells
}

// putCall is a reusable Put of one row's fields into one family, its
// cells written into one cell block (HBase's KeyValue encoding, as gohbase
// writes its own). Like getCall, the embedded hrpc.Mutate only lends it
// gohbase's Batchable interface.
type putCall struct {
	*hrpc.Mutate
	call
	family []byte
	req    pb.MutateRequest
	mut    pb.MutationProto
	count  int32
	block  []byte
	blocks [1][]byte
	// fields keeps each field's qualifier and value as offsets into
	// block, for ToProto.
	fields []cellRef
	resp   pb.MutateResponse
}

// cellRef locates one cell's qualifier and value in a cell block.
type cellRef struct{ q0, q1, v0, v1 int }

var putType = pb.MutationProto_PUT

func newPutCall(table, family []byte, durability hrpc.DurabilityType) *putCall {
	p := &putCall{family: family}
	p.Mutate, _ = hrpc.NewPut(context.Background(), table, nil, nil, hrpc.SkipBatch())
	p.init(table)
	p.mut.MutateType = &putType
	// gohbase states the durability on every mutation, USE_DEFAULT too.
	p.mut.Durability = pb.MutationProto_Durability(durability).Enum()
	p.mut.AssociatedCellCount = &p.count
	p.req.Mutation = &p.mut
	return p
}

// latestTimestamp is HBase's LATEST_TIMESTAMP (Long.MAX_VALUE): the
// server stamps the cells, as it does gohbase's and Java's puts.
const latestTimestamp = math.MaxInt64

// start prepares the call for a put of values into row key.
func (p *putCall) start(ctx context.Context, key []byte, values []adapters.Field) {
	p.call.start(ctx, key)
	p.block = p.block[:0]
	p.fields = p.fields[:0]
	for i := range values {
		p.block, p.fields = appendCell(p.block, p.fields, p.key, p.family, values[i].Name, values[i].Value)
	}
	p.count = int32(len(values))
}

// appendCell appends one KeyValue: lengths, row, family, qualifier,
// timestamp, type, value.
func appendCell(b []byte, refs []cellRef, row, family []byte, qualifier string, value []byte) ([]byte, []cellRef) {
	keyLen := 2 + len(row) + 1 + len(family) + len(qualifier) + 8 + 1
	b = binary.BigEndian.AppendUint32(b, uint32(8+keyLen+len(value)))
	b = binary.BigEndian.AppendUint32(b, uint32(keyLen))
	b = binary.BigEndian.AppendUint32(b, uint32(len(value)))
	b = binary.BigEndian.AppendUint16(b, uint16(len(row)))
	b = append(b, row...)
	b = append(b, byte(len(family)))
	b = append(b, family...)
	q0 := len(b)
	b = append(b, qualifier...)
	q1 := len(b)
	b = binary.BigEndian.AppendUint64(b, latestTimestamp)
	b = append(b, byte(pb.CellType_PUT))
	v0 := len(b)
	b = append(b, value...)
	return b, append(refs, cellRef{q0, q1, v0, len(b)})
}

func (p *putCall) Table() []byte                   { return p.call.Table() }
func (p *putCall) Key() []byte                     { return p.call.Key() }
func (p *putCall) Region() hrpc.RegionInfo         { return p.call.Region() }
func (p *putCall) SetRegion(r hrpc.RegionInfo)     { p.call.SetRegion(r) }
func (p *putCall) ResultChan() chan hrpc.RPCResult { return p.call.ResultChan() }
func (p *putCall) Context() context.Context        { return p.call.Context() }
func (p *putCall) SetContext(ctx context.Context)  { p.call.SetContext(ctx) }
func (p *putCall) Name() string                    { return "Mutate" }
func (p *putCall) Description() string             { return "PUT" }

// CellBlocksEnabled: the cells go in the cell block (gohbase always sends
// them so; ToProto is the fallback a region client without cell blocks
// would use).
func (p *putCall) CellBlocksEnabled() bool { return true }

// SerializeCellBlocks returns the reused request and its cell block.
func (p *putCall) SerializeCellBlocks() (proto.Message, [][]byte, uint32) {
	p.req.Region = p.regionSpecifier()
	p.mut.Row = p.key
	p.mut.ColumnValue = nil
	p.mut.AssociatedCellCount = &p.count
	p.blocks[0] = p.block
	return &p.req, p.blocks[:], uint32(len(p.block))
}

// ToProto is the put with its cells in the protobuf instead.
func (p *putCall) ToProto() proto.Message {
	p.req.Region = p.regionSpecifier()
	p.mut.Row = p.key
	p.mut.AssociatedCellCount = nil
	qvs := make([]*pb.MutationProto_ColumnValue_QualifierValue, len(p.fields))
	for i, f := range p.fields {
		qvs[i] = &pb.MutationProto_ColumnValue_QualifierValue{Qualifier: p.block[f.q0:f.q1], Value: p.block[f.v0:f.v1]}
	}
	p.mut.ColumnValue = []*pb.MutationProto_ColumnValue{{Family: p.family, QualifierValue: qvs}}
	return &p.req
}

func (p *putCall) NewResponse() proto.Message { return &p.resp }

// DeserializeCellBlocks skips the cells of a put's result (HBase returns
// none for a plain put; gohbase asks every call in a MultiResponse).
func (p *putCall) DeserializeCellBlocks(m proto.Message, b []byte) (uint32, error) {
	r := m.(*pb.MutateResponse).GetResult()
	if r == nil {
		return 0, nil
	}
	size, err := cellBlockSize(b, int(r.GetAssociatedCellCount()))
	return uint32(size), err
}

var errCellBlock = errors.New("hbase: malformed cell block in response")

// cellBlockSize returns the length of the first n KeyValues of b, having
// checked that each is whole and that its lengths agree.
func cellBlockSize(b []byte, n int) (int, error) {
	off := 0
	for i := 0; i < n; i++ {
		rest := b[off:]
		if len(rest) < 4+4+4+2 {
			return 0, fmt.Errorf("%w: cell %d of %d cut short", errCellBlock, i+1, n)
		}
		kvLen := int(binary.BigEndian.Uint32(rest))
		keyLen := int(binary.BigEndian.Uint32(rest[4:]))
		valLen := int(binary.BigEndian.Uint32(rest[8:]))
		rowLen := int(binary.BigEndian.Uint16(rest[12:]))
		if kvLen < 8 || len(rest)-4 < kvLen || keyLen+valLen != kvLen-8 || keyLen < 2+rowLen+1+8+1 ||
			keyLen < 2+rowLen+1+int(rest[14+rowLen])+8+1 {
			return 0, fmt.Errorf("%w: cell %d of %d has inconsistent lengths", errCellBlock, i+1, n)
		}
		off += 4 + kvLen
	}
	return off, nil
}

// splitCell returns the qualifier and value of the KeyValue at the start
// of b (checked by cellBlockSize) and its length.
func splitCell(b []byte) (qualifier, value []byte, n int) {
	kvLen := int(binary.BigEndian.Uint32(b))
	keyLen := int(binary.BigEndian.Uint32(b[4:]))
	rowLen := int(binary.BigEndian.Uint16(b[12:]))
	fam := 14 + rowLen
	q0 := fam + 1 + int(b[fam])
	q1 := 12 + keyLen - 8 - 1
	return b[q0:q1], b[12+keyLen : 4+kvLen], 4 + kvLen
}

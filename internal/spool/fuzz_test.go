package spool_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/internal/spool"
	"github.com/ycsbctl/ycsbctl/internal/testutil/fuzzbound"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// fuzzMaxSpool caps a fuzzed spool: resynchronising scans every byte.
const fuzzMaxSpool = 64 << 10

// FuzzOpen reads any bytes as a spool. Invariants: it never panics nor
// takes long; every record it indexes reads back, decodes and passes the
// check it was opened with; damage lies inside the file, in order,
// without overlapping.
func FuzzOpen(f *testing.F) {
	recs := testRecords(3)
	v3, v2 := writeSpool(f, recs), writeSpoolV2(recs)
	for _, w := range []written{v3, v2} {
		f.Add(w.b)
		f.Add(w.b[:len(w.b)-5])
		b := bytes.Clone(w.b)
		b[w.frames[2][0]+2] ^= 0xff
		f.Add(b)
	}
	f.Add([]byte("ycsbctl-spool 3\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("ycsbctl-spool 2\n\x00\x00\x00\x02{}\xff\xff\xff\xff"))
	check := func([]byte) (func(*pb.IntervalRecord) error, error) {
		return func(*pb.IntervalRecord) error { return nil }, nil
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > fuzzMaxSpool {
			return
		}
		defer fuzzbound.Start(b)()
		r, err := spool.ReadBytes(b, check)
		if err != nil {
			return
		}
		defer func() { _ = r.Close() }()
		checkReader(t, r, int64(len(b)))
	})
}

// checkReader checks what a reader of a size-byte spool says.
func checkReader(t *testing.T, r *spool.Reader, size int64) {
	t.Helper()
	end := int64(0)
	for _, d := range r.Damage {
		if d.Offset < end || d.Bytes <= 0 || d.Offset+d.Bytes > size {
			t.Fatalf("damage %s in a %d-byte file after %d", d, size, end)
		}
		end = d.Offset + d.Bytes
	}
	prev := int64(0)
	for _, seq := range r.Seqs() {
		if seq <= prev {
			t.Fatalf("seqs %v out of order", r.Seqs())
		}
		prev = seq
		n := 0
		for a := 0; a < r.Agents(); a++ {
			var rec pb.IntervalRecord
			ok, err := r.Get(a, seq, &rec)
			if err != nil {
				t.Fatalf("agent %d's interval %d: %v", a, seq, err)
			}
			if ok {
				n++
				if int(rec.AgentIndex) != a || rec.Seq != seq {
					t.Fatalf("asked for agent %d's interval %d, read agent %d's %d", a, seq, rec.AgentIndex, rec.Seq)
				}
			}
		}
		if n == 0 {
			t.Fatalf("interval %d listed, no record of it", seq)
		}
	}
}

// FuzzDamagedSpool damages a spool the writer wrote (format 3) at one
// place: some bytes overwritten, inserted or cut. Invariant: every record
// whose frame the damage did not touch is read back, with its own
// contents; a damage that leaves the frames whole is no damage.
func FuzzDamagedSpool(f *testing.F) {
	f.Add(uint16(100), []byte{0xff, 0xff}, uint8(0), []byte("hdr"))
	f.Add(uint16(60), []byte("\x00\x00\x00\x09garbage!!"), uint8(1), []byte{})
	f.Add(uint16(200), []byte{}, uint8(2), []byte{1, 2, 3})
	f.Add(uint16(33), []byte{0, 0, 0, 0, 0, 0, 0, 0}, uint8(0), []byte{0x10, 0x01})
	f.Fuzz(func(t *testing.T, at uint16, garbage []byte, how uint8, hdr []byte) {
		if len(garbage) > 4<<10 || len(hdr) > 4<<10 {
			return
		}
		recs := testRecords(6)
		for i, rec := range recs {
			// The fuzzer's bytes inside the records too: a frame
			// may hold what looks like another frame.
			rec.Histograms[0].Hdr = append(rec.Histograms[0].Hdr, hdr[:len(hdr)*i/len(recs)]...)
		}
		w := writeSpoolV3InMemory(recs)
		pos := len("ycsbctl-spool 3\n") + int(at)%(len(w.b)-len("ycsbctl-spool 3\n"))
		var b []byte
		var from, to int // the bytes of the original the damage touched
		switch how % 3 {
		case 0: // overwrite
			n := min(len(garbage), len(w.b)-pos)
			b = bytes.Clone(w.b)
			copy(b[pos:], garbage[:n])
			from, to = pos, pos+n
		case 1: // insert
			b = append(append(bytes.Clone(w.b[:pos]), garbage...), w.b[pos:]...)
			from, to = pos, pos
			if len(garbage) > 0 {
				// The frame the bytes went into, or none
				// when they went between two.
				from, to = pos-1, pos+1
			}
		default: // cut out
			n := min(len(garbage), len(w.b)-pos)
			b = append(bytes.Clone(w.b[:pos]), w.b[pos+n:]...)
			from, to = pos, pos+n
		}
		headerEnd := w.frames[0][0]
		if from < headerEnd {
			return // a damaged header is an error, tested apart
		}
		defer fuzzbound.Start(b)()
		r, err := spool.ReadBytes(b, nil)
		if err != nil {
			t.Fatalf("a spool damaged after its header: %v", err)
		}
		defer func() { _ = r.Close() }()
		checkReader(t, r, int64(len(b)))
		for i, fr := range w.frames {
			if fr[1] > from && fr[0] < to {
				continue // touched
			}
			if fr[0] >= to && how%3 == 2 && to == from {
				continue
			}
			rec := recs[i]
			var got pb.IntervalRecord
			ok, err := r.Get(int(rec.AgentIndex), rec.Seq, &got)
			if err != nil || !ok || !proto.Equal(&got, rec) {
				t.Fatalf("damage at %d..%d (how %d): the untouched record %d (frame %d..%d) read %v %v: %v\ndamage: %v",
					from, to, how%3, i, fr[0], fr[1], ok, err, &got, r.Damage)
			}
		}
		if bytes.Equal(b, w.b) && (len(r.Damage) > 0 || r.Cut) {
			t.Fatalf("no change, yet damage %v cut %v", r.Damage, r.Cut)
		}
	})
}

// writeSpoolV3InMemory frames recs as the writer does (format 3: length,
// CRC-32C, payload; TestFormat3Frames checks the writer's), without the
// file the writer needs.
func writeSpoolV3InMemory(recs []*pb.IntervalRecord) written {
	var b bytes.Buffer
	b.WriteString("ycsbctl-spool 3\n")
	frame := func(p []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(p)))
		_ = binary.Write(&b, binary.BigEndian, crc32.Checksum(p, crc32.MakeTable(crc32.Castagnoli)))
		b.Write(p)
	}
	frame([]byte(`{"run_id":"w"}`))
	var sizes []int
	for _, rec := range recs {
		p, _ := proto.Marshal(rec)
		frame(p)
		sizes = append(sizes, len(p))
	}
	return frameOffsets(b.Bytes(), 8, len(`{"run_id":"w"}`), sizes, recs)
}

package spool_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/internal/spool"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// written is a spool as the test wrote it: its bytes and where each
// record's frame starts and ends.
type written struct {
	b      []byte
	frames [][2]int
	recs   []*pb.IntervalRecord
}

// testRecords are two agents' records of intervals 1..n, with payloads of
// varied length (histogram-like bytes included).
func testRecords(n int) []*pb.IntervalRecord {
	var recs []*pb.IntervalRecord
	for seq := int64(1); seq <= int64(n); seq++ {
		for a := int32(0); a < 2; a++ {
			rec := &pb.IntervalRecord{AgentIndex: a, Seq: seq, StartUnixNs: 1e18 + seq*1e9, EndUnixNs: 1e18 + (seq+1)*1e9, Operations: 100*seq + int64(a)}
			rec.Histograms = []*pb.SeriesHistogram{{Series: "READ", Hdr: bytes.Repeat([]byte{byte(seq), 0, 1}, int(seq))}}
			recs = append(recs, rec)
		}
	}
	return recs
}

// writeSpool writes recs with the package's writer (format 3).
func writeSpool(t testing.TB, recs []*pb.IntervalRecord) written {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".spool-w")
	w, err := spool.Create(path, []byte(`{"run_id":"w"}`))
	require.NoError(t, err)
	var sizes []int
	for _, rec := range recs {
		require.NoError(t, w.Add(rec))
		sizes = append(sizes, proto.Size(rec))
	}
	require.NoError(t, w.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return frameOffsets(b, 8, len(`{"run_id":"w"}`), sizes, recs)
}

// writeSpoolV2 writes recs as format 2 did: a length before each payload,
// no checksum.
func writeSpoolV2(recs []*pb.IntervalRecord) written {
	var b bytes.Buffer
	b.WriteString("ycsbctl-spool 2\n")
	frame := func(p []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(p)))
		b.Write(p)
	}
	frame([]byte(`{"run_id":"w"}`))
	var sizes []int
	for _, rec := range recs {
		p, _ := proto.Marshal(rec)
		frame(p)
		sizes = append(sizes, len(p))
	}
	return frameOffsets(b.Bytes(), 4, len(`{"run_id":"w"}`), sizes, recs)
}

func frameOffsets(b []byte, hdr, header int, sizes []int, recs []*pb.IntervalRecord) written {
	w := written{b: b, recs: recs}
	off := len("ycsbctl-spool 3\n") + hdr + header
	for _, n := range sizes {
		w.frames = append(w.frames, [2]int{off, off + hdr + n})
		off += hdr + n
	}
	return w
}

// open reads b as a spool file.
func open(t *testing.T, b []byte, check spool.Check) *spool.Reader {
	t.Helper()
	r := openAt(t, filepath.Join(t.TempDir(), ".spool-x"), b, check)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// openAt writes b to path and reads it as a spool.
func openAt(t *testing.T, path string, b []byte, check spool.Check) *spool.Reader {
	t.Helper()
	require.NoError(t, os.WriteFile(path, b, 0o600))
	r, err := spool.OpenChecked(path, check)
	require.NoError(t, err)
	return r
}

// indexed lists the records r holds, in (seq, agent) order, with their
// operations, which say they are the records written.
func indexed(t *testing.T, r *spool.Reader) []string {
	t.Helper()
	var out []string
	for _, seq := range r.Seqs() {
		for a := 0; a < r.Agents(); a++ {
			var rec pb.IntervalRecord
			ok, err := r.Get(a, seq, &rec)
			require.NoError(t, err)
			if ok {
				out = append(out, fmt.Sprintf("%d/%d:%d", a, seq, rec.Operations))
			}
		}
	}
	return out
}

func names(recs []*pb.IntervalRecord) []string {
	var out []string
	for _, rec := range recs {
		out = append(out, fmt.Sprintf("%d/%d:%d", rec.AgentIndex, rec.Seq, rec.Operations))
	}
	return out
}

// A spool cut at any byte (the writer killed at any instant) reads back
// every record whose frame is whole, says it was cut when the cut is
// inside a frame, and reports no damage: a crash is not damage. Both
// formats.
func TestTruncatedAtAnyByte(t *testing.T) {
	recs := testRecords(4)
	for name, w := range map[string]written{"format 3": writeSpool(t, recs), "format 2": writeSpoolV2(recs)} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".spool-x")
			for size := w.frames[0][0]; size <= len(w.b); size++ {
				r := openAt(t, path, w.b[:size], nil)
				whole := 0
				for _, f := range w.frames {
					if f[1] <= size {
						whole++
					}
				}
				atBoundary := size == w.frames[0][0]
				for _, f := range w.frames {
					atBoundary = atBoundary || f[1] == size
				}
				require.Equal(t, names(recs[:whole]), indexed(t, r), "cut at %d", size)
				require.Equal(t, !atBoundary, r.Cut, "cut at %d", size)
				require.Empty(t, r.Damage, "cut at %d", size)
				require.NoError(t, r.Close())
			}
		})
	}
}

// A frame damaged in the middle of a spool is skipped and said; every
// record before and after it is read. Kinds of damage: a payload that
// does not decode, a length beyond any frame, a length that runs past
// the end of the file (which must not pass for a crash's cut), lengths a
// little off, garbage inserted between frames, a run of zeros over two
// frames; in format 3 also a flipped bit that still decodes, which only
// the checksum sees.
func TestDamageInTheMiddleKeepsTheRest(t *testing.T) {
	recs := testRecords(5)
	const victim = 5 // agent 1's interval 3
	cases := []struct {
		name string
		// damage returns the damaged bytes and how many records
		// from the victim on are lost.
		damage func(w written) ([]byte, int)
		// onlyV3: damage that format 2, without checksums, cannot
		// see.
		onlyV3 bool
	}{
		{"payload does not decode", func(w written) ([]byte, int) {
			b := bytes.Clone(w.b)
			f := w.frames[victim]
			for i := f[1] - 6; i < f[1]; i++ {
				b[i] = 0xff
			}
			return b, 1
		}, false},
		{"implausible length", func(w written) ([]byte, int) {
			b := bytes.Clone(w.b)
			binary.BigEndian.PutUint32(b[w.frames[victim][0]:], 0xfffffff0)
			return b, 1
		}, false},
		{"length past the end", func(w written) ([]byte, int) {
			b := bytes.Clone(w.b)
			binary.BigEndian.PutUint32(b[w.frames[victim][0]:], uint32(len(b)))
			return b, 1
		}, false},
		{"length 3 too long", func(w written) ([]byte, int) {
			b := bytes.Clone(w.b)
			f := w.frames[victim]
			binary.BigEndian.PutUint32(b[f[0]:], binary.BigEndian.Uint32(b[f[0]:])+3)
			return b, 1
		}, false},
		{"length 3 too short", func(w written) ([]byte, int) {
			b := bytes.Clone(w.b)
			f := w.frames[victim]
			binary.BigEndian.PutUint32(b[f[0]:], binary.BigEndian.Uint32(b[f[0]:])-3)
			return b, 1
			// Format 2 has no checksum: the shortened payload (its
			// last field gone) decodes as a record, and only the 3
			// bytes after it are damage. TestFormat2Limits.
		}, true},
		{"garbage inserted", func(w written) ([]byte, int) {
			f := w.frames[victim]
			return append(append(bytes.Clone(w.b[:f[0]]), []byte("\x00\x00\x00\x09garbage!!\xff\xff")...), w.b[f[0]:]...), 0
		}, false},
		{"zeros over two frames", func(w written) ([]byte, int) {
			b := bytes.Clone(w.b)
			for i := w.frames[victim][0] + 2; i < w.frames[victim+1][0]+5; i++ {
				b[i] = 0
			}
			return b, 2
		}, false},
		{"a flipped bit that decodes", func(w written) ([]byte, int) {
			b := bytes.Clone(w.b)
			f := w.frames[victim]
			// Operations is the payload's last varint field but
			// for the histogram: flip its low bit in the payload's
			// tail.
			b[f[1]-1] ^= 1
			return b, 1
		}, true},
	}
	for _, format := range []string{"format 3", "format 2"} {
		w := writeSpool(t, recs)
		if format == "format 2" {
			w = writeSpoolV2(recs)
		}
		for _, tc := range cases {
			if tc.onlyV3 && format == "format 2" {
				continue
			}
			t.Run(format+"/"+tc.name, func(t *testing.T) {
				b, lost := tc.damage(w)
				r := open(t, b, nil)
				want := append(append([]*pb.IntervalRecord{}, recs[:victim]...), recs[victim+lost:]...)
				assert.Equal(t, names(want), indexed(t, r))
				assert.False(t, r.Cut)
				require.Len(t, r.Damage, 1)
				d := r.Damage[0]
				assert.Equal(t, int64(w.frames[victim][0]), d.Offset, "%s", d)
				require.NotNil(t, d.After)
				assert.Equal(t, spool.RecordID{Agent: 0, Seq: 3}, *d.After)
				require.NotNil(t, d.Before)
				next := recs[victim+lost]
				assert.Equal(t, spool.RecordID{Agent: next.AgentIndex, Seq: next.Seq}, *d.Before)
				assert.Contains(t, d.String(), fmt.Sprintf("bytes %d-", d.Offset))
				assert.Contains(t, d.String(), "between agent 0's interval 3 and")
			})
		}
	}
}

// What format 2 (no checksums) cannot see: a length shortened onto a
// field boundary frames a shorter record that decodes. Every other record
// is still read, and the bytes left over are said as damage.
func TestFormat2Limits(t *testing.T) {
	recs := testRecords(5)
	w := writeSpoolV2(recs)
	b := bytes.Clone(w.b)
	f := w.frames[5]
	binary.BigEndian.PutUint32(b[f[0]:], binary.BigEndian.Uint32(b[f[0]:])-3)
	r := open(t, b, nil)
	got := indexed(t, r)
	for i, n := range names(recs) {
		if i != 5 {
			assert.Contains(t, got, n)
		}
	}
	assert.Contains(t, got, "1/3:0", "the shortened record, its operations field cut off")
	require.Len(t, r.Damage, 1)
	assert.Equal(t, int64(3), r.Damage[0].Bytes)
}

// Damage at the very end (a whole frame that does not read) is damage,
// not a cut: the frame was written in full.
func TestDamagedLastFrame(t *testing.T) {
	recs := testRecords(2)
	w := writeSpool(t, recs)
	b := bytes.Clone(w.b)
	last := w.frames[len(w.frames)-1]
	b[last[1]-1] ^= 0x40
	r := open(t, b, nil)
	assert.Equal(t, names(recs[:len(recs)-1]), indexed(t, r))
	assert.False(t, r.Cut)
	require.Len(t, r.Damage, 1)
	assert.Nil(t, r.Damage[0].Before)
	assert.Contains(t, r.Damage[0].String(), "to the end of the file")
	assert.Contains(t, r.Damage[0].String(), "checksum")
}

// The check made from the header refuses records as damage (a record
// of an agent the run did not have), and sees the header.
func TestCheckRefusesRecords(t *testing.T) {
	recs := testRecords(3)
	recs[2].AgentIndex = 7
	w := writeSpool(t, recs)
	var header string
	r := open(t, w.b, func(h []byte) (func(*pb.IntervalRecord) error, error) {
		header = string(h)
		return func(rec *pb.IntervalRecord) error {
			if rec.AgentIndex > 1 {
				return errors.New("the run had 2 agents")
			}
			return nil
		}, nil
	})
	assert.Equal(t, `{"run_id":"w"}`, header)
	want := append(append([]*pb.IntervalRecord{}, recs[:2]...), recs[3:]...)
	assert.Equal(t, names(want), indexed(t, r))
	require.Len(t, r.Damage, 1)
	assert.Contains(t, r.Damage[0].String(), "agent 7's interval 2, refused: the run had 2 agents")
	assert.Equal(t, 2, r.Agents())
}

// A header that does not read is an error: without it nothing can be
// rebuilt, and the spool stays for the operator.
func TestDamagedHeader(t *testing.T) {
	w := writeSpool(t, testRecords(1))
	b := bytes.Clone(w.b)
	b[len("ycsbctl-spool 3\n")+8] ^= 1
	path := filepath.Join(t.TempDir(), ".spool-x")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	_, err := spool.Open(path)
	assert.ErrorContains(t, err, "no header: a frame of 14 bytes whose checksum does not match")
}

// Keep renames a damaged spool once, never over another file.
func TestKeep(t *testing.T) {
	dir := t.TempDir()
	path := spool.Path(dir, "r")
	w, err := spool.Create(path, []byte(`{}`))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	r, err := spool.Open(path)
	require.NoError(t, err)
	defer func() { _ = r.Close() }()
	kept, err := r.Keep()
	require.NoError(t, err)
	assert.Equal(t, path+spool.DamagedSuffix, kept)
	assert.Equal(t, kept, r.Path())
	assert.NoFileExists(t, path)
	again, err := r.Keep()
	require.NoError(t, err)
	assert.Equal(t, kept, again, "a kept spool keeps its name")
	found, err := spool.Find(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{kept}, found)

	// Another file under the kept name is never replaced.
	other := spool.Path(dir, "s")
	w, err = spool.Create(other, []byte(`{}`))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(other+spool.DamagedSuffix, []byte("mine"), 0o600))
	r2, err := spool.Open(other)
	require.NoError(t, err)
	defer func() { _ = r2.Close() }()
	_, err = r2.Keep()
	assert.Error(t, err)
	b, _ := os.ReadFile(other + spool.DamagedSuffix)
	assert.Equal(t, "mine", string(b))
	assert.FileExists(t, other)
}

// Format 3 frames carry the payload's CRC-32C after its length.
func TestFormat3Frames(t *testing.T) {
	w := writeSpool(t, testRecords(1))
	assert.True(t, strings.HasPrefix(string(w.b), "ycsbctl-spool 3\n"))
	f := w.frames[0]
	payload := w.b[f[0]+8 : f[1]]
	assert.Equal(t, crc32.Checksum(payload, crc32.MakeTable(crc32.Castagnoli)), binary.BigEndian.Uint32(w.b[f[0]+4:]))
}

package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// Damage is a part of a spool that could not be read: bytes
// [Offset, Offset+Bytes) of the file, between the records After and
// Before (nil at either end), and why.
type Damage struct {
	Offset, Bytes int64
	After, Before *RecordID
	Reason        string
}

func (d Damage) String() string {
	var where string
	switch {
	case d.After != nil && d.Before != nil:
		where = fmt.Sprintf("between %s and %s", d.After, d.Before)
	case d.After != nil:
		where = fmt.Sprintf("after %s, to the end of the file", d.After)
	case d.Before != nil:
		where = fmt.Sprintf("before %s, the first record", d.Before)
	default:
		where = "where no record could be read"
	}
	return fmt.Sprintf("bytes %d-%d of the spool (%d bytes, %s): %s", d.Offset, d.Offset+d.Bytes-1, d.Bytes, where, d.Reason)
}

// verdict is what a frame's bytes are.
type verdict int

const (
	frameOK verdict = iota
	// frameCut runs past the end of the file: what a crash while
	// writing it leaves.
	frameCut
	// frameBad is complete but cannot be read.
	frameBad
)

// window is how much of the file scanning reads at once.
const window = 1 << 20

// scanner reads a spool's frames through a window of the file.
type scanner struct {
	f     io.ReaderAt
	size  int64
	lay   layout
	check func(*pb.IntervalRecord) error
	win   []byte
	winAt int64
	buf   []byte
	rec   pb.IntervalRecord
}

// bytes returns the file's n bytes at off (off+n <= size), valid until
// the next call.
func (s *scanner) bytes(off, n int64) ([]byte, error) {
	if off >= s.winAt && off+n <= s.winAt+int64(len(s.win)) {
		return s.win[off-s.winAt : off-s.winAt+n], nil
	}
	want := min(max(n, window), s.size-off)
	if int64(cap(s.buf)) < want {
		s.buf = make([]byte, want)
	}
	b := s.buf[:want]
	if _, err := s.f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	s.win, s.winAt = b, off
	return b[:n], nil
}

// frame is what the bytes at an offset hold.
type frame struct {
	v verdict
	// n is the payload's length, when the length is plausible.
	n int64
	// b is the payload when it could be read (valid until the next
	// read).
	b   []byte
	why string
}

// payload reads the frame at off, or says why it is not a frame.
func (s *scanner) payload(off int64) (frame, error) {
	if s.size-off < s.lay.hdr {
		return frame{v: frameCut, why: fmt.Sprintf("a frame header cut short after %d of its %d bytes", s.size-off, s.lay.hdr)}, nil
	}
	h, err := s.bytes(off, s.lay.hdr)
	if err != nil {
		return frame{}, err
	}
	n := int64(binary.BigEndian.Uint32(h))
	var sum uint32
	if s.lay.crc {
		sum = binary.BigEndian.Uint32(h[4:])
	}
	if n > maxFrame {
		return frame{v: frameBad, why: fmt.Sprintf("a frame length of %d bytes (at most %d)", n, maxFrame)}, nil
	}
	if avail := s.size - off - s.lay.hdr; n > avail {
		return frame{v: frameCut, why: fmt.Sprintf("a frame length of %d bytes, of which the file holds %d", n, avail)}, nil
	}
	b, err := s.bytes(off+s.lay.hdr, n)
	if err != nil {
		return frame{}, err
	}
	if s.lay.crc && crc32.Checksum(b, castagnoli) != sum {
		return frame{v: frameBad, n: n, why: fmt.Sprintf("a frame of %d bytes whose checksum does not match", n)}, nil
	}
	return frame{v: frameOK, n: n, b: b}, nil
}

// record reads the record framed at off into s.rec.
func (s *scanner) record(off int64) (frame, error) {
	fr, err := s.payload(off)
	if fr.v != frameOK || err != nil {
		return fr, err
	}
	bad := func(format string, args ...any) (frame, error) {
		return frame{v: frameBad, n: fr.n, why: fmt.Sprintf(format, args...)}, nil
	}
	if err := proto.Unmarshal(fr.b, &s.rec); err != nil {
		return bad("a frame of %d bytes whose record does not decode (%v)", fr.n, err)
	}
	id := RecordID{s.rec.AgentIndex, s.rec.Seq}
	if id.Agent < 0 || id.Seq < 1 {
		return bad("a frame of %d bytes holding agent %d's interval %d, which no run sends", fr.n, id.Agent, id.Seq)
	}
	if s.check != nil {
		if err := s.check(&s.rec); err != nil {
			return bad("%s, refused: %v", id, err)
		}
	}
	return fr, nil
}

// boundary says whether a frame starts at q: one that reads as a record.
// Without checksums (format 2) bytes inside a record may look like a
// frame by chance, so the next frame's length must be plausible too (or
// the file end there).
func (s *scanner) boundary(q int64) (bool, error) {
	fr, err := s.record(q)
	if err != nil || fr.v != frameOK {
		return false, err
	}
	next := q + s.lay.hdr + fr.n
	if s.lay.crc || next == s.size {
		return true, nil
	}
	fr, err = s.payload(next)
	return fr.v != frameBad, err
}

// resync finds where reading goes on after the frame at off that could
// not be read: the first frame boundary after off. The damaged frame's
// own length is not trusted: when it was damaged too, the end it gives
// may fall on a frame boundary further on, skipping good records.
func (s *scanner) resync(off int64) (int64, bool, error) {
	for q := off + 1; s.size-q >= s.lay.hdr; q++ {
		if ok, err := s.boundary(q); err != nil || ok {
			return q, ok, err
		}
	}
	return 0, false, nil
}

func read(f io.ReaderAt, size int64, path string, check Check) (*Reader, error) {
	s := &scanner{f: f, size: size}
	m := make([]byte, len(magic))
	if n, _ := f.ReadAt(m, 0); n < len(m) || !bytes.HasPrefix(m, []byte("ycsbctl-spool ")) {
		return nil, fmt.Errorf("%s: not a ycsbctl spool", path)
	}
	lay, ok := layouts[string(m)]
	if !ok {
		return nil, fmt.Errorf("%s: a spool of format %q, written by another ycsbctl version: rebuild it with that version's `ycsbctl report`", path, strings.TrimSpace(string(m)))
	}
	s.lay = lay
	off := int64(len(m))
	h, err := s.payload(off)
	if err != nil {
		return nil, err
	}
	if h.v != frameOK {
		return nil, fmt.Errorf("%s: no header: %s", path, h.why)
	}
	r := &Reader{f: f, path: path, header: bytes.Clone(h.b), idx: map[RecordID]entry{}}
	if check != nil {
		if s.check, err = check(r.header); err != nil {
			return nil, fmt.Errorf("%s: header: %w", path, err)
		}
	}
	if err := r.index(s, off+lay.hdr+h.n); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return r, nil
}

// index reads every frame from off to the end of the file.
func (r *Reader) index(s *scanner, off int64) error {
	seen := map[int64]bool{}
	var last *RecordID
	for off < s.size {
		fr, err := s.record(off)
		if err != nil {
			return err
		}
		if fr.v == frameOK {
			id := RecordID{s.rec.AgentIndex, s.rec.Seq}
			if d := len(r.Damage); d > 0 && r.Damage[d-1].Before == nil && r.Damage[d-1].Offset+r.Damage[d-1].Bytes == off {
				r.Damage[d-1].Before = &id
			}
			last = &id
			at := off + s.lay.hdr
			off = at + fr.n
			if _, dup := r.idx[id]; dup {
				continue
			}
			r.idx[id] = entry{off: at, n: fr.n}
			if !seen[id.Seq] {
				seen[id.Seq] = true
				r.seqs = append(r.seqs, id.Seq)
			}
			r.agents = max(r.agents, int(id.Agent)+1)
			continue
		}
		q, found, err := s.resync(off)
		if err != nil {
			return err
		}
		if fr.v == frameCut && !found {
			r.Cut = true
			break
		}
		if !found {
			q = s.size
		}
		r.Damage = append(r.Damage, Damage{Offset: off, Bytes: q - off, After: last, Reason: fr.why})
		off = q
	}
	sort.Slice(r.seqs, func(i, j int) bool { return r.seqs[i] < r.seqs[j] })
	return nil
}

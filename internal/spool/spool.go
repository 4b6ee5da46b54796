// Package spool is a run's record on disk while it runs: a header (the
// run's metadata, written when the run starts) and every interval record
// accepted since (the wire IntervalRecord an agent sends; a single host is
// agent 0), each handed to the operating system as it is added. A process
// killed outright leaves a spool holding everything it had accepted; the
// bundle is built from it at the end of a run, or after a crash (package
// bundle).
//
// Layout: a magic line, then frames. The first frame is the header
// (JSON), the others are IntervalRecords in protobuf. Format 3 (written
// now) frames a payload with its 4-byte big-endian length and its
// CRC-32C; format 2 (still read) had the length only. The checksum is
// what tells a damaged record from a good one, and a frame boundary from
// bytes that happen to look like one, when a spool is read back.
package spool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// The magic line starts every spool; the number is the format's version
// (1 was a coordinator's spool whose header predates the run's full
// metadata, 2 had no checksums).
const (
	magic   = "ycsbctl-spool 3\n"
	magicV2 = "ycsbctl-spool 2\n"
)

// layout is how a format frames a payload.
type layout struct {
	// hdr is the frame header's size: the length, then the checksum.
	hdr int64
	crc bool
}

var layouts = map[string]layout{
	magic:   {hdr: 8, crc: true},
	magicV2: {hdr: 4},
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Prefix starts a spool's file name in a results directory.
const Prefix = ".spool-"

// DamagedSuffix ends the name of a spool kept because some of it could
// not be read (Reader.Keep): the bundle holds everything else, and the
// bytes it could not read stay for the operator to look at.
const DamagedSuffix = ".damaged"

// maxFrame bounds one frame when reading a spool back: far above any
// record an agent sends, far below what a corrupt length could ask.
const maxFrame = 64 << 20

// Path is where a run's spool goes in a results directory.
func Path(dir, runID string) string { return filepath.Join(dir, Prefix+runID) }

// Writer appends to a spool. It is not safe for concurrent use.
type Writer struct {
	f    *os.File
	w    *bufio.Writer
	path string
	buf  []byte
}

// Create starts a spool at path with its header. It never replaces an
// existing file.
func Create(path string, header []byte) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, w: bufio.NewWriterSize(f, 256<<10), path: path}
	_, err = w.w.WriteString(magic)
	if err == nil {
		err = w.frame(header)
	}
	if err == nil {
		err = w.w.Flush()
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return w, nil
}

// Path is the spool's file.
func (w *Writer) Path() string { return w.path }

func (w *Writer) frame(b []byte) error {
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(b)))
	binary.BigEndian.PutUint32(hdr[4:], crc32.Checksum(b, castagnoli))
	if _, err := w.w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.w.Write(b)
	return err
}

// Add appends one record and hands it to the operating system at once:
// what was added survives the process being killed.
func (w *Writer) Add(rec *pb.IntervalRecord) error {
	b, err := proto.MarshalOptions{}.MarshalAppend(w.buf[:0], rec)
	if err != nil {
		return err
	}
	w.buf = b
	if err := w.frame(b); err != nil {
		return err
	}
	return w.w.Flush()
}

// Close flushes and closes the spool; the file stays.
func (w *Writer) Close() error {
	err := w.w.Flush()
	return errors.Join(err, w.f.Close())
}

// Remove closes the spool and deletes it.
func (w *Writer) Remove() {
	_ = w.f.Close()
	_ = os.Remove(w.path)
}

// RecordID names a record: an agent's interval.
type RecordID struct {
	Agent int32
	Seq   int64
}

func (id RecordID) String() string { return fmt.Sprintf("agent %d's interval %d", id.Agent, id.Seq) }

type entry struct{ off, n int64 }

// Reader is a spool read back: its header and an index of its records.
type Reader struct {
	f      io.ReaderAt
	path   string
	header []byte
	idx    map[RecordID]entry
	seqs   []int64
	agents int
	// Cut says the spool ended in the middle of a frame: the process
	// writing it was killed while adding a record, which is lost.
	Cut bool
	// Damage lists the parts of the spool that could not be read, in
	// file order; every record outside them is indexed.
	Damage []Damage
	close  func() error
}

// Check judges a record read back beyond its framing (a record it
// refuses is damage, as one that does not decode). It is made from the
// spool's header, so that it can bound what the run could have sent.
type Check func(header []byte) (func(*pb.IntervalRecord) error, error)

// Open reads a spool's header and indexes its records, checking only
// that they decode (see OpenChecked).
func Open(path string) (*Reader, error) { return OpenChecked(path, nil) }

// OpenChecked reads a spool's header and indexes its records. A frame cut
// short at the end of the file (a crash while adding it) ends the index:
// everything before it counts. A frame that cannot be read anywhere else
// (its checksum does not match, it does not decode, check refuses it, its
// length is implausible) is damage: it is skipped up to the next frame
// that can be read, and said in Damage. A record seen twice (which no
// writer adds) counts once.
func OpenChecked(path string, check Check) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		var r *Reader
		if r, err = read(f, st.Size(), path, check); err == nil {
			r.close = f.Close
			return r, nil
		}
	}
	_ = f.Close()
	return nil, err
}

// Path is the spool's file.
func (r *Reader) Path() string { return r.path }

// Header is the header as written.
func (r *Reader) Header() []byte { return r.header }

// Seqs lists the interval numbers any agent delivered, in order.
func (r *Reader) Seqs() []int64 { return r.seqs }

// Agents is one more than the highest agent index of any record.
func (r *Reader) Agents() int { return r.agents }

// Get reads agent's record of seq into into; false when there is none.
func (r *Reader) Get(agent int, seq int64, into *pb.IntervalRecord) (bool, error) {
	e, ok := r.idx[RecordID{int32(agent), seq}]
	if !ok {
		return false, nil
	}
	b := make([]byte, e.n)
	if _, err := r.f.ReadAt(b, e.off); err != nil {
		return false, err
	}
	return true, proto.Unmarshal(b, into)
}

// Keep gives a damaged spool its kept name (path + DamagedSuffix), never
// replacing a file, and returns it: a later recovery does not take it
// for a spool to rebuild and remove, and the operator sees what it is.
// A spool already so named stays.
func (r *Reader) Keep() (string, error) {
	if strings.HasSuffix(r.path, DamagedSuffix) {
		return r.path, nil
	}
	to := r.path + DamagedSuffix
	if err := os.Link(r.path, to); err != nil {
		return r.path, err
	}
	if err := os.Remove(r.path); err != nil {
		return r.path, err
	}
	r.path = to
	return to, nil
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.close == nil {
		return nil
	}
	return r.close()
}

// Find lists the spools in a results directory, damaged ones kept by
// Keep included.
func Find(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), Prefix) && e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

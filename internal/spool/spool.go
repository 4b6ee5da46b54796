// Package spool is a run's record on disk while it runs: a header (the
// run's metadata, written when the run starts) and every interval record
// accepted since (the wire IntervalRecord an agent sends; a single host is
// agent 0), each handed to the operating system as it is added. A process
// killed outright leaves a spool holding everything it had accepted; the
// bundle is built from it at the end of a run, or after a crash (package
// bundle).
//
// Layout: a magic line, then frames of a 4-byte big-endian length and a
// payload. The first frame is the header (JSON), the others are
// IntervalRecords in protobuf.
package spool

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// magic starts every spool; the number is the format's version (1 was a
// coordinator's spool whose header predates the run's full metadata).
const magic = "ycsbctl-spool 2\n"

// Prefix starts a spool's file name in a results directory.
const Prefix = ".spool-"

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
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
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

type key struct {
	agent int32
	seq   int64
}

type entry struct{ off, n int64 }

// Reader is a spool read back: its header and an index of its records.
type Reader struct {
	f      *os.File
	path   string
	header []byte
	idx    map[key]entry
	seqs   []int64
	agents int
	// Cut says the spool ended in the middle of a frame: the process
	// writing it was killed while adding a record, which is lost.
	Cut bool
}

// Open reads a spool's header and indexes its records. A frame cut short
// by a crash ends the index; everything before it counts. A record seen
// twice (which no writer adds) counts once.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := read(f, path)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return r, nil
}

func read(f *os.File, path string) (*Reader, error) {
	br := bufio.NewReader(f)
	m := make([]byte, len(magic))
	if _, err := io.ReadFull(br, m); err != nil || !bytes.HasPrefix(m, []byte("ycsbctl-spool ")) {
		return nil, fmt.Errorf("%s: not a ycsbctl spool", path)
	}
	if !bytes.Equal(m, []byte(magic)) {
		return nil, fmt.Errorf("%s: a spool of format %q, written by another ycsbctl version: rebuild it with that version's `ycsbctl report`", path, strings.TrimSpace(string(m)))
	}
	off := int64(len(magic))
	next := func() ([]byte, int64, error) {
		var hdr [4]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil, 0, err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > maxFrame {
			return nil, 0, fmt.Errorf("frame of %d bytes", n)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, 0, err
		}
		at := off + 4
		off += 4 + int64(n)
		return b, at, nil
	}
	h, _, err := next()
	if err != nil {
		return nil, fmt.Errorf("%s: no header: %w", path, err)
	}
	r := &Reader{f: f, path: path, header: h, idx: map[key]entry{}}
	seen := map[int64]bool{}
	var rec pb.IntervalRecord
	for {
		b, at, err := next()
		if err != nil {
			// io.EOF is the end; anything else is the frame a crash cut.
			r.Cut = !errors.Is(err, io.EOF)
			break
		}
		if proto.Unmarshal(b, &rec) != nil || rec.AgentIndex < 0 {
			r.Cut = true
			break
		}
		k := key{rec.AgentIndex, rec.Seq}
		if _, dup := r.idx[k]; dup {
			continue
		}
		r.idx[k] = entry{off: at, n: int64(len(b))}
		if !seen[rec.Seq] {
			seen[rec.Seq] = true
			r.seqs = append(r.seqs, rec.Seq)
		}
		r.agents = max(r.agents, int(rec.AgentIndex)+1)
	}
	sort.Slice(r.seqs, func(i, j int) bool { return r.seqs[i] < r.seqs[j] })
	return r, nil
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
	e, ok := r.idx[key{int32(agent), seq}]
	if !ok {
		return false, nil
	}
	b := make([]byte, e.n)
	if _, err := r.f.ReadAt(b, e.off); err != nil {
		return false, err
	}
	return true, proto.Unmarshal(b, into)
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// Find lists the spools in a results directory.
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

package coordinator

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// The spool keeps every accepted interval record on disk, so that
// run.json's per-agent, per-interval statistics and the merged .hlog can
// be built exactly at the end (late records included) while memory stays
// flat however long the run. It is also the run's crash record: it starts
// with a header describing the run and its agents, every record is
// flushed to the file as it is accepted, so a coordinator killed outright
// leaves a spool from which Recover rebuilds the bundle of what was merged
// until then.
//
// Layout: the magic line, then frames of a 4-byte big-endian length and a
// payload; the first frame is the JSON header, the others IntervalRecords.
const spoolMagic = "ycsbctl-spool 1\n"

// SpoolPrefix starts a spool's file name in the results directory.
const SpoolPrefix = ".spool-"

// spoolHeader describes the run a spool belongs to.
type spoolHeader struct {
	RunID      string            `json:"run_id"`
	DB         string            `json:"db"`
	Phase      string            `json:"phase"`
	Label      string            `json:"label,omitempty"`
	Properties map[string]string `json:"properties"`
	IntervalNs int64             `json:"interval_ns"`
	StartedAt  time.Time         `json:"started_at"`
	Agents     []spoolAgent      `json:"agents"`
}

type spoolAgent struct {
	Address  string `json:"address"`
	Hostname string `json:"hostname"`
	Version  string `json:"version"`
	OffsetNs int64  `json:"offset_ns"`
	RTTNs    int64  `json:"rtt_ns"`
}

type spool struct {
	f    *os.File
	path string
	w    *bufio.Writer
	off  int64
	idx  map[spoolKey]spoolEntry
	seqs map[int64]struct{}
}

type spoolKey struct {
	agent int
	seq   int64
}

type spoolEntry struct{ off, n int64 }

func openSpool(dir string, h *spoolHeader) (*spool, error) {
	path := filepath.Join(dir, SpoolPrefix+h.RunID)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	s := &spool{f: f, path: path, w: bufio.NewWriterSize(f, 256<<10), idx: map[spoolKey]spoolEntry{}, seqs: map[int64]struct{}{}}
	hb, err := json.Marshal(h)
	if err == nil {
		err = s.frame([]byte(spoolMagic), false)
	}
	if err == nil {
		err = s.frame(hb, true)
	}
	if err == nil {
		err = s.w.Flush()
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return s, nil
}

// frame writes b, length-prefixed unless raw.
func (s *spool) frame(b []byte, prefixed bool) error {
	if prefixed {
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
		if _, err := s.w.Write(hdr[:]); err != nil {
			return err
		}
		s.off += 4
	}
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	s.off += int64(len(b))
	return nil
}

// put appends one record and hands it to the operating system at once:
// what was accepted survives the coordinator being killed.
func (s *spool) put(agent int, rec *pb.IntervalRecord) error {
	b, err := proto.Marshal(rec)
	if err != nil {
		return err
	}
	start := s.off + 4
	if err := s.frame(b, true); err != nil {
		return err
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	s.idx[spoolKey{agent, rec.Seq}] = spoolEntry{off: start, n: int64(len(b))}
	s.seqs[rec.Seq] = struct{}{}
	return nil
}

func (s *spool) get(agent int, seq int64, into *pb.IntervalRecord) (bool, error) {
	e, ok := s.idx[spoolKey{agent, seq}]
	if !ok {
		return false, nil
	}
	if s.w.Buffered() > 0 {
		if err := s.w.Flush(); err != nil {
			return false, err
		}
	}
	b := make([]byte, e.n)
	if _, err := s.f.ReadAt(b, e.off); err != nil {
		return false, err
	}
	return true, proto.Unmarshal(b, into)
}

func (s *spool) sortedSeqs() []int64 {
	out := make([]int64, 0, len(s.seqs))
	for q := range s.seqs {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (s *spool) close() {
	_ = s.f.Close()
	_ = os.Remove(s.path)
}

// maxSpoolFrame bounds one frame when reading a spool back: far above
// any record an agent sends, far below what a corrupt length could ask.
const maxSpoolFrame = 64 << 20

// readSpool opens a spool left behind and indexes its records. A frame
// cut short by the crash ends the index; everything before it counts.
func readSpool(path string) (*spool, *spoolHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReader(f)
	magic := make([]byte, len(spoolMagic))
	if _, err := io.ReadFull(br, magic); err != nil || !bytes.Equal(magic, []byte(spoolMagic)) {
		_ = f.Close()
		return nil, nil, fmt.Errorf("%s: not a ycsbctl spool", path)
	}
	off := int64(len(spoolMagic))
	next := func() ([]byte, int64, error) {
		var hdr [4]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil, 0, err
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > maxSpoolFrame {
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
	hb, _, err := next()
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("%s: no header: %w", path, err)
	}
	var h spoolHeader
	if err := json.Unmarshal(hb, &h); err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("%s: header: %w", path, err)
	}
	s := &spool{f: f, path: path, w: bufio.NewWriter(io.Discard), idx: map[spoolKey]spoolEntry{}, seqs: map[int64]struct{}{}}
	var rec pb.IntervalRecord
	for {
		b, at, err := next()
		if err != nil {
			// io.EOF: the end; anything else: the frame the crash cut.
			break
		}
		if proto.Unmarshal(b, &rec) != nil || int(rec.AgentIndex) >= len(h.Agents) || rec.AgentIndex < 0 {
			break
		}
		s.idx[spoolKey{int(rec.AgentIndex), rec.Seq}] = spoolEntry{off: at, n: int64(len(b))}
		s.seqs[rec.Seq] = struct{}{}
	}
	return s, &h, nil
}

// FindSpools lists the spools left in a results directory.
func FindSpools(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), SpoolPrefix) && !e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

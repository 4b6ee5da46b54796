package main_test

import (
	"bytes"
	bin "encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// spoolFrame is one record frame of a spool as the test reads it: where
// its length prefix starts, its header's size and its payload.
type spoolFrame struct {
	off     int64
	hdr     int64
	payload []byte
	rec     *pb.IntervalRecord
}

// readSpoolFrames splits a spool into its record frames, knowing both
// formats: 2 (a 4-byte length, then the payload) and 3 (the length, a
// 4-byte checksum, then the payload). The header frame is skipped.
func readSpoolFrames(t *testing.T, b []byte) []spoolFrame {
	t.Helper()
	nl := bytes.IndexByte(b, '\n')
	require.Positive(t, nl, "spool magic")
	magic := string(b[:nl])
	require.True(t, strings.HasPrefix(magic, "ycsbctl-spool "), magic)
	version, err := strconv.Atoi(strings.TrimPrefix(magic, "ycsbctl-spool "))
	require.NoError(t, err)
	hdr := int64(4)
	if version >= 3 {
		hdr = 8
	}
	var frames []spoolFrame
	for off := int64(nl + 1); off+hdr <= int64(len(b)); {
		n := int64(bin.BigEndian.Uint32(b[off:]))
		if off+hdr+n > int64(len(b)) {
			break // cut by the kill
		}
		frames = append(frames, spoolFrame{off: off, hdr: hdr, payload: b[off+hdr : off+hdr+n]})
		off += hdr + n
	}
	require.NotEmpty(t, frames, "the spool's header")
	frames = frames[1:]
	for i := range frames {
		var rec pb.IntervalRecord
		require.NoError(t, proto.Unmarshal(frames[i].payload, &rec), "frame %d", i)
		frames[i].rec = &rec
	}
	return frames
}

// killedSpool runs a single host into a results directory, kills it
// with SIGKILL once it has spooled at least n intervals, and returns the
// directory and its spool's path.
func killedSpool(t *testing.T, n int) (string, string) {
	t.Helper()
	work := t.TempDir()
	dir := filepath.Join(work, "killed")
	p := startProc(t, work, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "operationcount=0", "-p", "maxexecutiontime=120",
		"-target", "400", "-threads", "2", "-p", "status.interval=0.2", "-s", "--results", dir)
	// A status line is printed once its interval is spooled; the first
	// is the start's.
	p.waitLines(t, `current ops/sec`, n+1, 60*time.Second)
	p.signal(syscall.SIGKILL)
	require.Equal(t, 128+int(syscall.SIGKILL), p.wait(t, 10*time.Second))
	spools, err := filepath.Glob(filepath.Join(dir, ".spool-*"))
	require.NoError(t, err)
	require.Len(t, spools, 1, "the killed run's spool")
	return dir, spools[0]
}

// A spool damaged in the middle keeps every other record: `report DIR`
// rebuilds the bundle from all the intervals it can read, says which
// bytes it dropped and why (on stderr, in run.json's status reasons and
// the summary's notes), and keeps the damaged spool instead of deleting
// it. Today's recovery stopped at the damage: every interval after it
// was dropped and the spool removed.
func TestReportKeepsRecordsAroundADamagedOne(t *testing.T) {
	cases := []struct {
		name   string
		damage func(b []byte, f spoolFrame)
		// why is what the notice says of the damage.
		why string
	}{
		{"payload that does not decode", func(b []byte, f spoolFrame) {
			for i := range f.payload {
				f.payload[i] = 0xff
			}
		}, "does not decode|checksum does not match"},
		{"implausible length", func(b []byte, f spoolFrame) {
			bin.BigEndian.PutUint32(b[f.off:], 0xfffffff0)
		}, "length"},
		{"length past the end of the file", func(b []byte, f spoolFrame) {
			bin.BigEndian.PutUint32(b[f.off:], uint32(len(b)))
		}, "length"},
	}
	// One killed run's spool, as written and rewritten in format 2 (the
	// format of spools left by earlier versions), damaged in each way.
	_, path := killedSpool(t, 6)
	written, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, format := range []string{"as written", "format 2"} {
		for _, tc := range cases {
			t.Run(format+"/"+tc.name, func(t *testing.T) {
				b := bytes.Clone(written)
				if format == "format 2" {
					b = asFormat2(t, b)
				}
				dir := t.TempDir()
				path := filepath.Join(dir, filepath.Base(path))
				frames := readSpoolFrames(t, b)
				require.GreaterOrEqual(t, len(frames), 6)
				bad := frames[len(frames)/2]
				tc.damage(b, bad)
				require.NoError(t, os.WriteFile(path, b, 0o600))
				checkDamagedReport(t, dir, b, frames, bad, tc.why)
			})
		}
	}
}

// asFormat2 rewrites a format 3 spool as format 2: the same frames
// without their checksums.
func asFormat2(t *testing.T, b []byte) []byte {
	t.Helper()
	nl := bytes.IndexByte(b, '\n')
	require.Equal(t, "ycsbctl-spool 3", string(b[:nl]))
	out := []byte("ycsbctl-spool 2\n")
	for off := nl + 1; off+8 <= len(b); {
		n := int(bin.BigEndian.Uint32(b[off:]))
		if off+8+n > len(b) {
			break
		}
		out = append(out, b[off:off+4]...)
		out = append(out, b[off+8:off+8+n]...)
		off += 8 + n
	}
	return out
}

// checkDamagedReport runs report on dir, whose spool b has frames of
// which bad was damaged, and checks the bundle and the notices.
func checkDamagedReport(t *testing.T, dir string, b []byte, frames []spoolFrame, bad spoolFrame, why string) {
	t.Helper()
	var wantSeqs []int64
	var wantOps int64
	for _, f := range frames {
		if f.off != bad.off {
			wantSeqs = append(wantSeqs, f.rec.Seq)
			wantOps += f.rec.Operations
		}
	}
	r := ycsbctl(t, "report", dir)
	require.Equal(t, 0, r.code, r.stderr)
	run := readRun(t, dir)
	var seqs []int64
	for _, iv := range run.Intervals {
		seqs = append(seqs, iv.Seq)
	}
	assert.Equal(t, wantSeqs, seqs, "every interval but the damaged one")
	assert.Equal(t, wantOps, run.Summary.Operations, "the kept records' operations")
	checkBundleCounts(t, run)

	// The notice names the dropped bytes, their neighbours, and why.
	where := "bytes " + strconv.FormatInt(bad.off, 10)
	for _, in := range []struct{ what, text string }{
		{"stderr", r.stderr},
		{"status reasons", strings.Join(run.StatusReasons, "\n")},
		{"summary notes", strings.Join(run.Summary.Lines, "\n")},
	} {
		assert.Contains(t, in.text, where, in.what)
		assert.Regexp(t, why, in.text, in.what)
		assert.Contains(t, in.text, "interval "+strconv.FormatInt(bad.rec.Seq-1, 10), in.what)
	}
	summary, err := os.ReadFile(filepath.Join(dir, bundle.FileSummary))
	require.NoError(t, err)
	assert.Contains(t, string(summary), where, "summary.txt")
	require.NotNil(t, run.SpoolDamage, "run.json's spool_damage")
	assert.Len(t, run.SpoolDamage.Dropped, 1)

	// The damaged spool is kept, byte for byte, under a name that says so.
	kept, err := filepath.Glob(filepath.Join(dir, ".spool-*"))
	require.NoError(t, err)
	require.Len(t, kept, 1, "the damaged spool is kept")
	assert.Contains(t, filepath.Base(kept[0]), "damaged")
	assert.Equal(t, filepath.Base(kept[0]), run.SpoolDamage.Kept)
	got, err := os.ReadFile(kept[0])
	require.NoError(t, err)
	assert.Equal(t, b, got, "the damaged spool is unchanged")
	assert.Contains(t, r.stderr, filepath.Base(kept[0]), "stderr names the kept spool")

	// A later report reads the bundle and is not held up by the spool.
	again := ycsbctl(t, "report", dir)
	require.Equal(t, 0, again.code, again.stderr)
	assert.NotContains(t, again.stderr, "Recovered")
}

package spool_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/spool"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// A spool cut in the middle of a record (the writer was killed) reads back
// every record before the cut.
func TestReadsBackWhatWasAddedUpToACut(t *testing.T) {
	dir := t.TempDir()
	path := spool.Path(dir, "r1")
	w, err := spool.Create(path, []byte(`{"run_id":"r1"}`))
	require.NoError(t, err)
	for seq := int64(1); seq <= 3; seq++ {
		for a := int32(0); a < 2; a++ {
			require.NoError(t, w.Add(&pb.IntervalRecord{AgentIndex: a, Seq: seq, Operations: 10*seq + int64(a)}))
		}
	}
	require.NoError(t, w.Add(&pb.IntervalRecord{AgentIndex: 1, Seq: 4, Operations: 41}))
	require.NoError(t, w.Close())
	_, err = spool.Create(path, nil)
	require.Error(t, err, "a spool is never replaced")

	st, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, st.Size()-3))

	r, err := spool.Open(path)
	require.NoError(t, err)
	defer func() { _ = r.Close() }()
	assert.JSONEq(t, `{"run_id":"r1"}`, string(r.Header()))
	assert.True(t, r.Cut)
	assert.Equal(t, []int64{1, 2, 3}, r.Seqs())
	assert.Equal(t, 2, r.Agents())
	var rec pb.IntervalRecord
	ok, err := r.Get(1, 3, &rec)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(31), rec.Operations)
	ok, err = r.Get(1, 4, &rec)
	require.NoError(t, err)
	assert.False(t, ok, "the record the cut took is gone")

	found, err := spool.Find(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{path}, found)
}

func TestRefusesWhatIsNotASpool(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "x")
	require.NoError(t, os.WriteFile(other, []byte("hello"), 0o644))
	_, err := spool.Open(other)
	assert.ErrorContains(t, err, "not a ycsbctl spool")
	old := filepath.Join(dir, "old")
	require.NoError(t, os.WriteFile(old, []byte("ycsbctl-spool 1\n\x00\x00\x00\x02{}"), 0o644))
	_, err = spool.Open(old)
	assert.ErrorContains(t, err, "another ycsbctl version")
}

package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHistogramProportions(t *testing.T) {
	// Bucket 2 is missing (count 0) and the file ends without a newline.
	src := "BlockSize\t10\n0\t1\n1\t3\n\n3\t6"
	h, err := NewHistogramFromReader(strings.NewReader(src))
	require.NoError(t, err)
	require.Equal(t, int64(10), h.BlockSize())
	require.Same(t, h, h.Clone())
	r := NewRand(12)
	const n = 200000
	counts := map[int64]int{}
	for i := 0; i < n; i++ {
		counts[h.Next(r)]++
	}
	require.Len(t, counts, 3, "only buckets with a positive count are drawn: %v", counts)
	requireShare(t, 0.1, counts[10], n, "bucket 0")
	requireShare(t, 0.3, counts[20], n, "bucket 1")
	requireShare(t, 0.6, counts[40], n, "bucket 3")
}

func TestHistogramFromFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hist.txt")
	require.NoError(t, os.WriteFile(p, []byte("BlockSize\t4\r\n5\t2\r\n"), 0o644))
	h, err := NewHistogramFromFile(p)
	require.NoError(t, err)
	require.Equal(t, int64(24), h.Next(NewRand(1)))

	_, err = NewHistogramFromFile(filepath.Join(t.TempDir(), "missing.txt"))
	require.Error(t, err)
}

func TestHistogramErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"empty", "", "empty file"},
		{"blank only", "\n\n", "empty file"},
		{"no header", "0\t5\n", "line 1: first line must be"},
		{"header typo", "Blocksize\t10\n", "line 1: first line must be"},
		{"bad block size", "BlockSize\tx\n", "line 1: BlockSize must be"},
		{"zero block size", "BlockSize\t0\n", "line 1: BlockSize must be"},
		{"bad count", "BlockSize\t10\n0\t1\n1\tx\n", "line 3: count must be"},
		{"negative count", "BlockSize\t10\n0\t-1\n", "line 2: count must be"},
		{"bad bucket", "BlockSize\t10\n-1\t1\n", "line 2: bucket must be"},
		{"overflowing bucket", "BlockSize\t10\n1000000000000000000\t1\n", "line 2: bucket must be"},
		{"three fields", "BlockSize\t10\n0\t1\t2\n", "line 2: want 2"},
		{"duplicate", "BlockSize\t10\n0\t1\n\n0\t2\n", "line 4: bucket 0 listed twice"},
		{"all zero", "BlockSize\t10\n0\t0\n", "no bucket has a positive count"},
		{"header only", "BlockSize\t10\n", "no bucket has a positive count"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewHistogramFromReader(strings.NewReader(tc.src))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPropertyFileInputIsBounded runs the real binary on inputs that used
// to be read without limit or accepted silently: each must fail fast with
// exit code 2 and a message naming the file and what was expected.
func TestPropertyFileInputIsBounded(t *testing.T) {
	binary(t) // build first, so that the timings below are the runs'
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	huge := filepath.Join(dir, "huge.properties")
	f, err := os.Create(huge)
	require.NoError(t, err)
	line := []byte("# a comment line that pads the file out past the size cap\n")
	for n := 0; n <= 5<<20; n += len(line) {
		_, err := f.Write(line)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())

	tests := []struct {
		name string
		file string
		want []string
	}{
		{"/dev/zero", "/dev/zero", []string{`-P "/dev/zero"`, "binary content", "text file"}},
		{"binary file", write("data.bin", "recordcount=1\n\x7fELF\x02\x01\x01\x00\x00"), []string{"data.bin", "binary content", "line 2"}},
		{"over the cap", huge, []string{"huge.properties", "larger than 4 MiB"}},
		{"malformed \\u", write("badu.properties", "recordcount=10\nfieldnameprefix=f\\uZZZZ\n"), []string{"badu.properties", "line 2", `\uZZZZ`, "fieldnameprefix"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := ycsbctl(t, "run", "basic", "-P", tc.file, "-p", "basicdb.verbose=true")
			took := time.Since(start)
			assert.Equal(t, 2, r.code, "stderr: %s", r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w)
			}
			assert.Less(t, took, 5*time.Second, "bounded time")
			assert.NotContains(t, r.stdout, "READ usertable", "an operation was sent")
			assert.Equal(t, 1, strings.Count(r.stderr, "Error:"), "one message: %s", r.stderr)
		})
	}
}

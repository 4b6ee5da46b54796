package outfile_test

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/outfile"
)

// Every kind of node that is not a regular file is refused by name, and is
// still what it was afterwards.
func TestRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	for _, tc := range []struct {
		path, what string
		mode       fs.FileMode
	}{
		{"/dev/null", "a character device", fs.ModeCharDevice},
		{fifo, "a FIFO", fs.ModeNamedPipe},
		{sock, "a socket", fs.ModeSocket},
		{sub, "a directory", fs.ModeDir},
	} {
		t.Run(tc.what, func(t *testing.T) {
			err := outfile.Write(tc.path, []byte("x"), 0o644)
			require.Error(t, err)
			assert.True(t, errors.Is(err, outfile.ErrNotFile), "%v", err)
			assert.Contains(t, err.Error(), tc.path)
			assert.Contains(t, err.Error(), tc.what)
			st, err := os.Lstat(tc.path)
			require.NoError(t, err)
			assert.NotZero(t, st.Mode()&tc.mode, "%s is still %s", tc.path, tc.what)
			f, err := outfile.Append(tc.path, 0o644)
			if tc.mode == fs.ModeCharDevice {
				// Appending to a device never replaces it.
				require.NoError(t, err)
				require.NoError(t, f.Close())
			} else {
				assert.True(t, errors.Is(err, outfile.ErrNotFile), "append: %v", err)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "no temporary file left behind")
}

func TestReplacesAFileWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	// A failed write leaves the old file as it was.
	err := outfile.WriteWith(path, 0o644, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return errors.New("boom")
	})
	require.EqualError(t, err, "boom")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
	// A complete one replaces it, keeping its permissions.
	require.NoError(t, outfile.Write(path, []byte("new"), 0o644))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")
}

// The symlink policy: a link to a file is followed (the link stays, its
// target is replaced); a dangling link is refused.
func TestSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.csv")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	link := filepath.Join(dir, "latest.csv")
	require.NoError(t, os.Symlink("real.csv", link))
	require.NoError(t, outfile.Write(link, []byte("new"), 0o644))
	st, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&fs.ModeSymlink, "the link is kept")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))

	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere", "x"), dangling))
	err = outfile.Write(dangling, []byte("x"), 0o644)
	assert.True(t, errors.Is(err, outfile.ErrNotFile), "%v", err)
	assert.Contains(t, err.Error(), "symbolic link to a missing file")

	toDev := filepath.Join(dir, "null")
	require.NoError(t, os.Symlink("/dev/null", toDev))
	err = outfile.Write(toDev, []byte("x"), 0o644)
	assert.True(t, errors.Is(err, outfile.ErrNotFile), "a link to a device is refused: %v", err)
}

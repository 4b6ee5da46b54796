// Package outfile is how ycsbctl writes every file a user names or a run
// leaves behind (reports, summaries, run bundles, workbooks, HdrHistogram
// logs): never over something that is not a file, and never half.
//
//   - A target must be a regular file or nothing. A directory, a device, a
//     FIFO or a socket is refused with an error naming the path and what is
//     there (Check), before anything is written: writing "over" /dev/null or
//     a named pipe would replace the node with a regular file, or block.
//   - A file is written to a temporary file beside its target and renamed
//     over it only when complete (Create, then Commit), so a reader or a
//     crash never sees half a file and an existing file survives a failed
//     write. A file that replaces another keeps the other's permissions.
//   - Symbolic links are followed: the link stays and its target is
//     replaced, which must itself be a regular file. A link whose target
//     does not exist is refused rather than followed to create a file
//     somewhere the user did not name.
//
// Append-only outputs (YCSB's raw samples) are opened with Append, which
// applies the same checks but writes in place.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotFile is the cause of every refusal: the path names something
// other than a regular file.
var ErrNotFile = errors.New("not a regular file")

// kind names what is at a path, for refusals.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// Resolve returns the path a write to path replaces: path itself, or the
// end of the chain of symbolic links it names. It fails, naming path, when
// that is not a regular file or nothing, or when a link dangles.
func Resolve(path string) (string, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil
	}
	if err != nil {
		return "", err
	}
	target := path
	if st.Mode()&fs.ModeSymlink != 0 {
		t, err := filepath.EvalSymlinks(path)
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w: a symbolic link to a missing file (remove the link or point it at a file)", path, ErrNotFile)
		}
		if err != nil {
			return "", err
		}
		if st, err = os.Stat(t); err != nil {
			return "", err
		}
		target = t
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %w: it is %s; name a file instead", path, ErrNotFile, kind(st.Mode()))
	}
	return target, nil
}

// Check reports whether path may be written: nothing is there, or a
// regular file (through symbolic links).
func Check(path string) error {
	_, err := Resolve(path)
	return err
}

// File is a file being written: a temporary file beside its target that
// Commit renames into place.
type File struct {
	*os.File
	target string
	done   bool
}

// Create starts writing path (see the package comment for what it
// refuses). A new file gets perm (less the umask, as with os.Create); a
// file that replaces another gets the other's permissions.
func Create(path string, perm fs.FileMode) (*File, error) {
	target, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	keep := fs.FileMode(0)
	if st, err := os.Stat(target); err == nil {
		keep = st.Mode().Perm()
	}
	f, err := createTemp(target, perm)
	if err != nil {
		return nil, err
	}
	if keep != 0 {
		if err := f.Chmod(keep); err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
			return nil, err
		}
	}
	return &File{File: f, target: target}, nil
}

// tempTag separates a temporary file's target from its random part:
// ".run.json.tmp-0123456789ab" is being written to become run.json.
const (
	tempTag    = ".tmp-"
	tempRandom = 6
)

// createTemp creates a new file beside target with perm (os.CreateTemp
// would make it 0600 whatever the umask).
func createTemp(target string, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Split(target)
	for i := 0; ; i++ {
		var b [tempRandom]byte
		_, _ = rand.Read(b[:])
		name := filepath.Join(dir, "."+base+tempTag+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		return f, err
	}
}

// TempTarget returns the file a temporary file of Create was to become,
// when name (a base name) is one: what a process killed while writing
// leaves behind.
func TempTarget(name string) (string, bool) {
	i := strings.LastIndex(name, tempTag)
	if i < 2 || name[0] != '.' {
		return "", false
	}
	r := name[i+len(tempTag):]
	if _, err := hex.DecodeString(r); err != nil || len(r) != 2*tempRandom {
		return "", false
	}
	return name[1:i], true
}

// Path is the file Commit replaces.
func (f *File) Path() string { return f.target }

// Commit closes the file and renames it over its target. The target is
// checked again first: something that appeared there during the write
// (a FIFO, a directory) is not replaced.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.Close()
	if err == nil {
		if _, err = Resolve(f.target); err == nil {
			err = os.Rename(f.Name(), f.target)
		}
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// Discard closes and removes the temporary file; the target is untouched.
// It does nothing after Commit, so it can be deferred.
func (f *File) Discard() {
	if f.done {
		return
	}
	f.done = true
	_ = f.Close()
	_ = os.Remove(f.Name())
}

// WriteWith writes path with what fn writes, committing only when fn and
// every write succeeded.
func WriteWith(path string, perm fs.FileMode, fn func(io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Discard()
	if err := fn(f); err != nil {
		return err
	}
	return f.Commit()
}

// Write writes b to path.
func Write(path string, b []byte, perm fs.FileMode) error {
	return WriteWith(path, perm, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// Append opens path for appending, creating it with perm. Appending never
// replaces what is there, so besides a regular file it accepts a character
// device (/dev/null discards, as YCSB users do with raw samples); it
// refuses a directory, a FIFO (opening one blocks until something reads
// it), a socket and a block device.
func Append(path string, perm fs.FileMode) (*os.File, error) {
	if st, err := os.Stat(path); err == nil && st.Mode()&fs.ModeCharDevice != 0 {
		return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	}
	target, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	return os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_APPEND, perm)
}

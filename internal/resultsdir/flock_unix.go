//go:build unix

package resultsdir

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// lockExclusive takes f's flock exclusively, failing at once
// (errWouldBlock) when another open file holds it.
func lockExclusive(f *os.File) error { return flock(f, syscall.LOCK_EX|syscall.LOCK_NB) }

// lockShared takes and drops f's flock shared: it fails (errWouldBlock)
// only while an owner holds it exclusively.
func lockShared(f *os.File) error {
	if err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return err
	}
	return flock(f, syscall.LOCK_UN)
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// alive reports whether a process pid exists (one of another user's
// counts: kill answers EPERM).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func statKey(st fs.FileInfo) dirKey {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return dirKey{dev: uint64(s.Dev), ino: uint64(s.Ino)} //nolint:unconvert // Dev's type differs between systems
	}
	return dirKey{}
}

// Package resultsdir gives a results directory one owner at a time.
//
// Whatever writes or rebuilds a bundle (a run, a coordinator, a capacity
// search, a suite, `report`, `--overwrite`) owns the directory for as long
// as it does: it holds an exclusive flock(2) on DIR/.ycsbctl-lock, taken
// before anything in the directory is looked at, and a second taker is
// refused at once, naming the holder (exit 2): it never waits and never
// deletes anything. The kernel drops the lock when its process dies, so a
// lock left by a dead process is known as such: the file stays, with the
// dead holder's PID and command in it, the next taker's flock succeeds and
// it says whose lock it took over.
//
// The lock file is not a result: a bundle directory keeps it once a run
// has written there (an empty file, or the holder's identity while held).
// It is removed only by the owner that created it, at the end of an
// ownership that left nothing in the directory, and only while the lock is
// still held: a taker that locked an inode meanwhile unlinked sees that the
// path no longer leads to it and takes the new file instead, so two
// processes never both believe they own the directory.
//
// A directory inside one owned by another live process is that process's
// too (a suite's step directories, a capacity search's probes): taking it
// is refused as well. This process's own nested ownerships (the suite's
// step, the search's probe) are allowed.
package resultsdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/redact"
	"github.com/ycsbctl/ycsbctl/internal/shellquote"
)

// LockFile is the lock's file in a results directory.
const LockFile = ".ycsbctl-lock"

// holderWait bounds how long a refused taker waits for the holder's
// identity to appear in the lock file: the holder writes it just after it
// locked, and a taker that came in between would otherwise name nobody.
// It is not a wait for the lock, which is refused at once.
var holderWait = 2 * time.Second

// Holder is the process that owns a directory, as its lock file says.
type Holder struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Command is the holder's command line, secrets redacted.
	Command []string `json:"command"`
}

// String names the holder for people: "PID 123 (ycsbctl run basic ...)".
func (h *Holder) String() string {
	if h == nil || h.PID == 0 {
		return "a process that did not record itself"
	}
	s := fmt.Sprintf("PID %d", h.PID)
	if len(h.Command) > 0 {
		s += " (" + properties.Printable(shellquote.Join(h.Command)) + ")"
	}
	return s
}

// since says when the holder took the lock.
func (h *Holder) since() string {
	if h == nil || h.Started.IsZero() {
		return ""
	}
	return ", since " + h.Started.Local().Format("2006-01-02 15:04:05")
}

// self is this process as a holder.
func self() *Holder {
	args := append([]string(nil), os.Args...)
	if len(args) > 0 {
		args[0] = filepath.Base(args[0])
	}
	return &Holder{PID: os.Getpid(), Started: time.Now().UTC().Truncate(time.Second), Command: redact.Args(args)}
}

// HeldError refuses a directory another live process owns.
type HeldError struct {
	Dir    string
	Holder *Holder
	// Owned is the directory the holder's lock is on: Dir itself, or a
	// directory Dir is inside.
	Owned string
	// Advice says what to do instead; empty: wait, or choose another
	// directory.
	Advice string
}

func (e *HeldError) Error() string {
	where := e.Dir + " is in use by " + e.Holder.String() + e.Holder.since()
	if e.Owned != e.Dir {
		where = fmt.Sprintf("%s is inside %s, which is in use by %s%s", e.Dir, e.Owned, e.Holder.String(), e.Holder.since())
	}
	advice := e.Advice
	if advice == "" {
		advice = "wait until it ends, or choose another directory"
	}
	return where + ": a results directory has one owner at a time, and nothing was changed; " + advice
}

// Advise sets the advice of err's HeldError, if it has one.
func Advise(err error, advice string) error {
	var he *HeldError
	if errors.As(err, &he) {
		he.Advice = advice
	}
	return err
}

// IsHeld reports whether err refuses a directory another process owns.
func IsHeld(err error) bool {
	var he *HeldError
	return errors.As(err, &he)
}

// dirKey identifies a directory whatever the path that names it.
type dirKey struct{ dev, ino uint64 }

func keyOf(path string) (dirKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return dirKey{}, err
	}
	return statKey(st), nil
}

// held lists the directories this process owns, so that its own nested
// ownerships (a suite's step inside the suite's directory) are allowed.
var held = struct {
	sync.Mutex
	dirs map[dirKey]string
}{dirs: map[dirKey]string{}}

func ownedHere(k dirKey) bool {
	held.Lock()
	defer held.Unlock()
	_, ok := held.dirs[k]
	return ok
}

// Lock is the ownership of one directory, held until Release.
type Lock struct {
	dir     string
	f       *os.File
	key     dirKey
	created bool
	prev    *Holder
}

// Take locks dir, which must exist, for this process. It fails with a
// HeldError, at once, when another live process owns dir or a directory
// dir is inside.
func Take(dir string) (*Lock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	k, err := keyOf(abs)
	if err != nil {
		return nil, err
	}
	if err := checkAncestors(dir, abs); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(holderWait)
	for {
		l, err := tryTake(dir, abs)
		var he *HeldError
		if errors.As(err, &he) && (he.Holder == nil || !alive(he.Holder.PID)) && time.Now().Before(deadline) {
			// The holder has not written its name yet, or a
			// prober holds the file for an instant (Holding).
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil {
			return nil, err
		}
		l.key = k
		held.Lock()
		held.dirs[k] = abs
		held.Unlock()
		return l, nil
	}
}

// tryTake opens and locks the lock file once. A file unlinked by its
// owner between our open and our lock is not the directory's lock any
// more: it is let go and the current one taken.
func tryTake(dir, abs string) (*Lock, error) {
	path := filepath.Join(abs, LockFile)
	for range 100 {
		f, created, err := openLock(path)
		if err != nil {
			return nil, err
		}
		if err := lockExclusive(f); err != nil {
			h, _ := readHolder(f)
			_ = f.Close()
			if errors.Is(err, errWouldBlock) {
				if ownedHere(mustKey(abs)) {
					return nil, fmt.Errorf("%s: already owned by this process", dir)
				}
				return nil, &HeldError{Dir: dir, Holder: h, Owned: dir}
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !samePath(f, path) {
			_ = f.Close()
			continue
		}
		l := &Lock{dir: dir, f: f, created: created}
		l.prev, _ = readHolder(f)
		if err := l.write(self()); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("%s: the lock file keeps being replaced", path)
}

func mustKey(abs string) dirKey {
	k, _ := keyOf(abs)
	return k
}

// openLock opens the lock file, creating it when missing.
func openLock(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	}
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	return f, false, err
}

// samePath reports whether path still names f's file.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// readHolder reads the identity a lock file holds; nil when it holds none
// (its last owner released it).
func readHolder(f *os.File) (*Holder, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 64<<10))
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return nil, err
	}
	var h Holder
	if err := json.Unmarshal(b, &h); err != nil {
		return &Holder{}, err
	}
	return &h, nil
}

// write replaces the lock file's content with h (nothing for nil).
func (l *Lock) write(h *Holder) error {
	var b []byte
	if h != nil {
		var err error
		if b, err = json.Marshal(h); err != nil {
			return err
		}
		b = append(b, '\n')
	}
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(b, 0)
	return err
}

// Dir is the directory owned.
func (l *Lock) Dir() string { return l.dir }

// TookOver returns the process that owned the directory before and ended
// without releasing it (killed, crashed), or nil.
func (l *Lock) TookOver() *Holder { return l.prev }

// Created reports whether this lock made the lock file.
func (l *Lock) Created() bool { return l.created }

// Release ends the ownership: the lock file is left, empty (a released
// lock names nobody), and unlocked.
func (l *Lock) Release() { l.release(false) }

// Remove ends the ownership of a directory left as it was found: the lock
// file is unlinked while still held (see the package comment), then let
// go.
func (l *Lock) Remove() { l.release(true) }

func (l *Lock) release(remove bool) {
	if l == nil || l.f == nil {
		return
	}
	if remove {
		_ = os.Remove(filepath.Join(l.dir, LockFile))
	} else {
		_ = l.write(nil)
	}
	held.Lock()
	delete(held.dirs, l.key)
	held.Unlock()
	_ = l.f.Close()
	l.f = nil
}

// checkAncestors refuses dir when a directory it is inside is owned by
// another live process; it stops at the first one this process owns.
func checkAncestors(dir, abs string) error {
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		if k, err := keyOf(p); err == nil && ownedHere(k) {
			return nil
		}
		if h, ok := Holding(p); ok {
			return &HeldError{Dir: dir, Holder: h, Owned: p}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// Holding reports whether another live process owns dir itself, and who.
// It holds dir's lock file shared for an instant (a taker that meets it
// then waits for it, see holderWait), and never creates one. An owner
// that has not written its name yet is waited for, as Take waits.
func Holding(dir string) (*Holder, bool) {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return nil, false
	}
	defer func() { _ = f.Close() }()
	if k, err := keyOf(dir); err == nil && ownedHere(k) {
		return nil, false
	}
	deadline := time.Now().Add(holderWait)
	for {
		err := lockShared(f)
		if err == nil || !errors.Is(err, errWouldBlock) {
			return nil, false
		}
		h, _ := readHolder(f)
		if (h != nil && alive(h.PID)) || time.Now().After(deadline) {
			return h, true
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Owner returns the live process other than this one that owns path's
// directory or one it is inside, if any: where a file named by the user
// would be written into another process's results.
func Owner(path string) (*HeldError, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, false
	}
	for p := abs; ; p = filepath.Dir(p) {
		if k, err := keyOf(p); err == nil && ownedHere(k) {
			return nil, false
		}
		if h, ok := Holding(p); ok {
			he := &HeldError{Dir: path, Holder: h, Owned: p}
			if p == abs {
				he.Owned = path
			}
			return he, true
		}
		if p == filepath.Dir(p) {
			return nil, false
		}
	}
}

// errWouldBlock is what a lock already held by another returns.
var errWouldBlock = syscall.EWOULDBLOCK

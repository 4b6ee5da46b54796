package resultsdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/spool"
)

// --overwrite never deletes a bundle before its replacement exists: the
// old bundle's files are moved into a hidden directory of the results
// directory, named .ycsbctl-replacing-X while they are being moved and
// .ycsbctl-replaced-X once all are in, and what happens to them is decided
// when the ownership ends, by what the directory holds then: the record
// of a run that measured (run.json, a spool holding an interval, a probe
// directory holding either) means the replacement happened and they are
// removed; nothing of the kind means the new run never measured (its
// database or agent was unreachable, it was refused) and they are put back
// where they were. The same rule settles a set-aside bundle whose owner
// was killed, when the next owner takes the directory.
const (
	stagingPrefix = ".ycsbctl-replacing-"
	asidePrefix   = ".ycsbctl-replaced-"
)

// setAside is a bundle --overwrite moved out of the way.
type setAside struct{ path string }

// putAside moves names (dir's own entries) into a new set-aside directory.
// A probe directory is taken (its lock) before it moves: one that another
// process owns stops the move, and what was moved goes back.
func putAside(dir string, names []string) (*setAside, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	staging := filepath.Join(dir, stagingPrefix+token)
	if err := os.Mkdir(staging, 0o700); err != nil {
		return nil, err
	}
	for _, name := range names {
		if err := moveOwn(filepath.Join(dir, name), filepath.Join(staging, name)); err != nil {
			if rerr := restore(staging, dir); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return nil, err
		}
	}
	final := filepath.Join(dir, asidePrefix+token)
	if err := os.Rename(staging, final); err != nil {
		return nil, errors.Join(err, restore(staging, dir))
	}
	return &setAside{path: final}, nil
}

// moveOwn renames one entry; a probe directory only while this process
// owns it.
func moveOwn(from, to string) error {
	if !bundle.IsProbeDir(filepath.Base(from)) {
		return os.Rename(from, to)
	}
	l, err := Take(from)
	if err != nil {
		return err
	}
	defer l.Release()
	return os.Rename(from, to)
}

// restore moves every entry of aside back into dir and removes aside. An
// entry whose name dir holds again stays in aside, which then stays too.
func restore(aside, dir string) error {
	entries, err := os.ReadDir(aside)
	if err != nil {
		return err
	}
	var kept []string
	for _, e := range entries {
		to := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(to); err == nil {
			kept = append(kept, e.Name())
			continue
		}
		if err := os.Rename(filepath.Join(aside, e.Name()), to); err != nil {
			return err
		}
	}
	if len(kept) > 0 {
		return fmt.Errorf("%s still holds %s: %s holds files of those names again; nothing was removed, sort them out by hand", aside, strings.Join(kept, ", "), dir)
	}
	return os.Remove(aside)
}

// record is what a directory holds of a run's measurement.
type record int

const (
	recordNone    record = iota // nothing measured: no run.json, no spool holding an interval
	recordFound                 // run.json, or a spool holding an interval, or a probe holding either
	recordUnknown               // a spool that cannot be read: whether it measured is not known
)

// recordIn says whether dir holds a run's record (see record), and the
// spool it could not read, if any.
func recordIn(dir string) (record, string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return recordUnknown, dir
	}
	verdict, unread := recordNone, ""
	for _, e := range entries {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		var r record
		switch {
		case name == bundle.FileRunJSON:
			r = recordFound
		case strings.HasPrefix(name, spool.Prefix) && e.Type().IsRegular():
			r = spoolRecord(path)
			if r == recordUnknown {
				unread = path
			}
		case bundle.IsProbeDir(name) && e.IsDir():
			r, unread = recordIn(path)
		}
		if r == recordFound {
			return recordFound, ""
		}
		if r == recordUnknown {
			verdict = recordUnknown
		}
	}
	return verdict, unread
}

func spoolRecord(path string) record {
	rd, err := spool.Open(path)
	if err != nil {
		return recordUnknown
	}
	defer func() { _ = rd.Close() }()
	if len(rd.Seqs()) > 0 {
		return recordFound
	}
	return recordNone
}

// settle decides a set-aside bundle's fate (see the comment at the top).
// dead says its owner was killed; a live owner's settling is said only
// when it puts the old bundle back. It reports whether it did.
func (a *setAside) settle(dir string, notef func(string, ...any), dead bool) (bool, error) {
	name := filepath.Base(a.path)
	switch r, unread := recordIn(dir); r {
	case recordFound:
		if err := os.RemoveAll(a.path); err != nil {
			return false, fmt.Errorf("--overwrite: removing the replaced bundle %s: %w", name, err)
		}
		if dead {
			notef("removed the bundle --overwrite had set aside in %s: the run that replaced it had measured before its process ended", name)
		}
		return false, nil
	case recordUnknown:
		notef("left the bundle --overwrite had set aside in %s: %s cannot be read, so whether the run that replaced it measured is not known (move one of them away, then run report again)", name, unread)
		return false, nil
	}
	// The new run never measured: what it left (a spool holding only its
	// header, a search's record of no probe) gives way to the old bundle.
	own, err := ownEntries(dir)
	if err != nil {
		return false, err
	}
	for _, n := range own {
		if err := removeOwn(filepath.Join(dir, n)); err != nil {
			return false, fmt.Errorf("--overwrite: putting the old bundle back: %w", err)
		}
	}
	if err := restore(a.path, dir); err != nil {
		return false, fmt.Errorf("--overwrite: putting the old bundle back: %w", err)
	}
	why := "the run that was to replace it never measured"
	if dead {
		why = "the run that was to replace it ended before it measured"
	}
	notef("--overwrite: put back the bundle that was set aside, as it was (%s)", why)
	return true, nil
}

// removeOwn removes an entry that holds no measurement; a probe directory
// only while this process owns it.
func removeOwn(path string) error {
	if !bundle.IsProbeDir(filepath.Base(path)) {
		return os.RemoveAll(path)
	}
	l, err := Take(path)
	if err != nil {
		return err
	}
	defer l.Release()
	return os.RemoveAll(path)
}

// settleAsides settles what dead owners left: a set-aside they did not
// finish moving goes back at once (no new run can have started before it
// was complete), a complete one by the rule above.
func settleAsides(dir string, notef func(string, ...any)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var staging, asides []string
	for _, e := range entries {
		switch {
		case !e.IsDir():
		case strings.HasPrefix(e.Name(), stagingPrefix):
			staging = append(staging, e.Name())
		case strings.HasPrefix(e.Name(), asidePrefix):
			asides = append(asides, e.Name())
		}
	}
	sort.Strings(staging)
	sort.Strings(asides)
	for _, s := range staging {
		n := countEntries(filepath.Join(dir, s))
		if err := restore(filepath.Join(dir, s), dir); err != nil {
			return err
		}
		notef("put back %s that --overwrite was setting aside (in %s) when its process ended", plural.Count(n, "file"), s)
	}
	for _, a := range asides {
		if _, err := (&setAside{path: filepath.Join(dir, a)}).settle(dir, notef, true); err != nil {
			return err
		}
	}
	return nil
}

func countEntries(dir string) int {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	return len(entries)
}

package resultsdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
	"github.com/ycsbctl/ycsbctl/internal/plural"
)

// Options says how a command takes a directory.
type Options struct {
	// Create makes the directory, and the missing ones on the way to it,
	// when it does not exist; without it a missing directory is an error.
	Create bool
	// Logf receives the notices of what the new owner found and tidied.
	Logf func(format string, args ...any)
}

// Owned is a results directory this process owns, until Release.
type Owned struct {
	dir string
	// made is the outermost directory Open created; "" when dir existed.
	made  string
	lock  *Lock
	logf  func(string, ...any)
	aside *setAside
}

// Open takes dir for this process (see the package comment), then tidies
// what its dead owners left, saying what it did: the lock it took over,
// temporary files of interrupted writes (removed), a bundle --overwrite
// had set aside (restored or removed, as what the directory holds says),
// a capacity search's record still saying "running" (marked as ended
// without an ending).
func Open(dir string, o Options) (*Owned, error) {
	ow := &Owned{dir: dir, logf: o.Logf}
	if ow.logf == nil {
		ow.logf = func(string, ...any) {}
	}
	if he, ok := Owner(dir); ok {
		// Refused before anything is made inside another's directory.
		return nil, he
	}
	for attempt := 0; ; attempt++ {
		if o.Create {
			made, err := makeDir(dir)
			if err != nil {
				return nil, err
			}
			if attempt == 0 {
				ow.made = made
			}
		} else if st, err := os.Stat(dir); err != nil {
			return nil, err
		} else if !st.IsDir() {
			return nil, fmt.Errorf("%s is not a directory", dir)
		}
		l, err := Take(dir)
		if errors.Is(err, fs.ErrNotExist) && o.Create && attempt < 10 {
			// Its last owner removed it as it released it: make it again.
			continue
		}
		if err != nil {
			return nil, err
		}
		ow.lock = l
		break
	}
	if err := ow.tidy(); err != nil {
		ow.Release()
		return nil, err
	}
	return ow, nil
}

// makeDir creates dir when missing and returns the outermost directory it
// created ("" when dir existed).
func makeDir(dir string) (string, error) {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return "", fmt.Errorf("%s is not a directory", dir)
	case err == nil:
		return "", nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	made, err := outermostMissing(dir)
	if err != nil {
		return "", err
	}
	return made, os.MkdirAll(dir, 0o755)
}

// outermostMissing is the first directory on the way to dir that does not
// exist yet.
func outermostMissing(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	made := abs
	for p := filepath.Dir(abs); p != made; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		}
		made = p
	}
	return made, nil
}

// Dir is the directory owned.
func (o *Owned) Dir() string { return o.dir }

// Logf says what the owner did, as Options.Logf.
func (o *Owned) notef(format string, args ...any) {
	o.logf("%s: "+format, append([]any{o.dir}, args...)...)
}

// tidy is what a new owner does before anything else.
func (o *Owned) tidy() error {
	if prev := o.lock.TookOver(); prev != nil {
		o.notef("took over the lock of %s, which is no longer running (it ended without releasing the directory: killed or crashed)", prev)
	}
	if err := o.removeDebris(); err != nil {
		return err
	}
	if err := settleAsides(o.dir, o.notef); err != nil {
		return err
	}
	marked, err := capacity.MarkEnded(o.dir)
	if err != nil {
		return err
	}
	if marked {
		o.notef("%s said the search was running, but its process ended without finishing it: marked %s, exit code unknown", capacity.FileRecord, capacity.StatusAborted)
	}
	return nil
}

// writeCheckPrefix starts the file Claim creates to see that the
// directory takes files.
const writeCheckPrefix = ".ycsbctl-write-check-"

// removeDebris removes the temporary files of interrupted writes: with the
// lock held no writer of this directory is alive, so they are the debris
// of a dead one, never a result.
func (o *Owned) removeDebris() error {
	entries, err := os.ReadDir(o.dir)
	if err != nil {
		return err
	}
	var gone []string
	for _, e := range entries {
		_, temp := outfile.TempTarget(e.Name())
		if !e.Type().IsRegular() || (!temp && !strings.HasPrefix(e.Name(), writeCheckPrefix)) {
			continue
		}
		if err := os.Remove(filepath.Join(o.dir, e.Name())); err != nil {
			return err
		}
		gone = append(gone, e.Name())
	}
	if len(gone) > 0 {
		o.notef("removed %s of writes a killed process did not finish (%s)", plural.Count(len(gone), "temporary file"), strings.Join(gone, ", "))
	}
	return nil
}

// holdsResults reports whether dir holds anything of a bundle or a suite
// (an own entry or a record file).
func holdsResults(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if bundle.IsOwn(e.Name()) || bundle.IsRecord(e.Name()) {
			return true, nil
		}
	}
	return false, nil
}

// ownEntries lists dir's entries that belong to a bundle, sorted.
func ownEntries(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, e := range entries {
		if bundle.IsOwn(e.Name()) {
			found = append(found, e.Name())
		}
	}
	sort.Strings(found)
	return found, nil
}

// Release ends the ownership. A bundle --overwrite set aside is removed
// when the directory now holds the new run's record, or put back when the
// new run never measured; a directory left holding nothing of a bundle is
// left as it was found (the lock file, and the directories Open made,
// removed). It reports whether the old bundle was put back: the directory
// holds nothing of this owner's. Releasing again does nothing.
func (o *Owned) Release() (restored bool) {
	if o == nil || o.lock == nil {
		return false
	}
	if o.aside != nil {
		var err error
		if restored, err = o.aside.settle(o.dir, o.notef, false); err != nil {
			o.notef("%v", err)
		}
		o.aside = nil
	}
	holds, err := holdsResults(o.dir)
	if err != nil || holds || !o.lock.Created() {
		o.lock.Release()
		o.lock = nil
		return restored
	}
	o.lock.Remove()
	o.lock = nil
	if o.made == "" {
		return restored
	}
	abs, err := filepath.Abs(o.dir)
	if err != nil {
		return restored
	}
	for p := abs; ; p = filepath.Dir(p) {
		if os.Remove(p) != nil || p == o.made || p == filepath.Dir(p) {
			return restored
		}
	}
}

package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/spool"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
)

// Files that report and compare write into a bundle directory by default.
const (
	FileReport    = "report.html"
	FileIntervals = "intervals.csv"
)

// A capacity bundle (ycsbctl capacity --results) holds its record and one
// run bundle per probe, in directories probe-01, probe-02, ...
const (
	FileCapacity   = "capacity.json"
	probeDirPrefix = "probe-"
)

// ProbeDir is probe n's bundle directory inside a capacity bundle.
func ProbeDir(n int) string { return fmt.Sprintf("%s%02d", probeDirPrefix, n) }

// ownFiles are the files a bundle directory may hold that belong to its
// run: a new run refuses a directory holding any of them, and --overwrite
// removes them, spools and temporary files included.
var ownFiles = []string{FileRunJSON, FileSummary, FileHlog, FileReport, FileIntervals, FileCapacity, telemetry.RawFile}

// isOwn reports whether a directory entry belongs to a bundle.
func isOwn(name string) bool {
	for _, f := range ownFiles {
		// Temporary files of an interrupted write (package outfile).
		if name == f || strings.HasPrefix(name, "."+f+".tmp-") {
			return true
		}
	}
	if n, ok := strings.CutPrefix(name, probeDirPrefix); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		return true
	}
	return strings.HasPrefix(name, spool.Prefix)
}

// HoldsBundleError refuses a results directory that already holds a run.
type HoldsBundleError struct {
	Dir   string
	Found []string
}

func (e *HoldsBundleError) Error() string {
	return fmt.Sprintf("%s already holds the results of a run (%s): choose another directory, or add --overwrite to replace them", e.Dir, strings.Join(e.Found, ", "))
}

// Claimed is a results directory made ready for a run.
type Claimed struct {
	dir string
	// made is the outermost directory Claim created; "" when dir existed.
	made string
}

// Claim makes dir ready to receive a new run's bundle, before any load:
// it creates dir if needed, refuses a directory already holding a bundle
// (run.json, a spool, a report), or with overwrite removes that bundle's
// files first, and checks that files can be created there. Files of other
// kinds in dir are left alone.
func Claim(dir string, overwrite bool) (*Claimed, error) {
	c := &Claimed{dir: dir}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if c.made, err = outermostMissing(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case !st.IsDir():
		return nil, fmt.Errorf("%s is not a directory", dir)
	default:
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, e := range entries {
			if isOwn(e.Name()) {
				found = append(found, e.Name())
			}
		}
		sort.Strings(found)
		if len(found) > 0 && !overwrite {
			return nil, &HoldsBundleError{Dir: dir, Found: found}
		}
		for _, name := range found {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("--overwrite: %w", err)
			}
		}
	}
	f, err := os.CreateTemp(dir, ".ycsbctl-write-check-*")
	if err != nil {
		c.Release()
		return nil, fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	return c, nil
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

// Release removes the directories Claim created, as far as they are
// empty: a run that never started leaves nothing behind.
func (c *Claimed) Release() {
	if c == nil || c.made == "" {
		return
	}
	abs, err := filepath.Abs(c.dir)
	if err != nil {
		return
	}
	for p := abs; ; p = filepath.Dir(p) {
		if os.Remove(p) != nil || p == c.made || p == filepath.Dir(p) {
			return
		}
	}
}

package resultsdir

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/outfile"
)

// CheckOutput refuses a file the user named for an output (flag names it:
// "-o", `property "exportfile"`) that would replace or grow part of a
// bundle's record, or land in a directory another live process owns,
// before anything is written:
//
//   - a record file (run.json, summary.txt, merged.hlog, telemetry.csv,
//     capacity.json, a spool, the lock) of a results directory, reached
//     by its name or through symbolic links;
//   - the same file as a record file of one of bundles (the directories
//     the command reads or writes), reached through a hard link: a file
//     appended to in place (raw samples) would grow the record itself;
//   - a file inside a directory another live process owns.
//
// The error carries no exit code; callers refuse with exit 2.
func CheckOutput(flag, path string, bundles ...string) error {
	if path == "" || path == "-" {
		return nil
	}
	target, err := outfile.Resolve(path)
	if err != nil {
		// outfile's own refusal is the caller's to make, in its words.
		return nil
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	if isRecordName(base) && isResultsDir(dir) {
		return fmt.Errorf("%s %s: %s is part of the record of the bundle in %s: name another file", flag, path, base, filepath.Clean(dir))
	}
	if st, err := os.Stat(target); err == nil {
		for _, b := range bundles {
			if same := sameRecord(st, b); same != "" {
				return fmt.Errorf("%s %s: it is %s (a link to it), part of a bundle's record: name another file", flag, path, same)
			}
		}
	}
	if he, ok := Owner(target); ok {
		he.Dir, he.Advice = path, "name a file elsewhere, or wait until it ends"
		return fmt.Errorf("%s %w", flag, he)
	}
	return nil
}

func isRecordName(name string) bool {
	return bundle.IsRecord(name) || name == LockFile
}

// isResultsDir reports whether dir holds a bundle or a suite's results,
// or has been owned.
func isResultsDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err == nil {
		return true
	}
	holds, err := holdsResults(dir)
	return err == nil && holds
}

// sameRecord returns the record file of bundle dir that st is, or "".
func sameRecord(st os.FileInfo, dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if !isRecordName(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if rst, err := os.Stat(p); err == nil && os.SameFile(st, rst) {
			return p
		}
	}
	return ""
}

package resultsdir

import (
	"fmt"
	"os"
	"strings"
)

// HoldsBundleError refuses a results directory that already holds a run.
type HoldsBundleError struct {
	Dir   string
	Found []string
}

func (e *HoldsBundleError) Error() string {
	return fmt.Sprintf("%s already holds the results of a run (%s): choose another directory, or add --overwrite to replace them", e.Dir, strings.Join(e.Found, ", "))
}

// Claim takes dir for a new run's (or capacity search's) bundle, before
// any load: it creates dir if needed and owns it (Open), refuses a
// directory already holding a bundle (run.json, a spool, a report, a
// capacity record), or with overwrite sets that bundle aside until the
// new run has measured (see replace.go), and checks that files can be
// created there. Files of other kinds in dir are left alone. The caller
// releases the directory when its bundle is written, or when the run never
// started.
func Claim(dir string, overwrite bool, logf func(string, ...any)) (*Owned, error) {
	o, err := Open(dir, Options{Create: true, Logf: logf})
	if err != nil {
		return nil, err
	}
	found, err := ownEntries(dir)
	if err != nil {
		o.Release()
		return nil, err
	}
	if len(found) > 0 && !overwrite {
		o.Release()
		return nil, &HoldsBundleError{Dir: dir, Found: found}
	}
	if len(found) > 0 {
		if o.aside, err = putAside(dir, found); err != nil {
			o.Release()
			return nil, fmt.Errorf("--overwrite: %w", err)
		}
	}
	f, err := os.CreateTemp(dir, writeCheckPrefix+"*")
	if err != nil {
		o.Release()
		return nil, fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	return o, nil
}

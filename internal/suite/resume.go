package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/plural"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// What --resume continues, and when it refuses.
//
// A results directory holds one suite: the one its suite.json names. A
// resume continues that suite only: the plan must have the same name, and
// every step that suite.json records as run (passed, failed or
// incomplete) must be a step of the plan, each complete one with the same
// fingerprint (CheckResume's MismatchError). The suite file's text is not
// compared: a comment, a step added at the end or a step changed before
// it ever ran change no result there, and what produced each result is
// its step's fingerprint. Anything else would replace the suite's record
// (suite.json, suite.yaml, the workbook) with another suite's and leave
// the first one's bundles unaccounted for.

// ResumeError refuses a --resume: the directory holds no suite, or
// another one.
type ResumeError struct {
	ResultsDir string
	Msg        string
}

func (e *ResumeError) Error() string {
	return fmt.Sprintf("flag --resume --results %s: %s", e.ResultsDir, e.Msg)
}

// Resumable reports whether dir holds a suite that --resume can continue:
// a ResumeError saying there is nothing to resume otherwise.
func Resumable(dir string) error {
	_, err := resumableState(dir)
	return err
}

func resumableState(dir string) (*State, error) {
	st, err := ReadState(dir)
	if err == nil {
		return st, nil
	}
	why := fmt.Sprintf("the directory holds no suite (no %s)", FileState)
	switch _, serr := os.Stat(dir); {
	case os.IsNotExist(serr):
		why = "the directory does not exist"
	case !errors.Is(err, os.ErrNotExist):
		return nil, &ResumeError{ResultsDir: dir, Msg: fmt.Sprintf("cannot read the suite there: %v", err)}
	}
	return nil, &ResumeError{ResultsDir: dir, Msg: "nothing to resume: " + why + "; drop --resume to start the suite there"}
}

// checkSameSuite refuses to resume, in the plan's results directory, a
// suite other than the one there.
func (p *Plan) checkSameSuite() error {
	old, err := resumableState(p.ResultsDir)
	if err != nil {
		return err
	}
	asked := fmt.Sprintf("suite %q", p.File.Name)
	if p.File.Path != "" {
		asked += " (" + p.File.Path + ")"
	}
	there := fmt.Sprintf("the results of suite %q (its file kept as %s)", old.Name, filepath.Join(p.ResultsDir, FileSource))
	if old.Name != p.File.Name {
		return &ResumeError{ResultsDir: p.ResultsDir, Msg: fmt.Sprintf("holds %s, not those of %s: a resume continues the suite that is there; "+
			"continue it with 'ycsbctl suite --resume --results %s', or give %q another --results directory", there, asked, p.ResultsDir, p.File.Name)}
	}
	if foreign := p.unplanned(old); len(foreign) > 0 {
		return &ResumeError{ResultsDir: p.ResultsDir, Msg: fmt.Sprintf("holds %s, which ran %s that %s does not plan: %s; "+
			"resuming would drop them from the suite's record: resume with the file and --db it ran with (or no FILE), or choose another --results directory",
			there, plural.Count(len(foreign), "step"), asked, listSome(foreign, 8))}
	}
	return nil
}

// unplanned lists the steps old records as run whose directory the plan
// does not have, each "dir (status)".
func (p *Plan) unplanned(old *State) []string {
	planned := map[string]bool{}
	for _, it := range p.Items {
		if it.Dir != "" {
			planned[it.Dir] = true
		}
	}
	var out []string
	for _, s := range old.Steps {
		if s.Dir == "" || s.Status == StatusPending {
			continue
		}
		d := s.Dir
		if s.ScanOf != "" {
			// A thread scan's try: the plan has the scan's prefix.
			d = filepath.Join(filepath.Dir(s.Dir), s.ScanOf)
		}
		if !planned[d] {
			out = append(out, fmt.Sprintf("%s (%s)", s.Dir, s.Status))
		}
	}
	sort.Strings(out)
	return out
}

// listSome joins the first n of list and says how many more there are.
func listSome(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:n], ", ") + fmt.Sprintf(" and %d more", len(list)-n)
}

// Mismatch is a complete bundle that --resume would reuse but that a
// different configuration produced.
type Mismatch struct {
	Dir         string
	Differences []string
}

// MismatchError refuses a resume: it names each step whose bundle was
// produced with another configuration, and what differs.
type MismatchError struct {
	ResultsDir string
	Steps      []Mismatch
}

func (e *MismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "--resume --results %s: %d completed step(s) were run with another configuration, and a suite must not mix two:", e.ResultsDir, len(e.Steps))
	for i, m := range e.Steps {
		if i == 8 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Steps)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s: %s", m.Dir, strings.Join(m.Differences, "; "))
	}
	b.WriteString("\nrun the same suite and -p as before to continue, or choose another --results directory for the new configuration")
	return b.String()
}

// CheckResume refuses, before anything runs, a resume of another suite
// than the one in the results directory, or into a directory that holds
// none (a *ResumeError), and compares every complete bundle that --resume
// would reuse with the plan: it returns a *MismatchError naming the steps
// whose configuration differs. A resumed suite never mixes two
// configurations; nothing is re-run silently either.
func (p *Plan) CheckResume() error {
	if err := p.checkSameSuite(); err != nil {
		return err
	}
	failed := failedBefore(p.ResultsDir)
	var bad []Mismatch
	check := func(it *Item, dir string, props map[string]string) {
		if failed[dir] {
			return // run again anyway
		}
		full := filepath.Join(p.ResultsDir, dir)
		b, ok := completeBundle(full)
		if it.Kind == KindCapacity {
			b, ok = searchAsRun(full)
		}
		if !ok {
			return
		}
		want := p.suiteStep(it, props)
		if b.Suite != nil && b.Suite.Fingerprint == want.Fingerprint {
			return
		}
		bad = append(bad, Mismatch{Dir: dir, Differences: differences(b, want.Definition, props)})
	}
	for _, it := range p.Items {
		if it.Kind != KindLoad && it.Kind != KindRun && it.Kind != KindCapacity {
			continue
		}
		if it.ThreadScan == nil {
			check(it, it.Dir, it.Spec.Props.Map())
			continue
		}
		for n := 1; n <= it.ThreadScan.Max; n *= 2 {
			sp, err := it.Spec.With(map[string]string{PropThreads: strconv.Itoa(n)})
			if err != nil {
				break
			}
			check(it, it.Dir+strconv.Itoa(n), sp.Props.Map())
		}
	}
	if len(bad) > 0 {
		return &MismatchError{ResultsDir: p.ResultsDir, Steps: bad}
	}
	return nil
}

// searchAsRun is a complete capacity search in dir as differences reads
// a run: its suite record, and the properties of its probes' run (the
// first probe's, less the target each probe sets).
func searchAsRun(dir string) (*bundle.Run, bool) {
	rec, ok := completeSearch(dir)
	if !ok {
		return nil, false
	}
	r := &bundle.Run{Suite: rec.Suite}
	if b, err := bundle.Read(filepath.Join(dir, bundle.ProbeDir(1))); err == nil {
		r.Config.Properties = copyMap(b.Run.Config.Properties)
		delete(r.Config.Properties, spec.PropTarget)
	}
	return r, true
}

// failedBefore marks the bundle directories suite.json records as failed
// or incomplete: a step can fail after writing a complete bundle (too many
// database errors), and the suite's record says it must run again.
func failedBefore(dir string) map[string]bool {
	out := map[string]bool{}
	if old, err := ReadState(dir); err == nil {
		for _, s := range old.Steps {
			if s.Dir != "" && (s.Status == StatusFailed || s.Status == StatusIncomplete) {
				out[s.Dir] = true
			}
		}
	}
	return out
}

package suite

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/redact"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/version"
)

// A step's fingerprint says which configuration produced its bundle, so
// that --resume reuses a bundle only for the same step, run the same way:
//
//   - the definition: ycsbctl's version, the adapter and the database's
//     name, the agents, the item's kind and workload, whether the schema
//     is recreated, and a thread count taken from a thread scan;
//   - every property of the run as the run records it (secrets redacted),
//     less those that only say where or how results are shown
//     (spec.NotMeasured): the results directory may move, the summary's
//     format may change, and the bundle stays the same measurement.
//
// The bundle records both (run.json "suite"), so that a refused resume
// names what differs.

// definition is what besides its properties identifies an item.
func definition(p *Plan, it *Item) map[string]string {
	d := map[string]string{
		"ycsbctl":  version.Version,
		"adapter":  it.DB.DB,
		"database": it.DB.Name,
		"kind":     string(it.Kind),
		"workload": it.Workload,
	}
	if len(p.Agents) > 0 {
		d["agents"] = strings.Join(p.Agents, ",")
	}
	if it.Schema {
		d["schema"] = "recreated before the load"
	}
	if it.Step.ThreadsFromScan {
		d["threads"] = "from the thread scan"
	}
	if c := it.Step.Capacity; c != nil && it.Kind == KindCapacity {
		// The probes' length is in the properties; the rest of the
		// search's settings here.
		d["capacity"] = strings.Join(c.Args(), " ")
	}
	return d
}

// measuredProperties are the properties a fingerprint covers, as a bundle
// records them.
func measuredProperties(props map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range redact.Properties(props) {
		if !spec.NotMeasured(k) {
			out[k] = v
		}
	}
	return out
}

// Fingerprint hashes a definition and a run's properties.
func Fingerprint(def, props map[string]string) string {
	h := sha256.New()
	write := func(kind string, m map[string]string) {
		for _, k := range sortedKeys(m) {
			// Lengths make the encoding unambiguous whatever the text.
			// A hash never fails to write.
			_, _ = fmt.Fprintf(h, "%s %d:%s=%d:%s\n", kind, len(k), k, len(m[k]), m[k])
		}
	}
	write("def", def)
	write("prop", measuredProperties(props))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// suiteStep is the bundle's record of the item, with the fingerprint of
// the run it is about to make (props: that run's properties).
func (p *Plan) suiteStep(it *Item, props map[string]string) *bundle.SuiteStep {
	st := &bundle.SuiteStep{Suite: p.File.Name, Database: it.DB.Name, Step: it.StepName(),
		Definition: it.Definition, Fingerprint: Fingerprint(it.Definition, props)}
	for _, sv := range it.Sweep {
		st.Sweep = append(st.Sweep, bundle.SweepValue{Key: sv.Key, Value: sv.Value})
	}
	return st
}

// differences names what differs between a bundle's recorded
// configuration and a planned one, "key: old → new" sorted.
func differences(b *bundle.Run, def, props map[string]string) []string {
	var oldDef map[string]string
	if b.Suite != nil {
		oldDef = b.Suite.Definition
	}
	var out []string
	cmp := func(prefix string, a, b map[string]string) {
		union := copyMap(a)
		for k, v := range b {
			union[k] = v
		}
		for _, k := range sortedKeys(union) {
			av, aok := a[k]
			bv, bok := b[k]
			switch {
			case aok && bok && av != bv:
				out = append(out, fmt.Sprintf("%s%s: %s → %s", prefix, k, strconv.Quote(av), strconv.Quote(bv)))
			case aok && !bok:
				out = append(out, fmt.Sprintf("%s%s: %s → unset", prefix, k, strconv.Quote(av)))
			case !aok && bok:
				out = append(out, fmt.Sprintf("%s%s: unset → %s", prefix, k, strconv.Quote(bv)))
			}
		}
	}
	cmp("", oldDef, def)
	cmp("property ", measuredProperties(b.Config.Properties), measuredProperties(props))
	if len(out) == 0 && b.Suite == nil {
		out = append(out, "the bundle has no fingerprint (written outside a suite, or by an older ycsbctl)")
	}
	return out
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

// CheckResume compares every complete bundle that --resume would reuse
// with the plan: it returns a *MismatchError naming the steps whose
// configuration differs, before anything runs. A resumed suite never
// mixes two configurations; nothing is re-run silently either.
func (p *Plan) CheckResume() error {
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

// sortedKeys returns a map's keys, sorted (stable output).
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

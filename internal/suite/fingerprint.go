package suite

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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

// sortedKeys returns a map's keys, sorted (stable output).
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

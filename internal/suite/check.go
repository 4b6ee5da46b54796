package suite

import (
	"errors"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// What a suite checks of every step before its first, beyond what
// spec.Parse checks of a run: a suite that stops at its tenth step on a
// value its dry run passed has run nine steps for nothing.
//
//   - The adapter's properties, as its Open would check them
//     (adapters.Info.Check), opening nothing. In a distributed suite a
//     property the step leaves unset is the agents' to give (`agent -p
//     hosts=...`): a refusal of an unset property is left to them (and
//     with it what the adapter checks after it).
//   - A property the suite file sets that nothing reads in a run of the
//     database's adapter is refused, with the nearest known name. YCSB
//     ignores unknown properties, and so does a plain run, with a warning;
//     but a suite file is ycsbctl's own format, a warning scrolls past in
//     a study that runs for hours, and a sweep over such a property is
//     that many identical runs. What the file gives every database (its
//     properties, a step's properties and sweeps) may be another adapter's
//     (applies): it is left out of this database's steps, and a sweep over
//     it does not repeat them. What it gives one database (the database's
//     properties, a step's per_database) must be that adapter's. A -p or
//     a workload file's property (YCSB's syntax) draws the plain run's
//     warning instead (Plan.Warnings).

// checkAdapter checks sp's adapter properties as the adapter's Open would.
func (x *expander) checkAdapter(sp *spec.Spec) error {
	err := sp.Adapter.CheckProperties(sp.Props)
	var pe *properties.Error
	if err != nil && len(x.p.Agents) > 0 && errors.As(err, &pe) && !sp.Props.Has(pe.Property) {
		return nil // the agents may set it
	}
	return err
}

// stepErr places a refusal of item it's run specification: on the line of
// the sweep or property of the file that sets the property at fault, else
// on the step's.
func (x *expander) stepErr(it *Item, err error) error {
	s := it.Step
	line, k := s.Line, ""
	var pe *properties.Error
	if errors.As(err, &pe) {
		if sw, ok := s.Sweep(pe.Property); ok {
			line, k = sw.Line, sw.Key
		} else if l, key, ok := x.setBy(it.DB, s, pe.Property); ok {
			line, k = l, key
		}
	}
	return x.errAt(s, line, k, "step %s of %s: %v", it.Name, it.DB.Name, err)
}

// setBy finds where the file sets property for db's step s, the layer
// that wins first: the step's per_database, the step's, the database's,
// the file's.
func (x *expander) setBy(db Database, s *Step, property string) (line int, key string, ok bool) {
	for _, l := range x.layers(db, s) {
		for _, pr := range l.props {
			if pr.Key == property && (!l.shared || applies(db.DB, pr.Key)) {
				return pr.Line, l.key + "." + pr.Key, true
			}
		}
	}
	return 0, "", false
}

// layer is one place of the file that gives db's step properties.
type layer struct {
	key   string
	props []Prop
	// shared: the layer gives every database its properties (applies).
	shared bool
}

// layers are the places that give db's step s properties, the winning
// one first (emit applies them in the reverse order).
func (x *expander) layers(db Database, s *Step) []layer {
	f := x.p.File
	var out []layer
	for _, pd := range s.PerDatabase {
		if pd.Database == db.Name || (pd.Database == db.DB && !namesDatabase(f, pd.Database)) {
			out = append(out, layer{"per_database." + pd.Database, pd.Properties, false})
		}
	}
	return append(out, layer{"properties", s.Properties, true}, layer{"properties", db.Properties, false}, layer{"properties", f.Properties, true})
}

// checkUnread refuses a property the file sets, or sweeps, that nothing
// reads in a run of the database's adapter.
func (x *expander) checkUnread() error {
	f := x.p.File
	for _, db := range f.Databases {
		info, err := adapters.Lookup(db.DB)
		if err != nil {
			continue // the CLI refuses the database itself
		}
		for i := range f.Steps {
			s := &f.Steps[i]
			if s.Kind == KindPause {
				continue
			}
			for _, sw := range s.Sweeps {
				if hint, unread := spec.Unread(sw.Property, info); unread && applies(db.DB, sw.Property) {
					return x.errAt(s, sw.Line, sw.Key, "nothing reads %s in a run of %s %s: its %d values would be %d identical runs",
						sw.Property, db.DB, hint, len(sw.Values), len(sw.Values))
				}
			}
			for _, l := range x.layers(db, s) {
				for _, pr := range l.props {
					if hint, unread := spec.Unread(pr.Key, info); unread && (!l.shared || applies(db.DB, pr.Key)) {
						return x.errAt(s, pr.Line, l.key+"."+pr.Key, "nothing reads %s in a run of %s %s: a suite file sets only what the client, the workload or the adapter reads (see 'ycsbctl properties %s')",
							pr.Key, db.DB, hint, db.DB)
					}
				}
			}
		}
	}
	return nil
}

// Warnings are the steps' run warnings (spec.Spec.Warnings: a -p or a
// workload file's property that nothing reads, a setting that is valid
// but probably not what was meant), each once in plan order: the dry run
// and the suite's start say them before any step, and each step says its
// own again when it runs.
func (p *Plan) Warnings() []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range p.Items {
		if it.Spec == nil {
			continue
		}
		for _, w := range it.Spec.Warnings {
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

package properties

import (
	"sort"
	"strings"
)

// Known declares one property a component reads: its name, its default as
// the user would write it ("" when there is none) and a one-line meaning.
// Adapters list theirs in adapters.Info.Properties, the single source for
// `ycsbctl dbs`, `ycsbctl properties` and unknown-property warnings.
type Known struct {
	Name    string
	Default string
	Help    string
	// Prefix marks a family of properties: every key that starts with Name
	// belongs to it (e.g. "mongodb.option.").
	Prefix bool
	// Schema marks a property that `ycsbctl init` applies when it creates
	// the schema: changing it means nothing until the schema is recreated
	// (a suite sweeping it drops, creates and reloads for each value).
	Schema bool
}

// Matches reports whether key is this property (or one of its family).
func (k Known) Matches(key string) bool {
	if k.Prefix {
		return strings.HasPrefix(key, k.Name)
	}
	return key == k.Name
}

// FindKnown returns the declaration among list that covers key.
func FindKnown(list []Known, key string) (Known, bool) {
	for _, k := range list {
		if k.Matches(key) {
			return k, true
		}
	}
	return Known{}, false
}

// TrackReads makes p remember every key looked up through its accessors
// from now on; ReadKeys returns them. Tests use it to prove that a
// component declares every property it reads. Not for concurrent use.
func (p *Properties) TrackReads() {
	if p.reads == nil {
		p.reads = map[string]struct{}{}
	}
}

// ReadKeys lists, sorted, the keys looked up since TrackReads.
func (p *Properties) ReadKeys() []string {
	out := make([]string, 0, len(p.reads))
	for k := range p.reads {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// get is the one place accessors read a value, so that TrackReads sees
// every lookup.
func (p *Properties) get(k string) (string, bool) {
	if p.reads != nil {
		p.reads[k] = struct{}{}
	}
	v, ok := p.m[k]
	return v, ok
}

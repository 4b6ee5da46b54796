package workload

import (
	"fmt"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// lenientProperty is a property whose unknown values YCSB neither refuses
// nor reports, but silently reads as one of its known values. ycsbctl reads
// such a value as YCSB does, so that a workload file means the same to both
// (keys loaded by one are found by the other), and warns: a typo such as
// insertorder=random otherwise changes every key without a word.
type lenientProperty struct {
	name  string
	known []string
	// means is the value YCSB reads an unknown one as, and ycsb says how
	// it decides.
	means, ycsb string
}

// lenientProperties are all of them in CoreWorkload: its other enums
// (requestdistribution, fieldlengthdistribution, scanlengthdistribution)
// throw on an unknown value, and ycsbctl refuses those. A test gives every
// declared property a value nobody knows and requires a refusal or this
// warning.
var lenientProperties = []lenientProperty{
	{name: PropInsertOrder, known: []string{"hashed", "ordered"}, means: "ordered",
		ycsb: "any value but hashed (compared case-sensitively) means ordered"},
}

// insertOrdered reads insertorder as YCSB does: ordered unless it is
// exactly hashed (untrimmed: Java keeps a value's trailing blanks), and
// hashed when unset.
func insertOrdered(p *properties.Properties) bool {
	v, ok := p.Lookup(PropInsertOrder)
	return ok && v != "hashed"
}

// LenientWarnings warns of each lenient property set to a value YCSB does
// not know: what YCSB does with it, that ycsbctl does the same, and what to
// set instead.
func LenientWarnings(p *properties.Properties) []string {
	var out []string
	for _, lp := range lenientProperties {
		v, ok := p.Lookup(lp.name)
		// Compared as YCSB compares, untrimmed.
		if !ok || isOneOf(v, lp.known) {
			continue
		}
		shown := properties.Printable(v)
		if strings.TrimSpace(v) != v || v == "" {
			shown = `"` + shown + `"`
		}
		var others []string
		for _, k := range lp.known {
			if k != lp.means {
				others = append(others, lp.name+"="+k)
			}
		}
		out = append(out, fmt.Sprintf("Warning: %s=%s is not one of %s: in YCSB %s, and ycsbctl reads it the same way, as %s; set %s=%s to say so, or %s",
			lp.name, shown, strings.Join(lp.known, ", "), lp.ycsb, lp.means, lp.name, lp.means, strings.Join(others, " or ")))
	}
	return append(out, verbatimWarnings(p)...)
}

// verbatimProperties become bytes of the data (field names, keys), and
// YCSB takes them as given: Java's Properties keeps a value's trailing
// blanks (and a -p value's leading ones), so "fieldnameprefix=col " names
// the fields "col 0", "col 1", ... in Java YCSB. ycsbctl reads them the
// same way, so that data loaded by one is found by the other, and warns,
// since a blank at either end is seldom meant.
var verbatimProperties = []string{PropFieldNamePrefix, PropKeyPrefix}

// verbatim is a verbatimProperties value as given, untrimmed.
func verbatim(p *properties.Properties, key, def string) string {
	if v, ok := p.Lookup(key); ok {
		return v
	}
	return def
}

// verbatimWarnings warns of each verbatim property whose value begins or
// ends in white space.
func verbatimWarnings(p *properties.Properties) []string {
	var out []string
	for _, k := range verbatimProperties {
		v, ok := p.Lookup(k)
		if !ok || strings.TrimSpace(v) == v {
			continue
		}
		out = append(out, fmt.Sprintf("Warning: %s=\"%s\" begins or ends in white space, which YCSB keeps in the data it writes, and so does ycsbctl (%q is written as it is); remove it if it is not meant",
			k, properties.Printable(v), v+"0"))
	}
	return out
}

func isOneOf(v string, set []string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

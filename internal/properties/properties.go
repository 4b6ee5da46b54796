// Package properties holds YCSB-style configuration: Java .properties files
// applied in order, then -p overrides, read through typed getters whose
// errors name the property and what was expected.
package properties

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/redact"
)

// Properties is an ordered-insensitive string map with typed accessors.
// It is not safe for concurrent mutation; it is read-only once a run starts.
type Properties struct {
	m map[string]string
	// reads records looked-up keys once TrackReads was called (nil: off).
	reads map[string]struct{}
}

// New returns an empty set.
func New() *Properties { return &Properties{m: map[string]string{}} }

// FromMap copies m into a new set.
func FromMap(m map[string]string) *Properties {
	p := New()
	for k, v := range m {
		p.m[k] = v
	}
	return p
}

// Clone returns an independent copy.
func (p *Properties) Clone() *Properties { return FromMap(p.m) }

// Set stores a value.
func (p *Properties) Set(k, v string) { p.m[k] = v }

// SetPairs sets alternating keys and values (k1, v1, k2, v2, ...); a
// trailing key without a value is ignored.
func (p *Properties) SetPairs(kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		p.m[kv[i]] = kv[i+1]
	}
}

// Delete removes a key.
func (p *Properties) Delete(k string) { delete(p.m, k) }

// Merge copies every key of o into p, o winning.
func (p *Properties) Merge(o *Properties) {
	for k, v := range o.m {
		p.m[k] = v
	}
}

// Lookup returns the raw value and whether it is set.
func (p *Properties) Lookup(k string) (string, bool) {
	return p.get(k)
}

// Has reports whether k is set.
func (p *Properties) Has(k string) bool { _, ok := p.get(k); return ok }

// Keys returns the keys in sorted order.
func (p *Properties) Keys() []string {
	ks := make([]string, 0, len(p.m))
	for k := range p.m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Map returns a copy of the contents.
func (p *Properties) Map() map[string]string {
	out := make(map[string]string, len(p.m))
	for k, v := range p.m {
		out[k] = v
	}
	return out
}

// String returns the value of k, or def when k is unset. Surrounding
// whitespace is trimmed, as Java's Properties does for values on load.
func (p *Properties) String(k, def string) string {
	if v, ok := p.get(k); ok {
		return strings.TrimSpace(v)
	}
	return def
}

// Error is a configuration error that names the offending property.
type Error struct {
	Property string
	Value    string
	Expected string
	// Flag is the command-line flag that set the property, as typed
	// ("-target 0.002"), when a flag rather than -p or a file did: the
	// message then quotes what the user typed, not the property behind
	// it. The command line fills it in; empty otherwise.
	Flag string
}

func (e *Error) Error() string {
	if e.Flag != "" {
		return fmt.Sprintf("flag %s (the %s property): expected %s", Printable(redact.Text(e.Flag)), e.Property, e.Expected)
	}
	// Error messages reach the terminal, logs and run.json: a secret's
	// value is never quoted back.
	if e.Value == "" || redact.SecretName(e.Property) {
		return fmt.Sprintf("property %q: expected %s", e.Property, e.Expected)
	}
	return fmt.Sprintf("property %q=%q: expected %s", e.Property, redact.Text(e.Value), e.Expected)
}

// ExitCode says that a rejected property is an invalid configuration:
// nothing was sent to a database.
func (e *Error) ExitCode() exitcode.Code { return exitcode.InvalidConfig }

// Int64 returns k as an int64 (def when unset).
func (p *Properties) Int64(k string, def int64) (int64, error) {
	v, ok := p.get(k)
	if !ok {
		return def, nil
	}
	v = strings.TrimSpace(v)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, &Error{Property: k, Value: v, Expected: "an integer"}
	}
	return n, nil
}

// NonNegInt64 is Int64 that rejects negative values.
func (p *Properties) NonNegInt64(k string, def int64) (int64, error) {
	n, err := p.Int64(k, def)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, &Error{Property: k, Value: p.m[k], Expected: "a non-negative integer"}
	}
	return n, nil
}

// PositiveInt64 is Int64 that rejects values below 1.
func (p *Properties) PositiveInt64(k string, def int64) (int64, error) {
	n, err := p.Int64(k, def)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, &Error{Property: k, Value: p.m[k], Expected: "a positive integer (>= 1)"}
	}
	return n, nil
}

// Float64 returns k as a finite float64 (def when unset).
func (p *Properties) Float64(k string, def float64) (float64, error) {
	v, ok := p.get(k)
	if !ok {
		return def, nil
	}
	v = strings.TrimSpace(v)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, &Error{Property: k, Value: v, Expected: "a number"}
	}
	return f, nil
}

// Proportion returns k as a float in [0, 1].
func (p *Properties) Proportion(k string, def float64) (float64, error) {
	f, err := p.Float64(k, def)
	if err != nil {
		return 0, err
	}
	if f < 0 || f > 1 {
		return 0, &Error{Property: k, Value: p.m[k], Expected: "a proportion between 0 and 1"}
	}
	return f, nil
}

// Bool returns k as a boolean: "true" (any case) is true, "false" is false;
// anything else is an error rather than Java's silent false.
func (p *Properties) Bool(k string, def bool) (bool, error) {
	v, ok := p.get(k)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false", "":
		return false, nil
	}
	return false, &Error{Property: k, Value: v, Expected: "true or false"}
}

// OneOf returns k, which must be one of allowed (compared case-sensitively
// as YCSB does).
func (p *Properties) OneOf(k, def string, allowed ...string) (string, error) {
	v := p.String(k, def)
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", &Error{Property: k, Value: v, Expected: "one of " + strings.Join(allowed, ", ")}
}

// MaxFileBytes caps one property file. Real workload files are a few KB;
// the cap turns a mistaken -P /dev/zero or a binary into an immediate error
// and keeps the properties small enough to travel to every agent (see
// transport.MaxCoordinatorMessageBytes).
const MaxFileBytes = 4 << 20

// ReadFile reads a text input file (a -P property file, a token file) of
// at most MaxFileBytes. It stops at the first chunk that shows binary
// content (a NUL byte) or exceeds the cap, so that an endless device fails
// in milliseconds instead of filling memory. Errors from opening the file
// are returned as they are (os.IsNotExist works on them).
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []byte
	chunk := make([]byte, 64<<10)
	for {
		n, err := f.Read(chunk)
		if n > 0 {
			if i := bytes.IndexByte(chunk[:n], 0); i >= 0 {
				line := 1 + bytes.Count(out, []byte{'\n'}) + bytes.Count(chunk[:i], []byte{'\n'})
				return nil, fmt.Errorf("binary content (a NUL byte on line %d); expected a text file", line)
			}
			if len(out)+n > MaxFileBytes {
				return nil, fmt.Errorf("larger than %d MiB; expected a text file of at most %d MiB", MaxFileBytes>>20, MaxFileBytes>>20)
			}
			out = append(out, chunk[:n]...)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ParseOverride splits a -p argument "key=value".
func ParseOverride(arg string) (string, string, error) {
	i := strings.IndexByte(arg, '=')
	if i <= 0 {
		return "", "", fmt.Errorf("flag -p %q: expected key=value", arg)
	}
	return strings.TrimSpace(arg[:i]), arg[i+1:], nil
}

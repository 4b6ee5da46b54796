package properties

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/ycsbctl/ycsbctl/workloads"
)

// fuzzMaxInput caps a fuzzed property file: the reader is linear, and
// real workload files are a few KB.
const fuzzMaxInput = 64 << 10

// FuzzLoad reads any bytes as a -P file. Invariants: it never panics
// nor takes long; text without backslashes (no escapes, no
// continuations) gives what a plain line-by-line reading of Java's rules
// gives; whatever it reads, written back in Java's escaped form, reads
// back the same.
func FuzzLoad(f *testing.F) {
	for _, v := range goldenInputs()[:70] {
		b, _ := hex.DecodeString(v.Input)
		f.Add(b)
	}
	for _, w := range workloads.List() {
		f.Add([]byte(w.Text))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if len(text) > fuzzMaxInput {
			return
		}
		start := time.Now()
		p := New()
		_, err := p.LoadText(text)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%d bytes took %s", len(text), d)
		}
		if !bytes.ContainsAny(text, "\\\x00") {
			if err != nil {
				t.Fatalf("text without escapes refused: %v", err)
			}
			if want := plainReference(text); !maps.Equal(p.m, want) {
				t.Fatalf("read %q, the plain reading gives %q", p.m, want)
			}
		}
		if err != nil {
			return
		}
		q := New()
		stored := store(p.m)
		if _, err := q.LoadText(stored); err != nil {
			t.Fatalf("written back as %q: %v", stored, err)
		}
		if !maps.Equal(p.m, q.m) {
			t.Fatalf("read %q, written back as %q, read again %q", p.m, stored, q.m)
		}
	})
}

var javaEOL = regexp.MustCompile("\r\n|\r|\n")

// plainReference reads text that has no backslash by Java's rules
// stated plainly: ISO-8859-1, natural lines, blanks skipped before a
// line, comments, and the key up to the first separator.
func plainReference(text []byte) map[string]string {
	const blanks = " \t\f"
	m := map[string]string{}
	for _, l := range javaEOL.Split(latin1(text), -1) {
		l = strings.TrimLeft(l, blanks)
		if l == "" || l[0] == '#' || l[0] == '!' {
			continue
		}
		i := strings.IndexAny(l, "=:"+blanks)
		if i < 0 {
			m[l] = ""
			continue
		}
		key, rest := l[:i], l[i:]
		sepDone := rest[0] == '=' || rest[0] == ':'
		rest = strings.TrimLeft(rest[1:], blanks)
		if !sepDone && rest != "" && (rest[0] == '=' || rest[0] == ':') {
			rest = strings.TrimLeft(rest[1:], blanks)
		}
		m[key] = rest
	}
	return m
}

// store writes m as Java's Properties.store does, every character
// beyond ASCII as \u escapes.
func store(m map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("# written back\n")
	for k, v := range m {
		b.WriteString(escape(k, true))
		b.WriteByte('=')
		b.WriteString(escape(v, false))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func escape(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case strings.ContainsRune(`\=:#!`, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

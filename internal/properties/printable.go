package properties

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s with every control character (terminal escape
// sequences, carriage returns, ...) and invalid byte written as a Go
// escape (\x1b), so that a name or value from a command line or a file
// cannot drive the terminal it is shown on or forge a line of output.
func Printable(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// unsafeRune is a rune a terminal may act on: C0 and C1 controls, DEL,
// and the bidirectional overrides that reorder what is shown.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

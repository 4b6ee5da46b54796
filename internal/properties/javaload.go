package properties

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Load parses Java .properties text into p (later keys win), as Java
// YCSB reads a -P file: java.util.Properties.load(InputStream), JDK 17.
//
//   - Every byte is the ISO-8859-1 character of that code (a UTF-8 "é",
//     bytes c3 a9, is the two characters "Ã©"); values are then held in
//     UTF-8, the bytes Java's String gives a database.
//   - Lines end at \n, \r or \r\n. Blanks (space, \t, \f) before a line
//     are skipped; a line whose first character is # or ! is a comment,
//     also a continuation line when nothing came before it; blank lines
//     are nothing.
//   - An odd number of backslashes at the end of a line continues it on
//     the next, whose leading blanks are dropped; at the end of the text
//     the backslash is dropped.
//   - The key ends at the first unescaped =, : or blank; blanks, then one
//     = or :, then blanks separate it from the value.
//   - \t \n \r \f are the control characters, \uXXXX the UTF-16 unit XXXX
//     (two escapes of a surrogate pair are one character; a lone
//     surrogate, which a Java String holds but UTF-8 cannot, becomes "?",
//     as Java's UTF-8 encoder writes it), a backslash before any other
//     character stands for that character (\q is q, \= is =, \\ is \).
//   - A \u not followed by four hex digits is an error naming the line,
//     where Java throws IllegalArgumentException ("Malformed \uxxxx
//     encoding.").
//
// Text with a NUL byte is refused as binary, and text over MaxFileBytes
// as too large.
func (p *Properties) Load(r io.Reader) error {
	text, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return err
	}
	_, err = p.LoadText(text)
	return err
}

// LoadText is Load of text held in memory. It also returns a note for
// the operator when a key or value held UTF-8 text, which Java's rules
// read as other characters (see Latin1Note), and "" otherwise.
func (p *Properties) LoadText(text []byte) (string, error) {
	if len(text) > MaxFileBytes {
		return "", fmt.Errorf("larger than %d MiB; expected a text file of at most %d MiB", MaxFileBytes>>20, MaxFileBytes>>20)
	}
	if i := bytes.IndexByte(text, 0); i >= 0 {
		return "", fmt.Errorf("line %d: binary content (a NUL byte); expected a text file", lineAt(text, i))
	}
	lr := lineReader{text: text, line: 1}
	note := ""
	for {
		line, at, ok := lr.next()
		if !ok {
			return note, nil
		}
		k, v := splitKV(line)
		uk, err := javaUnescape(k)
		if err != nil {
			return "", fmt.Errorf("line %d: %w", at, err)
		}
		uv, err := javaUnescape(v)
		if err != nil {
			return "", fmt.Errorf("line %d: property %q: %w", at, Printable(uk), err)
		}
		if note == "" {
			note = Latin1Note(line, at)
		}
		p.m[uk] = uv
	}
}

// lineAt is the number of the line holding text[i], lines ending as Java
// ends them.
func lineAt(text []byte, i int) int {
	n := 1
	for j := 0; j < i; j++ {
		if text[j] == '\n' || text[j] == '\r' && (j+1 >= len(text) || text[j+1] != '\n') {
			n++
		}
	}
	return n
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// lineReader splits text into logical lines as Java's Properties does:
// comments and blank lines skipped, continuations joined. A line's bytes
// are ISO-8859-1 characters with their escapes still in.
type lineReader struct {
	text []byte
	off  int
	// line is the number of the line at off.
	line int
	buf  []byte
}

// eol consumes the line terminator at off (\n, \r or \r\n).
func (lr *lineReader) eol() {
	if lr.text[lr.off] == '\r' && lr.off+1 < len(lr.text) && lr.text[lr.off+1] == '\n' {
		lr.off++
	}
	lr.off++
	lr.line++
}

// next returns the next logical line (valid until the next call) and the
// number of the line it starts on; false at the end of the text.
func (lr *lineReader) next() ([]byte, int, bool) {
	lr.buf = lr.buf[:0]
	skipBlank, continued, escaped := true, false, false
	start := lr.line
	for lr.off < len(lr.text) {
		c := lr.text[lr.off]
		if skipBlank {
			if isBlank(c) {
				lr.off++
				continue
			}
			if !continued && (c == '\n' || c == '\r') {
				lr.eol()
				continue
			}
			skipBlank, continued = false, false
		}
		if len(lr.buf) == 0 && (c == '#' || c == '!') {
			for lr.off < len(lr.text) && lr.text[lr.off] != '\n' && lr.text[lr.off] != '\r' {
				lr.off++
			}
			if lr.off < len(lr.text) {
				lr.eol()
			}
			skipBlank = true
			continue
		}
		if c != '\n' && c != '\r' {
			if len(lr.buf) == 0 {
				start = lr.line
			}
			lr.buf = append(lr.buf, c)
			escaped = c == '\\' && !escaped
			lr.off++
			continue
		}
		// Java ends the text's last line here, also when a backslash
		// leaves it empty (a "\\" and "\n" at the end is an empty key).
		last := lr.off+1 == len(lr.text)
		lr.eol()
		if len(lr.buf) == 0 {
			skipBlank = true
			continue
		}
		if escaped {
			lr.buf = lr.buf[:len(lr.buf)-1]
		}
		if !escaped || last {
			return lr.buf, start, true
		}
		// A continuation: the backslash went, the next line's leading
		// blanks go too.
		skipBlank, continued, escaped = true, true, false
	}
	if len(lr.buf) == 0 {
		return nil, 0, false
	}
	if escaped {
		lr.buf = lr.buf[:len(lr.buf)-1]
	}
	return lr.buf, start, true
}

// splitKV splits a logical line into its key and value, escapes still in.
func splitKV(s []byte) ([]byte, []byte) {
	i, sep, escaped := 0, false, false
	for ; i < len(s); i++ {
		c := s[i]
		if !escaped && (c == '=' || c == ':') {
			sep = true
			break
		}
		if !escaped && isBlank(c) {
			break
		}
		escaped = c == '\\' && !escaped
	}
	key := s[:i]
	if i < len(s) {
		i++
	}
	for ; i < len(s); i++ {
		c := s[i]
		if isBlank(c) {
			continue
		}
		if sep || (c != '=' && c != ':') {
			break
		}
		sep = true
	}
	return key, s[i:]
}

// javaUnescape turns a key or value (ISO-8859-1 characters, escapes in)
// into the UTF-8 bytes of the Java String it stands for.
func javaUnescape(s []byte) (string, error) {
	units := make([]uint16, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			units = append(units, uint16(c))
			continue
		}
		i++
		switch c = s[i]; c {
		case 't':
			units = append(units, '\t')
		case 'n':
			units = append(units, '\n')
		case 'r':
			units = append(units, '\r')
		case 'f':
			units = append(units, '\f')
		case 'u':
			u, ok := hex4(s[i+1:])
			if !ok {
				return "", fmt.Errorf("malformed \\uXXXX escape `\\u%s`: expected four hex digits (Java's Properties refuses it too)",
					Printable(latin1(s[i+1:min(i+5, len(s))])))
			}
			units = append(units, u)
			i += 4
		default:
			units = append(units, uint16(c))
		}
	}
	return utf16ToUTF8(units), nil
}

// hex4 reads four hex digits.
func hex4(s []byte) (uint16, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var v uint16
	for _, c := range s[:4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}

// utf16ToUTF8 encodes a Java String's UTF-16 units as Java's UTF-8
// encoder does: a surrogate pair is one character, a lone surrogate "?".
func utf16ToUTF8(units []uint16) string {
	var b strings.Builder
	b.Grow(len(units))
	for i := 0; i < len(units); i++ {
		r := rune(units[i])
		switch {
		case r < utf8.RuneSelf:
			b.WriteByte(byte(r))
		case !utf16.IsSurrogate(r):
			b.WriteRune(r)
		case r < 0xDC00 && i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] <= 0xDFFF:
			b.WriteRune(utf16.DecodeRune(r, rune(units[i+1])))
			i++
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

// latin1 is ISO-8859-1 text in UTF-8.
func latin1(s []byte) string {
	units := make([]uint16, len(s))
	for i, c := range s {
		units[i] = uint16(c)
	}
	return utf16ToUTF8(units)
}

// javaEscape writes r as \u escapes (a surrogate pair beyond U+FFFF).
func javaEscape(r rune) string {
	if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
		return fmt.Sprintf("\\u%04x\\u%04x", r1, r2)
	}
	return fmt.Sprintf("\\u%04x", r)
}

// Latin1Note returns a note for a logical line of a property file that
// holds UTF-8 text: Java, and so ycsbctl, read it as ISO-8859-1, so that
// a "é" typed in a UTF-8 editor is the key or value "Ã©". It is "" for a
// line without UTF-8 sequences (ASCII, or Latin-1 bytes meant as such).
func Latin1Note(line []byte, at int) string {
	for i := 0; i < len(line); i++ {
		if line[i] < utf8.RuneSelf {
			continue
		}
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError || n < 2 {
			continue
		}
		return fmt.Sprintf("line %d holds UTF-8 text: property files are read as ISO-8859-1, as Java YCSB reads them, so %q (bytes % x) is read as %q; write %s for %q to mean it in both",
			at, string(r), line[i:i+n], latin1(line[i:i+n]), javaEscape(r), string(r))
	}
	return ""
}

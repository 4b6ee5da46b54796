// Package shellquote writes a command line that a POSIX shell reads back
// as the same words, so that an equivalent command printed or recorded
// (`--slo 'READ.p99<=10ms'`) can be pasted into a terminal as it is.
package shellquote

import "strings"

// Join quotes each word as Quote does and joins them with spaces.
func Join(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Quote(w))
	}
	return b.String()
}

// Quote returns w as is when the shell reads it as one literal word, and
// otherwise in single quotes (a single quote inside closes them, is
// escaped with a backslash and opens them again).
func Quote(w string) string {
	if w != "" && strings.IndexFunc(w, special) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// special is a rune outside the set a shell never expands, splits or
// redirects on: letters, digits and -_./:,=@%+ (= and : are literal
// after a word's first character and in every word we write, ~ is not:
// it expands at a word's start).
func special(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("-_./:,=@%+", r)
}

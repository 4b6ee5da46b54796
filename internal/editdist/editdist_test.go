package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"exit-codes", "exit-codes", 0},
		{"exit-code", "exit-codes", 1},   // a deletion
		{"recordcout", "recordcount", 1}, // an insertion
		{"theads", "threads", 1},
		{"kitten", "sitting", 3}, // two substitutions and an insertion
		{"ab", "ba", 2},          // a transposition is two edits
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

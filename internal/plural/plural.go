// Package plural writes counts with their noun in the right number ("1
// agent", "3 agents"), so that no message says "1 agents".
package plural

import "strconv"

// Count writes n and noun, adding "s" unless n is 1.
func Count[N ~int | ~int32 | ~int64](n N, noun string) string {
	return CountAs(n, noun, noun+"s")
}

// CountAs writes n with one or many, for nouns whose plural is not
// noun+"s".
func CountAs[N ~int | ~int32 | ~int64](n N, one, many string) string {
	w := many
	if n == 1 {
		w = one
	}
	return strconv.FormatInt(int64(n), 10) + " " + w
}

package shellquote_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/shellquote"
)

// TestShellReadsBackTheWords runs the joined line through a real sh and
// requires the words it reads to be the ones given.
func TestShellReadsBackTheWords(t *testing.T) {
	words := []string{"capacity", "basic", "--slo", "READ.p99<=10ms", "--slo", "UPDATE.p99.9<=1.5s", "-p", "a=b c",
		"", "it's", `"dq"`, "$HOME", "`x`", "a;b", "a|b&c", "*", "~", "~x", "#c", "tab\there", "new\nline", "!", "(x)", "[x]",
		"{x}", "a\\b", "--precision", "0.1", "-p", "hosts=127.0.0.1:9042", "ünï"}
	line := shellquote.Join(words)
	out, err := exec.Command("sh", "-c", "set -- "+line+`; for w in "$@"; do printf '%s\0' "$w"; done`).CombinedOutput()
	require.NoError(t, err, "%s: %s", line, out)
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	assert.Equal(t, words, got, "sh read %s", line)
	assert.Contains(t, line, " --slo 'READ.p99<=10ms' ")
	assert.Contains(t, line, " --precision 0.1 -p hosts=127.0.0.1:9042 ", "plain words stay plain")
}

package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"

	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// TestEveryEmptyStringFlagIsRefused is the class of issue 34 #20's empty
// --results: every string flag of every command, given as empty, is
// refused (exit 2, naming the flag) before the command does anything, but
// those whose empty value means something of its own (emptyAllowed).
// `agent --token ”` served without a token and `--tls-cert ”` without
// TLS, as `--results ”` wrote no bundle.
func TestEveryEmptyStringFlagIsRefused(t *testing.T) {
	gs := testState(nil)
	var leaves []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() {
			leaves = append(leaves, c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd(gs))
	n := 0
	for _, c := range leaves {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if emptyAllowed[f.Name] || !isStringFlag(f) || f.Name == "help" {
				return
			}
			n++
			path := strings.Fields(c.CommandPath())[1:]
			t.Run(strings.Join(path, " ")+" --"+f.Name, func(t *testing.T) {
				var stderr bytes.Buffer
				args := append(append([]string(nil), path...), "--"+f.Name+"=")
				if c.Name() == "capacity" && f.Name != "slo" {
					// Its objectives are checked first.
					args = append(args, "--slo", "READ.p99<=1s")
				}
				// Enough positional arguments for the command's Args.
				for i := 0; i < 3 && c.Args != nil && c.Args(c, dummies(i)) != nil; i++ {
					args = append(args, "basic") // a db for the commands that take one
				}
				code := Execute(testState(&stderr, args...))
				assert.Equal(t, int(exitcode.InvalidConfig), code, stderr.String())
				// Refused by the empty-flag check, or earlier where the
				// flag is read before cobra (-db, -p): named either way.
				assert.Regexp(t, `flag (-\w/)?--?`+regexp.QuoteMeta(f.Name)+`\b`, stderr.String(), "the refusal names the flag")
			})
		})
	}
	assert.Greater(t, n, 20, "string flags found")
}

func dummies(n int) []string { return make([]string, n) }

func isStringFlag(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "string", "stringSlice", "stringArray":
		return true
	}
	return false
}

func testState(stderr *bytes.Buffer, args ...string) *GlobalState {
	if stderr == nil {
		stderr = &bytes.Buffer{}
	}
	return &GlobalState{
		Ctx: context.Background(), Args: args, Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: stderr,
		Getenv: func(string) string { return "" }, Clock: clock.NewReal(), ReadFile: properties.ReadFile,
		SignalNotify: func(chan<- os.Signal, ...os.Signal) {}, SignalStop: func(chan<- os.Signal) {},
	}
}

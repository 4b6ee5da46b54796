//go:build integration

package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failingTests is a package of its own whose tests fail in each way a CI
// log must explain: a test that fails with a message, and one that waits
// forever on a channel until the binary's -timeout.
const failingTests = `package failing

import "testing"

func TestPasses(t *testing.T) {}

func TestFails(t *testing.T) {
	t.Log("the step before the failure")
	t.Fatal("the failure's own message")
}

func TestWaitsForever(t *testing.T) {
	never := make(chan struct{})
	go waitFor(never)
	<-never // the test body's wait
}

func waitFor(c chan struct{}) { <-c }
`

// TestFailureSummary runs real go test processes over failingTests, with
// and without -v as the make targets do, and feeds their logs to
// scripts/test-failures.sh: what it prints (the end of a CI log) names the
// failed test with its message, and for the timeout the test still
// running and the test code's line where it waited. Before the summary
// knew timeouts, a CI log that kept only its tail showed goroutine stacks
// and "FAIL ... 1800s", and not which test hung.
func TestFailureSummary(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module failing\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "failing_test.go"), []byte(failingTests), 0o644))
	script := filepath.Join(cliRoot(), "scripts", "test-failures.sh")

	goTest := func(t *testing.T, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-count=1"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "go test %v should fail:\n%s", args, out)
		log := filepath.Join(t.TempDir(), "test.log")
		require.NoError(t, os.WriteFile(log, out, 0o644))
		sum, err := exec.CommandContext(ctx, "bash", script, log).CombinedOutput()
		require.NoError(t, err, "%s", sum)
		return string(sum)
	}

	for _, mode := range []struct {
		name  string
		flags []string
	}{{"quiet", nil}, {"verbose", []string{"-v"}}} {
		name, flags := mode.name, mode.flags
		t.Run(name+"/failed", func(t *testing.T) {
			sum := goTest(t, append(flags, "-run", "^(TestPasses|TestFails)$")...)
			assert.Contains(t, sum, "--- FAIL: TestFails")
			assert.Contains(t, sum, "--- output of TestFails")
			assert.Contains(t, sum, "the step before the failure")
			assert.Contains(t, sum, "the failure's own message")
			assert.NotContains(t, sum, "timed out")
		})
		t.Run(name+"/timed-out", func(t *testing.T) {
			sum := goTest(t, append(flags, "-run", "^(TestPasses|TestWaitsForever)$", "-timeout", "1s")...)
			require.Contains(t, sum, "=== timed out ===", sum)
			after := sum[strings.Index(sum, "=== timed out ===")+len("=== timed out ==="):]
			assert.Contains(t, after, "panic: test timed out after 1s")
			assert.Regexp(t, `running tests:\s+TestWaitsForever \(`, after)
			assert.Regexp(t, `failing\.TestWaitsForever\(.*\)\n\s+\S*failing_test\.go:15\b`, after, "the test body's wait, at its line")
			assert.Regexp(t, `failing\.waitFor\(.*\)\n\s+\S*failing_test\.go:18\b`, after, "the goroutine the test started")
			assert.NotContains(t, after, "TestPasses", "a test that ended is not among those running")
		})
	}
}

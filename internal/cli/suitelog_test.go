package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/suite"
)

// TestSuiteLogNeverTruncated: a resumed suite numbers its logs from 1
// again, so a step re-run after an interruption opens the log its first
// attempt wrote. The first attempt's output stays, under a line naming the
// new attempt (os.Create once truncated it).
func TestSuiteLogNeverTruncated(t *testing.T) {
	res := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(res, "logs"), 0o755))
	first := filepath.Join(res, "logs", "001-load-basic-01-load-workloada.log")
	require.NoError(t, os.WriteFile(first, []byte("first attempt\n"), 0o644))
	var out bytes.Buffer
	e := &suiteExecutor{plan: &suite.Plan{ResultsDir: res}, out: &out}
	w, done := e.log("load-basic-01-load-workloada")
	_, _ = io.WriteString(w, "second attempt\n")
	done()
	b, err := os.ReadFile(first)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "first attempt\n\n--- resumed "), "%q", b)
	assert.True(t, strings.HasSuffix(string(b), "---\nsecond attempt\n"), "%q", b)
	assert.Equal(t, "second attempt\n", out.String(), "the log tees to the suite's output")
}

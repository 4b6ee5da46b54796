package main_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
	binDir    string
)

// binary builds ./cmd/ycsbctl once per test process.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "ycsbctl-e2e-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "ycsbctl")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	require.NoError(t, buildErr, "go build: %s", buildOut)
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		if err := os.RemoveAll(binDir); err != nil {
			fmt.Fprintf(os.Stderr, "removing the test binary: %v\n", err)
		}
	}
	os.Exit(code)
}

type run struct {
	code           int
	stdout, stderr string
}

func ycsbctl(t *testing.T, args ...string) run {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return run{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

var opLine = regexp.MustCompile(`(?m)^\[([A-Za-z-]+)\], Operations, (\d+)$`)

func TestLoadThenRunWorkloadA(t *testing.T) {
	dir := t.TempDir()
	common := []string{"-P", "workloada", "-p", "embedded.dir=" + dir, "-p", "recordcount=1000", "-p", "operationcount=2000", "-threads", "4"}

	load := ycsbctl(t, append([]string{"load", "embedded", "-s"}, common...)...)
	require.Equal(t, 0, load.code, "load failed:\n%s", load.stderr)
	assert.Contains(t, load.stdout, "[INSERT], Operations, 1000\n")
	assert.Contains(t, load.stdout, "[INSERT], Return=OK, 1000\n")
	assert.Regexp(t, `\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}:\d{3} \d+ sec: 1000 operations;`, load.stderr, "final status line")

	r := ycsbctl(t, append([]string{"run", "embedded"}, common...)...)
	require.Equal(t, 0, r.code, "run failed:\n%s", r.stderr)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	assert.Regexp(t, `^\[OVERALL\], RunTime\(ms\), \d+$`, lines[0])
	assert.Regexp(t, `^\[OVERALL\], Throughput\(ops/sec\), [0-9.E]+$`, lines[1])
	ops := map[string]int64{}
	for _, g := range opLine.FindAllStringSubmatch(r.stdout, -1) {
		ops[g[1]], _ = strconv.ParseInt(g[2], 10, 64)
	}
	assert.Equal(t, int64(2000), ops["READ"]+ops["UPDATE"], "READ+UPDATE operations == operationcount")
	assert.Greater(t, ops["READ"], int64(0))
	assert.Greater(t, ops["UPDATE"], int64(0))
	assert.Equal(t, int64(4), ops["CLEANUP"])
	for _, op := range []string{"READ", "UPDATE"} {
		for _, m := range []string{"AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)", "50thPercentileLatency(us)", "95thPercentileLatency(us)", "99thPercentileLatency(us)"} {
			assert.Regexp(t, regexp.MustCompile(`(?m)^\[`+op+`\], `+regexp.QuoteMeta(m)+`, [0-9.E]+$`), r.stdout)
		}
		assert.Contains(t, r.stdout, "["+op+"], Return=OK, "+strconv.FormatInt(ops[op], 10)+"\n")
	}
	returns := regexp.MustCompile(`(?m)^\[[A-Z-]+\], Return=(\w+), `).FindAllStringSubmatch(r.stdout, -1)
	require.NotEmpty(t, returns)
	for _, g := range returns {
		assert.Equal(t, "OK", g[1], "only Return=OK")
	}
	assert.NotContains(t, r.stdout, "-FAILED]")
}

func TestBadInputExitsTwo(t *testing.T) {
	r := ycsbctl(t, "run", "basic", "-P", "workloada", "-p", "requestdistribution=gaussian")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "requestdistribution")
	assert.NotContains(t, r.stdout, "[OVERALL]")
	assert.NotContains(t, r.stdout, "READ usertable")

	r = ycsbctl(t, "run", "nosuchdb")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "nosuchdb")
}

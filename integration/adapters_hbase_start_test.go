//go:build integration

package integration

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run before the other HBase tests (the file name sorts
// first), while no shared HBase runs: they cost no extra start of it.

// TestHBaseFirstStartFromAFreshInstall starts HBase from an install
// directory of its own, empty as on a fresh clone: the jars are installed
// and the server serves on the first try. The script once computed the
// class path before installing the jars, so every first start on a fresh
// clone ran with servlet-api 2.5 first, died of NoSuchMethodError in the
// web UI, and a retry (meant for starts that fail under load) hid it.
func TestHBaseFirstStartFromAFreshInstall(t *testing.T) {
	skipIfSkipped(t, "hbase")
	stopServer(t, "hbase") // the shared server holds the ports
	dir := t.TempDir()
	r := hbaseIn(dir, "start")
	t.Cleanup(func() { stopHBaseIn(t, dir) })
	require.NoError(t, r.err)
	assert.False(t, strings.Contains(strings.ToLower(r.stderr), "retry"),
		"the first start from a fresh install needed a retry; the start's stderr ends:\n%s", lastLines(r.stderr, 12))
	assert.Equal(t, "127.0.0.1:2181", r.stdout)
	t.Logf("fresh install and first start took %s", r.took.Round(100*time.Millisecond))

	// The web UI, which needs the Servlet 3.1 API first on the class
	// path, serves /jmx (what telemetry reads); the JVM's own class path
	// has that jar before the directory of all jars.
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get("http://127.0.0.1:16010/jmx?qry=java.lang:type=Runtime")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var jmx struct {
		Beans []struct {
			ClassPath string `json:"ClassPath"`
		} `json:"beans"`
	}
	require.NoError(t, json.Unmarshal(body, &jmx), "%s", body)
	require.Len(t, jmx.Beans, 1, "%s", body)
	cp := strings.Split(jmx.Beans[0].ClassPath, ":")
	servlet := slices.IndexFunc(cp, func(e string) bool { return strings.HasSuffix(e, "/javax.servlet-api-3.1.0.jar") })
	old := slices.IndexFunc(cp, func(e string) bool { return strings.HasSuffix(e, "/servlet-api-2.5.jar") })
	require.GreaterOrEqual(t, servlet, 0, "servlet-api 3.1 not on the class path: %v", cp)
	if old >= 0 {
		assert.Less(t, servlet, old, "servlet-api 3.1 must come before 2.5 on the class path")
	}
}

// TestHBaseStartRetries: a start that fails as one can under load (here:
// not ready within YCSBCTL_START_TIMEOUT=1) is retried once, and the retry
// says what failed and why, with the failed start's log kept; a start that
// cannot succeed however often it is tried (a port HBase needs is taken)
// fails at once, saying why, with no retry, which would only double the
// wait and hide the cause.
func TestHBaseStartRetries(t *testing.T) {
	skipIfSkipped(t, "hbase")
	stopServer(t, "hbase") // the shared server holds the ports
	for _, c := range []struct {
		name   string
		env    []string
		listen string // a port to hold during the start
		why    string // what stderr says
		retry  bool
	}{
		{name: "port-taken", listen: "127.0.0.1:16010", why: "port 16010 on 127.0.0.1 is already in use"},
		{name: "not-ready-in-time", env: []string{"YCSBCTL_START_TIMEOUT=1"}, why: "HBase not ready after 1s", retry: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.listen != "" {
				ln, err := net.Listen("tcp", c.listen)
				require.NoError(t, err, "%s must be free for this test", c.listen)
				defer func() { _ = ln.Close() }()
			}
			dir := t.TempDir()
			r := runServersEnv(append([]string{"YCSBCTL_SERVERS_DIR=" + dir}, c.env...), "start", "hbase", serverStartTimeout)
			t.Cleanup(func() { stopHBaseIn(t, dir) })
			require.Error(t, r.err, "the start should fail; its stderr ends:\n%s", lastLines(r.stderr, 12))
			assert.Contains(t, r.stderr, c.why)
			retries := r.retries()
			if !c.retry {
				assert.False(t, strings.Contains(strings.ToLower(r.stderr), "retry"),
					"a start that would fail again was retried; its stderr ends:\n%s", lastLines(r.stderr, 12))
				return
			}
			require.Len(t, retries, 1, "one retry, saying so; stderr ends:\n%s", lastLines(r.stderr, 12))
			assert.Contains(t, retries[0], "the first start failed: "+c.why, "the retry says why")
			kept := filepath.Join(dir, "hbase", "failed-start.log")
			assert.Contains(t, retries[0], kept, "the retry names the failed start's log")
			assert.FileExists(t, kept)
		})
	}
}

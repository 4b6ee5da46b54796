package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretArgs carries one distinct secret per way a secret reaches a
// command line: a secret-named property, a URL password, secret query
// parameters, an AWS session token inside authMechanismProperties, and a
// qualified key name.
var secretArgs = []string{
	"-p", "mongodb.url=mongodb://ycsb:SECRET-URL-PW@db1:27017,db2:27017/ycsb?tlsCertificateKeyFilePassword=SECRET-TLS-PW&authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:SECRET-AWS-TOKEN,SERVICE_NAME:x&w=1",
	"-p", "cassandra.password=SECRET-CASSANDRA",
	"-p", "s3.accessKey=SECRET-ACCESS-KEY",
	"-p", "hbase.url=http://admin:SECRET-HBASE@127.0.0.1:1/?token=SECRET-QUERY-TOKEN",
}

var secrets = []string{"SECRET-URL-PW", "SECRET-TLS-PW", "SECRET-AWS-TOKEN", "SECRET-CASSANDRA", "SECRET-ACCESS-KEY", "SECRET-HBASE", "SECRET-QUERY-TOKEN", "SECRET-AGENT-TOKEN"}

type sink struct {
	name   string
	text   string
	marker bool // must show the redaction marker
}

func checkSinks(t *testing.T, sinks []sink) {
	t.Helper()
	for _, s := range sinks {
		t.Run(s.name, func(t *testing.T) {
			require.NotEmpty(t, s.text, "sink is empty")
			for _, secret := range secrets {
				assert.NotContains(t, s.text, secret)
			}
			if s.marker {
				assert.Contains(t, s.text, "REDACTED")
			}
		})
	}
}

func readSink(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// bundleSinks renders the report of a bundle and lists every place a
// property value or the command line is shown or stored.
func bundleSinks(t *testing.T, dir string, r run, echoesCommandLine bool) []sink {
	t.Helper()
	rep := ycsbctl(t, "report", dir)
	require.Equal(t, 0, rep.code, "report: %s", rep.stderr)
	html := readSink(t, filepath.Join(dir, "report.html"))
	runJSON := readSink(t, filepath.Join(dir, "run.json"))
	var parsed struct {
		Config struct {
			Properties  map[string]string `json:"properties"`
			CommandLine []string          `json:"command_line"`
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal([]byte(runJSON), &parsed))
	props, _ := json.Marshal(parsed.Config.Properties)
	for _, k := range []string{"keyprefix", "recordcount"} {
		assert.Contains(t, parsed.Config.Properties, k, "ordinary property %s is stored", k)
	}
	assert.Equal(t, "user", parsed.Config.Properties["keyprefix"], "ordinary values are not hidden")
	assert.Equal(t, "ycsb", parsed.Config.Properties["cassandra.keyspace"])
	return []sink{
		{"stderr", r.stderr, echoesCommandLine},
		{"stdout", r.stdout, false},
		{"run.json properties", string(props), true},
		{"run.json command_line", strings.Join(parsed.Config.CommandLine, " "), true},
		{"run.json", runJSON, true},
		{"summary.txt", readSink(t, filepath.Join(dir, "summary.txt")), false},
		{"report.html", html, true},
	}
}

// TestSecretsNeverReachASink runs real processes with secrets on the
// command line and checks every sink.
func TestSecretsNeverReachASink(t *testing.T) {
	common := append([]string{"-P", "workloada", "-p", "recordcount=100", "-p", "operationcount=200", "-p", "basicdb.verbose=false",
		"-p", "keyprefix=user", "-p", "cassandra.keyspace=ycsb"}, secretArgs...)

	t.Run("single host", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "bundle")
		r := ycsbctl(t, append(append([]string{"run", "basic"}, common...), "--results", dir)...)
		require.Equal(t, 0, r.code, "run: %s", r.stderr)
		require.Contains(t, r.stderr, "Command line:")
		sinks := bundleSinks(t, dir, r, true)
		checkSinks(t, sinks)
		assert.Contains(t, r.stderr, "db1:27017,db2:27017/ycsb", "the URL's hosts stay visible")
	})

	t.Run("coordinator and agent", func(t *testing.T) {
		const token = "SECRET-AGENT-TOKEN"
		a := startAgent(t, "--token", token)
		dir := filepath.Join(t.TempDir(), "bundle")
		args := append(append([]string{"coordinator", "run", "basic", "--agents", a.addr, "--token", token, "--no-tui"}, common...), "--results", dir)
		r := ycsbctl(t, args...)
		require.Equal(t, 0, r.code, "coordinator run: %s\nagent: %s", r.stderr, a.stderr())
		// The coordinator does not echo its command line.
		sinks := bundleSinks(t, dir, r, false)
		sinks = append(sinks, sink{"agent log", a.stderr(), false})
		checkSinks(t, sinks)
		assert.Contains(t, readSink(t, filepath.Join(dir, "run.json")), "--token", "the flag is kept, its value hidden")
	})

	t.Run("bundle written without redaction", func(t *testing.T) {
		// A bundle from an older build stored secrets in clear; the report
		// must not repeat them.
		dir := filepath.Join(t.TempDir(), "bundle")
		r := ycsbctl(t, append(append([]string{"run", "basic"}, common...), "--results", dir)...)
		require.Equal(t, 0, r.code, "run: %s", r.stderr)
		path := filepath.Join(dir, "run.json")
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(readSink(t, path)), &raw))
		cfg := raw["config"].(map[string]any)
		props := cfg["properties"].(map[string]any)
		props["cassandra.password"] = "SECRET-CASSANDRA"
		props["mongodb.url"] = "mongodb://ycsb:SECRET-URL-PW@db1/?tlsCertificateKeyFilePassword=SECRET-TLS-PW"
		cfg["command_line"] = []string{"run", "basic", "-p", "cassandra.password=SECRET-CASSANDRA", "--token", "SECRET-AGENT-TOKEN"}
		b, err := json.Marshal(raw)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
		rep := ycsbctl(t, "report", dir)
		require.Equal(t, 0, rep.code, "report: %s", rep.stderr)
		checkSinks(t, []sink{{"report.html", readSink(t, filepath.Join(dir, "report.html")), true}})
	})
}

// TestBadSecretValueNotEchoed: an error about a secret-named property
// names the property but not its value.
func TestBadSecretValueNotEchoed(t *testing.T) {
	r := ycsbctl(t, "run", "basic", "-P", "workloada", "-p", "basicdb.verbose=false", "-p", "recordcount=SECRET-CASSANDRA",
		"-p", "cassandra.password=SECRET-CASSANDRA")
	require.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "recordcount")
	for _, s := range []string{r.stderr, r.stdout} {
		// recordcount is not secret, so its bad value is quoted; the
		// command line echo (if any) hides the password.
		assert.Equal(t, strings.Count(s, "SECRET-CASSANDRA"), strings.Count(s, `"recordcount"="SECRET-CASSANDRA"`))
	}
}

//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

// repoRoot is the checkout's top directory.
func interopRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// interopBinary builds bin/ycsbctl if needed.
func interopBinary(t *testing.T) string {
	root := interopRoot(t)
	bin := filepath.Join(root, "bin", "ycsbctl")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ycsbctl")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// parseInserts reads BasicDB verbose INSERT lines into key -> field -> value.
// Java prints fields in HashMap order, ycsbctl in field order, so maps are
// compared, and the key order separately.
func parseInserts(t *testing.T, out []byte, prefix string) ([]string, map[string]map[string]string) {
	var order []string
	recs := map[string]map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "INSERT ") {
			continue
		}
		parts := strings.SplitN(line, " ", 4)
		require.Len(t, parts, 4, line)
		key := parts[2]
		body := strings.TrimSuffix(strings.TrimPrefix(parts[3], "[ "), " ]")
		fields := map[string]string{}
		// Fields are "name=value", each name starting with prefix; a
		// deterministic value holds no space but may hold its field's
		// name, so a prefix with a blank is found at word starts only.
		for i, kv := range strings.Split(" "+body, " "+prefix) {
			if i == 0 {
				require.Empty(t, kv, "fields start with %q: %s", prefix, line)
				continue
			}
			name, value, ok := strings.Cut(kv, "=")
			require.True(t, ok, kv)
			fields[prefix+name] = value
		}
		order = append(order, key)
		recs[key] = fields
	}
	require.NoError(t, sc.Err())
	return order, recs
}

// TestJavaYCSBInterop runs Java YCSB's own client (site.ycsb:core:0.17.0
// from Maven Central, BasicDB with verbose output) and ycsbctl's basic
// binding on the same load and compares every key, field name and
// data-integrity value byte for byte. Same keys and values mean a table
// loaded by one tool is read by the other: the bindings store exactly these
// keys (Cassandra y_id, MongoDB _id, HBase row key) and field names.
func TestJavaYCSBInterop(t *testing.T) {
	if os.Getenv("YCSBCTL_SKIP_JAVAYCSB") == "1" {
		if tools.Required() {
			t.Fatalf("YCSBCTL_SKIP_JAVAYCSB=1 and %s=1: CI must not skip the Java YCSB comparison", tools.RequireEnv)
		}
		t.Skip("YCSBCTL_SKIP_JAVAYCSB=1")
	}
	java := tools.Java17(t)
	tools.Maven(t) // javaycsb.sh fetches the jars with mvn
	root := interopRoot(t)
	cpOut, err := exec.Command("bash", filepath.Join(root, "integration", "scripts", "javaycsb.sh")).Output()
	require.NoError(t, err, "fetching Java YCSB core from Maven Central")
	cp := strings.TrimSpace(string(cpOut))
	bin := interopBinary(t)

	// A non-ASCII property value in a -P file, written three ways: Java
	// reads the file as ISO-8859-1 (issue 34 #7), so the Latin-1 byte e9
	// and the escape \u00e9 are "é" and a UTF-8 "é" (c3 a9) is "Ã©"; the
	// database gets names in UTF-8. A -p value is the command line's
	// string, decoded as UTF-8 in a UTF-8 locale. Java YCSB has no
	// keyprefix (its keys start with "user"): the field names carry the
	// value here, as fieldnameprefix; keyprefix is read by the same
	// reader (cmd/ycsbctl TestPropertyFileEncodingIsJavas).
	pdir := t.TempDir()
	pfile := func(name, text string) string {
		f := filepath.Join(pdir, name)
		require.NoError(t, os.WriteFile(f, []byte(text), 0o644))
		return f
	}
	wa := filepath.Join(root, "workloads", "workloada")
	prefixes := map[string]string{
		"fieldnameprefix-latin1-bytes": "caf\xc3\xa9", "fieldnameprefix-escape": "caf\xc3\xa9",
		"fieldnameprefix-utf8-bytes": "caf\xc3\x83\xc2\xa9", "fieldnameprefix-p": "caf\xc3\xa9",
		"fieldnameprefix-trailing-blank-file": "col ", "fieldnameprefix-trailing-blank-p": "col  ",
	}
	cases := []struct {
		name string
		args []string
		// warn, if set, is the warning ycsbctl prints (Java YCSB says
		// nothing): a value YCSB silently reads as another.
		warn string
	}{
		{name: "fieldnameprefix-latin1-bytes", args: []string{"-P", wa, "-P", pfile("latin1", "fieldnameprefix=caf\xe9\n"), "-p", "recordcount=50"}},
		{name: "fieldnameprefix-escape", args: []string{"-P", wa, "-P", pfile("escape", "fieldnameprefix = caf\\u00e9\n"), "-p", "recordcount=50"}},
		{name: "fieldnameprefix-utf8-bytes", args: []string{"-P", wa, "-P", pfile("utf8", "fieldnameprefix:caf\xc3\xa9\n"), "-p", "recordcount=50"}},
		{name: "fieldnameprefix-p", args: []string{"-P", wa, "-p", "fieldnameprefix=caf\xc3\xa9", "-p", "recordcount=50"}},
		// Java keeps a value's trailing blanks, in a file and in -p alike:
		// the field names are "col 0", ...; ycsbctl too, and it warns.
		{name: "fieldnameprefix-trailing-blank-file", args: []string{"-P", wa, "-P", pfile("blank", "fieldnameprefix=col \n"), "-p", "recordcount=50"}, warn: `Warning: fieldnameprefix="col " begins or ends in white space`},
		{name: "fieldnameprefix-trailing-blank-p", args: []string{"-P", wa, "-p", "fieldnameprefix=col  ", "-p", "recordcount=50"}, warn: `Warning: fieldnameprefix="col  " begins or ends in white space`},
		{name: "workloada-hashed", args: []string{"-P", wa, "-p", "recordcount=300"}},
		{name: "comparison2014-shape", args: []string{"-P", filepath.Join(root, "workloads", "comparison2014-load"), "-p", "recordcount=200"}},
		{name: "ordered-padded", args: []string{"-P", wa, "-p", "recordcount=120", "-p", "insertorder=ordered", "-p", "zeropadding=12", "-p", "fieldcount=3", "-p", "fieldnameprefix=col"}},
		{name: "insertstart", args: []string{"-P", wa, "-p", "recordcount=1000", "-p", "insertstart=500", "-p", "insertcount=100"}},
		// YCSB reads any insertorder but exactly "hashed" as ordered.
		{name: "insertorder-unknown", args: []string{"-P", wa, "-p", "recordcount=50", "-p", "insertorder=random"}, warn: "Warning: insertorder=random is not one of hashed, ordered"},
		{name: "insertorder-capitalised", args: []string{"-P", wa, "-p", "recordcount=50", "-p", "insertorder=Hashed"}, warn: "Warning: insertorder=Hashed is not one of"},
		{name: "insertorder-trailing-blank", args: []string{"-P", wa, "-p", "recordcount=50", "-p", "insertorder=hashed "}, warn: `Warning: insertorder="hashed " is not one of`},
		{name: "insertorder-empty", args: []string{"-P", wa, "-p", "recordcount=50", "-p", "insertorder="}, warn: `Warning: insertorder="" is not one of`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			common := append([]string{}, tc.args...)
			common = append(common, "-p", "dataintegrity=true", "-p", "basicdb.verbose=true", "-threads", "1")
			// BasicDB prints keys through System.out: in UTF-8, the
			// bytes a binding gives the database, whatever the locale;
			// and the command line decoded as UTF-8.
			jargs := append([]string{"-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8", "-cp", cp, "site.ycsb.Client", "-load", "-db", "site.ycsb.BasicDB"}, common...)
			jcmd := exec.Command(java, jargs...)
			jcmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
			var jerr bytes.Buffer
			jcmd.Stderr = &jerr
			jout, err := jcmd.Output()
			require.NoError(t, err, jerr.String())

			gargs := append([]string{"load", "basic"}, common...)
			gcmd := exec.Command(bin, gargs...)
			var gerr bytes.Buffer
			gcmd.Stderr = &gerr
			gout, err := gcmd.Output()
			require.NoError(t, err, gerr.String())

			prefix := "field"
			for i, a := range tc.args {
				if v, ok := strings.CutPrefix(a, "fieldnameprefix="); ok && i > 0 && tc.args[i-1] == "-p" {
					prefix = v
				}
			}
			if want, ok := prefixes[tc.name]; ok {
				prefix = want
			}
			jorder, jrecs := parseInserts(t, jout, prefix)
			gorder, grecs := parseInserts(t, gout, prefix)
			require.NotEmpty(t, jorder)
			require.Equal(t, jorder, gorder, "same keys in the same order")
			require.Equal(t, jrecs, grecs, "same field names and values")
			if want, ok := prefixes[tc.name]; ok {
				require.Contains(t, jrecs[jorder[0]], want+"0", "Java's field names, want the prefix % x", want)
			}
			if tc.warn != "" {
				require.Contains(t, gerr.String(), tc.warn)
			} else {
				require.NotContains(t, gerr.String(), "Warning: insertorder")
			}
			t.Logf("%d records identical (first key %s)", len(jorder), jorder[0])
		})
	}
}

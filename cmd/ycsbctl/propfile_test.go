package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A -P file is read as Java YCSB's Properties.load(InputStream) reads
// it: every byte is the ISO-8859-1 character of that code, \uXXXX is the
// UTF-16 unit, and keys reach the database as Java's String in UTF-8. So
// a Latin-1 file's "caf\xe9" and an escaped "caf\u00e9" are the key bytes
// 63 61 66 c3 a9, and a UTF-8 file's "café" (c3 a9) is c3 83 c2 a9, as
// Java YCSB gives them; a -p value is the command line's string and
// keeps its bytes. (The file's bytes used to be taken raw: the Latin-1
// key held a lone e9 byte, the UTF-8 one c3 a9, neither Java's key.)
func TestPropertyFileEncodingIsJavas(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		file string // the -P file's bytes; "" for -p
		p    string
		key  string // the key prefix's bytes
		note bool   // a note says the file held UTF-8
	}{
		{"latin-1 bytes", "keyprefix=caf\xe9\n", "", "caf\xc3\xa9", false},
		{"unicode escape", "keyprefix=caf\\u00e9\n", "", "caf\xc3\xa9", false},
		{"utf-8 bytes", "keyprefix=caf\xc3\xa9\n", "", "caf\xc3\x83\xc2\xa9", true},
		{"supplementary escape", "keyprefix=k\\uD83D\\uDE00\n", "", "k\xf0\x9f\x98\x80", false},
		{"-p keeps its bytes", "", "keyprefix=caf\xc3\xa9", "caf\xc3\xa9", false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"load", "basic", "-P", "workloada", "-p", "recordcount=3", "-p", "fieldcount=1", "-p", "basicdb.verbose=true"}
			if tc.file != "" {
				f := filepath.Join(dir, "w"+string(rune('0'+i))+".properties")
				require.NoError(t, os.WriteFile(f, []byte(tc.file), 0o644))
				args = append(args, "-P", f)
			} else {
				args = append(args, "-p", tc.p)
			}
			r := ycsbctl(t, args...)
			require.Equal(t, 0, r.code, r.stderr)
			var keys []string
			for _, l := range strings.Split(r.stdout, "\n") {
				if strings.HasPrefix(l, "INSERT usertable ") {
					keys = append(keys, strings.Fields(l)[2])
				}
			}
			require.Len(t, keys, 3, r.stdout)
			for _, k := range keys {
				assert.True(t, strings.HasPrefix(k, tc.key), "key % x, want the prefix % x", k, tc.key)
				rest := strings.TrimPrefix(k, tc.key)
				assert.Equal(t, "", strings.Trim(rest, "0123456789"), "key % x: the prefix, then the key number", k)
			}
			if tc.note {
				assert.Contains(t, r.stderr, "ISO-8859-1")
			} else {
				assert.NotContains(t, r.stderr, "ISO-8859-1")
			}
		})
	}
}

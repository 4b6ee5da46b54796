package doctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const root = "../.."

// TestDocsFollowTheConvention checks what every document must satisfy:
// each sh block's needs are known (a typo would make a block run
// nowhere), each ci block is what CI runs, links lead somewhere, every
// `make TARGET` exists, and the README stays a front door.
func TestDocsFollowTheConvention(t *testing.T) {
	blocks, err := Blocks(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 8 {
		t.Fatalf("found %d sh blocks; the parser lost some", len(blocks))
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	for _, l := range strings.Split(string(ci), "\n") {
		runs[strings.TrimPrefix(strings.TrimSpace(l), "exec ")] = true
	}
	for _, b := range blocks {
		if !b.Has("ci") {
			continue
		}
		for _, c := range b.Commands() {
			cmd, _, _ := strings.Cut(c, "#")
			if !runs[strings.TrimSpace(cmd)] {
				t.Errorf("%s: %q is marked ci, but .ci/run does not run it", b.Name(), cmd)
			}
		}
	}
	if err := CheckLinks(root); err != nil {
		t.Error(err)
	}
	if err := CheckMakeTargets(root); err != nil {
		t.Error(err)
	}
	if st, err := os.Stat(filepath.Join(root, "README.md")); err != nil || st.Size() > 10<<10 {
		t.Errorf("README.md: %v bytes (err %v): at most 10 KiB, the rest belongs in docs/", st.Size(), err)
	}
	readme, _ := os.ReadFile(filepath.Join(root, "README.md"))
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, d := range docs {
		if link := "](docs/" + filepath.Base(d) + ")"; !strings.Contains(string(readme), link) {
			t.Errorf("README.md does not lead to docs/%s", filepath.Base(d))
		}
	}
}

// TestParseRefusesWhatWouldRunNowhere feeds the parser the mistakes an
// author can make: each must be an error, not a block that no test runs.
func TestParseRefusesWhatWouldRunNowhere(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"unknown need", "```sh\n# needs: casandra\nbin/ycsbctl dbs\n```\n", `need "casandra"`},
		{"malformed needs line", "```sh\n# needs cassandra\nbin/ycsbctl dbs\n```\n", "expected # needs:"},
		{"needs in the info string", "```sh cassandra\nbin/ycsbctl dbs\n```\n", "first line"},
		{"unclosed fence", "```sh\nbin/ycsbctl dbs\n", "never closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse("x.md", []byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parse: %v; want an error containing %q", err, tc.want)
			}
		})
	}
	blocks, err := parse("x.md", []byte("text\n```sh\n# needs: cassandra, minutes (a server)\nmake build \\\n  -j2\n```\n```go\nx := 1\n```\n```sh\nbin/ycsbctl dbs # list\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || !blocks[0].Has("cassandra") || !blocks[0].Has("minutes") || blocks[0].Line != 2 || len(blocks[1].Needs) != 0 {
		t.Fatalf("blocks: %+v", blocks)
	}
	if c := blocks[0].Commands(); len(c) != 1 || c[0] != "make build -j2" {
		t.Fatalf("commands: %q", c)
	}
}

// TestDocsRunOnAFreshMachine runs every block that needs nothing but Go
// and this repository, as written, each in a scratch copy of the
// repository with bin/ycsbctl built.
func TestDocsRunOnAFreshMachine(t *testing.T) {
	blocks, err := Blocks(root)
	if err != nil {
		t.Fatal(err)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "ycsbctl")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ycsbctl")
	build.Dir = absRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	goEnv, err := GoEnv()
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ran := 0
	for _, b := range blocks {
		if len(b.Needs) > 0 {
			continue
		}
		ran++
		t.Run(b.Name(), func(t *testing.T) {
			dir := t.TempDir()
			home, err := Scratch(absRoot, bin, dir)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := Run(b.Text, dir, append(goEnv, "HOME="+home, "XDG_CACHE_HOME=", "XDG_CONFIG_HOME="), 5*time.Minute)
			if err != nil {
				t.Fatalf("%s failed: %v\n--- block\n%s--- output\n%s", b.Name(), err, b.Text, out)
			}
			t.Logf("%s ran in %s", b.Name(), time.Since(start).Round(100*time.Millisecond))
		})
	}
	if ran == 0 {
		t.Fatal("no block to run: the documentation lost its runnable examples")
	}
}

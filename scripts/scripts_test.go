// Package scripts tests the shell scripts that make lint and make test-all
// run: each runs as a real process on a throwaway git repository or
// Makefile, so what CI refuses and what its log ends with is tested, not
// assumed.
package scripts

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// script is the absolute path of scripts/NAME.
func script(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(name)
	require.NoError(t, err)
	return p
}

// run runs cmd with a bound and returns its combined output and exit code.
func run(t *testing.T, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	return "", -1
}

// gitRepo makes a git repository in a new directory with files committed
// (name -> content) and returns it.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	env := []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	git := func(args ...string) {
		out, code := run(t, dir, env, "git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
		require.Zero(t, code, "git %v:\n%s", args, out)
	}
	git("init", "-q")
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	git("add", "-A")
	git("commit", "-q", "--allow-empty", "-m", "files")
	return dir
}

// Markers are built here, not written out, so that this file holds none
// at the start of a line.
var (
	mOpen  = strings.Repeat("<", 7)
	mMid   = strings.Repeat("=", 7)
	mBase  = strings.Repeat("|", 7)
	mClose = strings.Repeat(">", 7)
)

// conflict is what git leaves in a file after a conflicting merge.
func conflict(ours, theirs string) string {
	return mOpen + " HEAD\n" + ours + "\n" + mMid + "\n" + theirs + "\n" + mClose + " 52c6329 (describe: a commit subject)\n"
}

// TestConflictMarkers runs scripts/check-conflict-markers.sh (make lint) on
// git repositories with and without conflict markers: a merge left
// unresolved is refused with every marker's file and line, while what only
// looks like one (a Markdown setext heading, a separator line, a marker in
// a binary or an untracked file, eight '<') passes. docs/results.md once
// went out with three markers and half its page twice.
func TestConflictMarkers(t *testing.T) {
	check := script(t, "check-conflict-markers.sh")
	for _, c := range []struct {
		name      string
		files     map[string]string
		untracked map[string]string
		want      []string // lines of the refusal; none: the check passes
	}{
		{name: "clean", files: map[string]string{"README.md": "# Title\n\ntext\n"}},
		{name: "setext-heading-and-separator", files: map[string]string{
			"doc.md":    "Title\n" + mMid + "\n\ntext\n\nOther\n" + strings.Repeat("=", 12) + "\n",
			"notes.txt": "a\n" + mMid + "\nb\n",
		}},
		{name: "conflict-in-markdown", files: map[string]string{"docs/results.md": "# Results\n\n" + conflict("ours", "theirs")},
			want: []string{"docs/results.md:3: " + mOpen + " HEAD", "docs/results.md:5: " + mMid, "docs/results.md:7: " + mClose + " 52c6329 (describe: a commit subject)"}},
		{name: "diff3-conflict-in-go", files: map[string]string{"a/b.go": "package b\n" + mOpen + " HEAD\nvar x = 1\n" + mBase + " merged common ancestors\nvar x = 0\n" + mMid + "\nvar x = 2\n" + mClose + " topic\n"},
			want: []string{"a/b.go:2: " + mOpen + " HEAD", "a/b.go:4: " + mBase + " merged common ancestors", "a/b.go:6: " + mMid, "a/b.go:8: " + mClose + " topic"}},
		{name: "half-resolved-opening-only", files: map[string]string{"x.yaml": "a: 1\n" + mOpen + " HEAD\nb: 2\n"},
			want: []string{"x.yaml:2: " + mOpen + " HEAD"}},
		{name: "closing-only", files: map[string]string{"x.sh": "echo\n" + mClose + " main\n"},
			want: []string{"x.sh:2: " + mClose + " main"}},
		{name: "crlf-line-ends", files: map[string]string{"w.txt": strings.ReplaceAll(conflict("a", "b"), "\n", "\r\n")},
			want: []string{"w.txt:1: " + mOpen + " HEAD", "w.txt:3: " + mMid, "w.txt:5: " + mClose + " 52c6329 (describe: a commit subject)"}},
		{name: "space-in-name-and-long-label", files: map[string]string{"my notes.md": mOpen + " " + strings.Repeat("x", 100) + "\n" + mMid + "\n" + mClose + " y\n"},
			want: []string{"my notes.md:1: " + mOpen + " " + strings.Repeat("x", 61) + "...", "my notes.md:2: " + mMid, "my notes.md:3: " + mClose + " y"}},
		{name: "not-markers", files: map[string]string{
			"eight.txt":    strings.Repeat("<", 8) + " x\n" + strings.Repeat(">", 8) + " y\n",
			"nolabel.txt":  mOpen + "\n" + mClose + "\n",
			"indented.txt": "  " + mOpen + " HEAD\n  " + mClose + " x\n",
			"binary.dat":   "\x00\x01" + conflict("a", "b"),
		}},
		{name: "untracked-file", files: map[string]string{"ok.md": "ok\n"}, untracked: map[string]string{"scratch.md": conflict("a", "b")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := gitRepo(t, c.files)
			for name, content := range c.untracked {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
			}
			// From a subdirectory too: the check covers the whole repository.
			sub := filepath.Join(dir, "sub")
			require.NoError(t, os.MkdirAll(sub, 0o755))
			for _, from := range []string{dir, sub} {
				out, code := run(t, from, nil, check)
				if len(c.want) == 0 {
					assert.Zero(t, code, "from %s:\n%s", from, out)
					assert.Empty(t, out)
					continue
				}
				assert.Equal(t, 1, code, "from %s:\n%s", from, out)
				assert.Contains(t, out, "conflict markers in tracked files")
				for _, w := range c.want {
					assert.Contains(t, out, "  "+w+"\n", "from %s", from)
				}
				assert.Equal(t, len(c.want)+1, strings.Count(out, "\n"), "one line per marker:\n%s", out)
			}
		})
	}
	t.Run("outside-a-repository", func(t *testing.T) {
		out, code := run(t, t.TempDir(), []string{"GIT_CEILING_DIRECTORIES=" + os.TempDir()}, check)
		assert.Equal(t, 2, code, out)
		assert.Contains(t, out, "not inside a git work tree")
	})
}

// TestGoModTidyCheck runs scripts/check-go-mod-tidy.sh (make lint) on git
// repositories holding two modules, a and lib, where a imports lib (a local
// replace, so nothing is fetched): a tidy pair passes, and a go.mod that
// lists a direct import as indirect (as ours once listed
// github.com/prometheus/procfs) or a requirement nothing imports is
// refused, naming the module's directory and printing tidy's diff.
func TestGoModTidyCheck(t *testing.T) {
	check := script(t, "check-go-mod-tidy.sh")
	libMod := "module example.com/lib\n\ngo 1.22\n"
	lib := "package lib\n\nfunc F() int { return 1 }\n"
	mainGo := "package main\n\nimport \"example.com/lib\"\n\nfunc main() { _ = lib.F() }\n"
	aMod := func(require string) string {
		return "module example.com/a\n\ngo 1.22\n\n" + require + "replace example.com/lib => ../lib\n"
	}
	for _, c := range []struct {
		name, aMod string
		root       bool // module a at the repository's root
		untidy     string
	}{
		{name: "tidy", aMod: aMod("require example.com/lib v0.0.0\n\n")},
		{name: "tidy-at-root", aMod: aMod("require example.com/lib v0.0.0\n\n"), root: true},
		{name: "direct-import-listed-indirect", aMod: aMod("require example.com/lib v0.0.0 // indirect\n\n"), untidy: "-require example.com/lib v0.0.0 // indirect"},
		{name: "requirement-missing", aMod: aMod(""), untidy: "+require example.com/lib v0.0.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, libDir := "a", "lib"
			if c.root {
				a = "."
			}
			mod := c.aMod
			if c.root {
				mod = strings.ReplaceAll(mod, "=> ../lib", "=> ./lib")
			}
			dir := gitRepo(t, map[string]string{
				filepath.Join(a, "go.mod"): mod, filepath.Join(a, "main.go"): mainGo,
				filepath.Join(libDir, "go.mod"): libMod, filepath.Join(libDir, "lib.go"): lib,
			})
			out, code := run(t, dir, []string{"GOPROXY=off"}, check)
			if c.untidy == "" {
				assert.Zero(t, code, out)
				return
			}
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, c.untidy, "tidy's diff is shown")
			assert.Contains(t, out, "go.mod/go.sum not tidy in: "+a+" ")
			assert.NotContains(t, out, "not tidy in: "+a+" lib", "the tidy module is not named")
		})
	}
}

// TestLintSeesEveryFile keeps make lint's single pass whole: it vets and
// lints every package once with the integration and cluster tags on
// (LINT_TAGS; robustness too), which sees every file only while no file is built without
// one of those tags. A //go:build line that excludes one would hide that
// file from lint; it fails here instead.
func TestLintSeesEveryFile(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	require.Contains(t, string(mk), "LINT_TAGS := integration,cluster,robustness")
	out, code := run(t, root, nil, "git", "grep", "-n", "-E", `^//go:build .*!(integration|cluster|robustness)\b`, "--", "*.go", ":!integration/ferretdb")
	assert.Equal(t, 1, code, "files built only without a lint tag (lint would not see them):\n%s", out)
}

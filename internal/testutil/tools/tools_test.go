package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder stands in for a test so that the helpers' Fatalf and Skip can be
// observed instead of ending the real test. Like testing.T they stop the
// calling goroutine.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(f string, a ...any) {
	r.fatal = fmt.Sprintf(f, a...)
	runtime.Goexit()
}
func (r *recorder) Fatal(a ...any) { r.fatal = fmt.Sprint(a...); runtime.Goexit() }
func (r *recorder) Skip(a ...any)  { r.skip = fmt.Sprint(a...); runtime.Goexit() }
func (r *recorder) Skipf(f string, a ...any) {
	r.skip = fmt.Sprintf(f, a...)
	runtime.Goexit()
}
func (r *recorder) SkipNow() { r.skip = "SkipNow"; runtime.Goexit() }

type outcome struct {
	result      string
	returned    bool
	fatal, skip string
}

// run calls f with a recorder and reports how it ended.
func run(t *testing.T, f func(tb testing.TB) string) outcome {
	r := &recorder{TB: t}
	var o outcome
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.result = f(r)
		o.returned = true
	}()
	<-done
	o.fatal, o.skip = r.fatal, r.skip
	return o
}

// writeScript writes an executable shell script.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// fakeRepo makes a checkout with go.mod and moves into a subdirectory of
// it, as a test binary runs in its package's directory.
func fakeRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/fake\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "internal", "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	return root
}

func TestRequireFindsCommandOnPath(t *testing.T) {
	dir := t.TempDir()
	want := filepath.Join(dir, "ycsbctl-fake-tool")
	writeScript(t, want, "exit 0")
	t.Setenv("PATH", dir)
	t.Setenv(RequireEnv, "1")
	o := run(t, func(tb testing.TB) string { return Require(tb, "ycsbctl-fake-tool") })
	if !o.returned || o.result != want || o.fatal != "" || o.skip != "" {
		t.Fatalf("Require = %+v, want %s returned", o, want)
	}
}

func TestMissingToolFailsWhenRequired(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv(RequireEnv, "1")
	o := run(t, func(tb testing.TB) string { return Require(tb, "tmux") })
	if o.returned || o.skip != "" {
		t.Fatalf("with %s=1 a missing tool must fail, got %+v", RequireEnv, o)
	}
	for _, want := range []string{"tmux", "apt-get install tmux", "scripts/ci-setup.sh", RequireEnv + "=1"} {
		if !strings.Contains(o.fatal, want) {
			t.Errorf("failure message %q lacks %q", o.fatal, want)
		}
	}
}

func TestMissingToolSkipsWhenNotRequired(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, v := range []string{"", "0"} {
		t.Setenv(RequireEnv, v)
		o := run(t, func(tb testing.TB) string { return Require(tb, "promtool") })
		if o.returned || o.fatal != "" || !strings.Contains(o.skip, "apt-get install prometheus") {
			t.Fatalf("%s=%q: want a skip naming the package, got %+v", RequireEnv, v, o)
		}
	}
	o := run(t, Chromium)
	if o.returned || !strings.Contains(o.skip, "apt-get install chromium") {
		t.Fatalf("Chromium without chromium on PATH: %+v", o)
	}
}

func TestRepoRootIsThisModule(t *testing.T) {
	root := RepoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "module github.com/ycsbctl/ycsbctl\n") {
		t.Fatalf("RepoRoot %s holds the go.mod of another module:\n%s", root, b)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testutil", "tools", "tools.go")); err != nil {
		t.Fatalf("RepoRoot %s is not this checkout: %v", root, err)
	}
}

// fakePython imports every module except nosuchmod, as an interpreter
// without that package would.
const fakePython = `case "$2" in *nosuchmod*) echo "ModuleNotFoundError: No module named 'nosuchmod'" >&2; exit 1;; esac; exit 0`

func TestPythonPrefersTheCheckoutsVenv(t *testing.T) {
	root := fakeRepo(t)
	venvPy := filepath.Join(root, ".venv", "bin", "python3")
	writeScript(t, venvPy, fakePython)
	pathDir := t.TempDir()
	writeScript(t, filepath.Join(pathDir, "python3"), "exit 0")
	t.Setenv("PATH", pathDir)
	t.Setenv(RequireEnv, "1")

	o := run(t, func(tb testing.TB) string { return Python(tb, "hdrh", "openpyxl") })
	if !o.returned || o.result != venvPy {
		t.Fatalf("Python = %+v, want the venv's %s", o, venvPy)
	}
	o = run(t, func(tb testing.TB) string { return Python(tb, "hdrh", "nosuchmod") })
	if o.returned || !strings.Contains(o.fatal, "nosuchmod") || !strings.Contains(o.fatal, "No module named") {
		t.Fatalf("a module the venv lacks must fail naming it, got %+v", o)
	}
}

func TestPythonFallsBackToPath(t *testing.T) {
	fakeRepo(t)
	pathDir := t.TempDir()
	want := filepath.Join(pathDir, "python3")
	writeScript(t, want, fakePython)
	t.Setenv("PATH", pathDir)
	t.Setenv(RequireEnv, "")
	o := run(t, func(tb testing.TB) string { return Python(tb, "hdrh") })
	if !o.returned || o.result != want {
		t.Fatalf("Python without a venv = %+v, want %s", o, want)
	}
	o = run(t, func(tb testing.TB) string { return Python(tb, "nosuchmod") })
	if o.returned || o.fatal != "" || !strings.Contains(o.skip, "nosuchmod") {
		t.Fatalf("without %s a missing module skips, got %+v", RequireEnv, o)
	}
}

func TestAnsibleFromVenvMustRun(t *testing.T) {
	root := fakeRepo(t)
	t.Setenv("PATH", t.TempDir())
	t.Setenv(RequireEnv, "1")
	good := filepath.Join(root, ".venv", "bin", "ansible-lint")
	writeScript(t, good, `echo "ansible-lint 26.10.1"`)
	o := run(t, func(tb testing.TB) string { return Ansible(tb, "ansible-lint") })
	if !o.returned || o.result != good {
		t.Fatalf("Ansible(ansible-lint) = %+v, want %s", o, good)
	}
	// A venv whose entry point no longer runs (say, its interpreter
	// was removed) counts as missing.
	writeScript(t, filepath.Join(root, ".venv", "bin", "ansible-playbook"), `echo "bad interpreter" >&2; exit 126`)
	o = run(t, func(tb testing.TB) string { return Ansible(tb, "ansible-playbook") })
	if o.returned || !strings.Contains(o.fatal, "bad interpreter") {
		t.Fatalf("a broken ansible-playbook must fail, got %+v", o)
	}
	o = run(t, func(tb testing.TB) string { return Ansible(tb, "ansible-galaxy") })
	if o.returned || !strings.Contains(o.fatal, "ansible-galaxy") {
		t.Fatalf("an absent ansible-galaxy must fail, got %+v", o)
	}
}

func TestJava17TakesOnlyVersion17(t *testing.T) {
	t.Setenv(RequireEnv, "1")
	jdk17 := t.TempDir()
	java17 := filepath.Join(jdk17, "bin", "java")
	writeScript(t, java17, `echo 'openjdk version "17.0.15" 2025-04-15' >&2`)
	jdk25 := t.TempDir()
	java25 := filepath.Join(jdk25, "bin", "java")
	writeScript(t, java25, `echo 'openjdk version "25.0.1" 2025-10-21' >&2`)

	t.Setenv("JAVA17_HOME", jdk25)
	t.Setenv("JAVA_HOME", jdk17)
	o := run(t, Java17)
	if !o.returned || o.result != java17 {
		t.Fatalf("Java17 with JAVA17_HOME=JDK 25, JAVA_HOME=JDK 17: %+v, want %s", o, java17)
	}
	if got := javaMajor(java25); got != "25" {
		t.Fatalf("javaMajor(fake JDK 25) = %q", got)
	}
}

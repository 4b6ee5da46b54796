// Package tools finds the external programs tests drive (tmux, Chromium,
// promtool, Python with hdrh, Ansible, a JDK 17, Maven) and decides what a
// missing one means: on a developer's machine the test skips with the
// command that installs it; in CI, where YCSBCTL_REQUIRE_TOOLS=1, the test
// fails, so a run cannot turn green by skipping what it was meant to check.
package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RequireEnv names the environment variable that turns a missing tool from
// a skip into a failure. CI (.ci/run) sets it to 1.
const RequireEnv = "YCSBCTL_REQUIRE_TOOLS"

// setupHint is how every tool gets installed.
const setupHint = "scripts/ci-setup.sh (make setup) installs it"

// Required reports whether a missing tool fails the test rather than
// skipping it.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Missing ends the test for a missing tool: t.Fatalf when tools are
// required, t.Skip otherwise. what names the tool, hint how to get it.
func Missing(t testing.TB, what, hint string) {
	t.Helper()
	msg := fmt.Sprintf("%s is not available (%s; %s)", what, hint, setupHint)
	if Required() {
		t.Fatalf("%s; %s=1 makes this a failure", msg, RequireEnv)
	}
	t.Skip(msg)
}

// installHints say which Debian package provides a command.
var installHints = map[string]string{
	"tmux":     "apt-get install tmux",
	"chromium": "apt-get install chromium",
	"promtool": "apt-get install prometheus",
	"mvn":      "apt-get install maven",
	"java":     "apt-get install openjdk-17-jdk-headless",
	"python3":  "apt-get install python3 python3-venv",
	"strace":   "apt-get install strace",
	"perf":     "apt-get install linux-perf",
}

func hintFor(name string) string {
	if h, ok := installHints[name]; ok {
		return h
	}
	return "install " + name
}

// Require returns the path of command name on PATH, or ends the test (see
// Missing).
func Require(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, hintFor(name))
		return ""
	}
	return p
}

// Chromium returns a headless-capable Chromium: Debian's chromium, or
// another build of it under its usual names.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, "chromium", hintFor("chromium"))
	return ""
}

// RepoRoot returns the checkout's top directory: the nearest directory at
// or above the working directory that holds go.mod. Test binaries run in
// their package's directory, so this finds the module root.
func RepoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("working directory: %v", err)
	}
	root, err := findRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func findRoot(dir string) (string, error) {
	for d := dir; ; {
		if fi, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && !fi.IsDir() {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod at or above %s", dir)
		}
		d = parent
	}
}

// venvBin is where scripts/ci-setup.sh puts the Python tools.
func venvBin(root string) string { return filepath.Join(root, ".venv", "bin") }

// pythonIn returns the interpreter to use for the checkout at root: the
// checkout's virtual environment when it has one, else python3 on PATH
// (empty if neither exists).
func pythonIn(root string) string {
	if p := filepath.Join(venvBin(root), "python3"); isExecutable(p) {
		return p
	}
	if p, err := exec.LookPath("python3"); err == nil {
		return p
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Python returns the Python interpreter tests should run (the checkout's
// .venv, which scripts/ci-setup.sh fills from scripts/requirements-test.txt,
// else python3 on PATH) after checking it can import every module given;
// otherwise it ends the test (see Missing).
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	py := pythonIn(RepoRoot(t))
	if py == "" {
		Missing(t, "python3", hintFor("python3"))
		return ""
	}
	if len(modules) > 0 {
		out, err := exec.Command(py, "-c", "import "+strings.Join(modules, ", ")).CombinedOutput()
		if err != nil {
			Missing(t, fmt.Sprintf("python modules %s for %s", strings.Join(modules, ", "), py),
				fmt.Sprintf("import failed: %s; the .venv gets them from scripts/requirements-test.txt", lastLine(out)))
			return ""
		}
	}
	return py
}

// Ansible returns the path of an Ansible command (ansible-playbook,
// ansible-lint, ...) from the checkout's .venv, else from PATH, after
// checking that it runs (--version); otherwise it ends the test.
func Ansible(t testing.TB, command string) string {
	t.Helper()
	p := filepath.Join(venvBin(RepoRoot(t)), command)
	if !isExecutable(p) {
		var err error
		if p, err = exec.LookPath(command); err != nil {
			Missing(t, command, "pip package ansible-core / ansible-lint in .venv, from scripts/requirements-test.txt")
			return ""
		}
	}
	if out, err := exec.Command(p, "--version").CombinedOutput(); err != nil {
		Missing(t, command, fmt.Sprintf("%s --version failed: %v: %s", p, err, lastLine(out)))
		return ""
	}
	return p
}

// Java17 returns the java binary of a JDK 17 ($JAVA17_HOME, $JAVA_HOME,
// Debian's /usr/lib/jvm/java-17-openjdk-*, or java on PATH, whichever
// first reports version 17). Cassandra and HBase fail on newer JDKs, so
// any other version counts as missing.
func Java17(t testing.TB) string {
	t.Helper()
	var cands []string
	for _, env := range []string{"JAVA17_HOME", "JAVA_HOME"} {
		if h := os.Getenv(env); h != "" {
			cands = append(cands, filepath.Join(h, "bin", "java"))
		}
	}
	jvms, _ := filepath.Glob("/usr/lib/jvm/java-17-openjdk-*/bin/java")
	cands = append(cands, jvms...)
	if p, err := exec.LookPath("java"); err == nil {
		cands = append(cands, p)
	}
	for _, c := range cands {
		if isExecutable(c) && javaMajor(c) == "17" {
			return c
		}
	}
	Missing(t, "a JDK 17 (java)", hintFor("java"))
	return ""
}

// javaMajor returns the major version `java -version` reports, or "".
func javaMajor(java string) string {
	out, err := exec.Command(java, "-version").CombinedOutput()
	if err != nil {
		return ""
	}
	// First line: openjdk version "17.0.15" 2025-04-15
	_, rest, ok := strings.Cut(string(out), `version "`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	major, _, _ := strings.Cut(v, ".")
	return major
}

// Maven returns the path of mvn, or ends the test.
func Maven(t testing.TB) string {
	t.Helper()
	return Require(t, "mvn")
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

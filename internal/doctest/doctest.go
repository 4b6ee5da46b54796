// Package doctest runs the documentation: every fenced sh block of
// README.md and docs/*.md is a script that some test runs, so the commands
// the documentation shows cannot drift from what ycsbctl does.
//
// A block declares what it needs in a first line of the form
//
//	# needs: NEED[, NEED...] (optional words for the reader)
//
// and the tier that can provide it runs it (see Needs). A block without
// that line needs nothing but Go and a clone of this repository, and the
// unit tests run it. The convention is described for authors at the top of
// docs/testing.md.
package doctest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Needs are the needs a block may declare, each with the test that runs
// blocks that declare it.
var Needs = map[string]string{
	"minutes":   "longer than a unit test may take on a fresh machine: the integration doc test (integration/docs_test.go) runs it",
	"cassandra": "a Cassandra server on 127.0.0.1:9042: the integration doc test starts one (integration/servers.sh) and runs it",
	"hbase":     "an HBase server on 127.0.0.1: the integration doc test starts one and runs it",
	"mongodb":   "a MongoDB-compatible server on 127.0.0.1:27017: the integration doc test starts one and runs it",
	"hosts":     "four hosts 10.0.0.11 to 10.0.0.14 that the control machine reaches over SSH as root, with a Cassandra node on the first three: the cluster test (integration/cluster) runs it with its own addresses",
	"ci":        "the machine CI runs on: the unit doc test checks that the block is what .ci/run runs",
}

// Files are the documents whose blocks are run, relative to the
// repository root.
func Files(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	out := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	sort.Strings(out[1:])
	return out, nil
}

// Block is one fenced sh block.
type Block struct {
	// File is relative to the repository root; Line is the opening
	// fence's.
	File string
	Line int
	// Needs are what the block declared (empty: nothing).
	Needs []string
	// Text is the block's content, its needs line included.
	Text string
}

// Name is FILE:LINE, for messages and subtest names.
func (b Block) Name() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// Has reports whether the block declared need.
func (b Block) Has(need string) bool {
	for _, n := range b.Needs {
		if n == need {
			return true
		}
	}
	return false
}

var (
	fence     = regexp.MustCompile("^(\\s*)(```+)(.*)$")
	needsLine = regexp.MustCompile(`^#\s*needs:\s*([a-z][a-z, ]*?)\s*(\(.*\))?\s*$`)
)

// Blocks returns the sh blocks of the documents, in order. A block whose
// first line mentions needs but does not parse, or names a need that
// Needs does not know, is an error: a typo must not make a block run
// nowhere.
func Blocks(root string) ([]Block, error) {
	files, err := Files(root)
	if err != nil {
		return nil, err
	}
	var out []Block
	var errs []error
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		blocks, err := parse(f, b)
		out = append(out, blocks...)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

func parse(file string, text []byte) ([]Block, error) {
	var out []Block
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var cur *Block
	var body []string
	closer := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		m := fence.FindStringSubmatch(line)
		if cur == nil && closer == "" && m != nil {
			closer = m[2]
			if info := strings.Fields(m[3]); len(info) > 0 && info[0] == "sh" {
				if len(info) > 1 {
					errs = append(errs, fmt.Errorf("%s:%d: a block's needs go in its first line (# needs: ...), not after ```sh", file, n))
				}
				cur = &Block{File: file, Line: n}
			}
			continue
		}
		if closer != "" && m != nil && m[2] == closer && strings.TrimSpace(m[3]) == "" {
			if cur != nil {
				cur.Text = strings.Join(body, "\n") + "\n"
				if err := cur.parseNeeds(); err != nil {
					errs = append(errs, err)
				}
				out = append(out, *cur)
			}
			cur, body, closer = nil, nil, ""
			continue
		}
		if cur != nil {
			body = append(body, line)
		}
	}
	if cur != nil || closer != "" {
		errs = append(errs, fmt.Errorf("%s: a fence is never closed", file))
	}
	return out, errors.Join(append(errs, sc.Err())...)
}

func (b *Block) parseNeeds() error {
	first, _, _ := strings.Cut(b.Text, "\n")
	first = strings.TrimSpace(first)
	if !strings.HasPrefix(first, "#") || !strings.Contains(first, "needs") {
		return nil
	}
	m := needsLine.FindStringSubmatch(first)
	if m == nil {
		return fmt.Errorf("%s: %q: expected # needs: NEED[, NEED...] (words in parentheses)", b.Name(), first)
	}
	for _, n := range strings.Split(m[1], ",") {
		n = strings.TrimSpace(n)
		if _, ok := Needs[n]; !ok {
			var known []string
			for k := range Needs {
				known = append(known, k)
			}
			sort.Strings(known)
			return fmt.Errorf("%s: need %q: expected one of %s", b.Name(), n, strings.Join(known, ", "))
		}
		b.Needs = append(b.Needs, n)
	}
	return nil
}

// Commands returns the block's command lines: comments and blank lines
// dropped, continuation lines joined.
func (b Block) Commands() []string {
	var out []string
	cont := ""
	for _, l := range strings.Split(b.Text, "\n") {
		t := strings.TrimSpace(l)
		if cont == "" && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if strings.HasSuffix(t, "\\") {
			cont += strings.TrimSuffix(t, "\\") + " "
			continue
		}
		out = append(out, strings.Join(strings.Fields(cont+t), " "))
		cont = ""
	}
	return out
}

// Scratch makes a directory that looks like the repository to a block:
// every top-level entry of root is a symbolic link into it, except bin/,
// which holds a copy of binary as bin/ycsbctl (what `make build` leaves),
// so that what a block writes (results, inventories, certificates, a
// rebuilt binary) stays out of the repository. The entries named in
// copies are copied instead (a tool that resolves links would otherwise
// find paths relative to them in the repository). home is an empty HOME.
func Scratch(root, binary, dir string, copies ...string) (home string, err error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		switch e.Name() {
		case "bin", "results", ".servers":
			continue
		}
		from, to := filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())
		if contains(copies, e.Name()) {
			err = copyTree(from, to)
		} else {
			err = os.Symlink(from, to)
		}
		if err != nil {
			return "", err
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		return "", err
	}
	if err := copyFile(binary, filepath.Join(dir, "bin", "ycsbctl")); err != nil {
		return "", err
	}
	home = filepath.Join(dir, ".home")
	return home, os.Mkdir(home, 0o700)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// copyTree copies a directory of regular files.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		return copyFile(path, filepath.Join(to, rel))
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// Run runs script with bash -euo pipefail in dir, stdin empty, env added
// to the environment, and returns its combined output. The script runs in
// a process group of its own, killed when it ends or when timeout passes,
// so that a block's background jobs (agents) never outlive it.
func Run(script, dir string, env []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	path := filepath.Join(dir, ".block.sh")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	// One writer for both: exec calls it from one goroutine at a time.
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
		// Whatever the block left running goes with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %s: %w", timeout, err)
	}
	return out.String(), err
}

// GoEnv returns the Go settings a block's `make build` needs to reuse the
// caller's module and build caches when HOME is replaced.
func GoEnv() ([]string, error) {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 3 {
		return nil, fmt.Errorf("go env: unexpected output %q", out)
	}
	return []string{"GOCACHE=" + v[0], "GOMODCACHE=" + v[1], "GOPATH=" + v[2]}, nil
}

// Lock serializes doc tests on this machine: blocks use the fixed ports
// and paths the documentation shows (agents on 127.0.0.1:7421), which two
// test processes must not share. unlock releases it.
func Lock() (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "ycsbctl-doctest.lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { _ = f.Close() }, nil
}

var (
	mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)
	// make in a code span or at the start of a line of a block.
	makeTarget = regexp.MustCompile("(?m)(?:`|^\\s*)make ([a-z][a-z-]*)")
	makeRule   = regexp.MustCompile(`(?m)^([a-z][a-z-]*):`)
)

// CheckLinks reports relative links of the documents that lead nowhere.
func CheckLinks(root string) error {
	files, err := Files(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return err
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(f), target)); err != nil {
				errs = append(errs, fmt.Errorf("%s: link to %s: %w", f, target, err))
			}
		}
	}
	return errors.Join(errs...)
}

// CheckMakeTargets reports `make TARGET` in the documents for targets the
// Makefile does not have.
func CheckMakeTargets(root string) error {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, m := range makeRule.FindAllStringSubmatch(string(mk), -1) {
		have[m[1]] = true
	}
	files, err := Files(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return err
		}
		for _, m := range makeTarget.FindAllStringSubmatch(string(b), -1) {
			if !have[m[1]] {
				errs = append(errs, fmt.Errorf("%s: make %s: the Makefile has no such target", f, m[1]))
			}
		}
	}
	return errors.Join(errs...)
}

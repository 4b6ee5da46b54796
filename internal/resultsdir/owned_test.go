package resultsdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/spool"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

func touch(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree lists dir's files with their content, the lock file aside.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == LockFile {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func names(m map[string]string) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// notes collects an owner's notices.
type notes []string

func (n *notes) logf(format string, a ...any) { *n = append(*n, fmt.Sprintf(format, a...)) }

func (n notes) has(t *testing.T, want string) {
	t.Helper()
	for _, l := range n {
		if strings.Contains(l, want) {
			return
		}
	}
	t.Fatalf("no notice %q in %q", want, []string(n))
}

// oldBundle writes a finished bundle (with a probe directory, as a
// capacity bundle has) and the user's own file.
func oldBundle(t *testing.T, dir string) map[string]string {
	t.Helper()
	touch(t, filepath.Join(dir, bundle.FileRunJSON), `{"run_id":"old"}`)
	touch(t, filepath.Join(dir, bundle.FileSummary), "old summary")
	touch(t, filepath.Join(dir, bundle.FileReport), "old report")
	touch(t, filepath.Join(dir, bundle.ProbeDir(1), bundle.FileRunJSON), `{"run_id":"old-probe"}`)
	touch(t, filepath.Join(dir, "notes.txt"), "the user's")
	return tree(t, dir)
}

// writeSpool writes a spool holding n interval records.
func writeSpool(t *testing.T, path string, n int) {
	t.Helper()
	w, err := spool.Create(path, []byte(`{"run_id":"new"}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.Add(&pb.IntervalRecord{Seq: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Claim refuses a directory holding a bundle, naming its files (the
// user's and the lock file aside); Release of a directory Claim made
// leaves nothing, nor the lock file of a directory that held nothing.
func TestClaim(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	c, err := Claim(dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if _, err := os.Stat(filepath.Join(root, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Release left the directories it created: %v", err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err = Claim(empty, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatalf("a run that wrote nothing left %v", entries)
	}

	oldBundle(t, dir)
	touch(t, filepath.Join(dir, ".spool-r1"), "x")
	_, err = Claim(dir, false, nil)
	var hb *HoldsBundleError
	if !errors.As(err, &hb) || strings.Join(hb.Found, " ") != ".spool-r1 probe-01 report.html run.json summary.txt" {
		t.Fatalf("want a refusal naming the bundle's 5 entries, got %v", err)
	}
	touch(t, filepath.Join(root, "file"), "x")
	if _, err := Claim(filepath.Join(root, "file"), false, nil); err == nil {
		t.Fatal("a file claimed as a results directory")
	}
}

// --overwrite sets the old bundle aside: when the new run leaves no
// record (it never started) the directory is put back as it was; when it
// measured, the old bundle is gone and the user's file stays.
func TestOverwriteSetsAside(t *testing.T) {
	for _, tc := range []struct {
		name    string
		newRun  func(t *testing.T, dir string)
		restore bool
	}{
		{"never started", func(*testing.T, string) {}, true},
		{"only a spool's header", func(t *testing.T, dir string) { writeSpool(t, filepath.Join(dir, ".spool-new"), 0) }, true},
		{"a search that never probed", func(t *testing.T, dir string) { touch(t, filepath.Join(dir, bundle.FileCapacity), "{}") }, true},
		{"a spool holding an interval", func(t *testing.T, dir string) { writeSpool(t, filepath.Join(dir, ".spool-new"), 1) }, false},
		{"a bundle", func(t *testing.T, dir string) { touch(t, filepath.Join(dir, bundle.FileRunJSON), `{"run_id":"new"}`) }, false},
		{"a probe that measured", func(t *testing.T, dir string) {
			touch(t, filepath.Join(dir, bundle.FileCapacity), "{}")
			touch(t, filepath.Join(dir, bundle.ProbeDir(1), bundle.FileRunJSON), `{"run_id":"new-probe"}`)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r")
			before := oldBundle(t, dir)
			var n notes
			c, err := Claim(dir, true, n.logf)
			if err != nil {
				t.Fatal(err)
			}
			if own, _ := ownEntries(dir); len(own) != 0 {
				t.Fatalf("the old bundle is still in place: %v", own)
			}
			tc.newRun(t, dir)
			after := tree(t, dir)
			restored := c.Release()
			got := tree(t, dir)
			if restored != tc.restore {
				t.Fatalf("restored %v, want %v: %s", restored, tc.restore, names(got))
			}
			if tc.restore {
				if names(got) != names(before) || got[bundle.FileRunJSON] != before[bundle.FileRunJSON] {
					t.Fatalf("not as it was: %s, want %s", names(got), names(before))
				}
				n.has(t, "put back the bundle")
				return
			}
			for k, v := range got {
				if strings.Contains(k, asidePrefix) || strings.Contains(v, `"old`) {
					t.Fatalf("the old bundle outlived its replacement: %s", names(got))
				}
			}
			if got["notes.txt"] != "the user's" {
				t.Fatal("the user's file went with the old bundle")
			}
			if names(got) != names(removeAside(after)) {
				t.Fatalf("the new run's files changed: %s, want %s", names(got), names(after))
			}
		})
	}
}

func removeAside(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !strings.HasPrefix(k, asidePrefix) {
			out[k] = v
		}
	}
	return out
}

// A set-aside bundle whose owner was killed is settled by the next owner
// by the same rule, and said: a half-made set-aside goes back, a complete
// one goes back when the directory holds no newer record and is removed
// when it does; a spool that cannot be read leaves it in place.
func TestDeadOwnersSetAside(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, dir string)
		notice string
		old    bool
	}{
		{"half moved", func(t *testing.T, dir string) {
			touch(t, filepath.Join(dir, stagingPrefix+"x", bundle.FileRunJSON), `{"run_id":"old"}`)
			touch(t, filepath.Join(dir, bundle.FileSummary), "old summary")
		}, "was setting aside", true},
		{"set aside, nothing measured", func(t *testing.T, dir string) {
			touch(t, filepath.Join(dir, asidePrefix+"x", bundle.FileRunJSON), `{"run_id":"old"}`)
			writeSpool(t, filepath.Join(dir, ".spool-new"), 0)
		}, "ended before it measured", true},
		{"set aside, the new run measured", func(t *testing.T, dir string) {
			touch(t, filepath.Join(dir, asidePrefix+"x", bundle.FileRunJSON), `{"run_id":"old"}`)
			writeSpool(t, filepath.Join(dir, ".spool-new"), 2)
		}, "had measured before its process ended", false},
		{"set aside, a spool that cannot be read", func(t *testing.T, dir string) {
			touch(t, filepath.Join(dir, asidePrefix+"x", bundle.FileRunJSON), `{"run_id":"old"}`)
			touch(t, filepath.Join(dir, ".spool-new"), "garbage")
		}, "cannot be read", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			var n notes
			o, err := Open(dir, Options{Logf: n.logf})
			if err != nil {
				t.Fatal(err)
			}
			o.Release()
			n.has(t, tc.notice)
			got := tree(t, dir)
			if tc.old != (got[bundle.FileRunJSON] == `{"run_id":"old"}`) {
				t.Fatalf("old bundle in place %v, want %v: %s", !tc.old, tc.old, names(got))
			}
			if tc.old && strings.Contains(names(got), ".spool-new") {
				t.Fatalf("the spool of a run that never measured stayed beside the old bundle: %s", names(got))
			}
			if tc.name == "set aside, a spool that cannot be read" && !strings.Contains(names(got), asidePrefix+"x") {
				t.Fatalf("the set-aside bundle was removed on an unreadable spool's word: %s", names(got))
			}
		})
	}
}

// The temporary files of a killed writer are removed by the next owner,
// and said; they are not results (a run is not refused for them).
func TestDebrisIsNotAResult(t *testing.T) {
	dir := t.TempDir()
	touch(t, filepath.Join(dir, ".merged.hlog.tmp-0123456789ab"), "half")
	touch(t, filepath.Join(dir, ".telemetry.csv.tmp-ba9876543210"), "half")
	touch(t, filepath.Join(dir, writeCheckPrefix+"123"), "")
	touch(t, filepath.Join(dir, ".notes.tmp-mine"), "the user's")
	var n notes
	c, err := Claim(dir, false, n.logf)
	if err != nil {
		t.Fatalf("debris counted as results: %v", err)
	}
	c.Release()
	n.has(t, "removed 3 temporary files")
	if got := names(tree(t, dir)); got != ".notes.tmp-mine" {
		t.Fatalf("left %s", got)
	}
}

// A capacity record left "running" by a dead search is marked as ended
// without an ending by the next owner.
func TestDeadSearchMarked(t *testing.T) {
	dir := t.TempDir()
	rec := &capacity.Record{Kind: capacity.RecordKind, Status: capacity.StatusRunning, Answer: capacity.Answer{Ended: capacity.EndRunning}}
	if err := rec.Write(dir); err != nil {
		t.Fatal(err)
	}
	var n notes
	o, err := Open(dir, Options{Logf: n.logf})
	if err != nil {
		t.Fatal(err)
	}
	o.Release()
	n.has(t, "marked aborted, exit code unknown")
	got, err := capacity.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != capacity.StatusAborted || got.ExitCode != bundle.RecoveredExitCode || got.EndedAt.IsZero() || got.Answer.Ended != capacity.EndInterrupted {
		b, _ := json.Marshal(got)
		t.Fatalf("not marked: %s", b)
	}
}

// CheckOutput refuses, before anything is written, an output that is a
// bundle's record file by name, through a symbolic link, or (for the
// bundles the command uses) through a hard link; reports and files
// elsewhere are allowed.
func TestCheckOutput(t *testing.T) {
	root := t.TempDir()
	b := filepath.Join(root, "b")
	oldBundle(t, b)
	touch(t, filepath.Join(b, bundle.FileHlog), "hlog")
	plain := filepath.Join(root, "plain")
	touch(t, filepath.Join(plain, "x"), "")
	link := filepath.Join(root, "latest.json")
	if err := os.Symlink(filepath.Join(b, bundle.FileRunJSON), link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(root, "copy.hlog")
	if err := os.Link(filepath.Join(b, bundle.FileHlog), hard); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path   string
		refuse bool
	}{
		{filepath.Join(b, bundle.FileRunJSON), true},
		{filepath.Join(b, bundle.FileSummary), true},
		{filepath.Join(b, bundle.FileHlog), true},
		{filepath.Join(b, bundle.FileCapacity), true},
		{filepath.Join(b, ".spool-x"), true},
		{filepath.Join(b, LockFile), true},
		{filepath.Join(b, bundle.SuiteState), true},
		{link, true},
		{hard, true},
		{filepath.Join(b, bundle.FileReport), false},
		{filepath.Join(b, "other.html"), false},
		{filepath.Join(plain, bundle.FileRunJSON), false},
		{filepath.Join(root, "page.html"), false},
	} {
		err := CheckOutput("-o", tc.path, b)
		if (err != nil) != tc.refuse {
			t.Errorf("%s: refused %v, want %v (%v)", tc.path, err != nil, tc.refuse, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "-o "+tc.path+":") {
			t.Errorf("%s: the refusal names neither the flag nor the file: %v", tc.path, err)
		}
	}
}

// bundle names a suite's record files for CheckOutput; package suite
// names them for the suite.
func TestSuiteRecordNames(t *testing.T) {
	if bundle.SuiteState != suite.FileState || bundle.SuiteSource != suite.FileSource {
		t.Fatalf("bundle's %s %s, suite's %s %s", bundle.SuiteState, bundle.SuiteSource, suite.FileState, suite.FileSource)
	}
}

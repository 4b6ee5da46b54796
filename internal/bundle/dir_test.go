package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Claim refuses a directory holding a bundle, replaces only the bundle's
// own files with overwrite, and Release takes back only what it created.
func TestClaim(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	c, err := Claim(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if _, err := os.Stat(filepath.Join(root, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Release left the directories it created: %v", err)
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FileRunJSON, FileReport, ".spool-r1", ".run.json.tmp-ab12", "notes.txt"} {
		touch(t, filepath.Join(dir, f))
	}
	_, err = Claim(dir, false)
	var hb *HoldsBundleError
	if !errors.As(err, &hb) || len(hb.Found) != 4 {
		t.Fatalf("want a refusal naming 4 files, got %v", err)
	}
	c, err = Claim(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "notes.txt" {
		t.Fatalf("after --overwrite: %v; want only the user's notes.txt", entries)
	}
	touch(t, filepath.Join(root, "file"))
	if _, err := Claim(filepath.Join(root, "file"), false); err == nil {
		t.Fatal("a file claimed as a results directory")
	}
}

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodesPage keeps docs/exit-codes.md's tables the ones the
// exitcode and run tables render (YCSBCTL_UPDATE_DOCS=1 rewrites them).
func TestExitCodesPage(t *testing.T) {
	const begin, end = "<!-- exit-codes: begin", "<!-- exit-codes: end -->"
	path := filepath.Join("..", "..", "docs", "exit-codes.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i, j := strings.Index(page, begin), strings.Index(page, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q markers", path, begin, end)
	}
	i += strings.Index(page[i:], "\n") + 1
	want := exitCodesMarkdown()
	if page[i:j] == want {
		return
	}
	if os.Getenv("YCSBCTL_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(page[:i]+want+page[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date (YCSBCTL_UPDATE_DOCS=1 go test ./internal/cli -run TestExitCodesPage rewrites it):\n--- page\n%s--- tables\n%s", path, page[i:j], want)
}

package workloads

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// The built-in suite files (see 'ycsbctl suites'): whole comparison
// studies that `ycsbctl suite NAME` runs.
//
//go:embed suites/*.yaml
var suiteFiles embed.FS

// Suite is one built-in suite file.
type Suite struct {
	Name        string
	Description string
	Text        string
}

// LookupSuite returns a built-in suite by name (without .yaml).
func LookupSuite(name string) (Suite, bool) {
	if name == "" || strings.ContainsAny(name, "/\\") {
		return Suite{}, false
	}
	b, err := suiteFiles.ReadFile(path.Join("suites", name+".yaml"))
	if err != nil {
		return Suite{}, false
	}
	return Suite{Name: name, Description: describe(string(b)), Text: string(b)}, true
}

// Suites returns every built-in suite, sorted by name.
func Suites() []Suite {
	entries, _ := fs.ReadDir(suiteFiles, "suites")
	var out []Suite
	for _, e := range entries {
		if s, ok := LookupSuite(strings.TrimSuffix(e.Name(), ".yaml")); ok {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

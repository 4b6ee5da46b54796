// Package workloads embeds the built-in workload property files: YCSB's
// workloada..workloadf, workloadg, and the scenarios of the 2014
// MongoDB/Cassandra/HBase/SequoiaDB comparison and of the HBase
// PerformanceEvaluation study. `-P name` finds them when no
// file of that name exists on disk.
package workloads

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed workload? comparison2014-* hbase-pe-*
var files embed.FS

// Workload is one built-in file.
type Workload struct {
	Name        string
	Description string
	Text        string
}

// Lookup returns a built-in workload by name.
func Lookup(name string) (Workload, bool) {
	b, err := files.ReadFile(name)
	if err != nil || strings.ContainsAny(name, "/\\") {
		return Workload{}, false
	}
	return Workload{Name: name, Description: describe(string(b)), Text: string(b)}, true
}

// List returns every built-in workload, sorted by name.
func List() []Workload {
	entries, _ := fs.ReadDir(files, ".")
	out := make([]Workload, 0, len(entries))
	for _, e := range entries {
		if w, ok := Lookup(e.Name()); ok {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// describe takes the first comment line as the one-line description.
func describe(text string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			return strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	return ""
}

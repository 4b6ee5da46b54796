package workbook

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/environ"
)

// EnvironmentHeader are the Environment sheet's columns. The sheet is a
// study's appendix, one fact a row: Section says what the row describes —
//
//	ycsbctl   the version and each command the suite was run with
//	host      a load-generating host (Subject: its address)
//	database  the server's product, version and who described it
//	topology  a server of the database (Subject: its address; Property: its role)
//	partition a region of the benchmark table (Subject: its name)
//	schema    the benchmark schema as created (Subject: the steps it held for)
var EnvironmentHeader = []string{"Section", "Database", "Subject", "Property", "Value"}

// EnvironmentRows lists what the suite's bundles record about what they
// ran on: hosts once each, each database's description as its first step
// recorded it, and its schema each time it changed.
func (d *Data) EnvironmentRows() [][]Cell {
	var rows [][]Cell
	add := func(section, db, subject, prop, value string) {
		rows = append(rows, []Cell{section, db, subject, prop, value})
	}
	seen := map[string]bool{}
	once := func(key string) bool {
		if seen[key] {
			return false
		}
		seen[key] = true
		return true
	}
	for _, s := range d.Steps {
		e := s.Bundle.Run.Environment
		if e == nil {
			continue
		}
		if e.Version != "" && once("version "+e.Version) {
			add("ycsbctl", "", "", "version", e.Version)
		}
		if cmd := strings.Join(e.Command, " "); cmd != "" && once("command "+cmd) {
			add("ycsbctl", "", "", "command", cmd)
		}
	}
	for _, s := range d.Steps {
		e := s.Bundle.Run.Environment
		if e == nil {
			continue
		}
		for _, h := range e.Hosts {
			if !once("host " + h.Address + " " + h.Hostname) {
				continue
			}
			for _, kv := range hostFacts(h) {
				add("host", "", h.Address, kv[0], kv[1])
			}
		}
	}
	lastSchema := map[string]string{}
	schemaRow := map[string]int{}
	for _, s := range d.Steps {
		e := s.Bundle.Run.Environment
		if e == nil || e.Database == nil {
			continue
		}
		db, name := e.Database, s.State.Database
		if once("database " + name) {
			add("database", name, db.Adapter, "product", db.Product)
			add("database", name, db.Adapter, "version", db.Version)
			add("database", name, db.Adapter, "described by", db.DescribedBy)
			if db.Error != "" {
				add("database", name, db.Adapter, "error", db.Error)
			}
			for _, n := range db.Nodes {
				add("topology", name, n.Address, n.Role, nodeText(n))
			}
			for _, p := range db.Partitions {
				add("partition", name, p.Name, "range", fmt.Sprintf("[%s, %s) on %s", p.Start, p.End, p.Node))
			}
		}
		// The schema as each step found it: a new block when it changed
		// (a sweep over a schema option), else the step joins the block.
		text := schemaText(db.Schema)
		if text == lastSchema[name] && text != "" {
			for i := schemaRow[name]; i < len(rows) && rows[i][0] == "schema" && rows[i][1] == name; i++ {
				rows[i][2] = rows[i][2].(string) + ", " + s.Label()
			}
			continue
		}
		lastSchema[name] = text
		schemaRow[name] = len(rows)
		for _, st := range db.Schema {
			add("schema", name, s.Label(), st.Name, st.Value)
		}
	}
	return rows
}

func hostFacts(h environ.Host) [][2]string {
	facts := [][2]string{
		{"hostname", h.Hostname},
		{"cores", countText(h.Cores)},
		{"cpu model", h.CPUModel},
		{"memory", fmtBytes(h.MemoryBytes)},
		{"kernel", h.Kernel},
		{"clock source", h.ClockSource},
		{"file-descriptor limit", limitText(h.FDLimit)},
		{"os/arch", h.OS + "/" + h.Arch},
	}
	if len(h.Errors) > 0 {
		facts = append(facts, [2]string{"not read", strings.Join(h.Errors, "; ")})
	}
	return facts
}

// countText is a count that is never 0 when read (cores, a descriptor
// limit), empty when it was not: unknown, not none.
func countText(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func limitText(n uint64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(n, 10)
}

func fmtBytes(n int64) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f GiB (%d bytes)", float64(n)/(1<<30), n)
}

func nodeText(n environ.Node) string {
	var parts []string
	for _, kv := range [][2]string{{"status", n.Status}, {"datacenter", n.DataCenter}, {"rack", n.Rack}, {"version", n.Version}, {"", n.Detail}} {
		if kv[1] == "" {
			continue
		}
		if kv[0] == "" {
			parts = append(parts, kv[1])
		} else {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	if len(n.Tokens) > 0 {
		parts = append(parts, fmt.Sprintf("%d token(s): %s", len(n.Tokens), strings.Join(n.Tokens, " ")))
	}
	return strings.Join(parts, "; ")
}

func schemaText(s []environ.Setting) string {
	var b strings.Builder
	for _, st := range s {
		b.WriteString(st.Name + "=" + st.Value + "\n")
	}
	return b.String()
}

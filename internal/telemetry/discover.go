package telemetry

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// Pids is ycsbctl.telemetry.pids: which processes are the database
// server's on this host, when the adapter's knowledge is not enough (a
// server run under another name, a process the adapter cannot know).
type Pids struct {
	// File is a pid file, read again at every look (a restarted server
	// writes a new pid).
	File string
	// List is explicit pids.
	List []int
	// Pattern matches a process name or command line.
	Pattern *regexp.Regexp
}

// Set reports whether the user named the processes.
func (p Pids) Set() bool { return p.File != "" || len(p.List) > 0 || p.Pattern != nil }

func (p Pids) String() string {
	switch {
	case p.File != "":
		return "pid file " + p.File
	case len(p.List) > 0:
		s := make([]string, len(p.List))
		for i, v := range p.List {
			s[i] = strconv.Itoa(v)
		}
		return "pids " + strings.Join(s, ",")
	case p.Pattern != nil:
		return "processes matching " + p.Pattern.String()
	}
	return ""
}

// ParsePids reads ycsbctl.telemetry.pids: a value with a slash is a pid
// file, a comma list of numbers is pids, anything else a regular
// expression matched against each process' name and command line.
func ParsePids(v string) (Pids, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return Pids{}, nil
	case strings.Contains(v, "/"):
		return Pids{File: v}, nil
	}
	var list []int
	numeric := true
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			numeric = false
			break
		}
		if n <= 0 {
			return Pids{}, fmt.Errorf("pid %d is not a process id", n)
		}
		list = append(list, n)
	}
	if numeric {
		return Pids{List: list}, nil
	}
	re, err := regexp.Compile(v)
	if err != nil {
		return Pids{}, fmt.Errorf("not a pid file (no slash), pids or a valid regular expression: %w", err)
	}
	return Pids{Pattern: re}, nil
}

// found is one database server process found on the host.
type found struct {
	pid  int
	role string
}

// finder looks for the database server's processes on the host.
type finder struct {
	fs       procfs.FS
	self     int
	patterns []adapters.ServerProcess
	user     Pids
	// listen are the patterns' endpoints on this host, by role
	// (endpointsByRole): there only the process listening is the server.
	listen map[string][]endpoint
}

// what says what the finder looks for, for a note.
func (f *finder) what() string {
	if f.user.Set() {
		return f.user.String() + " (" + PropPids + ")"
	}
	var parts []string
	for _, p := range f.patterns {
		part := "a process named " + p.Name
		if p.MainClass != "" {
			part = "a JVM running " + p.MainClass
		}
		if eps := f.listen[p.Role]; len(eps) > 0 {
			at := make([]string, len(eps))
			for i, e := range eps {
				at[i] = e.String()
			}
			part += " listening at " + strings.Join(at, " or ")
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " or ")
}

// look lists the matching processes, by pid. Never the load generator
// itself.
func (f *finder) look() ([]found, error) {
	var out []found
	if f.user.File != "" {
		b, err := os.ReadFile(f.user.File)
		if err != nil {
			return nil, fmt.Errorf("pid file: %w", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("pid file %s holds %q, not a pid", f.user.File, strings.TrimSpace(string(b)))
		}
		if _, err := f.fs.Proc(pid); err == nil {
			out = append(out, found{pid: pid, role: f.comm(pid)})
		}
		return out, nil
	}
	if len(f.user.List) > 0 {
		for _, pid := range f.user.List {
			if _, err := f.fs.Proc(pid); err == nil && pid != f.self {
				out = append(out, found{pid: pid, role: f.comm(pid)})
			}
		}
		return out, nil
	}
	if f.user.Pattern == nil && len(f.patterns) == 0 {
		return nil, nil
	}
	procs, err := f.fs.AllProcs()
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		if p.PID == f.self {
			continue
		}
		comm, err := p.Comm()
		if err != nil {
			continue
		}
		if role, ok := f.match(p, comm); ok {
			out = append(out, found{pid: p.PID, role: role})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	if f.user.Pattern == nil {
		out = narrow(f.fs, out, f.listen)
	}
	return out, nil
}

func (f *finder) comm(pid int) string {
	if p, err := f.fs.Proc(pid); err == nil {
		if c, err := p.Comm(); err == nil {
			return c
		}
	}
	return "process"
}

// match decides one process. A JVM is recognised by its main class, the
// argument that is exactly the class name (not a class path or a -D value
// that mentions it).
func (f *finder) match(p procfs.Proc, comm string) (string, bool) {
	if f.user.Pattern != nil {
		if f.user.Pattern.MatchString(comm) {
			return comm, true
		}
		if args, err := p.CmdLine(); err == nil && len(args) > 0 && f.user.Pattern.MatchString(strings.Join(args, " ")) {
			return comm, true
		}
		return "", false
	}
	var args []string
	read := false
	for _, sp := range f.patterns {
		if sp.Name != "" && sp.Name == comm {
			return sp.Role, true
		}
		if sp.MainClass == "" || comm != "java" {
			continue
		}
		if !read {
			args, _ = p.CmdLine()
			read = true
		}
		for _, a := range args {
			if a == sp.MainClass {
				return sp.Role, true
			}
		}
	}
	return "", false
}

// describeFound is the note naming what was found.
func describeFound(host string, fs []found) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s (pid %d)", f.role, f.pid)
	}
	return fmt.Sprintf("telemetry: database processes on %s: %s", host, strings.Join(parts, ", "))
}

func pidsOf(fs []found) []int {
	out := make([]int, len(fs))
	for i, f := range fs {
		out[i] = f.pid
	}
	return out
}

func rolesOf(fs []found) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range fs {
		if !seen[f.role] {
			seen[f.role] = true
			out = append(out, f.role)
		}
	}
	return out
}

func samePids(a, b []found) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].pid != b[i].pid {
			return false
		}
	}
	return true
}

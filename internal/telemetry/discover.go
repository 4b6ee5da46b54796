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
	// why says what a process left out is to the load generator.
	why string
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
// itself; a name or pattern match never counts its ancestors either.
func (f *finder) look() ([]found, error) {
	out, _, err := f.lookAll()
	return out, err
}

// lookAll is look, and the processes that matched but were left out as
// the load generator's ancestors (its kin), for the note that says
// what was found.
func (f *finder) lookAll() (out, kin []found, err error) {
	if f.user.File != "" {
		b, err := os.ReadFile(f.user.File)
		if err != nil {
			return nil, nil, fmt.Errorf("pid file: %w", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return nil, nil, fmt.Errorf("pid file %s holds %q, not a pid", f.user.File, strings.TrimSpace(string(b)))
		}
		if _, err := f.fs.Proc(pid); err == nil {
			out = append(out, found{pid: pid, role: f.comm(pid)})
		}
		return out, nil, nil
	}
	if len(f.user.List) > 0 {
		for _, pid := range f.user.List {
			if _, err := f.fs.Proc(pid); err == nil && pid != f.self {
				out = append(out, found{pid: pid, role: f.comm(pid)})
			}
		}
		return out, nil, nil
	}
	if f.user.Pattern == nil && len(f.patterns) == 0 {
		return nil, nil, nil
	}
	procs, err := f.fs.AllProcs()
	if err != nil {
		return nil, nil, err
	}
	ancestors := f.ancestors()
	for _, p := range procs {
		if p.PID == f.self {
			continue
		}
		comm, err := p.Comm()
		if err != nil {
			continue
		}
		role, ok := f.match(p, comm)
		switch {
		case !ok:
		case ancestors[p.PID] != "":
			kin = append(kin, found{pid: p.PID, role: comm, why: ancestors[p.PID]})
		default:
			out = append(out, found{pid: p.PID, role: role})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	sort.Slice(kin, func(i, j int) bool { return kin[i].pid < kin[j].pid })
	if f.user.Pattern == nil {
		out = narrow(f.fs, out, f.listen)
	}
	return out, kin, nil
}

// maxAncestry bounds a walk up the process tree (a loop in what /proc
// says, a tree being rebuilt under the walk).
const maxAncestry = 64

// ancestors are the processes the load generator runs under: its parent
// (a timeout, sudo, a shell whose command line holds the pattern), its
// parent's, and so on up to the first process, each with what it is to
// the load generator. They are never the database: a name or pattern
// that matches them (`timeout 60 ycsbctl run ... -p
// ycsbctl.telemetry.pids=mongod` holds "mongod" in the timeout's command
// line) would count the wrapper as the server. The process group and
// session are not left out: a script without job control starts the
// database and the load generator in one group, and the database is
// what it is. Nor are the load generator's children (it starts none; a
// harness that is the load generator and starts a stand-in server, as
// the tests do, has its server counted).
func (f *finder) ancestors() map[int]string {
	out := map[int]string{}
	pid := f.self
	for i := 0; i < maxAncestry; i++ {
		ppid := f.parent(pid)
		if ppid <= 0 || out[ppid] != "" || ppid == f.self {
			break
		}
		if i == 0 {
			out[ppid] = "the load generator's parent"
		} else {
			out[ppid] = "an ancestor of the load generator"
		}
		pid = ppid
	}
	return out
}

// parent is pid's parent, 0 when it cannot be read.
func (f *finder) parent(pid int) int {
	p, err := f.fs.Proc(pid)
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return st.PPID
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

// describeFound is the note naming what was found (each process' name
// and pid), and what matched but was left out as the load generator's
// kin.
func describeFound(host string, fs, kin []found) string {
	s := fmt.Sprintf("telemetry: database processes on %s: %s", host, listFound(fs))
	if len(kin) > 0 {
		s += "; not counted, though they match: " + listFound(kin)
	}
	return s
}

func listFound(fs []found) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s (pid %d)", f.role, f.pid)
		if f.why != "" {
			parts[i] = fmt.Sprintf("%s (pid %d, %s)", f.role, f.pid, f.why)
		}
	}
	return strings.Join(parts, ", ")
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

// Package suite runs campaigns: a YAML file names databases and an ordered
// list of load, run and pause steps (with sweeps over any property), the
// way the published comparisons were run by hand. This package parses and
// validates the file (errors name the line and key), expands it into a
// typed plan whose every step holds its run specification, parsed once
// (spec.Spec), and runs the plan through an injected executor that hands
// each specification to a run session, recording each step's outcome and
// the fingerprint of its configuration so that an interrupted suite
// resumes where it stopped, and only with the same configuration.
package suite

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/ycsbctl/ycsbctl/internal/capacity"
)

// File is a parsed suite file.
type File struct {
	Name        string
	Description string
	// Properties apply to every step of every database.
	Properties []Prop
	Databases  []Database
	// Agents, when set, run every step distributed over these agents.
	Agents []string
	Steps  []Step
	// Dir is the directory of the file, for workload paths relative to it
	// (empty for built-in suites).
	Dir string
	// Source is the file's text, kept with the results.
	Source []byte
	// Path is the name the file was parsed under, for error messages.
	Path string
}

// Prop is one property, in file order.
type Prop struct {
	Key, Value string
	Line       int
}

// Database is one entry of databases.
type Database struct {
	DB string
	// Name tells two configurations of one adapter apart; it defaults to
	// DB and names the results directory.
	Name       string
	Properties []Prop
	Line       int
}

// Kind is what a step does.
type Kind string

// Step kinds. Drop, Init and Warmup appear only in plans: a load step
// drops and creates the schema first, and a step with warmup_workload
// warms up with a separate run.
const (
	KindLoad   Kind = "load"
	KindRun    Kind = "run"
	KindPause  Kind = "pause"
	KindWarmup Kind = "warmup"
	// KindCapacity searches for the highest target that meets latency
	// objectives (internal/capacity): one capacity bundle per item.
	KindCapacity Kind = "capacity"
)

// Step is one entry of steps.
type Step struct {
	Kind Kind
	// Workload is a built-in workload name or a file path.
	Workload   string
	Name       string
	Properties []Prop
	// PerDatabase are properties for one database of the file only
	// (per_database: {hbase: {...}}), for settings that mean something
	// to one adapter or one configuration.
	PerDatabase []DatabaseProps
	// Sweeps are the step's swept properties in file order: threads,
	// target and recordcount, then sweep's keys. A single value is a
	// setting, not a sweep.
	Sweeps []Sweep
	// Warmup is a time (WarmupTime) or an operation count (WarmupOps).
	WarmupTime time.Duration
	WarmupOps  int64
	// Duration is maxexecutiontime; Operations is operationcount.
	Duration   time.Duration
	Operations int64
	// WarmupWorkload warms up with a different mix than the step measures.
	WarmupWorkload string
	// Pause is how long a pause step sleeps.
	Pause time.Duration
	// ThreadsFromScan runs with the thread count the suite's last
	// thread scan found for the database ("threads: scan").
	ThreadsFromScan bool
	// KeepSchema skips the drop and create before a load step.
	KeepSchema bool
	// ThreadScan, when set, doubles threads from 1 until throughput grows
	// less than ThreadScan.MinGain.
	ThreadScan *ThreadScan
	// Capacity is a capacity step's search settings.
	Capacity *capacity.Settings
	Line     int
}

// Sweep is one swept property of a step.
type Sweep struct {
	// Key names the sweep in bundle directories, sheets and charts:
	// threads, target, recordcount, or the property itself.
	Key string
	// Property is the property each value sets.
	Property string
	Values   []string
	Line     int
}

// Swept reports whether the sweep has several values.
func (s Sweep) Swept() bool { return len(s.Values) > 1 }

// DatabaseProps are a step's properties for one database, named by its
// name in the file or by its adapter.
type DatabaseProps struct {
	Database   string
	Properties []Prop
	Line       int
}

// Sweep returns the step's sweep of property, if any.
func (s *Step) Sweep(property string) (Sweep, bool) {
	for _, sw := range s.Sweeps {
		if sw.Property == property {
			return sw, true
		}
	}
	return Sweep{}, false
}

// ThreadScan configures a thread-scaling search.
type ThreadScan struct {
	// MinGain is the smallest relative throughput growth (0.1 = 10 %) for
	// which doubling the threads still counts as growing.
	MinGain float64
	// Max is the largest thread count tried.
	Max int
}

// Default thread-scan settings.
const (
	DefaultScanGain = 0.10
	DefaultScanMax  = 256
)

// Error is a problem in a suite file, with the line it was found on.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "key %q: ", e.Key)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// WorkloadExists reports whether a workload name resolves (a built-in or
// a readable file); the parser uses it to refuse unknown workloads before
// anything runs.
type WorkloadExists func(name string) bool

// Parse reads a suite file. name is used in error messages and to resolve
// relative workload paths; exists checks workload names (nil accepts all).
func Parse(name string, src []byte, exists WorkloadExists) (*File, error) {
	p := &parser{file: name}
	f, err := p.parse(src)
	if err != nil {
		return nil, err
	}
	f.Source = src
	f.Path = name
	if name != "" && !strings.HasPrefix(name, "builtin:") {
		f.Dir = filepath.Dir(name)
	}
	if exists != nil {
		for _, s := range f.Steps {
			for key, w := range map[string]string{string(s.Kind): s.Workload, "warmup_workload": s.WarmupWorkload} {
				if w != "" && !exists(f.ResolveWorkload(w)) {
					return nil, &Error{File: name, Line: s.Line, Key: key, Msg: fmt.Sprintf("workload %q: no such file and no built-in workload of that name (see 'ycsbctl workloads')", w)}
				}
			}
		}
	}
	return f, nil
}

// ResolveWorkload returns the path to pass to -P: a relative path that
// exists next to the suite file is taken from there, anything else as
// given (a built-in name, or a path relative to the working directory).
func (f *File) ResolveWorkload(w string) string {
	if f.Dir == "" || filepath.IsAbs(w) || !strings.ContainsAny(w, "/\\.") {
		return w
	}
	return filepath.Join(f.Dir, w)
}

type parser struct{ file string }

func (p *parser) errf(n *yaml.Node, key, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: p.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) parse(src []byte) (*File, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		return nil, &Error{File: p.file, Line: yamlErrLine(err), Msg: "not valid YAML: " + err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: p.file, Line: 1, Msg: "the file is empty; expected a mapping with name, databases and steps"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root, "", "expected a mapping with name, databases and steps")
	}
	f := &File{}
	seen := map[string]*yaml.Node{}
	err := p.each(root, "", []string{"name", "description", "properties", "databases", "agents", "steps"}, func(key string, k, v *yaml.Node) error {
		seen[key] = k
		var err error
		switch key {
		case "name":
			f.Name, err = p.str(key, v)
			if err == nil && !validName(f.Name) {
				err = p.errf(v, key, "%q: expected letters, digits, '-', '_' or '.' (it names the results directory)", f.Name)
			}
		case "description":
			f.Description, err = p.str(key, v)
		case "properties":
			f.Properties, err = p.props(key, v)
		case "agents":
			f.Agents, err = p.strList(key, v)
		case "databases":
			f.Databases, err = p.databases(v)
		case "steps":
			f.Steps, err = p.steps(v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if f.Name == "" {
		return nil, p.errf(root, "name", "missing: every suite needs a name (it names the results directory)")
	}
	if len(f.Databases) == 0 {
		return nil, p.errf(orNode(seen["databases"], root), "databases", "expected at least one database (- db: NAME)")
	}
	if len(f.Steps) == 0 {
		return nil, p.errf(orNode(seen["steps"], root), "steps", "expected at least one step (load, run or pause)")
	}
	names := map[string]int{}
	for _, d := range f.Databases {
		if prev, dup := names[d.Name]; dup {
			return nil, &Error{File: p.file, Line: d.Line, Key: "name", Msg: fmt.Sprintf("database %q is listed twice (first on line %d); give one a different name:", d.Name, prev)}
		}
		names[d.Name] = d.Line
	}
	measured, scanned := false, false
	for _, s := range f.Steps {
		if s.Kind != KindPause {
			measured = true
		}
		if s.ThreadsFromScan && !scanned {
			return nil, &Error{File: p.file, Line: s.Line, Key: "threads", Msg: "scan: expected an earlier run step with threadscan to take the thread count from"}
		}
		if s.ThreadScan != nil {
			scanned = true
		}
	}
	if !measured {
		return nil, p.errf(seen["steps"], "steps", "only pauses: expected at least one load or run step")
	}
	return f, nil
}

func orNode(a, b *yaml.Node) *yaml.Node {
	if a != nil {
		return a
	}
	return b
}

func yamlErrLine(err error) int {
	// yaml.v3 errors read "yaml: line N: ..."
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		rest := s[i+5:]
		j := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if j > 0 {
			n, _ := strconv.Atoi(rest[:j])
			return n
		}
	}
	return 0
}

func validName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// each walks a mapping, refusing unknown and repeated keys.
func (p *parser) each(m *yaml.Node, where string, allowed []string, fn func(key string, k, v *yaml.Node) error) error {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := k.Value
		if !ok[key] {
			in := ""
			if where != "" {
				in = " in " + where
			}
			return p.errf(k, key, "unknown key%s (expected one of: %s)", in, strings.Join(allowed, ", "))
		}
		if seen[key] {
			return p.errf(k, key, "given twice")
		}
		seen[key] = true
		if err := fn(key, k, v); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) str(key string, v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return "", p.errf(v, key, "expected a string")
	}
	return v.Value, nil
}

func (p *parser) strList(key string, v *yaml.Node) ([]string, error) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil, nil
	}
	if v.Kind == yaml.ScalarNode {
		// "a:1,b:2" as one string, like --agents.
		var out []string
		for _, s := range strings.Split(v.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, p.errf(v, key, "expected a list of strings")
	}
	var out []string
	for _, e := range v.Content {
		s, err := p.str(key, e)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// props reads a mapping of property names to scalar values.
func (p *parser) props(key string, v *yaml.Node) ([]Prop, error) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, p.errf(v, key, "expected a mapping of property names to values, e.g. {recordcount: 1000}")
	}
	var out []Prop
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if val.Kind != yaml.ScalarNode {
			return nil, p.errf(k, key+"."+k.Value, "expected a single value (string or number)")
		}
		if k.Value == "" {
			return nil, p.errf(k, key, "empty property name")
		}
		if seen[k.Value] {
			return nil, p.errf(k, key+"."+k.Value, "given twice")
		}
		seen[k.Value] = true
		out = append(out, Prop{Key: k.Value, Value: val.Value, Line: k.Line})
	}
	return out, nil
}

func (p *parser) databases(v *yaml.Node) ([]Database, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, p.errf(v, "databases", "expected a list of entries like '- db: cassandra'")
	}
	var out []Database
	for _, e := range v.Content {
		if e.Kind == yaml.ScalarNode {
			// "- embedded" is short for "- db: embedded".
			out = append(out, Database{DB: e.Value, Name: e.Value, Line: e.Line})
			continue
		}
		if e.Kind != yaml.MappingNode {
			return nil, p.errf(e, "databases", "expected an entry like '- db: cassandra'")
		}
		d := Database{Line: e.Line}
		err := p.each(e, "a database", []string{"db", "name", "properties"}, func(key string, k, val *yaml.Node) error {
			var err error
			switch key {
			case "db":
				d.DB, err = p.str(key, val)
			case "name":
				d.Name, err = p.str(key, val)
				if err == nil && !validName(d.Name) {
					err = p.errf(val, key, "%q: expected letters, digits, '-', '_' or '.' (it names a results directory)", d.Name)
				}
			case "properties":
				d.Properties, err = p.props(key, val)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if d.DB == "" {
			return nil, p.errf(e, "db", "missing: each database entry needs db: ADAPTER")
		}
		if d.Name == "" {
			d.Name = d.DB
		}
		out = append(out, d)
	}
	return out, nil
}

var stepKeys = []string{"load", "run", "pause", "capacity", "name", "properties", "per_database", "threads", "target", "recordcount", "sweep",
	"warmup", "duration", "operations", "warmup_workload", "schema", "threadscan",
	"slo", "max_error_rate", "precision", "probe", "start", "max", "max_probes"}

// capacityKeys are a capacity step's own keys, `ycsbctl capacity`'s flags
// (warmup, shared with run steps, is each probe's warm-up there).
var capacityKeys = map[string]string{"slo": capacity.SettingSLO, "max_error_rate": capacity.SettingMaxErrorRate,
	"precision": capacity.SettingPrecision, "probe": capacity.SettingProbe, "start": capacity.SettingStart,
	"max": capacity.SettingMax, "max_probes": capacity.SettingMaxProbes, "warmup": capacity.SettingWarmup}

// sweepable keys accept a list.
var sweepable = map[string]bool{"threads": true, "target": true, "recordcount": true}

// Properties the step keys threads, target and recordcount set.
const (
	PropThreads     = "threadcount"
	PropTarget      = "target"
	PropRecordCount = "recordcount"
)

// sweepKeys maps the step keys that sweep to their properties.
var sweepKeys = map[string]string{"threads": PropThreads, "target": PropTarget, "recordcount": PropRecordCount}

func (p *parser) steps(v *yaml.Node) ([]Step, error) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, p.errf(v, "steps", "expected a list of steps (- load: W, - run: W, - pause: 5s)")
	}
	var out []Step
	for _, e := range v.Content {
		s, err := p.step(e)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) step(e *yaml.Node) (Step, error) {
	s := Step{Line: e.Line}
	if e.Kind != yaml.MappingNode {
		return s, p.errf(e, "steps", "expected a step mapping (load: W, run: W, capacity: W or pause: DURATION)")
	}
	keyNodes := map[string]*yaml.Node{}
	capIn := capacity.DefaultInput()
	err := p.each(e, "a step", stepKeys, func(key string, k, v *yaml.Node) error {
		keyNodes[key] = k
		if v.Kind == yaml.SequenceNode && !sweepable[key] && key != "slo" {
			return p.errf(k, key, "cannot be swept: threads, target and recordcount accept a list, and sweep: {PROPERTY: [values]} sweeps any property")
		}
		var err error
		switch key {
		case "load", "run", "capacity":
			if s.Kind != "" {
				return p.errf(k, key, "a step is one of load, run, capacity or pause, not both %s and %s", s.Kind, key)
			}
			s.Kind = Kind(key)
			s.Workload, err = p.str(key, v)
			if err == nil && s.Workload == "" {
				err = p.errf(v, key, "expected a workload name or file")
			}
		case "pause":
			if s.Kind != "" {
				return p.errf(k, key, "a step is one of load, run, capacity or pause, not both %s and %s", s.Kind, key)
			}
			s.Kind = KindPause
			s.Pause, err = p.duration(key, v)
		case "name":
			s.Name, err = p.str(key, v)
			if err == nil && !validName(s.Name) {
				err = p.errf(v, key, "%q: expected letters, digits, '-', '_' or '.' (it names the step's results directory)", s.Name)
			}
		case "properties":
			s.Properties, err = p.props(key, v)
		case "threads":
			if v.Kind == yaml.ScalarNode && v.Value == "scan" {
				s.ThreadsFromScan = true
				return nil
			}
			var xs []int64
			if xs, err = p.ints(key, v, 1); err == nil {
				s.Sweeps = append(s.Sweeps, intSweep(key, xs, v.Line))
			}
		case "target":
			var xs []float64
			if xs, err = p.floats(key, v); err == nil {
				sw := Sweep{Key: key, Property: sweepKeys[key], Line: v.Line}
				for _, x := range xs {
					sw.Values = append(sw.Values, fmtFloat(x))
				}
				s.Sweeps = append(s.Sweeps, sw)
			}
		case "recordcount":
			var xs []int64
			if xs, err = p.ints(key, v, 0); err == nil {
				s.Sweeps = append(s.Sweeps, intSweep(key, xs, v.Line))
			}
		case "sweep":
			var sws []Sweep
			if sws, err = p.sweeps(v); err == nil {
				s.Sweeps = append(s.Sweeps, sws...)
			}
		case "per_database":
			s.PerDatabase, err = p.perDatabase(v)
		case "warmup":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
				s.WarmupOps, err = strconv.ParseInt(v.Value, 10, 64)
				if err != nil || s.WarmupOps < 0 {
					err = p.errf(v, key, "%q: expected a duration (10s) or a non-negative operation count", v.Value)
				}
			} else {
				s.WarmupTime, err = p.duration(key, v)
			}
		case "duration":
			s.Duration, err = p.duration(key, v)
			if err == nil && s.Duration%time.Second != 0 {
				err = p.errf(v, key, "%q: expected whole seconds (maxexecutiontime is in seconds)", v.Value)
			}
			if err == nil && s.Duration <= 0 {
				err = p.errf(v, key, "%q: expected a positive duration", v.Value)
			}
		case "operations":
			var xs []int64
			xs, err = p.ints(key, v, 1)
			if err == nil {
				s.Operations = xs[0]
			}
		case "warmup_workload":
			s.WarmupWorkload, err = p.str(key, v)
		case "schema":
			var m string
			m, err = p.str(key, v)
			switch {
			case err != nil:
			case m == "keep":
				s.KeepSchema = true
			case m == "recreate":
			default:
				err = p.errf(v, key, "%q: expected recreate (drop and create before loading, the default) or keep", m)
			}
		case "threadscan":
			s.ThreadScan, err = p.threadScan(v)
		case "slo":
			capIn.SLOs, err = p.strList(key, v)
		case "max_error_rate":
			capIn.MaxErrorRate, err = p.str(key, v)
		case "precision":
			capIn.Precision, err = p.str(key, v)
		case "probe":
			capIn.Probe, err = p.duration(key, v)
		case "start", "max":
			var xs []float64
			if xs, err = p.floats(key, v); err == nil {
				if key == "start" {
					capIn.Start = xs[0]
				} else {
					capIn.Max = xs[0]
				}
			}
		case "max_probes":
			var xs []int64
			if xs, err = p.ints(key, v, 1); err == nil {
				capIn.MaxProbes = int(min(xs[0], capacity.MaxMaxProbes+1))
			}
		}
		return err
	})
	if err != nil {
		return s, err
	}
	bad := func(key, msg string) (Step, error) { return s, p.errf(keyNodes[key], key, "%s", msg) }
	props := map[string]string{}
	for _, sw := range s.Sweeps {
		if prev, dup := props[sw.Property]; dup {
			return s, &Error{File: p.file, Line: sw.Line, Key: sw.Key, Msg: fmt.Sprintf("sets %s, which %s already sets: give it once", sw.Property, prev)}
		}
		props[sw.Property] = sw.Key
	}
	if _, ok := props[PropThreads]; ok && s.ThreadsFromScan {
		return bad("threads", "threads: scan takes the thread count from the scan; do not also sweep threadcount")
	}
	if s.Kind != KindCapacity {
		for _, k := range stepKeys {
			if _, own := capacityKeys[k]; own && k != "warmup" && keyNodes[k] != nil {
				return bad(k, "only a capacity step takes the search's settings (slo, max_error_rate, precision, probe, start, max, max_probes)")
			}
		}
	}
	switch s.Kind {
	case "":
		return s, p.errf(e, "steps", "a step needs one of load: WORKLOAD, run: WORKLOAD, capacity: WORKLOAD or pause: DURATION")
	case KindPause:
		for _, k := range stepKeys {
			if keyNodes[k] != nil && k != "pause" && k != "name" {
				return bad(k, "not allowed on a pause step (a pause only has pause and name)")
			}
		}
	case KindLoad:
		for _, k := range []string{"warmup", "warmup_workload", "duration", "operations", "threadscan"} {
			if keyNodes[k] != nil {
				return bad(k, "not allowed on a load step (it loads recordcount records; use a run step)")
			}
		}
	case KindRun:
		if keyNodes["schema"] != nil {
			return bad("schema", "only a load step drops and creates the schema")
		}
		if sw, ok := s.Sweep(PropRecordCount); ok && sw.Swept() {
			return s, p.errf(nodeAt(keyNodes, "recordcount", "sweep"), sw.Key, "a recordcount sweep belongs on a load step (it reloads for each value, and the run steps after it run once per value)")
		}
		if _, ok := s.Sweep(PropThreads); ok && s.ThreadScan != nil {
			return s, p.errf(nodeAt(keyNodes, "threads", "sweep"), "threads", "threadscan chooses the threads itself; remove threads")
		}
		if s.WarmupWorkload != "" && s.WarmupTime == 0 && s.WarmupOps == 0 {
			return bad("warmup_workload", "needs warmup: a duration or an operation count for the warm-up run")
		}
	case KindCapacity:
		for _, k := range []string{"target", "duration", "operations", "warmup_workload", "schema", "threadscan"} {
			if keyNodes[k] != nil {
				return bad(k, "not allowed on a capacity step (the search sets each probe's target and length: start, max, probe, warmup)")
			}
		}
		if _, ok := s.Sweep(PropTarget); ok {
			return bad("sweep", "target: not allowed on a capacity step (the search sets each probe's target)")
		}
		if s.WarmupOps > 0 {
			return bad("warmup", "on a capacity step: expected a duration (each probe's warm-up)")
		}
		if keyNodes["warmup"] != nil {
			capIn.Warmup = s.WarmupTime
		}
		// The error names the setting by its key, and the line is that
		// key's (the step's for a missing slo).
		which := "slo"
		settings, err := capIn.Settings(func(flag string) string {
			for k, f := range capacityKeys {
				if f == flag {
					which = k
				}
			}
			return which
		})
		if err != nil {
			return s, p.errf(orNode(keyNodes[which], e), which, "%v", err)
		}
		s.Capacity = &settings
	}
	return s, nil
}

// nodeAt is the first of keys' nodes that the step has.
func nodeAt(nodes map[string]*yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n := nodes[k]; n != nil {
			return n
		}
	}
	return nil
}

func intSweep(key string, xs []int64, line int) Sweep {
	sw := Sweep{Key: key, Property: sweepKeys[key], Line: line}
	for _, x := range xs {
		sw.Values = append(sw.Values, strconv.FormatInt(x, 10))
	}
	return sw
}

// sweeps reads sweep: {PROPERTY: [v1, v2], ...}; the values are checked
// when the plan parses each step's properties.
func (p *parser) sweeps(v *yaml.Node) ([]Sweep, error) {
	if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
		return nil, p.errf(v, "sweep", "expected a mapping of properties to lists of values, e.g. {durability: [SYNC_WAL, SKIP_WAL]}")
	}
	var out []Sweep
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		key := "sweep." + k.Value
		if k.Value == "" {
			return nil, p.errf(k, "sweep", "empty property name")
		}
		if seen[k.Value] {
			return nil, p.errf(k, key, "given twice")
		}
		seen[k.Value] = true
		sw := Sweep{Key: k.Value, Property: k.Value, Line: k.Line}
		if prop, ok := sweepKeys[k.Value]; ok {
			sw.Property = prop
		}
		nodes := []*yaml.Node{val}
		if val.Kind == yaml.SequenceNode {
			nodes = val.Content
			if len(nodes) == 0 {
				return nil, p.errf(val, key, "empty list: expected at least one value")
			}
		}
		dup := map[string]bool{}
		for _, n := range nodes {
			if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
				return nil, p.errf(n, key, "expected a value or a list of values (strings or numbers)")
			}
			if !dup[n.Value] {
				dup[n.Value] = true
				sw.Values = append(sw.Values, n.Value)
			}
		}
		out = append(out, sw)
	}
	return out, nil
}

// perDatabase reads per_database: {NAME: {property: value}}.
func (p *parser) perDatabase(v *yaml.Node) ([]DatabaseProps, error) {
	if v.Kind != yaml.MappingNode {
		return nil, p.errf(v, "per_database", "expected a mapping of database names (or adapters) to properties, e.g. {hbase: {clientbuffering: true}}")
	}
	var out []DatabaseProps
	seen := map[string]bool{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if seen[k.Value] {
			return nil, p.errf(k, "per_database."+k.Value, "given twice")
		}
		seen[k.Value] = true
		props, err := p.props("per_database."+k.Value, val)
		if err != nil {
			return nil, err
		}
		out = append(out, DatabaseProps{Database: k.Value, Properties: props, Line: k.Line})
	}
	return out, nil
}

func (p *parser) threadScan(v *yaml.Node) (*ThreadScan, error) {
	ts := &ThreadScan{MinGain: DefaultScanGain, Max: DefaultScanMax}
	if v.Kind == yaml.ScalarNode && (v.Tag == "!!bool" || v.Tag == "!!null") {
		if v.Value == "false" {
			return nil, nil
		}
		return ts, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, p.errf(v, "threadscan", "expected true or a mapping {gain: 10%%, max: 256}")
	}
	err := p.each(v, "threadscan", []string{"gain", "max"}, func(key string, k, val *yaml.Node) error {
		switch key {
		case "gain":
			s := strings.TrimSpace(val.Value)
			pct := strings.HasSuffix(s, "%")
			x, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
			if err != nil || val.Kind != yaml.ScalarNode || x <= 0 {
				return p.errf(val, "threadscan.gain", "%q: expected a positive percentage like 10%%", val.Value)
			}
			if pct || x >= 1 {
				x /= 100
			}
			ts.MinGain = x
		case "max":
			xs, err := p.ints("threadscan.max", val, 1)
			if err != nil {
				return err
			}
			ts.Max = int(xs[0])
		}
		return nil
	})
	return ts, err
}

func (p *parser) duration(key string, v *yaml.Node) (time.Duration, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, p.errf(v, key, "expected a duration like 30s or 5m")
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil || d < 0 {
		return 0, p.errf(v, key, "%q: expected a duration like 30s, 5m or 1h30m", v.Value)
	}
	return d, nil
}

// ints reads an integer or a list of integers, each at least min.
func (p *parser) ints(key string, v *yaml.Node, min int64) ([]int64, error) {
	nodes := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		nodes = v.Content
		if len(nodes) == 0 {
			return nil, p.errf(v, key, "empty list: expected at least one value")
		}
	}
	var out []int64
	for _, n := range nodes {
		x, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, 64)
		if n.Kind != yaml.ScalarNode || err != nil || x < min {
			extra := ""
			if key == "threads" {
				extra = ", or scan"
			}
			return nil, p.errf(n, key, "%q: expected an integer of at least %d, or a list of them%s", n.Value, min, extra)
		}
		out = append(out, x)
	}
	return dedupe(out), nil
}

func (p *parser) floats(key string, v *yaml.Node) ([]float64, error) {
	nodes := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		nodes = v.Content
		if len(nodes) == 0 {
			return nil, p.errf(v, key, "empty list: expected at least one value")
		}
	}
	var out []float64
	for _, n := range nodes {
		x, err := strconv.ParseFloat(n.Value, 64)
		if n.Kind != yaml.ScalarNode || err != nil || x < 0 {
			return nil, p.errf(n, key, "%q: expected a non-negative number of operations per second, or a list of them", n.Value)
		}
		out = append(out, x)
	}
	return out, nil
}

func dedupe(xs []int64) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

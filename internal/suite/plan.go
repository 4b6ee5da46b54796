package suite

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/workload"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// SweepValue is one swept key's value in one expanded step.
type SweepValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Item is one concrete step of a plan: a database, a step of the file and
// one value of each of its sweeps, with its run specification.
type Item struct {
	// Seq numbers the items from 1 in the order they run.
	Seq int
	DB  Database
	// StepIndex is the step's position in the file, from 1 (the NN of
	// its directory).
	StepIndex int
	Step      *Step
	Kind      Kind
	Name      string
	Sweep     []SweepValue
	// Dir is the bundle directory relative to the results directory.
	Dir string
	// Workload is the workload file or built-in name (YCSB's -P).
	Workload string
	// Props are the properties the suite sets on top of the workload
	// file (the file's, the database's, the step's, the sweep values and
	// the command line's -p): the equivalent command's -p.
	Props map[string]string
	// Spec is the run, parsed once from the workload file and Props; nil
	// for a pause.
	Spec *spec.Spec
	// Schema: drop and create the schema before this (load) item.
	Schema bool
	// Pause is a pause item's sleep.
	Pause time.Duration
	// Estimate is the expected duration; 0 when it cannot be told in
	// advance (a load or an operation-bounded run without a target).
	Estimate time.Duration
	// ThreadScan, when set, makes the runner repeat the item with
	// doubling thread counts; Dir is then the prefix of each try's
	// directory.
	ThreadScan *ThreadScan
	// Measured is the item this warm-up item warms up for.
	Measured *Item
	// Definition and Fingerprint identify the item's configuration
	// (fingerprint.go): a bundle is reused on resume only when it
	// records the same fingerprint.
	Definition  map[string]string
	Fingerprint string
}

// Label is "db NN-name[-sweep]", how progress lines name the item.
func (it *Item) Label() string {
	if it.Kind == KindPause {
		return fmt.Sprintf("%s %02d-%s", it.DB.Name, it.StepIndex, it.Name)
	}
	return it.DB.Name + " " + filepath.Base(it.Dir)
}

// StepName is "NN-name", what the values of a sweep share.
func (it *Item) StepName() string { return fmt.Sprintf("%02d-%s", it.StepIndex, it.Name) }

// SweepLabel is "threads=4, target=1000", or "" without sweeps.
func (it *Item) SweepLabel() string {
	var parts []string
	for _, s := range it.Sweep {
		parts = append(parts, s.Key+"="+s.Value)
	}
	return strings.Join(parts, ", ")
}

// Plan is an expanded suite.
type Plan struct {
	File  *File
	Items []*Item
	// Overrides are the command line's -p, which beat every property of
	// the file.
	Overrides map[string]string
	Agents    []string
	// ResultsDir holds the step bundles (each spec's ycsbctl.results).
	ResultsDir string
}

// Options are what Expand needs beyond the file.
type Options struct {
	// Overrides are the command line's -p.
	Overrides map[string]string
	// Agents, when non-empty, replace the file's.
	Agents []string
	// ResultsDir is the suite's results directory.
	ResultsDir string
	// ReadWorkload reads a workload file or built-in workload; nil reads
	// built-in workloads only.
	ReadWorkload func(name string) ([]byte, error)
}

// DefaultStepName is a step's name when the file gives none.
func DefaultStepName(s *Step) string {
	if s.Kind == KindPause {
		return "pause"
	}
	base := filepath.Base(s.Workload)
	if ext := filepath.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	return string(s.Kind) + "-" + base
}

// Expand turns a file into a plan: every item's properties are merged
// and parsed into its run specification, so a bad value anywhere stops
// the suite before anything runs (the error names the line and key).
func Expand(f *File, o Options) (*Plan, error) {
	agents := o.Agents
	if len(agents) == 0 {
		agents = f.Agents
	}
	p := &Plan{File: f, Overrides: o.Overrides, Agents: agents, ResultsDir: o.ResultsDir}
	x := &expander{p: p, read: o.ReadWorkload, workloads: map[string][]byte{}}
	if x.read == nil {
		x.read = func(name string) ([]byte, error) {
			if w, ok := workloads.Lookup(name); ok {
				return []byte(w.Text), nil
			}
			return nil, fmt.Errorf("no built-in workload %q", name)
		}
	}
	if err := x.checkPerDatabase(); err != nil {
		return nil, err
	}
	if err := x.checkUnread(); err != nil {
		return nil, err
	}
	for _, db := range f.Databases {
		for i := 0; i < len(f.Steps); {
			s := &f.Steps[i]
			group, err := x.groupSweeps(db, s)
			if err != nil {
				return nil, err
			}
			if len(group) == 0 {
				if err := x.emit(db, i, nil); err != nil {
					return nil, err
				}
				i++
				continue
			}
			// A load step's record count and schema options hold for
			// the steps up to the next load; a list of them reloads and
			// repeats those steps for each value.
			j := i + 1
			for j < len(f.Steps) && f.Steps[j].Kind != KindLoad {
				j++
			}
			for _, fixed := range combinations(group) {
				for k := i; k < j; k++ {
					if err := x.emit(db, k, fixed); err != nil {
						return nil, err
					}
				}
			}
			i = j
		}
	}
	for i, it := range p.Items {
		it.Seq = i + 1
	}
	return p, nil
}

type expander struct {
	p         *Plan
	read      func(string) ([]byte, error)
	workloads map[string][]byte
}

func (x *expander) errAt(s *Step, line int, key, format string, a ...any) error {
	if line == 0 {
		line = s.Line
	}
	return &Error{File: x.p.File.Path, Line: line, Key: key, Msg: fmt.Sprintf(format, a...)}
}

// checkPerDatabase refuses per_database entries that name no database
// of the file and no adapter.
func (x *expander) checkPerDatabase() error {
	for i := range x.p.File.Steps {
		s := &x.p.File.Steps[i]
		for _, pd := range s.PerDatabase {
			known := false
			for _, db := range x.p.File.Databases {
				known = known || pd.Database == db.Name || pd.Database == db.DB
			}
			if _, err := adapters.Lookup(pd.Database); !known && err != nil {
				return x.errAt(s, pd.Line, "per_database."+pd.Database, "names neither a database of this suite nor an adapter (see 'ycsbctl dbs')")
			}
		}
	}
	return nil
}

// groupSweeps are a load step's sweeps that change the data set or its
// schema: record count, and the adapter's schema options.
func (x *expander) groupSweeps(db Database, s *Step) ([]Sweep, error) {
	if s.Kind != KindLoad {
		return nil, nil
	}
	var out []Sweep
	for _, sw := range s.Sweeps {
		if sw.Property == PropRecordCount || IsSchemaProperty(db.DB, sw.Property) {
			if s.KeepSchema && sw.Property != PropRecordCount && sw.Swept() {
				return nil, x.errAt(s, sw.Line, sw.Key, "is a schema option of %s: sweeping it recreates the schema for each value, which schema: keep forbids", db.DB)
			}
			out = append(out, sw)
		}
	}
	return out, nil
}

// IsSchemaProperty reports whether adapter applies key when it creates
// the schema (`ycsbctl init`).
func IsSchemaProperty(adapter, key string) bool {
	info, err := adapters.Lookup(adapter)
	if err != nil {
		return false
	}
	k, ok := properties.FindKnown(info.Properties, key)
	return ok && k.Schema
}

// applies reports whether a property given for every database (the
// file's properties, a step's properties and sweeps, -p) applies to
// adapter: anything but a property that another adapter declares and this
// one does not, which is left out of this database's steps rather than
// warned about on every step (and a sweep over it does not repeat them).
func applies(adapter, key string) bool {
	info, err := adapters.Lookup(adapter)
	if err != nil {
		return true
	}
	// The client's and the workload's properties apply everywhere, even
	// when an adapter declares them too (fieldcount, batchsize).
	common := append(append(spec.Known(), workload.Known()...), info.Properties...)
	if _, ok := properties.FindKnown(common, key); ok {
		return true
	}
	for _, n := range adapters.Names() {
		other, err := adapters.Lookup(n)
		if err != nil || other.Name == info.Name {
			continue
		}
		if _, ok := properties.FindKnown(other.Properties, key); ok {
			return false
		}
	}
	return true
}

// sweptValue is one value of one sweep.
type sweptValue struct {
	sweep Sweep
	value string
}

// combinations are every choice of one value per sweep, the last sweep
// varying fastest.
func combinations(sweeps []Sweep) [][]sweptValue {
	out := [][]sweptValue{nil}
	for _, sw := range sweeps {
		var next [][]sweptValue
		for _, c := range out {
			for _, v := range sw.Values {
				next = append(next, append(append([]sweptValue(nil), c...), sweptValue{sw, v}))
			}
		}
		out = next
	}
	return out
}

// dirPart names a swept value in a bundle directory: threads4, target1000
// and recordcount1000 as always, key=value for any other property.
func dirPart(key, value string) string {
	if _, ok := sweepKeys[key]; ok {
		return key + value
	}
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, value)
	return key + "=" + safe
}

// emit adds the items of step k for db, with fixed values from its load
// step's group sweeps.
func (x *expander) emit(db Database, k int, fixed []sweptValue) error {
	f := x.p.File
	s := &f.Steps[k]
	name := s.Name
	if name == "" {
		name = DefaultStepName(s)
	}
	base := Item{DB: db, StepIndex: k + 1, Step: s, Kind: s.Kind, Name: name}
	if s.Kind == KindPause {
		base.Pause, base.Estimate = s.Pause, s.Pause
		x.p.Items = append(x.p.Items, &base)
		return nil
	}
	layers := map[string]string{}
	for _, pr := range f.Properties {
		if applies(db.DB, pr.Key) {
			layers[pr.Key] = pr.Value
		}
	}
	for _, pr := range db.Properties {
		layers[pr.Key] = pr.Value
	}
	for _, pr := range s.Properties {
		if applies(db.DB, pr.Key) {
			layers[pr.Key] = pr.Value
		}
	}
	for _, pd := range s.PerDatabase {
		if pd.Database == db.Name || (pd.Database == db.DB && !namesDatabase(f, pd.Database)) {
			for _, pr := range pd.Properties {
				layers[pr.Key] = pr.Value
			}
		}
	}
	if s.WarmupWorkload == "" && s.Kind != KindCapacity {
		if s.WarmupTime > 0 {
			layers[spec.PropWarmupTime] = fmtFloat(s.WarmupTime.Seconds())
		}
		if s.WarmupOps > 0 {
			layers[spec.PropWarmupOps] = strconv.FormatInt(s.WarmupOps, 10)
		}
	}
	if s.Duration > 0 {
		layers[spec.PropMaxExecution] = strconv.FormatInt(int64(s.Duration/time.Second), 10)
		if s.Operations == 0 {
			// The time bounds the run, not the workload file's count.
			layers[workload.PropOperationCount] = "0"
		}
	}
	if s.Operations > 0 {
		layers[workload.PropOperationCount] = strconv.FormatInt(s.Operations, 10)
	}
	var own []Sweep
	for _, sw := range s.Sweeps {
		if IsSchemaProperty(db.DB, sw.Property) && sw.Swept() && s.Kind != KindLoad {
			return x.errAt(s, sw.Line, sw.Key, "is a schema option of %s (applied when the schema is created): sweep it on the load step, which recreates the schema and reloads for each value; the steps up to the next load then run once per value", db.DB)
		}
		if !fixedHas(fixed, sw.Property) && applies(db.DB, sw.Property) {
			// A sweep over what only other adapters read would repeat
			// this database's step unchanged: it runs once.
			own = append(own, sw)
		}
	}
	for _, combo := range combinations(own) {
		it := base
		props := copyMap(layers)
		for _, sv := range append(append([]sweptValue(nil), fixed...), combo...) {
			props[sv.sweep.Property] = sv.value
			if sv.sweep.Swept() {
				it.Sweep = append(it.Sweep, SweepValue{Key: sv.sweep.Key, Value: sv.value})
			}
		}
		for k, v := range x.p.Overrides {
			if applies(db.DB, k) {
				props[k] = v
			}
		}
		dir := it.StepName()
		for _, sv := range it.Sweep {
			dir += "-" + dirPart(sv.Key, sv.Value)
		}
		if s.ThreadScan != nil {
			dir += "-threads"
		}
		it.Dir = filepath.Join(db.Name, dir)
		it.Workload = f.ResolveWorkload(s.Workload)
		it.Schema = s.Kind == KindLoad && !s.KeepSchema
		it.ThreadScan = s.ThreadScan
		it.Props = props
		if err := x.finish(&it); err != nil {
			return err
		}
		if s.WarmupWorkload != "" {
			w, err := x.warmup(&it)
			if err != nil {
				return err
			}
			x.p.Items = append(x.p.Items, w)
		}
		x.p.Items = append(x.p.Items, &it)
	}
	return nil
}

func namesDatabase(f *File, name string) bool {
	for _, db := range f.Databases {
		if db.Name == name {
			return true
		}
	}
	return false
}

func fixedHas(fixed []sweptValue, prop string) bool {
	for _, sv := range fixed {
		if sv.sweep.Property == prop {
			return true
		}
	}
	return false
}

// warmup is the separate warm-up run of a step with warmup_workload: the
// measured step's settings with the warm-up's mix and length.
func (x *expander) warmup(it *Item) (*Item, error) {
	s := it.Step
	w := *it
	w.Kind = KindWarmup
	w.Name = it.Name + "-warmup"
	w.Dir = it.Dir + "-warmup"
	w.Workload = x.p.File.ResolveWorkload(s.WarmupWorkload)
	w.Schema = false
	w.Props = copyMap(it.Props)
	for _, k := range []string{spec.PropWarmupTime, spec.PropWarmupOps, spec.PropMaxExecution, workload.PropOperationCount} {
		delete(w.Props, k)
	}
	if s.WarmupTime > 0 {
		secs := int64(math.Ceil(s.WarmupTime.Seconds()))
		w.Props[spec.PropMaxExecution] = strconv.FormatInt(secs, 10)
		// Enough operations never to end before the time.
		w.Props[workload.PropOperationCount] = "0"
	} else {
		w.Props[workload.PropOperationCount] = strconv.FormatInt(s.WarmupOps, 10)
	}
	for k, v := range x.p.Overrides {
		if k != spec.PropMaxExecution && k != workload.PropOperationCount && applies(it.DB.DB, k) {
			w.Props[k] = v
		}
	}
	w.Measured = it
	if err := x.finish(&w); err != nil {
		return nil, err
	}
	return &w, nil
}

// finish parses the item's run specification (once) and derives its
// estimate and fingerprint from it.
func (x *expander) finish(it *Item) error {
	s := it.Step
	key := string(s.Kind)
	if it.Kind == KindWarmup {
		key = "warmup_workload"
	}
	text, ok := x.workloads[it.Workload]
	if !ok {
		var err error
		if text, err = x.read(it.Workload); err != nil {
			return x.errAt(s, 0, key, "%v", err)
		}
		x.workloads[it.Workload] = text
	}
	props := properties.New()
	if err := props.Load(bytes.NewReader(text)); err != nil {
		return x.errAt(s, 0, key, "workload %s: %v", it.Workload, err)
	}
	for k, v := range it.Props {
		props.Set(k, v)
	}
	props.Set(spec.PropResults, filepath.Join(x.p.ResultsDir, it.Dir))
	if it.Kind == KindCapacity {
		// The spec is every probe's but for its target and directory,
		// as `ycsbctl capacity` makes it (what it replaces is the
		// search's to set).
		capacity.ProbeProperties(props, s.Capacity)
	}
	phase := run.Run
	if it.Kind == KindLoad {
		phase = run.Load
	}
	sp, err := spec.Parse(it.DB.DB, props, phase)
	if err == nil {
		err = x.checkAdapter(sp)
	}
	if err != nil {
		return x.stepErr(it, err)
	}
	if it.Kind == KindCapacity {
		if err := capacity.CheckSpec(sp, s.Capacity.Objectives); err != nil {
			return x.errAt(s, 0, string(KindCapacity), "step %s of %s: %v", it.Name, it.DB.Name, err)
		}
	}
	it.Spec = sp
	it.Estimate = estimate(it)
	it.Definition = definition(x.p, it)
	it.Fingerprint = Fingerprint(it.Definition, sp.Props.Map())
	return nil
}

// estimate is how long the item should take, from its specification: the
// warm-up, then the time limit or operations at the target rate.
func estimate(it *Item) time.Duration {
	sp := it.Spec
	if it.Kind == KindCapacity {
		// The number of probes depends on the database.
		return 0
	}
	var d time.Duration
	if sp.WarmupTime > 0 {
		d += sp.WarmupTime
	}
	ops := estimateOps(sp.OpCount, sp.Target)
	switch {
	case sp.MaxExecution > 0 && (ops == 0 || ops > sp.MaxExecution):
		d += sp.MaxExecution
	case ops > 0:
		d += ops
	default:
		return 0
	}
	if it.ThreadScan != nil {
		// Every try takes as long; the count of tries is unknown, so
		// assume the doubling reaches eight threads.
		d *= 4
	}
	return d
}

func estimateOps(ops int64, target float64) time.Duration {
	if ops <= 0 || target <= 0 {
		return 0
	}
	return time.Duration(float64(ops) / target * float64(time.Second))
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// CommandLine is the ycsbctl command (without "ycsbctl") that would run
// the item as sp by hand: recorded with the step and shown by --dry-run.
// sp is it.Spec, or its variant with another thread count (a thread-scan
// try, a step sized by the scan). The suite itself hands the spec to a
// run session; nothing parses this.
func (p *Plan) CommandLine(it *Item, sp *spec.Spec) []string {
	phase := "run"
	switch it.Kind {
	case KindLoad:
		phase = "load"
	case KindCapacity:
		phase = "capacity"
	}
	var args []string
	if len(p.Agents) > 0 {
		args = []string{"coordinator", phase, it.DB.DB, "--agents", strings.Join(p.Agents, ",")}
	} else {
		args = []string{phase, it.DB.DB}
	}
	args = append(args, "-P", it.Workload)
	props := copyMap(it.Props)
	if sp != it.Spec {
		props[PropThreads] = strconv.Itoa(sp.Threads)
	}
	for _, k := range sortedKeys(props) {
		args = append(args, "-p", k+"="+props[k])
	}
	if it.Kind == KindCapacity {
		args = append(args, it.Step.Capacity.Args()...)
	}
	return append(args, "--results", sp.Output.ResultsDir)
}

// Measured counts the items that write a bundle of their own.
func (p *Plan) Measured() int {
	n := 0
	for _, it := range p.Items {
		if it.Kind == KindLoad || it.Kind == KindRun || it.Kind == KindCapacity {
			n++
		}
	}
	return n
}

// Estimate sums the known estimates and counts the unknown ones.
func (p *Plan) Estimate() (known time.Duration, unknown int) {
	for _, it := range p.Items {
		if it.Estimate > 0 {
			known += it.Estimate
		} else if it.Kind != KindPause {
			unknown++
		}
	}
	return known, unknown
}

// FormatDuration prints a duration the way plans and ETAs show it.
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "?"
	}
	if d < time.Second {
		return d.String()
	}
	d = d.Round(time.Second)
	if d < time.Minute {
		return d.String()
	}
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case h > 0 && s == 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	case s == 0:
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dm%02ds", m, s)
}

// Print writes the expanded plan: one block per item with its effective
// properties, estimated duration and equivalent command.
func (p *Plan) Print(w io.Writer) error {
	var b strings.Builder
	// Writes to a strings.Builder cannot fail.
	pr := func(format string, a ...any) { _, _ = fmt.Fprintf(&b, format, a...) }
	f := p.File
	known, unknown := p.Estimate()
	pr("Suite %s: %d database(s) × %d step(s) = %d planned item(s), %d measured run(s)\n", f.Name, len(f.Databases), len(f.Steps), len(p.Items), p.Measured())
	if f.Description != "" {
		pr("  %s\n", f.Description)
	}
	est := FormatDuration(known)
	if unknown > 0 {
		est += fmt.Sprintf(" plus %d item(s) whose time depends on the database (loads, and runs bounded by an operation count without a target)", unknown)
	}
	pr("Estimated duration: %s\n", est)
	if len(p.Agents) > 0 {
		pr("Distributed over %d agent(s): %s (threads are per agent)\n", len(p.Agents), strings.Join(p.Agents, ", "))
	}
	pr("Results: %s\n", p.ResultsDir)
	for _, w := range p.Warnings() {
		pr("%s\n", w)
	}
	pr("\n")
	for _, it := range p.Items {
		head := fmt.Sprintf("[%d/%d] %s", it.Seq, len(p.Items), it.DB.Name)
		switch it.Kind {
		case KindPause:
			pr("%s  %02d-%s  pause %s\n", head, it.StepIndex, it.Name, FormatDuration(it.Pause))
			continue
		case KindWarmup:
			pr("%s  %s  warm-up run of %s for the next step (kept, not measured in the summary)  est. %s\n", head, filepath.Base(it.Dir), it.Workload, FormatDuration(it.Estimate))
		default:
			pr("%s  %s  %s %s", head, filepath.Base(it.Dir), it.Kind, it.Workload)
			if sw := it.SweepLabel(); sw != "" {
				pr("  sweep %s", sw)
			}
			pr("  est. %s\n", FormatDuration(it.Estimate))
		}
		if it.Schema {
			pr("      first: ycsbctl drop %s, then ycsbctl init %s (the schema, recreated)\n", it.DB.DB, it.DB.DB)
		}
		if c := it.Step.Capacity; c != nil && it.Kind == KindCapacity {
			pr("      capacity search at %s: probes of %s after a %s warm-up, from %s ops/s up to %s, at most %d, to within %s\n",
				c.ObjectivesText(), FormatDuration(c.Probe), FormatDuration(c.Warmup), fmtFloat(c.Start), fmtFloat(c.Max), c.MaxProbes, capacity.FormatShare(c.Precision))
		}
		if ts := it.ThreadScan; ts != nil {
			pr("      thread scan: threads 1, 2, 4, ... up to %d until throughput grows less than %s%%; reports the knee\n", ts.Max, fmtFloat(ts.MinGain*100))
		}
		var props []string
		for _, k := range sortedKeys(it.Props) {
			props = append(props, k+"="+it.Props[k])
		}
		if it.Step.ThreadsFromScan {
			props = append(props, "threadcount=<the thread scan's knee>")
		}
		pr("      properties: %s\n", strings.Join(props, " "))
		pr("      ycsbctl %s\n", strings.Join(p.CommandLine(it, it.Spec), " "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

package suite

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// SweepValue is one swept key's value in one expanded step.
type SweepValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Item is one concrete step of a plan: a database, a step of the file and
// one value of each of its sweeps.
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
	// Workload is the -P argument.
	Workload string
	// Props are the effective properties passed with -p, threads and
	// target excepted (they are flags).
	Props       map[string]string
	Threads     int
	Target      float64
	HasTarget   bool
	RecordCount int64
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
}

// Label is "db NN-name[-sweep]", how progress lines name the item.
func (it *Item) Label() string {
	if it.Kind == KindPause {
		return fmt.Sprintf("%s %02d-%s", it.DB.Name, it.StepIndex, it.Name)
	}
	return it.DB.Name + " " + filepath.Base(it.Dir)
}

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

	workloadProps WorkloadProps
	applies       func(adapter, key string) bool
}

// common reports whether a property given for every database applies
// to this one.
func (p *Plan) common(it *Item, key string) bool {
	return p.applies == nil || p.applies(it.DB.DB, key)
}

// prop is an item's effective value of k: its properties, else its
// workload file's.
func (p *Plan) prop(it *Item, k string) string {
	if v, ok := it.Props[k]; ok {
		return v
	}
	if p.workloadProps != nil {
		return p.workloadProps(it.Workload)[k]
	}
	return ""
}

// WorkloadProps returns a workload file's properties (nil when unknown);
// estimates use its operationcount and recordcount.
type WorkloadProps func(workload string) map[string]string

// Hooks tell the plan what the suite package cannot know by itself.
type Hooks struct {
	// WorkloadProps lets the plan estimate steps sized by their
	// workload file.
	WorkloadProps WorkloadProps
	// Applies reports whether a property given for every database (the
	// file's properties, -p) means something to an adapter; false leaves
	// it out of that database's steps (another adapter's setting, such
	// as embedded.dir for cassandra), rather than warn on every step.
	Applies func(adapter, key string) bool
}

// Expand turns a file into a plan. overrides are the command line's -p
// properties; agents, when non-empty, replace the file's.
func Expand(f *File, overrides map[string]string, agents []string, hooks ...Hooks) *Plan {
	if len(agents) == 0 {
		agents = f.Agents
	}
	p := &Plan{File: f, Overrides: overrides, Agents: agents}
	if len(hooks) > 0 {
		p.workloadProps = hooks[0].WorkloadProps
		p.applies = hooks[0].Applies
	}
	for di := range f.Databases {
		db := f.Databases[di]
		for i := 0; i < len(f.Steps); {
			s := &f.Steps[i]
			if s.Kind == KindLoad && len(s.RecordCount) > 1 {
				// A record-count sweep reloads for each value, and the
				// steps up to the next load run against each size.
				j := i + 1
				for j < len(f.Steps) && f.Steps[j].Kind != KindLoad {
					j++
				}
				for _, rc := range s.RecordCount {
					for k := i; k < j; k++ {
						p.emit(db, k, rc)
					}
				}
				i = j
				continue
			}
			p.emit(db, i, 0)
			i++
		}
	}
	for i, it := range p.Items {
		it.Seq = i + 1
	}
	return p
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

func (p *Plan) emit(db Database, stepIdx int, recordSweep int64) {
	f := p.File
	s := &f.Steps[stepIdx]
	name := s.Name
	if name == "" {
		name = DefaultStepName(s)
	}
	base := &Item{DB: db, StepIndex: stepIdx + 1, Step: s, Kind: s.Kind, Name: name}
	if s.Kind == KindPause {
		base.Pause, base.Estimate = s.Pause, s.Pause
		p.Items = append(p.Items, base)
		return
	}
	var rcSweep []SweepValue
	if recordSweep > 0 {
		rcSweep = []SweepValue{{Key: "recordcount", Value: strconv.FormatInt(recordSweep, 10)}}
	}
	threads := []int{0}
	if len(s.Threads) > 0 {
		threads = s.Threads
	}
	targets := []float64{-1}
	if len(s.Target) > 0 {
		targets = s.Target
	}
	for _, th := range threads {
		for _, tg := range targets {
			it := *base
			it.Sweep = append([]SweepValue(nil), rcSweep...)
			if len(s.Threads) > 1 {
				it.Sweep = append(it.Sweep, SweepValue{Key: "threads", Value: strconv.Itoa(th)})
			}
			if len(s.Target) > 1 {
				it.Sweep = append(it.Sweep, SweepValue{Key: "target", Value: fmtFloat(tg)})
			}
			it.Threads = th
			if tg >= 0 {
				it.Target, it.HasTarget = tg, true
			}
			p.finish(&it, recordSweep)
			if s.WarmupWorkload != "" {
				w := it
				w.Kind = KindWarmup
				w.Name = it.Name + "-warmup"
				w.Dir = it.Dir + "-warmup"
				w.Workload = f.ResolveWorkload(s.WarmupWorkload)
				w.Schema = false
				w.Props = copyMap(it.Props)
				delete(w.Props, "warmuptime")
				delete(w.Props, "warmupops")
				delete(w.Props, "maxexecutiontime")
				delete(w.Props, "operationcount")
				if s.WarmupTime > 0 {
					secs := int64(math.Ceil(s.WarmupTime.Seconds()))
					w.Props["maxexecutiontime"] = strconv.FormatInt(secs, 10)
					// Enough operations never to end before the time.
					w.Props["operationcount"] = "0"
					w.Estimate = time.Duration(secs) * time.Second
				} else {
					w.Props["operationcount"] = strconv.FormatInt(s.WarmupOps, 10)
					w.Estimate = estimateOps(s.WarmupOps, it.Target)
				}
				for k, v := range p.Overrides {
					if k != "maxexecutiontime" && k != "operationcount" && p.common(&it, k) {
						w.Props[k] = v
					}
				}
				mi := it
				w.Measured = &mi
				p.Items = append(p.Items, &w)
				p.Items = append(p.Items, &mi)
				continue
			}
			p.Items = append(p.Items, &it)
		}
	}
}

// finish fills an item's directory, properties and estimate.
func (p *Plan) finish(it *Item, recordSweep int64) {
	f := p.File
	s := it.Step
	dir := fmt.Sprintf("%02d-%s", it.StepIndex, it.Name)
	for _, sv := range it.Sweep {
		dir += "-" + sv.Key + sv.Value
	}
	if s.ThreadScan != nil {
		dir += "-threads"
	}
	it.Dir = filepath.Join(it.DB.Name, dir)
	it.Workload = f.ResolveWorkload(s.Workload)
	it.Schema = s.Kind == KindLoad && !s.KeepSchema
	it.ThreadScan = s.ThreadScan
	props := map[string]string{}
	for _, pr := range f.Properties {
		if p.common(it, pr.Key) {
			props[pr.Key] = pr.Value
		}
	}
	for _, list := range [][]Prop{it.DB.Properties, s.Properties} {
		for _, pr := range list {
			props[pr.Key] = pr.Value
		}
	}
	if len(s.RecordCount) == 1 {
		props["recordcount"] = strconv.FormatInt(s.RecordCount[0], 10)
	}
	if recordSweep > 0 {
		props["recordcount"] = strconv.FormatInt(recordSweep, 10)
	}
	if s.WarmupWorkload == "" {
		if s.WarmupTime > 0 {
			props["warmuptime"] = fmtFloat(s.WarmupTime.Seconds())
		}
		if s.WarmupOps > 0 {
			props["warmupops"] = strconv.FormatInt(s.WarmupOps, 10)
		}
	}
	if s.Duration > 0 {
		props["maxexecutiontime"] = strconv.FormatInt(int64(s.Duration/time.Second), 10)
		if s.Operations == 0 {
			// The time bounds the run, not the workload file's count.
			props["operationcount"] = "0"
		}
	}
	if s.Operations > 0 {
		props["operationcount"] = strconv.FormatInt(s.Operations, 10)
	}
	for k, v := range p.Overrides {
		if p.common(it, k) {
			props[k] = v
		}
	}
	// threads and target travel as flags; -p on the command line still
	// wins over a step's value.
	if v, ok := p.Overrides["threadcount"]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			it.Threads = n
		}
	}
	if v, ok := p.Overrides["target"]; ok {
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			it.Target, it.HasTarget = x, true
		}
	}
	if it.Threads > 0 || it.ThreadScan != nil || s.ThreadsFromScan {
		delete(props, "threadcount")
	}
	if it.HasTarget {
		delete(props, "target")
	}
	it.Props = props
	if rc, err := strconv.ParseInt(p.prop(it, "recordcount"), 10, 64); err == nil {
		it.RecordCount = rc
	}
	it.Estimate = p.estimate(it)
}

func (p *Plan) estimate(it *Item) time.Duration {
	s := it.Step
	var d time.Duration
	if s.WarmupTime > 0 && s.WarmupWorkload == "" {
		d += s.WarmupTime
	}
	target := it.Target
	if !it.HasTarget {
		target, _ = strconv.ParseFloat(p.prop(it, "target"), 64)
	}
	switch {
	case it.Kind == KindLoad:
		n := it.RecordCount
		if c, err := strconv.ParseInt(p.prop(it, "insertcount"), 10, 64); err == nil && c > 0 {
			n = c
		}
		e := estimateOps(n, target)
		if e == 0 {
			return 0
		}
		d += e
	case s.Duration > 0:
		d += s.Duration
	default:
		ops, _ := strconv.ParseInt(p.prop(it, "operationcount"), 10, 64)
		e := estimateOps(ops, target)
		if e == 0 {
			return 0
		}
		d += e
	}
	if it.ThreadScan != nil && d > 0 {
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

// Args is the ycsbctl command line of a load, run or warm-up item, its
// bundle written under resultsDir; threads overrides the item's (thread
// scans), 0 keeps it.
func (p *Plan) Args(it *Item, resultsDir, dir string, threads int) []string {
	phase := string(it.Kind)
	if it.Kind == KindWarmup {
		phase = "run"
	}
	var args []string
	if len(p.Agents) > 0 {
		args = []string{"coordinator", phase, it.DB.DB, "--agents", strings.Join(p.Agents, ",")}
	} else {
		args = []string{phase, it.DB.DB}
	}
	args = append(args, "-P", it.Workload)
	for _, k := range sortedKeys(it.Props) {
		args = append(args, "-p", k+"="+it.Props[k])
	}
	if threads == 0 {
		threads = it.Threads
	}
	if threads > 0 {
		args = append(args, "-threads", strconv.Itoa(threads))
	}
	if it.HasTarget {
		args = append(args, "-target", fmtFloat(it.Target))
	}
	return append(args, "--results", filepath.Join(resultsDir, dir), "--no-tui")
}

// SchemaArgs are the drop and init command lines run before a load item.
// They run from this host even in distributed suites: they only talk to
// the database.
func (p *Plan) SchemaArgs(it *Item) [][]string {
	var out [][]string
	for _, verb := range []string{"drop", "init"} {
		args := []string{verb, it.DB.DB, "-P", it.Workload}
		for _, k := range sortedKeys(it.Props) {
			args = append(args, "-p", k+"="+it.Props[k])
		}
		out = append(out, args)
	}
	return out
}

// Measured counts the items that write a bundle of their own.
func (p *Plan) Measured() int {
	n := 0
	for _, it := range p.Items {
		if it.Kind == KindLoad || it.Kind == KindRun {
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
// properties, estimated duration and command line.
func (p *Plan) Print(w io.Writer, resultsDir string) error {
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
		pr("Distributed over %d agent(s): %s\n", len(p.Agents), strings.Join(p.Agents, ", "))
	}
	pr("Results: %s\n\n", resultsDir)
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
			pr("      first: ycsbctl %s\n", strings.Join(p.SchemaArgs(it)[0][:2], " "))
			pr("             ycsbctl %s\n", strings.Join(p.SchemaArgs(it)[1][:2], " "))
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
		} else if it.Threads > 0 {
			props = append(props, "threadcount="+strconv.Itoa(it.Threads))
		}
		if it.HasTarget {
			props = append(props, "target="+fmtFloat(it.Target))
		}
		pr("      properties: %s\n", strings.Join(props, " "))
		pr("      ycsbctl %s\n", strings.Join(p.Args(it, resultsDir, it.Dir, 0), " "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

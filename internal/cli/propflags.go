package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/sink/metrics"
	"github.com/ycsbctl/ycsbctl/internal/spec"
)

// settingFlag is a flag that sets a property: YCSB's -threads, -target,
// -s and -l, and ycsbctl's long flags. Each only sets its property, so
// `-p ycsbctl.tui=false` in a workload file works as well as --no-tui, and
// a flag and a -p of the same property are one setting: the later on the
// command line wins, as in Java YCSB's Client (both write the same
// property as they are parsed).
type settingFlag struct {
	name, short, property, usage string
	// typ is the value's type as help shows it ("bool" flags take no
	// value).
	typ string
	// ycsb marks YCSB's single-dash flags (-threads, not --threads), for
	// messages that quote the flag as the user typed it.
	ycsb bool
	// value turns what was typed into the property's value; ok=false
	// sets nothing (-s=false). nil keeps the text as typed.
	value func(typed string) (v string, ok bool, err error)
}

// settingFlags are every flag that sets a property; commands register the
// ones they take by name.
var settingFlags = []settingFlag{
	{name: "threads", property: spec.PropThreads, typ: "int", ycsb: true,
		usage: "client threads (threadcount); per agent in distributed runs", value: threadsValue},
	{name: "target", property: spec.PropTarget, typ: "float", ycsb: true,
		usage: "target total operations per second (target; 0 = unthrottled)", value: targetValue},
	{name: "s", short: "s", property: spec.PropStatus, typ: "bool", ycsb: true,
		usage: "print status every status.interval seconds to stderr (status=true)", value: boolSetting("true")},
	{name: "l", short: "l", property: spec.PropLabel, typ: "string", ycsb: true,
		usage: "label prefixed to status lines (label)"},
	{name: "no-tui", property: spec.PropTUI, typ: "bool",
		usage: "print plain YCSB status lines instead of the live terminal view (" + spec.PropTUI + "=false)", value: boolSetting("false")},
	{name: "metrics-addr", property: spec.PropMetricsAddr, typ: "string",
		usage: "serve Prometheus metrics at http://ADDR/metrics; a bare port binds 127.0.0.1 (" + spec.PropMetricsAddr + ")",
		value: func(v string) (string, bool, error) { _, err := metrics.NormalizeAddr(v); return v, true, err }},
	{name: "results", property: spec.PropResults, typ: "string",
		usage: "write a run bundle (run.json, summary.txt, merged.hlog) to this directory, which must not hold one already (" + spec.PropResults + ")"},
	{name: "overwrite", property: spec.PropOverwrite, typ: "bool", value: boolSetting("true"),
		usage: "replace the bundle already in --results DIR (set aside when the run starts, removed once it has measured, put back if it never does) (" + spec.PropOverwrite + "=true)"},
	{name: "interval", property: spec.PropStatusInterval, typ: "duration",
		usage: "merge and status interval, e.g. 2s (" + spec.PropStatusInterval + "; default 10s)", value: intervalValue},
}

// Flag groups by command.
var (
	runSettingFlags         = []string{"threads", "target", "s", "l", "no-tui", "metrics-addr", "results", "overwrite"}
	coordinatorSettingFlags = append(append([]string(nil), runSettingFlags...), "interval")
)

func lookupSettingFlag(name string) settingFlag {
	for _, sf := range settingFlags {
		if sf.name == name {
			return sf
		}
	}
	panic("no setting flag " + name)
}

// typed is what the user typed for the flag: "-threads 1.5".
func (sf settingFlag) typed(v string) string {
	if sf.typ == "bool" && (v == "true" || v == "") {
		if sf.ycsb {
			return "-" + sf.name
		}
		return "--" + sf.name
	}
	if sf.ycsb {
		return fmt.Sprintf("-%s %s", sf.name, v)
	}
	return fmt.Sprintf("--%s %s", sf.name, v)
}

func threadsValue(v string) (string, bool, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 1 {
		return "", false, errors.New("expected a whole number of client threads, at least 1")
	}
	return strconv.FormatInt(n, 10), true, nil
}

func targetValue(v string) (string, bool, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false, errors.New("expected a rate in operations per second, 0 for unthrottled")
	}
	return strconv.FormatFloat(f, 'g', -1, 64), true, nil
}

// Bounds of --interval: a merge every 10 ms at the most, every hour at
// the least.
const (
	minInterval = 10 * time.Millisecond
	maxInterval = time.Hour
)

func intervalValue(v string) (string, bool, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < minInterval || d > maxInterval {
		return "", false, fmt.Errorf("expected a duration from %s to %s, such as 10s or 500ms", minInterval, maxInterval)
	}
	return strconv.FormatFloat(d.Seconds(), 'g', -1, 64), true, nil
}

// boolSetting makes a boolean flag that sets its property to set when
// true, and nothing when false.
func boolSetting(set string) func(string) (string, bool, error) {
	return func(v string) (string, bool, error) {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return "", false, errors.New("expected true or false")
		}
		return set, on, nil
	}
}

// typedFlag is one flag occurrence, in command-line order.
type typedFlag struct{ name, value string }

// typedValue records every Set in the command's typed list, so that the
// order of -p and the setting flags survives parsing.
type typedValue struct {
	list      *[]typedFlag
	name, typ string
	last      string
}

func (v *typedValue) Set(s string) error {
	*v.list = append(*v.list, typedFlag{v.name, s})
	v.last = s
	return nil
}

func (v *typedValue) String() string { return v.last }
func (v *typedValue) Type() string   { return v.typ }

// typedValues returns the values given to a typed flag of cmd, in order.
func typedValues(cmd *cobra.Command, name string) []string {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		return nil
	}
	tv, ok := f.Value.(*typedValue)
	if !ok {
		return nil
	}
	var out []string
	for _, t := range *tv.list {
		if t.name == name {
			out = append(out, t.value)
		}
	}
	return out
}

// addTyped registers a flag whose occurrences go to list in order.
func addTyped(cmd *cobra.Command, list *[]typedFlag, name, short, typ, usage string) {
	fl := cmd.Flags()
	if fl.Lookup(name) != nil {
		return
	}
	v := &typedValue{list: list, name: name, typ: typ}
	fl.VarP(v, name, short, usage)
	if typ == "bool" {
		fl.Lookup(name).NoOptDefVal = "true"
	}
}

package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// ycsbFlags are YCSB's client flags, shared by load, run, shell, init,
// drop and the coordinator.
type ycsbFlags struct {
	files []string
	// typed holds -p and every setting flag in the order typed.
	typed []typedFlag
	db    string // -db: read through the flag set by selectDB
	// byFlag holds, per property that a setting flag set last on the
	// command line, that flag as typed ("-target 0.002"); filled by
	// resolve, read by asTyped.
	byFlag map[string]string
}

// register adds -P, -p and -db, and the setting flags named.
func (f *ycsbFlags) register(cmd *cobra.Command, settings ...string) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "P", "P", nil, "workload property file or built-in workload name (repeatable; applied in order)")
	addTyped(cmd, &f.typed, "p", "p", "stringArray", "property override key=value (repeatable; beats every -P file; with a flag for the same property, the later one wins)")
	fl.StringVar(&f.db, "db", "", "YCSB's -db: adapter name or YCSB binding class, e.g. site.ycsb.db.CassandraCQLClient (same as the db property or the positional db)")
	for _, name := range settings {
		sf := lookupSettingFlag(name)
		addTyped(cmd, &f.typed, sf.name, sf.short, sf.typ, sf.usage)
	}
}

// resolve builds the merged properties as YCSB's Client does: -P files in
// order, then every command-line setting on top, -p and flags in the order
// typed (a later one wins). notes are lines for the operator: a flag and
// a -p that disagree, a workloads/NAME path served by a built-in workload.
func (f *ycsbFlags) resolve(gs *GlobalState, cmd *cobra.Command) (p *properties.Properties, notes []string, err error) {
	p = properties.New()
	for _, name := range f.files {
		text, note, err := readWorkload(gs, name)
		if err != nil {
			return nil, nil, invalid(err)
		}
		if note != "" {
			notes = append(notes, note)
		}
		utf8Note, err := p.LoadText(text)
		if err != nil {
			return nil, nil, invalid(fmt.Errorf("flag -P %q: %w", name, err))
		}
		if utf8Note != "" {
			notes = append(notes, fmt.Sprintf("-P %s: %s", name, utf8Note))
		}
	}
	cl := properties.New()
	// setBy lists, per property, what set it to a new value, in order;
	// byFlag and byP say whether a flag or a -p was among them.
	setBy := map[string][]string{}
	f.byFlag = map[string]string{}
	var order []string
	byFlag, byP := map[string]bool{}, map[string]bool{}
	for _, t := range f.typed {
		k, v, src, ok, err := t.setting()
		if err != nil {
			return nil, nil, invalid(err)
		}
		if !ok {
			continue
		}
		if t.name == "p" {
			byP[k] = true
			delete(f.byFlag, k)
		} else {
			byFlag[k] = true
			f.byFlag[k] = src
		}
		if _, seen := setBy[k]; !seen {
			order = append(order, k)
		}
		if prev, had := cl.Lookup(k); !had || prev != v {
			setBy[k] = append(setBy[k], src)
		}
		cl.Set(k, v)
	}
	for _, k := range order {
		if byFlag[k] && byP[k] && len(setBy[k]) > 1 {
			v, _ := cl.Lookup(k)
			notes = append(notes, properties.Printable(fmt.Sprintf("Warning: %s set %s differently; the later one on the command line wins, as in YCSB: %s=%s",
				strings.Join(setBy[k], " and "), k, k, v)))
		}
	}
	p.Merge(cl)
	return p, notes, nil
}

// asTyped makes a refused property that a setting flag set speak of the
// flag as the user typed it (properties.Error's Flag): a value refused as
// "property target" reads as if -p target= had been typed. Only an error
// quoting the property's value as set gets it; one about a value derived
// from it (an agent's share) keeps the property's own terms. The error is
// filled in place: it is this command's own, built for this message.
func (f *ycsbFlags) asTyped(p *properties.Properties, err error) error {
	var pe *properties.Error
	if err == nil || p == nil || !errors.As(err, &pe) || pe.Flag != "" {
		return err
	}
	src, ok := f.byFlag[pe.Property]
	if ok && pe.Value != "" && pe.Value == p.String(pe.Property, "") {
		pe.Flag = src
	}
	return err
}

// setting is the property a typed flag sets, its value and the flag as
// typed; ok=false sets nothing (-s=false).
func (t typedFlag) setting() (k, v, src string, ok bool, err error) {
	if t.name == "p" {
		k, v, err = properties.ParseOverride(t.value)
		return k, v, "-p " + k + "=" + v, err == nil, err
	}
	sf := lookupSettingFlag(t.name)
	k, v, src, ok = sf.property, t.value, sf.typed(t.value), true
	if sf.value != nil {
		if v, ok, err = sf.value(t.value); err != nil {
			err = fmt.Errorf("flag %s: %w (the %s property)", properties.Printable(src), err, sf.property)
		}
	}
	return k, v, src, ok, err
}

// resolveNoted resolves the properties of a command that runs no
// benchmark (shell, init, drop) and prints the notes at once.
func (f *ycsbFlags) resolveNoted(gs *GlobalState, cmd *cobra.Command) (*properties.Properties, error) {
	p, notes, err := f.resolve(gs, cmd)
	for _, n := range notes {
		fmt.Fprintln(gs.Stderr, n)
	}
	return p, err
}

// readWorkload reads a -P argument: a real file wins over a built-in
// workload of the same name. YCSB users type workloads/workloada (the path
// inside YCSB's distribution); where no such file exists, that names the
// built-in workload too, and note says so. Files are read through
// gs.ReadFile, which in a real process is properties.ReadFile: at most
// properties.MaxFileBytes, refusing binary content, so that -P /dev/zero
// fails at once.
func readWorkload(gs *GlobalState, name string) (text []byte, note string, err error) {
	b, err := gs.ReadFile(name)
	if err == nil {
		return b, "", nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		// The file exists but cannot be used: never fall back silently
		// to a built-in workload of the same name.
		return nil, "", fmt.Errorf("flag -P %q: %w", name, err)
	}
	if w, ok := workloads.Lookup(name); ok {
		return []byte(w.Text), "", nil
	}
	if dir, base := filepath.Split(filepath.Clean(name)); filepath.Clean(dir) == "workloads" {
		if w, ok := workloads.Lookup(base); ok {
			return []byte(w.Text), fmt.Sprintf("-P %s: no such file here; using the built-in workload %s (YCSB's file of that name)", properties.Printable(name), w.Name), nil
		}
	}
	var names []string
	for _, w := range workloads.List() {
		names = append(names, w.Name)
	}
	return nil, "", fmt.Errorf("flag -P %q: no such file and no built-in workload of that name (built-in: %s)", name, strings.Join(names, ", "))
}

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// ycsbFlags are YCSB's client flags, shared by load, run, shell, init,
// drop and the coordinator.
type ycsbFlags struct {
	files     []string
	overrides []string
	threads   int
	target    float64
	status    bool
	label     string
	db        string // -db: read through the flag set by selectDB
}

func (f *ycsbFlags) register(cmd *cobra.Command, withRun bool) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "P", "P", nil, "workload property file or built-in workload name (repeatable; applied in order)")
	fl.StringArrayVarP(&f.overrides, "p", "p", nil, "property override key=value (repeatable; beats every -P file)")
	fl.StringVar(&f.db, "db", "", "YCSB's -db: adapter name or YCSB binding class, e.g. site.ycsb.db.CassandraCQLClient (same as the db property or the positional db)")
	if withRun {
		fl.IntVar(&f.threads, "threads", 0, "client threads (threadcount); per agent in distributed runs")
		fl.Float64Var(&f.target, "target", 0, "target total operations per second (0 = unthrottled)")
		fl.BoolVarP(&f.status, "s", "s", false, "print status every status.interval seconds to stderr")
		fl.StringVarP(&f.label, "l", "l", "", "label prefixed to status lines")
	}
}

// resolve builds the merged properties: -P files in order, then every
// command-line setting on top, as YCSB's Client does.
func (f *ycsbFlags) resolve(gs *GlobalState, cmd *cobra.Command) (*properties.Properties, error) {
	p := properties.New()
	for _, name := range f.files {
		text, err := readWorkload(gs, name)
		if err != nil {
			return nil, invalid(err)
		}
		if err := p.Load(bytes.NewReader(text)); err != nil {
			return nil, invalid(fmt.Errorf("flag -P %q: %w", name, err))
		}
	}
	cl := properties.New()
	for _, o := range f.overrides {
		k, v, err := properties.ParseOverride(o)
		if err != nil {
			return nil, invalid(err)
		}
		cl.Set(k, v)
	}
	if cmd.Flags().Lookup("threads") != nil {
		if cmd.Flags().Changed("threads") {
			if f.threads < 1 {
				return nil, invalid(fmt.Errorf("flag -threads %d: expected at least 1", f.threads))
			}
			cl.Set(spec.PropThreads, strconv.Itoa(f.threads))
		}
		if cmd.Flags().Changed("target") {
			if f.target < 0 {
				return nil, invalid(fmt.Errorf("flag -target %g: expected a non-negative ops/s rate", f.target))
			}
			cl.Set(spec.PropTarget, strconv.FormatFloat(f.target, 'g', -1, 64))
		}
		if f.status {
			cl.Set("status", "true")
		}
		if cmd.Flags().Changed("l") {
			cl.Set(spec.PropLabel, f.label)
		}
	}
	if err := applyPropertyFlags(cmd, cl); err != nil {
		return nil, err
	}
	p.Merge(cl)
	return p, nil
}

// readWorkload reads a -P argument: a real file wins over a built-in
// workload of the same name. Files are read through gs.ReadFile, which in
// a real process is properties.ReadFile: at most properties.MaxFileBytes,
// refusing binary content, so that -P /dev/zero fails at once.
func readWorkload(gs *GlobalState, name string) ([]byte, error) {
	b, err := gs.ReadFile(name)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		// The file exists but cannot be used: never fall back silently
		// to a built-in workload of the same name.
		return nil, fmt.Errorf("flag -P %q: %w", name, err)
	}
	if w, ok := workloads.Lookup(name); ok {
		return []byte(w.Text), nil
	}
	var names []string
	for _, w := range workloads.List() {
		names = append(names, w.Name)
	}
	return nil, fmt.Errorf("flag -P %q: no such file and no built-in workload of that name (built-in: %s)", name, strings.Join(names, ", "))
}

package spec_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/ycsbctl/ycsbctl/adapters/all"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// freeForm are the declared properties whose value is any text by nature
// (names, prefixes, paths, patterns): a value nobody expects is still a
// value. Every other property has a set of values it knows.
var freeForm = map[string]bool{
	"table": true, "fieldnameprefix": true, "keyprefix": true, "fieldlengthhistogram": true, "label": true,
	"exportfile": true, "measurement.raw.output_file": true, "hdrhistogram.output.path": true,
	"ycsbctl.results": true, "ycsbctl.telemetry.pids": true,
}

// checkedLater are properties the parse takes as text and a later step
// refuses when they name nothing (exit 2, before any load; the command-line
// tests give them a nonsense value too): db is resolved by the command
// line (an unknown adapter or class), ycsbctl.metrics.addr by listening.
var checkedLater = map[string]bool{"db": true, "ycsbctl.metrics.addr": true}

// TestNoValueIsSilentlyDefaulted gives every property the client and the
// core workload declare, in turn, a value no property knows, and requires
// that it is refused (an error naming the property) or warned about (a
// warning naming the property and the value): never read as some default
// without a word. insertorder=random was silently ordered, as in YCSB,
// which reads any insertorder but hashed as ordered; a property added
// later with a lenient parse fails here.
func TestNoValueIsSilentlyDefaulted(t *testing.T) {
	const nonsense = "zz-no-such-value"
	known := append(spec.Known(), workload.Known()...)
	for _, phase := range []run.Phase{run.Load, run.Run} {
		for _, k := range known {
			if freeForm[k.Name] || checkedLater[k.Name] || strings.HasPrefix(k.Name, "ycsbctl.insertstripe.") || k.Name == "ycsbctl.keyspace.operationcount" && phase == run.Load {
				continue
			}
			t.Run(phase.String()+"/"+k.Name, func(t *testing.T) {
				p := props("recordcount", "100", "operationcount", "10")
				p.Set(k.Name, nonsense)
				sp, err := spec.Parse("basic", p, phase)
				if err != nil {
					assert.Contains(t, err.Error(), k.Name, "the refusal names the property")
					return
				}
				var said []string
				for _, w := range sp.Warnings {
					if strings.Contains(w, k.Name+"="+nonsense) {
						said = append(said, w)
					}
				}
				require.NotEmpty(t, said, "%s=%s was accepted without an error or a warning naming it (warnings: %q)", k.Name, nonsense, sp.Warnings)
			})
		}
	}
}

// TestInsertOrderWarning: each insertorder YCSB does not know (any but
// hashed and ordered, case and blanks included) warns once, naming the
// value, what YCSB does and what to set, and is read as YCSB reads it
// (ordered); the two known values and an unset one warn nothing.
func TestInsertOrderWarning(t *testing.T) {
	for _, c := range []struct {
		value   string
		set     bool
		warn    bool
		ordered bool
	}{
		{set: false},
		{value: "hashed", set: true},
		{value: "ordered", set: true, ordered: true},
		{value: "random", set: true, warn: true, ordered: true},
		{value: "Hashed", set: true, warn: true, ordered: true},
		{value: "HASHED", set: true, warn: true, ordered: true},
		{value: "hashed ", set: true, warn: true, ordered: true},
		{value: "", set: true, warn: true, ordered: true},
	} {
		t.Run(c.value, func(t *testing.T) {
			p := props("recordcount", "100", "operationcount", "10")
			if c.set {
				p.Set("insertorder", c.value)
			}
			for _, phase := range []run.Phase{run.Load, run.Run} {
				sp, err := spec.Parse("basic", p, phase)
				require.NoError(t, err)
				assert.Equal(t, c.ordered, sp.Workload.OrderedInserts)
				var got []string
				for _, w := range sp.Warnings {
					if strings.Contains(w, "insertorder") {
						got = append(got, w)
					}
				}
				if !c.warn {
					assert.Empty(t, got, phase)
					continue
				}
				require.Len(t, got, 1, phase)
				for _, want := range []string{"insertorder=", "hashed, ordered", "in YCSB any value but hashed", "set insertorder=ordered", "insertorder=hashed"} {
					assert.Contains(t, got[0], want)
				}
			}
		})
	}
}

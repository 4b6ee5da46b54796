package cli

import (
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/spec"
	"github.com/ycsbctl/ycsbctl/internal/testutil/fuzzbound"
)

// FuzzSettingFlags gives every flag that sets a property (-threads,
// -target, --interval, ...) any text. Invariants: the value a flag sets
// is refused by its property, if at all, as a properties.Error of that
// property (which the command line words as the flag typed, exit 2:
// "flag -target 1e10 (the target property): expected ..."), never as
// another error or a later failure; --interval's value is the duration
// typed.
func FuzzSettingFlags(f *testing.F) {
	for i, v := range []string{"4", "1.5", "100", "0", "10s", "500ms", "1h", "9223372036s", "1e-9", "true", "127.0.0.1:0", "-1"} {
		f.Add(uint8(i), v)
	}
	f.Fuzz(func(t *testing.T, which uint8, typed string) {
		if len(typed) > 256 {
			return
		}
		defer fuzzbound.Start(typed)()
		sf := settingFlags[int(which)%len(settingFlags)]
		if sf.value == nil {
			return
		}
		v, ok, err := sf.value(typed)
		if err != nil || !ok {
			return
		}
		p := properties.New()
		p.SetPairs("operationcount", "10", sf.property, v)
		if _, err := spec.Parse("basic", p, run.Run); err != nil {
			var pe *properties.Error
			if !errors.As(err, &pe) || pe.Property != sf.property {
				t.Fatalf("--%s %q sets %s=%q, refused by another parser: %v", sf.name, typed, sf.property, v, err)
			}
		}
		if sf.name == "interval" {
			d, _ := time.ParseDuration(typed)
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil || math.Abs(secs*1e9-float64(d)) > 1 {
				t.Fatalf("--interval %q is %s, set as %q seconds", typed, d, v)
			}
		}
	})
}

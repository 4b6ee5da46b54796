package capacity

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/testutil/fuzzbound"
)

// FuzzObjective parses any text as a --slo objective. Invariants: an
// accepted objective has an operation objectives may name, a percentile
// strictly between 0 and 100 and a positive bound; as written (String,
// capacity.json's JSON) it parses back to itself.
func FuzzObjective(f *testing.F) {
	for _, s := range []string{"READ.p99<=10ms", "update.p99.9<=1.5s", " SCAN.P50 <= 500us ", "READ-MODIFY-WRITE.p95<=20ms",
		"read-modify-write.p99.99<=1ms", "READ.p99", "READ.p1e-3<=1h", "INSERT.p0x1p-2<=1ns", "DELETE.p99.999999999<=2562047h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1024 {
			return
		}
		defer fuzzbound.Start(s)()
		o, err := ParseObjective(s)
		if err != nil {
			if !strings.Contains(err.Error(), "expected") && !strings.Contains(err.Error(), "unknown operation") {
				t.Fatalf("refusal says nothing of what was expected: %v", err)
			}
			return
		}
		known := false
		for _, op := range objectiveOps {
			known = known || op == o.Op
		}
		if !known || !(o.Percentile > 0 && o.Percentile < 100) || o.Bound <= 0 {
			t.Fatalf("%q accepted as %+v", s, o)
		}
		again, err := ParseObjective(o.String())
		if err != nil || again != o {
			t.Fatalf("%q is %+v, written %q, read back %+v (%v)", s, o, o.String(), again, err)
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON Objective
		if err := json.Unmarshal(b, &fromJSON); err != nil || fromJSON != o {
			t.Fatalf("%+v as JSON %s reads back %+v (%v)", o, b, fromJSON, err)
		}
	})
}

// FuzzSettings checks a search's settings as the flags give them
// (--slo, --max-error-rate, --precision, --probe, --warmup, --start,
// --max, --max-probes). Invariants: an accepted set passes Check, and
// the equivalent command line (Args, what a suite's capacity step runs)
// gives the same settings again.
func FuzzSettings(f *testing.F) {
	f.Add("READ.p99<=10ms", "UPDATE.p99.9<=1s", "0.01", "2%", int64(60), int64(10), 100.0, 1e6, 20)
	f.Add("READ.p50<=1ms", "", "5%", "0.001", int64(1), int64(0), 0.001, 0.001, 1)
	f.Fuzz(func(t *testing.T, slo1, slo2, errRate, precision string, probeS, warmupS int64, start, maxT float64, probes int) {
		if len(slo1)+len(slo2)+len(errRate)+len(precision) > 1024 {
			return
		}
		defer fuzzbound.Start([]any{slo1, slo2, errRate, precision, probeS, warmupS, start, maxT, probes})()
		in := Input{SLOs: []string{slo1}, MaxErrorRate: errRate, Precision: precision,
			Probe: time.Duration(probeS) * time.Second, Warmup: time.Duration(warmupS) * time.Second, Start: start, Max: maxT, MaxProbes: probes}
		if slo2 != "" {
			in.SLOs = append(in.SLOs, slo2)
		}
		s, err := in.Settings(nil)
		if err != nil {
			return
		}
		if err := s.Check(); err != nil {
			t.Fatalf("accepted settings fail Check: %v", err)
		}
		again := settingsFromArgs(t, s.Args())
		if !reflect.DeepEqual(s, again) {
			t.Fatalf("settings %+v, as flags %q, give %+v", s, s.Args(), again)
		}
	})
}

// settingsFromArgs reads Args' flags back as the command's flags would.
func settingsFromArgs(t *testing.T, args []string) Settings {
	t.Helper()
	in := Input{}
	for i := 0; i+1 < len(args); i += 2 {
		v := args[i+1]
		var err error
		switch args[i] {
		case SettingSLO:
			in.SLOs = append(in.SLOs, v)
		case SettingMaxErrorRate:
			in.MaxErrorRate = v
		case SettingPrecision:
			in.Precision = v
		case SettingProbe:
			in.Probe, err = time.ParseDuration(v)
		case SettingWarmup:
			in.Warmup, err = time.ParseDuration(v)
		case SettingStart:
			err = json.Unmarshal([]byte(v), &in.Start)
		case SettingMax:
			err = json.Unmarshal([]byte(v), &in.Max)
		case SettingMaxProbes:
			err = json.Unmarshal([]byte(v), &in.MaxProbes)
		}
		if err != nil {
			t.Fatalf("flag %s %q: %v", args[i], v, err)
		}
	}
	s, err := in.Settings(nil)
	if err != nil {
		t.Fatalf("the flags %q are refused: %v", args, err)
	}
	return s
}

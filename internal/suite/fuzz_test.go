package suite_test

import (
	"errors"
	"reflect"
	"testing"

	_ "github.com/ycsbctl/ycsbctl/adapters/all"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/testutil/fuzzbound"
	"github.com/ycsbctl/ycsbctl/workloads"
)

// fuzzSeeds are suite files of the shapes the tests use: every kind of
// step, sweeps, per-database properties, a thread scan, a capacity step.
var fuzzSeeds = []string{
	`name: small-comparison
properties: {recordcount: 20000}
databases:
  - db: cassandra
    properties: {hosts: 127.0.0.1}
  - db: basic
agents: []
steps:
  - load: workloada
    threads: 8
  - load: workloada
    name: bulkload
    properties: {batchsize: 100}
  - pause: 5s
  - run: workloadc
    warmup: 10s
    duration: 30s
    threads: [1, 4, 16]
  - run: workloadb
    target: 5000
`,
	`name: sweep
databases: [{db: basic, name: b1}, {db: basic, name: b2, properties: {basicdb.simulatedelay: 1}}]
steps:
  - run: workloada
    duration: 2s
    sweep: {readproportion: [0.5, 0.9]}
    per_database:
      - database: b2
        properties: {threadcount: 2}
`,
	`name: scan
databases: [{db: basic}]
steps:
  - run: workloadc
    duration: 1s
    threadscan: {max: 8, gain: 0.2}
  - run: workloadc
    threads: scan
    duration: 1s
`,
	`name: cap
databases: [{db: basic}]
steps:
  - capacity: workloadc
    slo: [READ.p99<=10ms, UPDATE.p99.9<=1s]
    max_error_rate: 1%
    probe: 2s
    start: 100
    max: 1000
    max_probes: 4
`,
	"name: x\ndatabases: [{db: basic}]\nsteps: [{run: workloada, duration: 1h30m, warmup: 0s, target: [10, 20]}]\n",
	"&a [*a, *a]",
	"{",
	"",
}

// FuzzSuiteFile parses any bytes as a suite file and expands it into its
// plan as `suite --dry-run` does. Invariants: it never panics nor takes
// long; a refusal is a suite.Error (file, line, key, what was expected)
// or, from the expansion, an error that says which step; parsing is
// deterministic; an accepted file has a name, databases and steps.
func FuzzSuiteFile(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, s := range workloads.Suites() {
		f.Add([]byte(s.Text))
	}
	exists := func(name string) bool { _, ok := workloads.Lookup(name); return ok }
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 16<<10 {
			return
		}
		defer fuzzbound.Start(src)()
		file, err := suite.Parse("s.yaml", src, exists)
		if err != nil {
			var se *suite.Error
			if !errors.As(err, &se) {
				t.Fatalf("refused with a %T, not a suite.Error: %v", err, err)
			}
			return
		}
		again, err := suite.Parse("s.yaml", src, exists)
		if err != nil || !reflect.DeepEqual(file, again) {
			t.Fatalf("parsed twice differently (%v)", err)
		}
		if file.Name == "" || len(file.Databases) == 0 || len(file.Steps) == 0 {
			t.Fatalf("accepted without a name, databases or steps: %+v", file)
		}
		_, _ = suite.Expand(file, suite.Options{ResultsDir: "results"})
	})
}

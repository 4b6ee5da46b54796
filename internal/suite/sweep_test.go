package suite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
)

func expandErr(t *testing.T, src string) error {
	t.Helper()
	f, err := Parse("s.yaml", []byte(src), nil)
	if err != nil {
		return err
	}
	_, err = Expand(f, Options{ResultsDir: "R"})
	return err
}

func TestSweepAnyProperty(t *testing.T) {
	p := mustPlan(t, `name: pe
properties: {recordcount: 1000, columnfamily: family}
databases: [hbase]
steps:
  - load: workloada
    sweep: {durability: [SYNC_WAL, SKIP_WAL]}
  - load: workloada
    name: cache
    sweep: {hbase.blockcache: [true, false]}
  - run: workloadc
    operations: 100
    sweep: {hbase.usepagefilter: [true, false]}
  - run: workloade
    operations: 100
`, "R")
	var got []string
	for _, it := range p.Items {
		got = append(got, string(it.Kind)+" "+it.Dir+" schema="+boolText(it.Schema)+" "+it.SweepLabel())
	}
	// durability is an ordinary property: one load per value, each with
	// its schema recreated. hbase.blockcache is a schema option: the
	// load and the steps up to the next load repeat for each value.
	assert.Equal(t, []string{
		"load hbase/01-load-workloada-durability=SYNC_WAL schema=true durability=SYNC_WAL",
		"load hbase/01-load-workloada-durability=SKIP_WAL schema=true durability=SKIP_WAL",
		"load hbase/02-cache-hbase.blockcache=true schema=true hbase.blockcache=true",
		"run hbase/03-run-workloadc-hbase.blockcache=true-hbase.usepagefilter=true schema=false hbase.blockcache=true, hbase.usepagefilter=true",
		"run hbase/03-run-workloadc-hbase.blockcache=true-hbase.usepagefilter=false schema=false hbase.blockcache=true, hbase.usepagefilter=false",
		"run hbase/04-run-workloade-hbase.blockcache=true schema=false hbase.blockcache=true",
		"load hbase/02-cache-hbase.blockcache=false schema=true hbase.blockcache=false",
		"run hbase/03-run-workloadc-hbase.blockcache=false-hbase.usepagefilter=true schema=false hbase.blockcache=false, hbase.usepagefilter=true",
		"run hbase/03-run-workloadc-hbase.blockcache=false-hbase.usepagefilter=false schema=false hbase.blockcache=false, hbase.usepagefilter=false",
		"run hbase/04-run-workloade-hbase.blockcache=false schema=false hbase.blockcache=false",
	}, got)
	// The swept value is a property of the run, parsed into its spec.
	assert.Equal(t, "SKIP_WAL", p.Items[1].Spec.Props.String("durability", ""))
	assert.Equal(t, "false", p.Items[9].Spec.Props.String("hbase.blockcache", ""))
	assert.Equal(t, "false", p.Items[8].Props["hbase.usepagefilter"])

	// A schema option swept on a run step cannot be honoured there.
	err := expandErr(t, `name: x
properties: {columnfamily: family}
databases: [hbase]
steps:
  - load: workloada
  - run: workloadc
    operations: 10
    sweep: {hbase.blockcache: [true, false]}
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `line 8: key "hbase.blockcache": is a schema option of hbase`)
	assert.Contains(t, err.Error(), "sweep it on the load step")

	// A bad swept value is refused before anything runs, at its line.
	err = expandErr(t, `name: x
databases: [basic]
steps:
  - run: workloadc
    operations: 10
    sweep: {requestdistribution: [uniform, gaussian]}
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `line 6: key "requestdistribution"`)
	assert.Contains(t, err.Error(), "gaussian")

	// threads and sweep must not set the same property twice.
	_, err = Parse("s.yaml", []byte("name: x\ndatabases: [basic]\nsteps:\n  - run: workloadc\n    threads: [1, 2]\n    sweep: {threadcount: [4]}\n"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "threadcount")
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestPerDatabaseProperties(t *testing.T) {
	p := mustPlan(t, `name: study
properties: {recordcount: 100, columnfamily: family}
databases:
  - hbase
  - db: mongodb
  - db: basic
    name: basic-slow
steps:
  - load: workloada
    threads: 24
    per_database:
      hbase: {clientbuffering: true, writebuffersize: 2048}
      mongodb: {mongodb.writeConcern: acknowledged}
      basic-slow: {basicdb.simulatedelay: 5}
`, "R")
	byDB := map[string]*Item{}
	for _, it := range p.Items {
		byDB[it.DB.Name] = it
	}
	assert.Equal(t, "2048", byDB["hbase"].Props["writebuffersize"])
	assert.Equal(t, "true", byDB["hbase"].Props["clientbuffering"])
	assert.NotContains(t, byDB["hbase"].Props, "mongodb.writeConcern")
	assert.Equal(t, "acknowledged", byDB["mongodb"].Props["mongodb.writeConcern"])
	assert.NotContains(t, byDB["mongodb"].Props, "writebuffersize")
	assert.Equal(t, "5", byDB["basic-slow"].Props["basicdb.simulatedelay"])
	for _, it := range p.Items {
		assert.Equal(t, 24, it.Spec.Threads, it.DB.Name)
	}
	err := expandErr(t, "name: x\ndatabases: [basic]\nsteps:\n  - run: workloadc\n    operations: 1\n    per_database: {cassandar: {x: 1}}\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `key "per_database.cassandar": names neither a database of this suite nor an adapter`)
}

// TestResumeRefusesAnotherConfiguration is the issue-19 case in the
// suite package: bundles made with one -p must not be reused by a resume
// with another; the refusal names the step and the property.
func TestResumeRefusesAnotherConfiguration(t *testing.T) {
	dir := t.TempDir()
	src := "name: s\ndatabases: [basic]\nsteps:\n  - load: workloada\n  - run: workloadc\n    operations: 100\n  - run: workloada\n    operations: 100\n"
	p := mustPlan(t, src, dir, "recordcount", "1000")
	var r *Runner
	ex := &fakeExec{fail: func(it *Item) exitcode.Code {
		if it.Workload == "workloada" && it.Kind == KindRun {
			r.Stop()
			return exitcode.Aborted
		}
		return exitcode.OK
	}}
	r = &Runner{Plan: p, Exec: ex, Clock: clock.NewReal()}
	_, code := r.Run(context.Background())
	require.Equal(t, exitcode.Aborted, code)

	// The same configuration resumes; the output directory does not
	// count (a moved results directory is the same measurement).
	require.NoError(t, mustPlan(t, src, dir, "recordcount", "1000").CheckResume())
	require.NoError(t, mustPlan(t, src, dir, "recordcount", "1000", "ycsbctl.tui", "false").CheckResume())

	changed := mustPlan(t, src, dir, "recordcount", "2000")
	err := changed.CheckResume()
	var me *MismatchError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Len(t, me.Steps, 2, "the load and the first run were complete")
	assert.Equal(t, "basic/01-load-workloada", me.Steps[0].Dir)
	assert.Contains(t, err.Error(), `property recordcount: "1000" → "2000"`)
	assert.Contains(t, err.Error(), "choose another --results directory")

	// The runner on its own never takes such a bundle as done either.
	ex2 := &fakeExec{}
	_, code = (&Runner{Plan: changed, Exec: ex2, Clock: clock.NewReal(), Resume: true}).Run(context.Background())
	require.Equal(t, exitcode.OK, code)
	assert.Equal(t, []string{"schema basic", "load basic 01-load-workloada", "run basic 02-run-workloadc", "run basic 03-run-workloada"}, ex2.calls)

	// A bundle without a fingerprint (an older ycsbctl) is not reused.
	b, err := bundle.Read(filepath.Join(dir, "basic", "01-load-workloada"))
	require.NoError(t, err)
	b.Run.Suite = nil
	require.NoError(t, bundle.WriteRun(b.Dir, b.Run))
	err = mustPlan(t, src, dir, "recordcount", "2000").CheckResume()
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "ycsbctl:") || strings.Contains(err.Error(), "no fingerprint"), err.Error())
	_ = os.Remove(filepath.Join(dir, FileState))
}

// TestReadmeExampleExpands keeps the documented file format honest: the
// example in workloads/suites/README.md parses and expands.
func TestReadmeExampleExpands(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "workloads", "suites", "README.md"))
	require.NoError(t, err)
	text := string(b)
	start := strings.Index(text, "```yaml\n")
	require.GreaterOrEqual(t, start, 0)
	text = text[start+len("```yaml\n"):]
	text = text[:strings.Index(text, "```")]
	f, err := Parse("README.md", []byte(text), nil)
	require.NoError(t, err)
	p, err := Expand(f, Options{ResultsDir: "R"})
	require.NoError(t, err)
	var dirs []string
	for _, it := range p.Items {
		if it.DB.Name == "hbase" {
			dirs = append(dirs, filepath.Base(it.Dir))
		}
	}
	assert.Contains(t, dirs, "08-wal-durability=SKIP_WAL")
	assert.Contains(t, dirs, "09-cache-hbase.blockcache=false")
	assert.Contains(t, dirs, "10-run-workloadc-hbase.blockcache=false", "a schema option's sweep repeats the steps after its load")
}

package suite

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func expand(src string, agents ...string) (*Plan, error) {
	f, err := Parse("s.yaml", []byte(src), nil)
	if err != nil {
		return nil, err
	}
	return Expand(f, Options{ResultsDir: "R", Agents: agents})
}

// TestExpandChecksWhatTheStepsWouldRefuse: what a database's Open would
// refuse, and what the file sets that nothing reads, are refused when the
// file is expanded, before any step; what the file gives every database
// but only another adapter reads is left out of this database's steps,
// and a sweep over it does not repeat them.
func TestExpandChecksWhatTheStepsWouldRefuse(t *testing.T) {
	const two = "name: s\ndatabases: [basic, {db: hbase, properties: {columnfamily: f}}]\nsteps:\n"
	refused := []struct{ name, src, want string }{
		{"an adapter's bad value", "name: s\ndatabases: [basic]\nsteps:\n  - run: workloada\n    properties: {basicdb.simulatedelay: 1.5}\n",
			`s.yaml: line 5: key "properties.basicdb.simulatedelay": step run-workloada of basic: property "basicdb.simulatedelay"="1.5"`},
		{"a file-wide property nothing reads", "name: s\nproperties: {fieldcont: 3}\ndatabases: [basic]\nsteps:\n  - run: workloada\n",
			`line 2: key "properties.fieldcont": nothing reads fieldcont in a run of basic (did you mean fieldcount?)`},
		{"a database's property its adapter does not read", "name: s\ndatabases:\n  - db: basic\n    properties: {embedded.sync: true}\nsteps:\n  - run: workloada\n",
			`key "properties.embedded.sync": nothing reads embedded.sync in a run of basic (read by the embedded adapter, not by basic)`},
		{"a sweep over nothing", "name: s\ndatabases: [basic]\nsteps:\n  - run: workloada\n    sweep: {readproportin: [0.1, 0.9]}\n",
			"its 2 values would be 2 identical runs"},
		{"a server's required property, on this host", "name: s\ndatabases: [cassandra]\nsteps:\n  - run: workloada\n",
			`step run-workloada of cassandra: property "hosts"`},
	}
	for _, c := range refused {
		_, err := expand(c.src)
		require.Error(t, err, "%s", c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}

	// Over agents, a property the step leaves unset is the agents' to
	// give (and what the adapter would check after it, theirs too); a
	// value the step sets is still checked.
	_, err := expand("name: s\ndatabases: [cassandra]\nsteps:\n  - run: workloada\n", "127.0.0.1:1")
	require.NoError(t, err)
	_, err = expand("name: s\ndatabases: [cassandra]\nsteps:\n  - run: workloada\n    properties: {hosts: 10.0.0.1, port: x}\n", "127.0.0.1:1")
	require.ErrorContains(t, err, `property "port"="x"`)

	p, err := expand(two + "  - load: workloada\n    properties: {clientbuffering: true}\n    sweep: {durability: [SYNC_WAL, SKIP_WAL]}\n")
	require.NoError(t, err)
	var dirs []string
	for _, it := range p.Items {
		dirs = append(dirs, it.Dir)
		if it.DB.DB == "basic" {
			assert.NotContains(t, it.Props, "clientbuffering")
			assert.NotContains(t, it.Props, "durability")
		}
	}
	assert.Equal(t, []string{filepath.Join("basic", "01-load-workloada"),
		filepath.Join("hbase", "01-load-workloada-durability=SYNC_WAL"), filepath.Join("hbase", "01-load-workloada-durability=SKIP_WAL")}, dirs)
}

// TestPlanWarnsOnceOfWhatNothingReads: a -p nothing reads is YCSB's
// syntax, and warned about as a plain run does, once for the plan.
func TestPlanWarnsOnceOfWhatNothingReads(t *testing.T) {
	f, err := Parse("s.yaml", []byte("name: s\ndatabases: [basic]\nsteps:\n  - run: workloada\n  - run: workloadc\n"), nil)
	require.NoError(t, err)
	p, err := Expand(f, Options{ResultsDir: "R", Overrides: map[string]string{"readproportin": "1"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"Warning: properties that nothing reads (ignored): readproportin (did you mean readproportion?)"}, p.Warnings())
}

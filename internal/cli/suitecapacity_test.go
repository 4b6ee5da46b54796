package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/capacity"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
)

// TestSuiteCapacityStep runs a suite with a capacity step in this process
// (the no-op database, 1 s probes, an objective that holds, two
// probes) and reads back what it wrote: the capacity bundle with its
// probes and the suite's record in capacity.json, suite.json, the
// workbook's Capacity sheet agreeing with capacity.json, compare.html's
// capacity section, the answer on stdout, and a resume that reuses the
// search.
func TestSuiteCapacityStep(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "cap.yaml", `name: cap
properties: {recordcount: 100, basicdb.verbose: false}
databases: [basic]
steps:
  - load: workloada
  - capacity: workloadc
    threads: 1
    slo: 'READ.p99<=1s'
    max_error_rate: 100%
    probe: 1s
    warmup: 0s
    start: 200
    max: 800
    max_probes: 2
`)
	res := filepath.Join(dir, "results")
	r := execute(t, "", "suite", file, "--results", res)
	require.Equal(t, 0, r.code, r.stderr)
	step := filepath.Join("basic", "02-capacity-workloadc")
	assert.Contains(t, r.stderr, "Capacity probe 1 of at most 2 at 200 ops/s")

	rec, err := capacity.Read(filepath.Join(res, step))
	require.NoError(t, err)
	assert.Equal(t, capacity.StatusComplete, rec.Status)
	require.NotNil(t, rec.Suite)
	assert.Equal(t, "cap", rec.Suite.Suite)
	assert.Equal(t, "02-capacity-workloadc", rec.Suite.Step)
	assert.Equal(t, "workloadc", rec.Workload)
	assert.Equal(t, "capacity", rec.CommandLine[1], "the step's equivalent command")
	require.NotEmpty(t, rec.Probes)
	assert.LessOrEqual(t, len(rec.Probes), 2)
	for _, p := range rec.Probes {
		b, err := bundle.Read(filepath.Join(res, step, p.Bundle))
		require.NoError(t, err)
		assert.Equal(t, strconv.FormatFloat(p.Target, 'g', -1, 64), b.Run.Config.Properties["target"])
		assert.Nil(t, b.Run.Suite, "the suite's record is the search's, not each probe's")
	}
	assert.Contains(t, r.stdout, "basic 02-capacity-workloadc: "+rec.AnswerText())

	st, err := suite.ReadState(res)
	require.NoError(t, err)
	require.Len(t, st.Steps, 2)
	ss := st.Steps[1]
	assert.Equal(t, suite.KindCapacity, ss.Kind)
	assert.Equal(t, suite.StatusPassed, ss.Status)
	assert.Equal(t, rec.Suite.Fingerprint, ss.Fingerprint)

	x, err := excelize.OpenFile(filepath.Join(res, "summary.xlsx"))
	require.NoError(t, err)
	defer func() { _ = x.Close() }()
	assert.Contains(t, x.GetSheetList(), workbook.SheetCapacity)
	rows, err := x.GetRows(workbook.SheetCapacity, excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, workbook.CapacityHeader, rows[0])
	row := map[string]string{}
	for i, h := range rows[0] {
		if i < len(rows[1]) {
			row[h] = rows[1][i]
		}
	}
	assert.Equal(t, "basic", row["Database"])
	assert.Equal(t, "02-capacity-workloadc", row["Step"])
	assert.Equal(t, "READ.p99<=1s", row["Objectives"])
	assert.Equal(t, strconv.Itoa(len(rec.Probes)), row["Probes"])
	assert.Equal(t, string(rec.Answer.Ended), row["Ended"])
	if at := rec.AtCapacity(); at != nil {
		assert.Equal(t, workbook.FormatCell(rec.Answer.Capacity), row["Capacity (ops/s)"])
		assert.Equal(t, workbook.FormatCell(at.Op("READ").Intended["p99"]), row["p99 intended at capacity (µs)"])
	}
	overall, err := x.GetRows(workbook.SheetOverall)
	require.NoError(t, err)
	assert.Len(t, overall, 2, "the load only: a search is not a run")

	page, err := os.ReadFile(filepath.Join(res, "compare.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "<h2>Capacity</h2>")
	assert.Contains(t, string(page), `id="suite-capacity"`)
	assert.Contains(t, string(page), "READ p99 intended against throughput")

	// Resume: the search is complete with the same configuration.
	again := execute(t, "", "suite", file, "--results", res, "--resume")
	require.Equal(t, 0, again.code, again.stderr)
	assert.NotContains(t, again.stderr, "Capacity probe 1")
	assert.True(t, strings.Contains(again.stderr, "02-capacity-workloadc: already complete"), again.stderr)
}

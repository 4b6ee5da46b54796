package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
)

// TestTelemetryUnreadIsBlank: what was not read is blank, never 0. A
// suite of two steps on basic, whose adapter names no server process (so
// no database figure is read on any host): one step of 50 operations,
// over before the first 1 s reading (its host has notes and no reading at
// all), one of 2 s (its host is read, its database is not). run.json
// leaves the unread host's cores, memory and summary out; the workbook's
// Hosts sheet leaves their cells empty (0 cores, 0 MB, 0 % busy were
// shown), the database's cells of both steps empty too, and keeps what
// was measured; the report says the host has no figures and puts "–"
// for the database it did not read.
func TestTelemetryUnreadIsBlank(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "blank.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`name: blank
properties: {basicdb.verbose: false, status.interval: 0.5}
databases: [basic]
steps:
  - run: workloada
    operations: 50
  - run: workloadc
    target: 200
    duration: 2s
`), 0o644))
	res := filepath.Join(work, "results")
	p := startProc(t, work, "suite", file, "--results", res)
	require.Equal(t, 0, p.wait(t, 3*time.Minute), p.stderr())
	short, long := filepath.Join(res, "basic", "01-run-workloada"), filepath.Join(res, "basic", "02-run-workloadc")

	// run.json: no made-up figures for the host never read.
	raw, err := os.ReadFile(filepath.Join(short, bundle.FileRunJSON))
	require.NoError(t, err)
	var doc struct {
		Telemetry struct {
			Hosts []map[string]json.RawMessage `json:"hosts"`
		} `json:"telemetry"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Len(t, doc.Telemetry.Hosts, 1, "the short step's host is recorded (its notes)")
	var keys []string
	for k := range doc.Telemetry.Hosts[0] {
		keys = append(keys, k)
	}
	for _, k := range []string{"cores", "mem_total_bytes", "summary"} {
		assert.NotContains(t, keys, k, "run.json of a host never read has no %s", k)
	}
	longRun := readRun(t, long)
	require.NotNil(t, longRun.Telemetry)
	lh := longRun.Telemetry.Hosts[0]
	require.NotNil(t, lh.Summary, "the 2 s step's host was read")
	assert.Positive(t, lh.Cores)
	assert.Positive(t, lh.MemTotal)

	// The workbook's Hosts sheet.
	x, err := excelize.OpenFile(filepath.Join(res, "summary.xlsx"))
	require.NoError(t, err)
	defer func() { _ = x.Close() }()
	rows, err := x.GetRows(workbook.SheetHosts, excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	require.Len(t, rows, 3, "a header and one row per step")
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	cell := func(r []string, name string) string {
		i, ok := col[name]
		require.True(t, ok, "column %q", name)
		if i < len(r) {
			return r[i]
		}
		return ""
	}
	unread, read := rows[1], rows[2]
	assert.Equal(t, "01-run-workloada", cell(unread, "Step"))
	assert.Equal(t, "0", cell(unread, "Intervals"), "no interval was read: that 0 is true")
	for _, name := range []string{"Cores", "CPU busy (%)", "CPU busy max (%)", "iowait (%)", "Disk write (MB/s)", "Net in (MB/s)",
		"DB CPU (%)", "DB RSS max (MB)", "Client CPU (%)", "Client RSS max (MB)", "Client share of busy CPU"} {
		assert.Empty(t, cell(unread, name), "%s of a host never read", name)
	}
	for _, name := range []string{"DB CPU (%)", "DB CPU max (%)", "DB RSS max (MB)", "DB written (MB)"} {
		assert.Empty(t, cell(read, name), "%s of a database not read", name)
	}
	for _, name := range []string{"Cores", "CPU busy (%)", "Client CPU (%)", "Client RSS max (MB)"} {
		assert.NotEmpty(t, cell(read, name), "%s was read", name)
	}
	periods, err := x.GetRows("Periods", excelize.Options{RawCellValue: true})
	require.NoError(t, err)
	pcol := -1
	for i, h := range periods[0] {
		if h == "DB CPU max (%)" {
			pcol = i
		}
	}
	require.GreaterOrEqual(t, pcol, 0, "the Periods sheet's database column")
	for _, r := range periods[1:] {
		if pcol < len(r) {
			assert.Empty(t, r[pcol], "a period's database CPU, never read: %q", r)
		}
	}

	// The reports.
	for _, dir := range []string{short, long} {
		r := ycsbctl(t, "report", dir)
		require.Equal(t, 0, r.code, r.stderr)
	}
	page, err := os.ReadFile(filepath.Join(short, bundle.FileReport))
	require.NoError(t, err)
	assert.Contains(t, string(page), "no figures")
	assert.NotContains(t, string(page), " 0 cores")
	page, err = os.ReadFile(filepath.Join(long, bundle.FileReport))
	require.NoError(t, err)
	table := string(page)
	if i := strings.Index(table, "Hosts: where the time went"); i >= 0 {
		table = table[i:]
	}
	assert.Contains(t, table, "<td>–</td>", "the database's figures, not read, are a dash")
	assert.NotContains(t, table, "<td>0 MB</td>", "not a 0 MB resident database")
}

//go:build integration

package integration

// The built-in hbase-pe suite (HBase's PerformanceEvaluation study: 1 KB
// values, random and sequential writes with the WAL on and off, a client
// write-buffer sweep, block cache on and off, random reads and scans of
// 10 and 100 rows) against the real standalone HBase servers.sh starts,
// scaled down to a few hundred rows and seconds. Until this test the
// suite and its schema-option sweep had only been planned (--dry-run).
// The checks: every step's bundle complete with exact counts; the block
// cache sweep really recreated the table with each value (the table
// descriptor and regions each bundle's environment read back from the
// server, and the adapter's description after the suite); the swept
// values in the bundle paths, the workbook (read with openpyxl) and on
// the compare page (its sweep charts, rendered in Chromium); the
// durability values in each step's properties, and their effect on the
// region server (its count of mutations written without the WAL).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	_ "github.com/ycsbctl/ycsbctl/adapters/hbase"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/environ"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/testutil/suitecheck"
	"github.com/ycsbctl/ycsbctl/workloads"
)

const (
	peRecords = 400
	peThreads = 4
	peTable   = "ycsbctl_pe"
	// blockCacheSetting is the column family's block cache as the HBase
	// adapter describes the schema (adapters/hbase/describe.go).
	blockCacheSetting = "family family BLOCKCACHE"
	// hbaseJMX is the standalone server's web UI (servers.sh: the
	// master's, on loopback), whose /jmx carries the region server's
	// beans too.
	hbaseJMX = "http://127.0.0.1:16010/jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=Server"
)

// peStep is one planned item of the scaled hbase-pe: its bundle directory
// (the sweep value in it) and the value swept.
type peStep struct {
	dir, kind, key, value string
}

// peSteps is the plan in the order it runs: the write steps with their
// sweeps, then the block cache's schema sweep, which recreates and
// reloads the table for each value and runs the reads and scans after it
// once per value.
func peSteps() []peStep {
	var out []peStep
	for _, s := range []struct {
		name, key string
		values    []string
	}{
		{"01-randomwrite", "durability", []string{"SYNC_WAL", "SKIP_WAL"}},
		{"02-sequentialwrite", "durability", []string{"SYNC_WAL", "SKIP_WAL"}},
		{"03-batchedwrite", "writebuffersize", []string{"4096", "65536", "1048576", "4194304"}},
	} {
		for _, v := range s.values {
			out = append(out, peStep{s.name + "-" + s.key + "=" + v, "load", s.key, v})
		}
	}
	for _, v := range []string{"true", "false"} {
		out = append(out, peStep{"04-cache-hbase.blockcache=" + v, "load", "hbase.blockcache", v})
		for _, run := range []string{"05-randomread", "06-scan10", "07-scan100"} {
			out = append(out, peStep{run + "-hbase.blockcache=" + v, "run", "hbase.blockcache", v})
		}
	}
	return out
}

// hbasePESuite is the built-in hbase-pe rewritten to test size: fewer
// rows and threads, a second of warm-up and two measured seconds for the
// reads and scans, status lines every half second, and the test server.
// It fails when the built-in suite no longer has what it rewrites.
func hbasePESuite(t *testing.T, quorum string) string {
	t.Helper()
	st, ok := workloads.LookupSuite("hbase-pe")
	require.True(t, ok)
	text := st.Text
	for _, r := range [][2]string{
		{"recordcount: 1000000\n", fmt.Sprintf("recordcount: %d\n", peRecords)},
		{"status.interval: 10\n", "status.interval: 0.5\n"},
		{"  - db: hbase\n", fmt.Sprintf("  - db: hbase\n    properties: {hbase.zookeeper.quorum: %q, table: %s}\n", quorum, peTable)},
		{"threads: 16\n", fmt.Sprintf("threads: %d\n", peThreads)},
		{"warmup: 30s\n", "warmup: 1s\n"},
		{"duration: 3m\n", "duration: 2s\n"},
	} {
		require.Contains(t, text, r[0], "the built-in suite changed: update the scaling")
		text = strings.ReplaceAll(text, r[0], r[1])
	}
	return text
}

func TestSuiteHBasePE(t *testing.T) {
	quorum := startServer(t, "hbase")
	dir := t.TempDir()
	file := filepath.Join(dir, "hbase-pe-scaled.yaml")
	require.NoError(t, os.WriteFile(file, []byte(hbasePESuite(t, quorum)), 0o644))
	res := filepath.Join(dir, "results")
	r := runCLI(t, 10*time.Minute, "", "suite", file, "--results", res)
	requireExit(t, r, 0)
	steps := peSteps()

	// The plan ran in this order, every step passed, each in its
	// directory with the swept value in its name.
	st, err := suite.ReadState(res)
	require.NoError(t, err)
	var ran []string
	for _, s := range st.Steps {
		assert.Equal(t, suite.StatusPassed, s.Status, "%s: see %s", s.Dir, suitecheck.StepLog(res, "hbase", strings.TrimPrefix(s.Dir, "hbase/")))
		ran = append(ran, s.Dir)
	}
	var want []string
	for _, s := range steps {
		want = append(want, "hbase/"+s.dir)
	}
	require.Equal(t, want, ran, "the plan: a schema sweep runs the steps after its load once per value")

	// Every bundle: complete, exact counts, the swept value in its
	// properties and its suite record, and the schema the server had.
	regions := map[string]string{} // bundle -> the table's regions when it ran
	for _, s := range steps {
		what := "hbase/" + s.dir
		b, err := bundle.Read(filepath.Join(res, "hbase", s.dir))
		require.NoError(t, err, what)
		run := b.Run
		suitecheck.CheckCounts(t, what, run)
		assert.Equal(t, s.kind, run.Phase, what)
		require.Len(t, run.Agents, 1, what)
		assert.Equal(t, peThreads, run.Agents[0].Threads, "%s: threads", what)
		for op, codes := range run.Summary.Returns {
			for code, n := range codes {
				assert.Equal(t, "OK", code, "%s: %s returned %s %d times", what, op, code, n)
			}
		}
		props := run.Config.Properties
		assert.Equal(t, "1000", props["fieldlength"], "%s: PE's 1 KB values", what)
		assert.Equal(t, "1", props["fieldcount"], what)
		if s.kind == "load" {
			assert.Equal(t, int64(peRecords), run.Summary.Operations, "%s: every record loaded once", what)
			assert.Equal(t, map[string]int64{"OK": peRecords}, run.Summary.Returns["INSERT"], what)
		} else {
			assert.Positive(t, run.Summary.Operations, what)
			assert.Positive(t, run.Summary.WarmupOps, "%s warmed up", what)
			assert.Equal(t, "2", props["maxexecutiontime"], what)
		}
		// The value reached the run: its properties, which the adapter
		// opens with, and the bundle's suite record.
		assert.Equal(t, s.value, props[s.key], "%s: %s in run.json's properties", what, s.key)
		require.NotNil(t, run.Suite, what)
		assert.Equal(t, []bundle.SweepValue{{Key: s.key, Value: s.value}}, run.Suite.Sweep, what)
		if s.key == "writebuffersize" {
			assert.Equal(t, "true", props["clientbuffering"], "%s: the buffer is used", what)
		}
		switch {
		case strings.HasPrefix(s.dir, "06-"):
			assert.Equal(t, "10", props["maxscanlength"], what)
			assert.Equal(t, "constant", props["scanlengthdistribution"], what)
		case strings.HasPrefix(s.dir, "07-"):
			assert.Equal(t, "100", props["maxscanlength"], what)
			assert.Equal(t, "constant", props["scanlengthdistribution"], what)
		}

		// The schema as the adapter read it from the server when the
		// step ran: the block cache the sweep asked for (the family's
		// default, on, before the sweep).
		e := run.Environment
		require.NotNil(t, e, what)
		require.NotNil(t, e.Database, what)
		assert.Equal(t, "Apache HBase", e.Database.Product, what)
		assert.Empty(t, e.Database.Error, what)
		bc, ok := setting(*e.Database, blockCacheSetting)
		require.True(t, ok, "%s: %+v", what, e.Database.Schema)
		wantBC := "true"
		if s.key == "hbase.blockcache" {
			wantBC = s.value
		}
		assert.Equal(t, wantBC, bc, "%s: the table's block cache", what)
		require.NotEmpty(t, e.Database.Partitions, what)
		var names []string
		for _, p := range e.Database.Partitions {
			names = append(names, p.Name)
		}
		regions[s.dir] = strings.Join(names, " ")
	}
	// Each load recreated the table (HBase names a region after its
	// table's creation time, so a recreated table has new region names);
	// the reads and scans after a load ran on the table it loaded.
	loaded := ""
	seen := map[string]string{}
	for _, s := range steps {
		if s.kind == "load" {
			assert.Empty(t, seen[regions[s.dir]], "%s ran on the table %s loaded: not recreated", s.dir, seen[regions[s.dir]])
			seen[regions[s.dir]] = s.dir
			loaded = regions[s.dir]
			continue
		}
		assert.Equal(t, loaded, regions[s.dir], "%s: on the table the load before it made", s.dir)
	}

	// The adapter reads the table's descriptor back now: the last value
	// of the sweep.
	d := describeHBase(t, quorum)
	bc, ok := setting(d, blockCacheSetting)
	require.True(t, ok, "%+v", d.Schema)
	assert.Equal(t, "false", bc, "the table as the sweep's last value left it")

	checkPEWorkbook(t, filepath.Join(res, "summary.xlsx"), steps)
	checkPECompare(t, filepath.Join(res, "compare.html"))

	// The durability steps' own command lines, run again on a fresh
	// table: the region server counts SKIP_WAL's writes as made without
	// the WAL, and SYNC_WAL's not (the fidelity table could not verify the
	// property: the server's counter shows it).
	cmds := map[string][]string{}
	for _, s := range st.Steps {
		cmds[s.Dir] = s.Args
	}
	conn := []string{"-p", "hbase.zookeeper.quorum=" + quorum, "-p", "table=" + peTable, "-p", "columnfamily=family"}
	for _, verb := range []string{"drop", "init"} {
		requireExit(t, runCLI(t, 3*time.Minute, "", append([]string{verb, "hbase"}, conn...)...), 0)
	}
	again := func(step string) {
		args := slices.Clone(cmds["hbase/"+step])
		require.NotEmpty(t, args, step)
		i := slices.Index(args, "--results")
		require.Positive(t, i, "%s: %q", step, args)
		args[i+1] = filepath.Join(dir, "again", step)
		requireExit(t, runCLI(t, 3*time.Minute, "", args...), 0)
	}
	// The counters sum over the server's online regions: another table's
	// SKIP_WAL writes would stay in them, so the checks are differences.
	// Nothing else writes now, so a reading a second stale still has
	// every SKIP_WAL write there is.
	base := waitWALCounters(t, "a reading", func(walCounters) bool { return true })
	again("01-randomwrite-durability=SKIP_WAL")
	c := waitWALCounters(t, "the SKIP_WAL load's writes counted without the WAL", func(c walCounters) bool { return c.withoutWAL >= base.withoutWAL+peRecords })
	assert.Equal(t, base.withoutWAL+peRecords, c.withoutWAL, "each SKIP_WAL write counted once: %+v from %+v", c, base)
	again("01-randomwrite-durability=SYNC_WAL")
	after := waitWALCounters(t, "the SYNC_WAL load's writes counted", func(n walCounters) bool { return n.writes >= c.writes+peRecords })
	assert.Equal(t, c.withoutWAL, after.withoutWAL, "SYNC_WAL writes went through the WAL: %+v after %+v", after, c)
}

// describeHBase is the adapter's description of the server and of the
// test's table as it is now.
func describeHBase(t *testing.T, quorum string) environ.Database {
	t.Helper()
	info, err := adapters.Lookup("hbase")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := info.Driver.Open(ctx, properties.FromMap(map[string]string{"hbase.zookeeper.quorum": quorum, "table": peTable, "columnfamily": "family"}))
	require.NoError(t, err)
	defer func() { _ = db.(adapters.Closer).Close() }()
	d := adapters.Describe(ctx, "hbase", db)
	require.Empty(t, d.Error)
	return d
}

// checkPEWorkbook reads summary.xlsx back with openpyxl: a row per step in
// Overall with its swept value in the Sweep column and its bundle, and in
// Environment the schema each time it changed, with the block cache of
// each value and the steps that ran on it.
func checkPEWorkbook(t *testing.T, xlsx string, steps []peStep) {
	t.Helper()
	wb := suitecheck.ReadWorkbook(t, xlsx, "Overall", "Environment")
	overall := wb.Rows["Overall"]
	require.Len(t, overall, 1+len(steps))
	col := map[string]int{}
	for i, h := range overall[0] {
		col[h] = i
	}
	for _, h := range []string{"Step", "Sweep", "Bundle", "Operations"} {
		require.Contains(t, col, h, "Overall's header: %q", overall[0])
	}
	for i, s := range steps {
		row := overall[1+i]
		assert.Equal(t, "hbase/"+s.dir, row[col["Bundle"]], "Overall row %d", i+1)
		assert.Equal(t, s.key+"="+s.value, row[col["Sweep"]], "Overall row %d", i+1)
		assert.True(t, strings.HasPrefix(s.dir, row[col["Step"]]+"-"), "Overall row %d: step %q of %s", i+1, row[col["Step"]], s.dir)
		if s.kind == "load" {
			assert.Equal(t, strconv.Itoa(peRecords), row[col["Operations"]], "Overall row %d", i+1)
		}
	}
	// Schema rows: Section, Database, Subject (the steps that ran on
	// that schema), Property, Value.
	byValue := map[string][]string{}
	for _, row := range wb.Rows["Environment"][1:] {
		if row[0] == "schema" && row[3] == blockCacheSetting {
			byValue[row[4]] = append(byValue[row[4]], strings.Split(row[2], ", ")...)
		}
	}
	want := map[string][]string{}
	for _, s := range steps {
		v := "true"
		if s.key == "hbase.blockcache" {
			v = s.value
		}
		want[v] = append(want[v], s.dir)
	}
	assert.Equal(t, want, byValue, "Environment: the block cache each step's schema had")
}

var (
	sweepChart = regexp.MustCompile(`(?s)<svg class="chart" id="(sweep-[^"]+)"(.*?)</svg>`)
	xTick      = regexp.MustCompile(`<text class="xtick"[^>]*>([^<]*)</text>`)
)

// checkPECompare checks compare.html's sweep charts: throughput and p99
// against each swept key with the values as swept on the x axis, in the
// order they ran; then the page in Chromium (no console error, every
// chart drawn).
func checkPECompare(t *testing.T, html string) {
	t.Helper()
	raw, err := os.ReadFile(html)
	require.NoError(t, err)
	got := map[string][]string{}
	for _, m := range sweepChart.FindAllStringSubmatch(string(raw), -1) {
		var ticks []string
		for _, x := range xTick.FindAllStringSubmatch(m[2], -1) {
			ticks = append(ticks, x[1])
		}
		got[m[1]] = ticks
	}
	wal := []string{"SYNC_WAL", "SKIP_WAL"}
	cache := []string{"true", "false"}
	want := map[string][]string{}
	for id, ticks := range map[string][]string{
		"01-randomwrite-durability":       wal,
		"02-sequentialwrite-durability":   wal,
		"03-batchedwrite-writebuffersize": {"4096", "65536", "1048576", "4194304"},
		"04-cache-hbase-blockcache":       cache,
		"05-randomread-hbase-blockcache":  cache,
		"06-scan10-hbase-blockcache":      cache,
		"07-scan100-hbase-blockcache":     cache,
	} {
		want["sweep-tput-"+id], want["sweep-p99-"+id] = ticks, ticks
	}
	assert.Equal(t, want, got, "compare.html's sweep charts and their x axes")
	suitecheck.CheckCompare(t, html, len(want))
}

// walCounters are the region server's counts, summed over its online
// regions: write requests, and mutations written without the WAL
// (durability SKIP_WAL).
type walCounters struct {
	writes, withoutWAL int64
}

// readWALCounters reads them from the standalone server's /jmx.
func readWALCounters() (walCounters, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hbaseJMX, nil)
	if err != nil {
		return walCounters{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return walCounters{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Beans []struct {
			Writes     *int64 `json:"writeRequestCount"`
			WithoutWAL *int64 `json:"mutationsWithoutWALCount"`
		} `json:"beans"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return walCounters{}, err
	}
	if len(body.Beans) != 1 || body.Beans[0].Writes == nil || body.Beans[0].WithoutWAL == nil {
		return walCounters{}, fmt.Errorf("%s: no region server counters yet (%d beans)", hbaseJMX, len(body.Beans))
	}
	return walCounters{writes: *body.Beans[0].Writes, withoutWAL: *body.Beans[0].WithoutWAL}, nil
}

// waitWALCounters waits until the counters satisfy done: the region
// server refreshes them every second (servers.sh sets
// hbase.regionserver.metrics.period), later on a loaded machine. It fails
// with the last reading when they do not within a generous bound.
func waitWALCounters(t *testing.T, what string, done func(walCounters) bool) walCounters {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var (
		c   walCounters
		err error
	)
	for {
		c, err = readWALCounters()
		if err == nil && done(c) {
			return c
		}
		if time.Now().After(deadline) {
			require.Failf(t, "region server counters", "%s: not within 2m; last reading %+v, error %v", what, c, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

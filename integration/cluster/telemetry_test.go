//go:build cluster

package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/workbook"
)

// Telemetry on the cluster, read from the bundles the Cassandra and HBase
// steps wrote (testCassandra and testHBase through e.workloadA): every
// agent sampled its own host (its own PID and network namespaces, the
// machine's block devices). Cassandra's JVM on h1..h3 is found by its main
// class under the pid systemd knows it by on that host, with its CPU and
// memory, and its commit log, on the host's disk directory
// (/srv/ycsbctl-disk, see cluster.sh), counted as written bytes during
// the load (per-process accounting: the machine's block devices are
// shared by all hosts, so their figures say nothing per host). HBase's
// region servers on h2 and h3 and its master on h1 are read through their
// JMX servlets. h4, with only an agent, says it found no server. The
// report, a workbook and run.json carry it all, read back here.

func readBundleRun(t *testing.T, dir string) *bundle.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, bundle.FileRunJSON))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var r bundle.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Telemetry == nil || len(r.Telemetry.Hosts) != hosts {
		t.Fatalf("%s: run.json telemetry %+v, want one host per agent (%d)", dir, r.Telemetry, hosts)
	}
	return &r
}

// unitPid is the pid a host's systemd knows a unit's main process by (in
// the host's own PID namespace, where its agent looks), read while the
// unit runs (systemd forgets it once the unit has stopped: see hbasePid).
func (e *env) unitPid(t *testing.T, n int, unit string) int {
	t.Helper()
	out, err := e.clusterErr("exec", fmt.Sprintf("h%d", n), "systemctl", "show", "-p", "ExecMainPID", "--value", unit)
	pid, perr := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || perr != nil || pid <= 0 {
		t.Fatalf("h%d: ExecMainPID of %s: %v %v %q", n, unit, err, perr, out)
	}
	return pid
}

// hbasePid is the pid hN's HBase unit ran under, taken by
// stopHBaseCluster before it stopped the unit.
func (e *env) hbasePid(t *testing.T, n int, unit string) int {
	t.Helper()
	key := fmt.Sprintf("h%d/%s", n, unit)
	pid := e.hbasePids[key]
	if pid <= 0 {
		t.Fatalf("%s: no main pid taken before the unit stopped (%v)", key, e.hbasePids)
	}
	return pid
}

// hostOf finds agent n's host (h1 is agent 0).
func hostOf(t *testing.T, r *bundle.Run, n int) telemetry.Host {
	t.Helper()
	for _, h := range r.Telemetry.Hosts {
		if h.Agent == n-1 {
			if h.Hostname != fmt.Sprintf("h%d", n) {
				t.Fatalf("agent %d's host is %q, want h%d", n-1, h.Hostname, n)
			}
			return h
		}
	}
	t.Fatalf("no telemetry of agent %d", n-1)
	return telemetry.Host{}
}

// checkServerHost: the server's process found under its pid, with CPU and
// memory; internals whose figures satisfy want.
func checkServerHost(t *testing.T, what string, h telemetry.Host, role string, pid int, internal string) {
	t.Helper()
	notes := strings.Join(h.Notes, "\n")
	if want := fmt.Sprintf("%s (pid %d)", role, pid); !strings.Contains(notes, want) {
		t.Errorf("%s %s: notes lack %q:\n%s", what, h.Hostname, want, notes)
	}
	if strings.Contains(notes, "cannot be read") {
		t.Errorf("%s %s: the agent could not read the server's counters:\n%s", what, h.Hostname, notes)
	}
	var cpu float64
	withInternals := 0
	for _, iv := range h.Intervals {
		cpu = max(cpu, iv.DB.CPUPct)
		if iv.DB.Count < 1 {
			t.Errorf("%s %s interval %d: no server process", what, h.Hostname, iv.Seq)
		}
		if _, ok := iv.Internals.Value(internal); ok {
			withInternals++
		}
	}
	if cpu <= 0 || h.Summary.DBRSSMax < 100<<20 {
		t.Errorf("%s %s: server CPU %.1f%% (max), RSS %d: want both measured", what, h.Hostname, cpu, h.Summary.DBRSSMax)
	}
	if withInternals == 0 {
		t.Errorf("%s %s: no interval has %s in its internals", what, h.Hostname, internal)
	}
	figure(t, "telemetry %s %s: %s pid %d, CPU %.1f%% mean %.1f%% max of %d cores, RSS max %d MiB, wrote %d MiB, %d/%d intervals with internals (%s); host busy %.0f%%, load generator %.1f%%",
		what, h.Hostname, role, pid, h.Summary.DBCPUPct, h.Summary.DBCPUMax, h.Cores, h.Summary.DBRSSMax>>20, h.Summary.DBWriteBytes>>20,
		withInternals, len(h.Intervals), h.Summary.Database, h.Summary.CPUBusyPct, h.Summary.ClientCPUPct)
}

func checkNoServer(t *testing.T, what string, h telemetry.Host) {
	t.Helper()
	if notes := strings.Join(h.Notes, "\n"); !strings.Contains(notes, "no database server process on "+h.Hostname) {
		t.Errorf("%s %s: no word of a missing server:\n%s", what, h.Hostname, notes)
	}
	for _, iv := range h.Intervals {
		if iv.DB.Count != 0 || iv.Internals != nil {
			t.Errorf("%s %s interval %d: server figures on a host without one: %+v", what, h.Hostname, iv.Seq, iv.DB)
		}
	}
}

func testTelemetryCassandra(t *testing.T, e *env) {
	load := readBundleRun(t, filepath.Join(e.tmp, "cassandra-load"))
	runB := readBundleRun(t, filepath.Join(e.tmp, "cassandra-run"))
	for n := 1; n <= dbNodes; n++ {
		pid := e.unitPid(t, n, "cassandra")
		for _, b := range []struct {
			what string
			r    *bundle.Run
		}{{"cassandra load", load}, {"cassandra run", runB}} {
			h := hostOf(t, b.r, n)
			checkServerHost(t, b.what, h, "cassandra", pid, "thread_pool.MutationStage.completed_per_sec")
			for _, iv := range h.Intervals {
				if iv.Internals != nil && !strings.HasSuffix(iv.Internals.Source, "system_views on "+addr(n)) {
					t.Errorf("%s h%d: internals read from %q, want its own node %s", b.what, n, iv.Internals.Source, addr(n))
				}
			}
		}
		// The load's rows reach the commit log on the host's disk.
		if w := hostOf(t, load, n).Summary.DBWriteBytes; w < 1<<20 {
			t.Errorf("cassandra load h%d: the node wrote %d bytes to storage, want the commit log's megabytes", n, w)
		}
	}
	for n := dbNodes + 1; n <= hosts; n++ {
		checkNoServer(t, "cassandra load", hostOf(t, load, n))
	}
	checkReport(t, e, filepath.Join(e.tmp, "cassandra-load"))
	checkWorkbook(t, e, map[string]string{"01-load": filepath.Join(e.tmp, "cassandra-load"), "02-run": filepath.Join(e.tmp, "cassandra-run")}, "cassandra")
}

func testTelemetryHBase(t *testing.T, e *env) {
	for _, phase := range []string{"load", "run"} {
		r := readBundleRun(t, filepath.Join(e.tmp, "hbase-"+phase))
		what := "hbase " + phase
		checkServerHost(t, what, hostOf(t, r, hbaseMasterHost), "hbase-master", e.hbasePid(t, hbaseMasterHost, "hbase-master"), "master.region_servers")
		for _, iv := range hostOf(t, r, hbaseMasterHost).Intervals {
			if v, ok := iv.Internals.Value("master.region_servers"); ok && v != float64(len(hbaseRSHosts)) {
				t.Errorf("%s: the master counts %v region servers, want %d", what, v, len(hbaseRSHosts))
			}
		}
		for _, n := range hbaseRSHosts {
			h := hostOf(t, r, n)
			checkServerHost(t, what, h, "hbase-regionserver", e.hbasePid(t, n, "hbase-regionserver"), "regionserver.memstore_bytes")
			writes := 0.0
			for _, iv := range h.Intervals {
				if v, ok := iv.Internals.Value("regionserver.write_requests_per_sec"); ok {
					writes = max(writes, v)
				}
			}
			if phase == "load" && writes <= 0 {
				t.Errorf("%s h%d: the region server's JMX shows no writes during the load", what, n)
			}
		}
		checkNoServer(t, what, hostOf(t, r, 4))
	}
}

// checkReport: report.html has every host's panel and the account of
// where the time went.
func checkReport(t *testing.T, e *env, dir string) {
	t.Helper()
	if out, err := exec.Command(e.bin, "report", dir).CombinedOutput(); err != nil {
		t.Fatalf("ycsbctl report %s: %v\n%s", dir, err, out)
	}
	page, err := os.ReadFile(filepath.Join(dir, bundle.FileReport))
	if err != nil {
		t.Fatal(err)
	}
	for a := 0; a < hosts; a++ {
		for _, c := range []string{"cpu", "disk", "net", "proc-cpu", "proc-rss"} {
			if id := fmt.Sprintf(`id="host%d-%s"`, a, c); !strings.Contains(string(page), id) {
				t.Errorf("report.html lacks %s", id)
			}
		}
	}
	for _, want := range []string{"Hosts: where the time went", "Busiest host", "Cassandra 5.0.9"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// checkWorkbook lays the bundles out as a suite's results directory, has
// `ycsbctl suite report` write its workbook, and reads the Hosts sheet
// and the host columns of Periods back.
func checkWorkbook(t *testing.T, e *env, steps map[string]string, db string) {
	t.Helper()
	dir := filepath.Join(e.tmp, "telemetry-suite")
	st := &suite.State{Name: "telemetry", Databases: []string{db}}
	if err := os.MkdirAll(filepath.Join(dir, db), 0o755); err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, name := range []string{"01-load", "02-run"} {
		i++
		if out, err := exec.Command("cp", "-r", steps[name], filepath.Join(dir, db, name)).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		kind := suite.KindRun
		if name == "01-load" {
			kind = suite.KindLoad
		}
		st.Steps = append(st.Steps, suite.StepState{Seq: i, DB: db, Database: db, StepIndex: i, Step: name[3:], Kind: kind,
			Dir: filepath.Join(db, name), Status: suite.StatusPassed})
	}
	if err := suite.WriteState(dir, st); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(e.bin, "suite", "report", dir).CombinedOutput(); err != nil {
		t.Fatalf("ycsbctl suite report: %v\n%s", err, out)
	}
	x, err := excelize.OpenFile(filepath.Join(dir, "summary.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = x.Close() }()
	rows, err := x.GetRows(workbook.SheetHosts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*hosts {
		t.Fatalf("Hosts sheet: %d rows, want a header and %d per step", len(rows), hosts)
	}
	col := func(name string) int {
		for i, h := range rows[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("Hosts sheet has no column %q: %v", name, rows[0])
		return -1
	}
	hostC, stepC, rssC, wroteC, serverC := col("Host"), col("Step"), col("DB RSS max (MB)"), col("DB written (MB)"), col("Server")
	for _, r := range rows[1:] {
		n, _ := strconv.Atoi(strings.TrimPrefix(r[hostC], "h"))
		rss, _ := strconv.ParseFloat(r[rssC], 64)
		wrote, _ := strconv.ParseFloat(r[wroteC], 64)
		switch {
		case n >= 1 && n <= dbNodes:
			if rss < 100 || r[serverC] != "Cassandra 5.0.9" || (strings.HasSuffix(r[stepC], "load") && wrote < 1) {
				t.Errorf("Hosts row %v: want the node's memory, its product and its writes during the load", r)
			}
		default:
			if rss != 0 {
				t.Errorf("Hosts row %v: a host without a node has no server memory", r)
			}
		}
	}
	periods, err := x.GetRows(workbook.SheetPeriods)
	if err != nil || len(periods) < 2 {
		t.Fatalf("Periods: %v, %d rows", err, len(periods))
	}
	busiest := -1
	for i, h := range periods[0] {
		if h == "Busiest host" {
			busiest = i
		}
	}
	if busiest < 0 || len(periods[1]) <= busiest || !strings.HasPrefix(periods[1][busiest], "h") {
		t.Errorf("Periods lacks the busiest host: %v / %v", periods[0], periods[1])
	}
}

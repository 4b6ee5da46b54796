//go:build cluster

package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"github.com/tsuna/gohbase/region"
)

// The HBase cluster: ZooKeeper and the master on h1, region servers on h2
// and h3, all over one root directory that every host sees
// (/srv/ycsbctl-shared, see cluster.sh). The region servers are on hosts
// of their own, apart from the master, so that "regions on both region
// server hosts" cannot be satisfied by a master host serving some of them,
// and no host runs more than two JVMs beside its Cassandra node. h4 keeps
// only an agent, as for Cassandra.
const (
	hbaseMasterHost = 1
	hbaseZKHeap     = "128m"
	hbaseMasterHeap = "384m"
	hbaseRSHeap     = "512m"
	hbaseRegions    = 8
	hbaseRecords    = 10000
	hbaseRunOps     = 10000
	hbaseThreads    = 8 // per agent
	// Start-ups follow progress (the daemon's log growing, the master's
	// answers changing) up to these overall bounds.
	hbaseStartMax  = 6 * time.Minute
	hbaseDaemonMax = 3 * time.Minute
	hbaseStall     = 90 * time.Second
	hbaseFamily    = "family"
	hbaseTable     = "usertable"
)

var hbaseRSHosts = []int{2, 3}

func hbaseQuorum() string { return addr(hbaseMasterHost) + ":2181" }

// hbaseDaemon is one HBase unit: hbase-ROLE.service on host hN.
type hbaseDaemon struct {
	n    int
	role string
}

func hbaseDaemons() []hbaseDaemon {
	d := []hbaseDaemon{{hbaseMasterHost, "zookeeper"}, {hbaseMasterHost, "master"}}
	for _, n := range hbaseRSHosts {
		d = append(d, hbaseDaemon{n, "regionserver"})
	}
	return d
}

func (e *env) hbaseLib() (string, error) { return e.serverLib("hbase", "HBase", "2.6.4") }

func (e *env) hbaseNode(n int, args ...string) (string, error) {
	return e.hostScript(n, "hbase-node.sh", args...)
}

func hbaseLog(role string) string { return "/var/lib/ycsbctl-hbase/logs/" + role + ".log" }

// waitHBaseDaemon polls hbase-node.sh ready until hN's daemon serves, as
// long as its log grows; a unit that failed ends the wait at once.
func (e *env) waitHBaseDaemon(n int, role string, limit time.Duration) error {
	w := progressWait{what: fmt.Sprintf("h%d: HBase %s serving", n, role), limit: limit, stall: hbaseStall, every: 500 * time.Millisecond}
	return w.run(func() (bool, string, error) {
		if _, err := e.hbaseNode(n, "ready", role, addr(n)); err == nil {
			return true, "", nil
		}
		st, _ := e.clusterErr("exec", fmt.Sprintf("h%d", n), "systemctl", "is-active", "hbase-"+role)
		if st = strings.TrimSpace(st); st == "failed" {
			return false, "", errUnitFailed
		}
		return false, "unit " + st + ", " + e.logProgress(n, hbaseLog(role)), nil
	}, func() string { return e.unitDiag(n, "hbase-"+role, hbaseLog(role)) })
}

// hbaseDiag is every HBase daemon's unit, journal and log.
func (e *env) hbaseDiag() string {
	var b strings.Builder
	for _, d := range hbaseDaemons() {
		b.WriteString(e.unitDiag(d.n, "hbase-"+d.role, hbaseLog(d.role)))
	}
	return b.String()
}

// startHBaseCluster starts ZooKeeper, then the master and both region
// servers together (the master waits for two region servers before it
// finishes initializing), and waits until each says it serves.
func startHBaseCluster(t *testing.T, e *env) error {
	lib, err := e.hbaseLib()
	if err != nil {
		return err
	}
	m := hbaseMasterHost
	if out, err := e.hbaseNode(m, "install", "zookeeper", addr(m), addr(m), hbaseZKHeap, lib); err != nil {
		return fmt.Errorf("h%d: hbase-node.sh install zookeeper: %v\n%s", m, err, out)
	}
	if err := e.waitHBaseDaemon(m, "zookeeper", hbaseDaemonMax); err != nil {
		return err
	}
	if out, err := e.hbaseNode(m, "install", "master", addr(m), addr(m), hbaseMasterHeap, lib); err != nil {
		return fmt.Errorf("h%d: hbase-node.sh install master: %v\n%s", m, err, out)
	}
	for _, n := range hbaseRSHosts {
		if out, err := e.hbaseNode(n, "install", "regionserver", addr(n), addr(m), hbaseRSHeap, lib); err != nil {
			return fmt.Errorf("h%d: hbase-node.sh install regionserver: %v\n%s", n, err, out)
		}
	}
	if err := e.waitHBaseDaemon(m, "master", hbaseStartMax); err != nil {
		return err
	}
	for _, n := range hbaseRSHosts {
		if err := e.waitHBaseDaemon(n, "regionserver", hbaseDaemonMax); err != nil {
			return err
		}
	}
	return nil
}

// stopHBaseCluster stops every HBase unit: the region servers (together:
// one at a time, the master would move the first one's regions to the
// other), then the master, then ZooKeeper. It checks each unit is down,
// so the later steps run on hosts without HBase.
func stopHBaseCluster(t *testing.T, e *env) {
	t.Helper()
	e.hbasePids = map[string]int{}
	for _, d := range hbaseDaemons() {
		unit := "hbase-" + d.role
		out, _ := e.clusterErr("exec", fmt.Sprintf("h%d", d.n), "systemctl", "show", "-p", "MainPID", "--value", unit)
		e.hbasePids[fmt.Sprintf("h%d/%s", d.n, unit)], _ = strconv.Atoi(strings.TrimSpace(out))
	}
	start := time.Now()
	stop := func(n int, role string) {
		if out, err := e.clusterErr("exec", fmt.Sprintf("h%d", n), "systemctl", "stop", "hbase-"+role); err != nil {
			t.Errorf("h%d: systemctl stop hbase-%s: %v\n%s", n, role, err, out)
		}
	}
	var wg sync.WaitGroup
	for _, n := range hbaseRSHosts {
		wg.Go(func() { stop(n, "regionserver") })
	}
	wg.Wait()
	stop(hbaseMasterHost, "master")
	stop(hbaseMasterHost, "zookeeper")
	for _, d := range hbaseDaemons() {
		st, _ := e.clusterErr("exec", fmt.Sprintf("h%d", d.n), "systemctl", "is-active", "hbase-"+d.role)
		if s := strings.TrimSpace(st); s != "inactive" {
			t.Errorf("h%d: hbase-%s is %q after stop, want inactive", d.n, d.role, s)
		}
	}
	figure(t, "hbase: all daemons stopped in %s", time.Since(start).Round(100*time.Millisecond))
}

// waitHBaseServing: from outside the hosts, over the bridge, the master
// answers DDL (a disable of a table that does not exist fails with
// TableNotFoundException, not PleaseHoldException: ClusterStatus alone
// succeeds before the master finished initializing), hbase:meta can be
// read, and the master counts both region servers live.
// The wait follows progress: which check fails, and how, and the master's
// log growing.
func (e *env) waitHBaseServing() (*pb.ClusterStatus, error) {
	admin := gohbase.NewAdminClient(hbaseQuorum())
	client := gohbase.NewClient(hbaseQuorum())
	defer client.Close()
	var st *pb.ClusterStatus
	w := progressWait{what: "HBase serving from outside the hosts", limit: hbaseDaemonMax, stall: hbaseStall, every: 500 * time.Millisecond}
	err := w.run(func() (bool, string, error) {
		err := hbaseServes(admin, client)
		if err == nil {
			if st, err = clusterStatus(admin); err == nil {
				if n := len(st.GetLiveServers()); n == len(hbaseRSHosts) {
					return true, "", nil
				}
				err = fmt.Errorf("%d live region servers, want %d", len(st.GetLiveServers()), len(hbaseRSHosts))
			}
		}
		return false, fmt.Sprintf("%.80s, master %s", err, e.logProgress(hbaseMasterHost, hbaseLog("master"))), err
	}, e.hbaseDiag)
	return st, err
}

// hbaseServes: the master answers DDL and hbase:meta can be read.
func hbaseServes(admin gohbase.AdminClient, client gohbase.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := admin.DisableTable(hrpc.NewDisableTable(ctx, []byte("__ycsbctl_ready_probe__")))
	if err == nil || !strings.Contains(err.Error(), "TableNotFoundException") {
		return fmt.Errorf("master not answering DDL yet: %v", err)
	}
	get, err := hrpc.NewGetStr(ctx, "hbase:meta", "probe")
	if err == nil {
		_, err = client.Get(get)
	}
	return err
}

// clusterStatus asks the master for the cluster's status. gohbase's
// ClusterStatus takes no context and blocks while the master is away, so
// the wait is bounded here (the call is left behind if it never returns).
func clusterStatus(admin gohbase.AdminClient) (*pb.ClusterStatus, error) {
	type res struct {
		st  *pb.ClusterStatus
		err error
	}
	ch := make(chan res, 1)
	go func() { st, err := admin.ClusterStatus(); ch <- res{st, err} }()
	select {
	case r := <-ch:
		return r.st, r.err
	case <-time.After(10 * time.Second):
		return nil, errors.New("ClusterStatus did not answer in 10 s")
	}
}

// hbaseRegion is one region of the table as hbase:meta records it.
type hbaseRegion struct {
	start, stop []byte
	server      string // host:port of the region server holding it
}

// tableRegions scans hbase:meta for the table's regions and where they are
// assigned (info:regioninfo, info:server), in key order. A region in
// transition has no server yet: it retries for a while.
func tableRegions(t testing.TB, client gohbase.Client) []hbaseRegion {
	t.Helper()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		var regions []hbaseRegion
		if regions, err = scanMeta(client); err == nil {
			return regions
		}
	}
	t.Fatalf("reading the regions of %s from hbase:meta: %v", hbaseTable, err)
	return nil
}

func scanMeta(client gohbase.Client) ([]hbaseRegion, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Meta rows of a region are "table,startkey,regionid.encoded.". No
	// range scan: meta orders its rows by those parts, so a start row of
	// "usertable," sorts after the first region's row. Meta is small.
	scan, err := hrpc.NewScanStr(ctx, "hbase:meta", hrpc.Families(map[string][]string{"info": nil}))
	if err != nil {
		return nil, err
	}
	sc := client.Scan(scan)
	defer func() { _ = sc.Close() }()
	var regions []hbaseRegion
	for {
		res, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("scanning hbase:meta: %w", err)
		}
		if len(res.Cells) == 0 || !bytes.HasPrefix(res.Cells[0].Row, []byte(hbaseTable+",")) {
			continue
		}
		info, server, err := region.ParseRegionInfo(res)
		if err != nil {
			return nil, fmt.Errorf("hbase:meta row: %w", err)
		}
		if string(info.Table()) != hbaseTable {
			continue
		}
		regions = append(regions, hbaseRegion{start: info.StartKey(), stop: info.StopKey(), server: server})
	}
	sort.Slice(regions, func(i, j int) bool { return bytes.Compare(regions[i].start, regions[j].start) < 0 })
	return regions, nil
}

// regionsByServer counts regions per region server host:port.
func regionsByServer(regions []hbaseRegion) map[string]int {
	m := map[string]int{}
	for _, r := range regions {
		m[r.server]++
	}
	return m
}

// checkSpread fails unless the regions tile the key space without a gap
// and each region server host holds at least one.
func checkSpread(t testing.TB, regions []hbaseRegion) {
	t.Helper()
	if len(regions) != hbaseRegions {
		t.Fatalf("hbase:meta lists %d regions of %s, want %d (pre-split)", len(regions), hbaseTable, hbaseRegions)
	}
	for i, r := range regions {
		if (i == 0 && len(r.start) != 0) || (i > 0 && !bytes.Equal(r.start, regions[i-1].stop)) || (i == len(regions)-1 && len(r.stop) != 0) {
			t.Fatalf("regions do not tile the key space at %d: %q..%q", i, r.start, r.stop)
		}
	}
	by := regionsByServer(regions)
	for _, n := range hbaseRSHosts {
		if s := addr(n) + ":16020"; by[s] == 0 {
			t.Fatalf("no region of %s on h%d's region server %s: %v", hbaseTable, n, s, by)
		}
	}
	if len(by) != len(hbaseRSHosts) {
		t.Fatalf("regions on %v, want only the region servers of h%d and h%d", by, hbaseRSHosts[0], hbaseRSHosts[1])
	}
}

// rowsPerRegion counts each region's rows with a scan of its key range
// that returns only the first key of each row (no values), so the count
// comes from the region server holding it.
func rowsPerRegion(t testing.TB, client gohbase.Client, regions []hbaseRegion) []int64 {
	t.Helper()
	counts := make([]int64, len(regions))
	for i, r := range regions {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		f := filter.NewList(filter.MustPassAll, filter.NewFirstKeyOnlyFilter(), filter.NewKeyOnlyFilter(false))
		scan, err := hrpc.NewScanRange(ctx, []byte(hbaseTable), r.start, r.stop, hrpc.Filters(f), hrpc.NumberOfRows(5000))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		sc := client.Scan(scan)
		for {
			res, err := sc.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				_ = sc.Close()
				cancel()
				t.Fatalf("scanning region %q..%q on %s: %v", r.start, r.stop, r.server, err)
			}
			if len(res.Cells) > 0 {
				counts[i]++
			}
		}
		_ = sc.Close()
		cancel()
	}
	return counts
}

// checkRowsOnBothServers: the table holds exactly want rows, and the
// regions of each region server host hold some of them, i.e. both region
// servers took writes. It logs the rows per server.
func checkRowsOnBothServers(t testing.TB, client gohbase.Client, what string, want int64) {
	t.Helper()
	regions := tableRegions(t, client)
	checkSpread(t, regions)
	counts := rowsPerRegion(t, client, regions)
	perServer := map[string]int64{}
	var total int64
	for i, r := range regions {
		perServer[r.server] += counts[i]
		total += counts[i]
	}
	if total != want {
		t.Fatalf("%s: the table holds %d rows (per region %v), want %d", what, total, counts, want)
	}
	for _, n := range hbaseRSHosts {
		if s := addr(n) + ":16020"; perServer[s] == 0 {
			t.Fatalf("%s: the regions on h%d (%s) hold no rows: %v", what, n, s, perServer)
		}
	}
	figure(t, "hbase %s: %d rows, per region %v, per region server %v", what, total, counts, perServer)
}

// tableRequests sums, per region server, the read and write requests its
// regions of the table have served, as the region servers last reported
// them to the master (every second, see hbase-node.sh).
func tableRequests(admin gohbase.AdminClient) (reads, writes map[string]uint64, err error) {
	st, err := clusterStatus(admin)
	if err != nil {
		return nil, nil, err
	}
	reads, writes = map[string]uint64{}, map[string]uint64{}
	for _, ls := range st.GetLiveServers() {
		s := fmt.Sprintf("%s:%d", ls.GetServer().GetHostName(), ls.GetServer().GetPort())
		for _, rl := range ls.GetServerLoad().GetRegionLoads() {
			if bytes.HasPrefix(rl.GetRegionSpecifier().GetValue(), []byte(hbaseTable+",")) {
				reads[s] += rl.GetReadRequestsCount()
				writes[s] += rl.GetWriteRequestsCount()
			}
		}
	}
	return reads, writes, nil
}

// waitRequests waits until each region server reports at least atLeast more
// read and write requests on the table than in before, i.e. both served
// the workload's reads and updates.
func waitRequests(t testing.TB, admin gohbase.AdminClient, beforeR, beforeW map[string]uint64, atLeast uint64) {
	t.Helper()
	var reads, writes map[string]uint64
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		reads, writes, err = tableRequests(admin)
		done := err == nil
		for _, n := range hbaseRSHosts {
			s := addr(n) + ":16020"
			done = done && reads[s] >= beforeR[s]+atLeast && writes[s] >= beforeW[s]+atLeast
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the region servers did not both report %d more reads and writes within 30 s: before %v/%v, now %v/%v (%v)",
				atLeast, beforeR, beforeW, reads, writes, err)
		}
	}
	dr, dw := map[string]uint64{}, map[string]uint64{}
	for s := range reads {
		dr[s], dw[s] = reads[s]-beforeR[s], writes[s]-beforeW[s]
	}
	figure(t, "hbase workload A: requests served per region server: reads %v, writes %v", dr, dw)
}

// checkSharedRoot: hbase.rootdir is the one directory every host sees.
// Seen from the machine, it holds a non-empty WAL of each region server,
// and the master's host lists the same WAL directories.
func checkSharedRoot(t testing.TB, e *env) {
	t.Helper()
	wals := filepath.Join(e.work, "state", "shared", "hbase", "WALs")
	for _, n := range hbaseRSHosts {
		dirs, _ := filepath.Glob(filepath.Join(wals, addr(n)+",16020,*"))
		if len(dirs) != 1 {
			t.Fatalf("%s: want one WAL directory of h%d's region server, found %v", wals, n, dirs)
		}
		files, _ := filepath.Glob(filepath.Join(dirs[0], "*"))
		var size int64
		for _, f := range files {
			if st, err := os.Stat(f); err == nil {
				size += st.Size()
			}
		}
		if size == 0 {
			t.Fatalf("%s: h%d's region server wrote no WAL bytes (%v)", dirs[0], n, files)
		}
		figure(t, "hbase: shared root holds %s: %d files, %d KiB", filepath.Base(dirs[0]), len(files), size/1024)
	}
	seen, err := e.clusterErr("exec", fmt.Sprintf("h%d", hbaseMasterHost), "ls", "/srv/ycsbctl-shared/hbase/WALs")
	if err != nil {
		t.Fatalf("h%d: ls /srv/ycsbctl-shared/hbase/WALs: %v\n%s", hbaseMasterHost, err, seen)
	}
	for _, n := range hbaseRSHosts {
		if !strings.Contains(seen, addr(n)+",16020,") {
			t.Fatalf("h%d does not see h%d's WALs in the shared root:\n%s", hbaseMasterHost, n, seen)
		}
	}
}

// hbaseMemory logs the resident memory of each HBase JVM, read inside its
// host from the unit's main PID.
func hbaseMemory(t testing.TB, e *env) {
	t.Helper()
	daemons := hbaseDaemons()
	var total int64
	var parts []string
	for _, d := range daemons {
		out, err := e.clusterErr("exec", fmt.Sprintf("h%d", d.n), "bash", "-c",
			fmt.Sprintf("awk '/^VmRSS:/{print $2}' /proc/$(systemctl show -p MainPID --value hbase-%s)/status", d.role))
		kib, perr := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
		if err != nil || perr != nil {
			t.Errorf("h%d: RSS of hbase-%s: %v %v\n%s", d.n, d.role, err, perr, out)
			continue
		}
		total += kib
		parts = append(parts, fmt.Sprintf("h%d %s %d MiB", d.n, d.role, kib/1024))
	}
	figure(t, "hbase memory: %d MiB resident in %d JVMs (%s)", total/1024, len(daemons), strings.Join(parts, ", "))
}

func hbaseProps(extra ...string) []string {
	return append([]string{"hbase.zookeeper.quorum=" + hbaseQuorum(), "columnfamily=" + hbaseFamily, "recordcount=" + fmt.Sprint(hbaseRecords),
		"threadcount=" + fmt.Sprint(hbaseThreads), "status.interval=2"}, extra...)
}

// testHBase: HBase with its master on h1 and region servers on h2 and h3
// over the shared root directory; ycsbctl init pre-splits the table across
// both region servers (read back from hbase:meta), then a coordinator load
// of the whole key range split across the four agents and workload A,
// each with exact merged counts; the table holds exactly the rows loaded,
// spread over both region servers, whose WALs are in the shared root.
func testHBase(t *testing.T, e *env) {
	logrus.SetLevel(logrus.WarnLevel)
	start := time.Now()
	// TestCluster stops the daemons (stopHBaseCluster) once the suite step,
	// which needs them, has run.
	if err := startHBaseCluster(t, e); err != nil {
		t.Fatal(err)
	}
	st, err := e.waitHBaseServing()
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, s := range st.GetLiveServers() {
		live = append(live, fmt.Sprintf("%s:%d", s.GetServer().GetHostName(), s.GetServer().GetPort()))
	}
	sort.Strings(live)
	if want := []string{addr(hbaseRSHosts[0]) + ":16020", addr(hbaseRSHosts[1]) + ":16020"}; strings.Join(live, ",") != strings.Join(want, ",") {
		t.Fatalf("live region servers %v, want %v (each registered under its host's address)", live, want)
	}
	figure(t, "hbase: ZooKeeper + master on h%d, region servers on h%d and h%d serving after %s (heaps %s/%s/%s)", hbaseMasterHost,
		hbaseRSHosts[0], hbaseRSHosts[1], time.Since(start).Round(100*time.Millisecond), hbaseZKHeap, hbaseMasterHeap, hbaseRSHeap)

	out, err := runOut(e.bin, "init", "hbase", "-p", "hbase.zookeeper.quorum="+hbaseQuorum(), "-p", "columnfamily="+hbaseFamily,
		"-p", fmt.Sprintf("hbase.presplit.regions=%d", hbaseRegions))
	if err != nil || !strings.Contains(out, fmt.Sprintf("%d regions", hbaseRegions)) {
		t.Fatalf("ycsbctl init hbase: %v\n%s", err, out)
	}
	client := gohbase.NewClient(hbaseQuorum())
	defer client.Close()
	regions := tableRegions(t, client)
	checkSpread(t, regions)
	figure(t, "hbase: %s pre-split into %d regions, per region server %v", hbaseTable, len(regions), regionsByServer(regions))

	// Paced to last about 20 s: the telemetry-hbase step needs the region
	// servers' write rate sampled during the load, and a quiet machine
	// loaded the 10,000 rows in 8.4 s, too few internals reads to see it.
	e.workloadA(t, "hbase", "load", hbaseProps(fmt.Sprintf("target=%d", hbaseRecords/20)), hbaseRecords)
	checkRowsOnBothServers(t, client, "after load", hbaseRecords)

	// The region servers report their request counts every second
	// (hbase-node.sh): let the counts of the load and the scans above
	// settle, so the run's reads and updates are what is added to them.
	admin := gohbase.NewAdminClient(hbaseQuorum())
	time.Sleep(3 * time.Second)
	beforeR, beforeW, err := tableRequests(admin)
	if err != nil {
		t.Fatal(err)
	}
	e.workloadA(t, "hbase", "run", hbaseProps(fmt.Sprintf("operationcount=%d", hbaseRunOps)), hbaseRunOps)
	// Each region server holds half the regions, so it serves about 2,500
	// of the 5,000 reads and of the 5,000 updates; 500 leaves room for the
	// skew of the zipfian key choice and fails if one of them served none.
	waitRequests(t, admin, beforeR, beforeW, hbaseRunOps/20)
	checkRowsOnBothServers(t, client, "after workload A", hbaseRecords)
	checkSharedRoot(t, e)
	hbaseMemory(t, e)
}

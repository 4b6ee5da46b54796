//go:build cluster

package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/suite"
	"github.com/ycsbctl/ycsbctl/internal/testutil/suitecheck"
)

// The distributed suite on the cluster: comparison2014 scaled to a 2-core
// machine over the four agents, against the 3-node Cassandra and HBase
// (master on h1, region servers on h2 and h3). Scenarios end on their
// operation count, paced by a target, so each measures about three
// seconds whatever the machine's load, and the count is exact.
const (
	suiteRecords = 3000
	suiteRunOps  = 1500
	suiteTarget  = 500 // ops/s over the four agents
	// The step the coordinator is killed in: HBase's, so that a resume
	// has Cassandra's whole half to skip.
	suiteInterrupted = "hbase/06-updateheavy"
)

func (e *env) suiteDatabases() []suitecheck.Database {
	return []suitecheck.Database{
		{DB: "cassandra", Product: "Apache Cassandra", Roles: map[string]int{"node": dbNodes},
			Properties: map[string]string{"hosts": e.cassHosts(), "cassandra.replicationfactor": "3"}},
		{DB: "hbase", Product: "Apache HBase", Roles: map[string]int{"master": 1, "region server": len(hbaseRSHosts)},
			Properties: map[string]string{"hbase.zookeeper.quorum": hbaseQuorum(), "columnfamily": hbaseFamily,
				"hbase.presplit.regions": fmt.Sprint(hbaseRegions)}},
	}
}

func (e *env) suiteScale() suitecheck.Scale {
	return suitecheck.Scale{
		Databases: e.suiteDatabases(), Records: suiteRecords, LoadThreads: 2, BulkThreads: 1, RunThreads: 2,
		// No duration: the count ends a scenario; maxexecutiontime only
		// bounds one that cannot reach it (the count check then fails).
		Warmup: "1s", Pause: "1s", StatusInterval: "0.5",
		RunProperties: map[string]string{"operationcount": fmt.Sprint(suiteRunOps), "target": fmt.Sprint(suiteTarget), "maxexecutiontime": "60"},
	}
}

// suiteProc is `ycsbctl suite` running from the machine's namespace,
// outside the hosts.
type suiteProc struct {
	cmd      *exec.Cmd
	out      *bytes.Buffer // stdout and stderr; read only after done
	done     chan struct{}
	err      error
	start    time.Time
	finished time.Time
}

func (e *env) startSuite(t *testing.T, args ...string) *suiteProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	c := exec.CommandContext(ctx, e.bin, args...)
	c.Env = append(os.Environ(), "TERM=dumb")
	p := &suiteProc{cmd: c, out: &bytes.Buffer{}, done: make(chan struct{}), start: time.Now()}
	c.Stdout, c.Stderr = p.out, p.out
	if err := c.Start(); err != nil {
		cancel()
		t.Fatalf("ycsbctl %v: %v", args, err)
	}
	go func() {
		p.err = c.Wait()
		p.finished = time.Now()
		cancel()
		close(p.done)
	}()
	return p
}

func (p *suiteProc) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the suite to end and fails unless it exits 0.
func (p *suiteProc) wait(t *testing.T, what string) string {
	t.Helper()
	<-p.done
	if p.err != nil {
		t.Fatalf("%s: %v\n%s", what, p.err, tail(p.out.String(), 6000))
	}
	return p.out.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// testSuite: `ycsbctl suite` as an operator runs it, from outside the
// hosts over the deployed agents (mutual TLS, the token from a file),
// against Cassandra and HBase; the coordinator killed mid-step, then
// --resume, then `suite report`. Checked from outside: every bundle, the
// suite's state and logs, the workbook read back, compare.html in
// Chromium.
func testSuite(t *testing.T, e *env) {
	dir := filepath.Join(e.tmp, "suite")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	scale := e.suiteScale()
	file := filepath.Join(dir, "comparison2014-cluster.yaml")
	if err := os.WriteFile(file, []byte(suitecheck.Comparison2014(t, scale)), 0o644); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(e.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "results")
	secure := []string{"--agents", strings.Join(e.agents, ","), "--tls-cert", filepath.Join(e.tls, "coordinator.pem"),
		"--tls-key", filepath.Join(e.tls, "coordinator-key.pem"), "--tls-ca", filepath.Join(e.tls, "ca.pem"), "--token-file", tokenFile}
	start := time.Now()

	sp := e.startSuite(t, append([]string{"suite", file, "--results", res}, secure...)...)
	db, step, _ := strings.Cut(suiteInterrupted, "/")
	suitecheck.WaitMeasuring(t, res, db, step, 8*time.Minute, sp.ended, func() string { return "suite output:\n" + tail(sp.out.String(), 6000) })
	killed := time.Now()
	if err := sp.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-sp.done
	figure(t, "suite: coordinator killed with SIGKILL during %s, %s after it started", suiteInterrupted, killed.Sub(sp.start).Round(100*time.Millisecond))
	in := suitecheck.ReadInterrupted(t, res, suiteInterrupted)
	// The agents end the orphaned run by themselves when their lease runs
	// out: "aborting load: no word from coordinator", or "released (no
	// word from coordinator ...)" when their share was done by then.
	for n := 1; n <= hosts; n++ {
		at, line, ok := e.agentJournalLine(t, n, "no word from coordinator", killed, agentLease+15*time.Second)
		if !ok {
			t.Fatalf("h%d's agent did not end the killed suite's run within %s", n, agentLease+15*time.Second)
		}
		if d := at.Sub(killed); d > agentLease+2*time.Second {
			t.Fatalf("h%d's agent ended the orphaned run %s after the coordinator died, beyond its lease %s: %s", n, d, agentLease, line)
		}
		figure(t, "suite: h%d's agent ended the orphaned run %s after kill -9: %s", n, at.Sub(killed).Round(10*time.Millisecond), line)
	}

	rp := e.startSuite(t, append([]string{"suite", "--resume", "--results", res}, secure...)...)
	out := rp.wait(t, "ycsbctl suite --resume")
	figure(t, "suite: --resume ran %s and the steps after it in %s", suiteInterrupted, rp.finished.Sub(rp.start).Round(100*time.Millisecond))
	in.CheckResumed(t, out)

	x := suitecheck.Expect{Agents: e.agents, Hostname: func(i int) string { return fmt.Sprintf("h%d", i+1) },
		Records: suiteRecords, RunOps: suiteRunOps, LoadThreads: scale.LoadThreads, BulkThreads: scale.BulkThreads, RunThreads: scale.RunThreads}
	suitecheck.CheckBundles(t, res, scale.Databases, x)

	// suite report rewrites the summaries from the bundles alone.
	for _, f := range []string{"summary.xlsx", "summary.csv", "compare.html"} {
		if err := os.Remove(filepath.Join(res, f)); err != nil {
			t.Fatal(err)
		}
	}
	rep := time.Now()
	if out, err := runOut(e.bin, "suite", "report", res); err != nil {
		t.Fatalf("ycsbctl suite report: %v\n%s", err, out)
	}
	figure(t, "suite: suite report in %s", time.Since(rep).Round(100*time.Millisecond))
	suitecheck.CheckWorkbook(t, filepath.Join(res, "summary.xlsx"), scale.Databases, e.agents)
	suitecheck.CheckCompare(t, filepath.Join(res, "compare.html"), 2)
	suiteFigures(t, res)
	figure(t, "suite: whole step (run, kill, resume, report, checks) %s", time.Since(start).Round(time.Second))
}

// suiteFigures logs each step's time as suite.json recorded it.
func suiteFigures(t *testing.T, res string) {
	st, err := suite.ReadState(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Steps {
		if s.Started.IsZero() || s.Ended.IsZero() {
			continue
		}
		name := s.Dir
		if name == "" {
			name = fmt.Sprintf("%s/%02d-%s", s.Database, s.StepIndex, s.Step)
		}
		figure(t, "suite step %s (%s): %s, %s", name, s.Kind, s.Ended.Sub(s.Started).Round(100*time.Millisecond), s.Status)
	}
}

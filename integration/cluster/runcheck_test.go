//go:build cluster

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/bundle"
)

// coordinatorRun is one `ycsbctl coordinator` invocation from the
// machine's namespace (outside the hosts), over the bridge.
type coordinatorRun struct {
	phase, db, results string
	// certDir holds the client certificate: "" is the cluster's, "none"
	// dials without TLS. token "" is the cluster's, "none" sends none.
	certDir, token string
	agents         []string // default: every agent
	props          []string
	flags          []string
	timeout        time.Duration // default 5 min
}

type coordinatorResult struct {
	code    int
	out     string
	results string
	elapsed time.Duration
}

func (e *env) coordinatorCmd(ctx context.Context, r coordinatorRun) *exec.Cmd {
	agents := r.agents
	if agents == nil {
		agents = e.agents
	}
	args := []string{"coordinator", r.phase, r.db, "--agents", strings.Join(agents, ","), "--results", r.results, "--no-tui"}
	switch r.certDir {
	case "none":
	default:
		dir := r.certDir
		if dir == "" {
			dir = e.tls
		}
		args = append(args, "--tls-cert", filepath.Join(dir, "coordinator.pem"), "--tls-key", filepath.Join(dir, "coordinator-key.pem"),
			"--tls-ca", filepath.Join(e.tls, "ca.pem"))
	}
	for _, p := range r.props {
		args = append(args, "-p", p)
	}
	args = append(args, r.flags...)
	c := exec.CommandContext(ctx, e.bin, args...)
	token := r.token
	if token == "" {
		token = e.token
	}
	c.Env = os.Environ()
	if token != "none" {
		c.Env = append(c.Env, "YCSBCTL_TOKEN="+token)
	}
	return c
}

func (e *env) coordinator(t testing.TB, r coordinatorRun) coordinatorResult {
	t.Helper()
	if r.timeout == 0 {
		r.timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	start := time.Now()
	b, err := e.coordinatorCmd(ctx, r).CombinedOutput()
	res := coordinatorResult{out: string(b), results: r.results, elapsed: time.Since(start)}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("coordinator: %v", err)
		}
		res.code = ee.ExitCode()
	}
	return res
}

func (r coordinatorResult) bundle(t testing.TB) *bundle.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.results, "run.json"))
	if err != nil {
		t.Fatalf("run.json: %v (coordinator exit %d)\n%s", err, r.code, r.out)
	}
	var rj bundle.Run
	if err := json.Unmarshal(b, &rj); err != nil {
		t.Fatal(err)
	}
	return &rj
}

// checkIntervals: the bundle's intervals are numbered without a gap, none
// arrived late, and for every agent its slices of the intervals add up to
// exactly what it reported at the end: no interval lost or counted twice.
// It returns the merged operations.
func checkIntervals(t testing.TB, rj *bundle.Run) int64 {
	t.Helper()
	if rj.LateRecords != 0 {
		t.Errorf("%d late records", rj.LateRecords)
	}
	perAgent := make([]int64, len(rj.Agents))
	slices := make([]int, len(rj.Agents))
	var merged int64
	for i, iv := range rj.Intervals {
		if iv.Seq != int64(i+1) {
			t.Fatalf("interval %d has seq %d: an interval is missing or repeated", i+1, iv.Seq)
		}
		var sum int64
		for _, s := range iv.Agents {
			if s.Index < 0 || s.Index >= len(perAgent) {
				t.Fatalf("interval %d: agent index %d", iv.Seq, s.Index)
			}
			perAgent[s.Index] += s.Operations
			slices[s.Index]++
			sum += s.Operations
		}
		if sum != iv.Operations {
			t.Fatalf("interval %d: agents' slices sum to %d, merged %d", iv.Seq, sum, iv.Operations)
		}
		merged += iv.Operations
	}
	for i, a := range rj.Agents {
		if a.Final == nil {
			continue
		}
		if perAgent[i] != a.Final.Operations || a.Operations != a.Final.Operations || int64(a.Intervals) != a.Final.Intervals {
			t.Fatalf("agent %d (%s): intervals sum to %d ops, received %d in %d intervals, final says %d in %d",
				i, a.Hostname, perAgent[i], a.Operations, a.Intervals, a.Final.Operations, a.Final.Intervals)
		}
	}
	if merged != rj.Summary.Operations {
		t.Fatalf("intervals sum to %d operations, summary says %d", merged, rj.Summary.Operations)
	}
	return merged
}

// checkExact: a complete run whose every agent finished, with merged
// counts equal to the plan.
func checkExact(t testing.TB, rj *bundle.Run, want int64) {
	t.Helper()
	if rj.Status != "complete" || rj.ExitCode != 0 || len(rj.Agents) != len(rj.Config.Agents) {
		t.Fatalf("run.json: status %q exit %d (%s) agents %d, error %q", rj.Status, rj.ExitCode, rj.ExitReason, len(rj.Agents), rj.Error)
	}
	var sum int64
	for i, a := range rj.Agents {
		if a.State != "finished" || a.Final == nil || a.StartSkewNs == nil {
			t.Fatalf("agent %d (%s): state %q, final or start skew missing", i, a.Address, a.State)
		}
		if want := fmt.Sprintf("h%d", i+1); a.Hostname != want && strings.HasPrefix(a.Address, "10.77.0.") {
			t.Fatalf("agent %d reports host name %q, not %q", i, a.Hostname, want)
		}
		sum += a.Final.Operations
	}
	merged := checkIntervals(t, rj)
	if sum != rj.Summary.Operations || merged != sum || (want >= 0 && sum != want) {
		t.Fatalf("agents' finals sum to %d, intervals %d, summary %d, planned %d", sum, merged, rj.Summary.Operations, want)
	}
}

// okCount and errCount: operations by return code in the summary.
func returns(rj *bundle.Run) (ok, failed int64, byCode map[string]int64) {
	byCode = map[string]int64{}
	for op, m := range rj.Summary.Returns {
		for code, n := range m {
			byCode[op+"="+code] += n
			if code == "OK" {
				ok += n
			} else {
				failed += n
			}
		}
	}
	return ok, failed, byCode
}

// logClock logs each agent's start skew, clock offset and round trip and
// returns the largest of each (absolute).
// workloadA runs a coordinator load (ops is the record count) or run of
// workload A against db and requires a clean one: exit 0, exact merged
// counts, every operation OK, and a run that both read and updated. It
// logs the clock figures and the throughput.
func (e *env) workloadA(t *testing.T, db, phase string, props []string, ops int64) *bundle.Run {
	t.Helper()
	r := e.coordinator(t, coordinatorRun{phase: phase, db: db, results: filepath.Join(e.tmp, db+"-"+phase),
		props: props, flags: []string{"-P", "workloada"}})
	if r.code != 0 {
		t.Fatalf("coordinator %s %s: exit %d\n%s", phase, db, r.code, r.out)
	}
	rj := r.bundle(t)
	checkExact(t, rj, ops)
	ok, failed, by := returns(rj)
	if ok != ops || failed != 0 || (phase == "run" && (by["READ=OK"] == 0 || by["UPDATE=OK"] == 0)) {
		t.Fatalf("%s %s: %d OK, %d failed: %v", db, phase, ok, failed, by)
	}
	logClock(t, db+" "+phase, rj)
	figure(t, "%s %s: %d operations in %s, %.0f ops/s, returns %v", db, phase, ops, r.elapsed.Round(100*time.Millisecond), rj.Summary.Throughput, by)
	return rj
}

func logClock(t testing.TB, what string, rj *bundle.Run) (maxSkew, maxOff, maxRTT int64) {
	t.Helper()
	for _, a := range rj.Agents {
		skew := int64(0)
		if a.StartSkewNs != nil {
			skew = *a.StartSkewNs
		}
		maxSkew = max(maxSkew, abs(skew))
		maxOff = max(maxOff, abs(a.ClockOffsetNs))
		maxRTT = max(maxRTT, a.RTTNs)
		figure(t, "%s: %s (%s) state %s ops %d, start skew %.3f ms, clock offset %.3f ms, rtt %.3f ms", what, a.Hostname, a.Address,
			a.State, finalOps(a), ms(skew), ms(a.ClockOffsetNs), ms(a.RTTNs))
	}
	figure(t, "%s: max start skew %.3f ms, max |clock offset| %.3f ms, max rtt %.3f ms", what, ms(maxSkew), ms(maxOff), ms(maxRTT))
	return maxSkew, maxOff, maxRTT
}

func finalOps(a bundle.Agent) int64 {
	if a.Final == nil {
		return -1
	}
	return a.Final.Operations
}

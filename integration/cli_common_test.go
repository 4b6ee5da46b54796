//go:build integration

package integration

// CLI-level integration tests: the real ycsbctl binary, built once per test
// binary, against the real servers that servers.sh starts. Each database's
// TestCLI<DB> (cli_<db>_test.go) describes how to reach its server, how to
// count its records and in which order it scans, and runs cliSuite, whose
// steps share one server start:
//
//	SchemaDropInit      drop, drop, init, init: idempotent, each says what it did
//	InvalidConfig       a bad binding property: exit 2, the property named
//	Load                load with 8 threads; the database holds exactly recordcount
//	ScanOrder           `ycsbctl shell` scans print keys in the database's order
//	Workloads           workloads A-F with 8 threads; every operation counted, only OK
//	DataIntegrity       dataintegrity=true load, then C and F verify every read
//	BulkLoad            batchsize=100 and comparison2014-bulkload (batches of 3000)
//	CredentialsNotShown a password never appears in output or the run bundle
//	Distributed         coordinator + 3 agents on 127.0.0.1: load splits, run merges
//	ServerStopped       the server stops mid-run: failures counted and shown,
//	                    complete summary, exit 5, no hang; then a new run exits 1
//
// ServerStopped is always last: it leaves the server stopped.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// ---- the binary ------------------------------------------------------------

var (
	cliBuildOnce sync.Once
	cliBinPath   string
	cliBuildErr  error
)

// cliRoot is the checkout's top directory.
func cliRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// cliDirPrefix names the temporary directories holding the test binary.
const cliDirPrefix = "ycsbctl-cli-it-"

// cliBinary builds ./cmd/ycsbctl once per test binary into a temporary
// directory and returns its path. The directory records the test binary's
// PID; directories left by earlier test binaries that are gone are removed
// here (no hook runs after the last test).
func cliBinary(t testing.TB) string {
	t.Helper()
	cliBuildOnce.Do(func() {
		removeStaleCLIDirs()
		dir, err := os.MkdirTemp("", cliDirPrefix)
		if err != nil {
			cliBuildErr = err
			return
		}
		_ = os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
		bin := filepath.Join(dir, "ycsbctl")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/ycsbctl")
		cmd.Dir = cliRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			cliBuildErr = fmt.Errorf("go build ./cmd/ycsbctl: %v\n%s", err, out)
			return
		}
		cliBinPath = bin
	})
	require.NoError(t, cliBuildErr)
	return cliBinPath
}

func removeStaleCLIDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), cliDirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}

// ---- running it --------------------------------------------------------------

// cliResult is one finished ycsbctl invocation.
type cliResult struct {
	args   []string
	stdout string
	stderr string
	exit   int
	took   time.Duration
}

func (r *cliResult) String() string {
	return fmt.Sprintf("ycsbctl %s (exit %d after %s)\n--- stdout ---\n%s\n--- stderr ---\n%s",
		strings.Join(r.args, " "), r.exit, r.took.Round(time.Millisecond), tail(r.stdout, 4000), tail(r.stderr, 4000))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// timedLine is one line of output and when it arrived.
type timedLine struct {
	at   time.Time
	text string
}

// lineLog is an io.Writer that keeps every complete line with its arrival
// time, so that a test can tell what ycsbctl printed before and after an
// event (a server stop).
type lineLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	part  []byte
	lines []timedLine
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.buf.Write(p)
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, timedLine{now, string(l.part[:i])})
		l.part = l.part[i+1:]
	}
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *lineLog) Lines() []timedLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]timedLine(nil), l.lines...)
}

// cliProc is a ycsbctl process started in the background.
type cliProc struct {
	args   []string
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdout *lineLog
	stderr *lineLog
	start  time.Time
	done   chan struct{}
	res    *cliResult
}

// startCLI starts ycsbctl with args. The process is killed if it is still
// running after timeout (the caller's Wait then fails the test as a hang).
func startCLI(t testing.TB, timeout time.Duration, stdin string, args ...string) *cliProc {
	t.Helper()
	bin := cliBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t.TempDir()
	// Plain status lines, never the live view (stderr is no terminal here
	// anyway).
	cmd.Env = append(os.Environ(), "TERM=dumb")
	p := &cliProc{args: args, cmd: cmd, cancel: cancel, stdout: &lineLog{}, stderr: &lineLog{}, done: make(chan struct{})}
	cmd.Stdout = p.stdout
	cmd.Stderr = p.stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.WaitDelay = 5 * time.Second
	p.start = time.Now()
	require.NoError(t, cmd.Start(), "starting ycsbctl %v", args)
	go func() {
		err := cmd.Wait()
		r := &cliResult{args: args, stdout: p.stdout.String(), stderr: p.stderr.String(), took: time.Since(p.start)}
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			r.exit = ee.ExitCode()
		default:
			r.exit = -1
		}
		if ctx.Err() != nil {
			r.exit = -1
			r.stderr += fmt.Sprintf("\n[test] killed after %s: %v", timeout, ctx.Err())
		}
		p.res = r
		cancel()
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// Wait returns the result; a process that had to be killed fails the test.
func (p *cliProc) Wait(t testing.TB) *cliResult {
	t.Helper()
	<-p.done
	if p.res.exit == -1 {
		t.Fatalf("ycsbctl did not finish in time (hang?): %s", p.res)
	}
	return p.res
}

// runCLI runs ycsbctl to completion and logs a one-line account of it.
func runCLI(t testing.TB, timeout time.Duration, stdin string, args ...string) *cliResult {
	t.Helper()
	r := startCLI(t, timeout, stdin, args...).Wait(t)
	t.Logf("ycsbctl %s: exit %d in %s", strings.Join(r.args, " "), r.exit, r.took.Round(time.Millisecond))
	return r
}

// requireExit fails the test unless r exited with code.
func requireExit(t testing.TB, r *cliResult, code int) {
	t.Helper()
	require.Equal(t, code, r.exit, "%s", r)
}

// ---- parsing YCSB's text output ---------------------------------------------

// ycsbSummary is the text exporter's output: [SERIES], Metric, Value.
type ycsbSummary struct {
	values map[string]map[string]string
	series []string // in output order
}

func parseSummary(t testing.TB, out string) *ycsbSummary {
	t.Helper()
	s := &ycsbSummary{values: map[string]map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "[") {
			continue
		}
		parts := strings.SplitN(line, ", ", 3)
		if len(parts) != 3 || !strings.HasSuffix(parts[0], "]") {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(parts[0], "["), "]")
		m := s.values[name]
		if m == nil {
			m = map[string]string{}
			s.values[name] = m
			s.series = append(s.series, name)
		}
		m[parts[1]] = parts[2]
	}
	require.NoError(t, sc.Err())
	return s
}

func (s *ycsbSummary) has(series string) bool { return s.values[series] != nil }

// int returns an integer metric, 0 when absent.
func (s *ycsbSummary) int(series, metric string) int64 {
	v, ok := s.values[series][metric]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil {
			return -1
		}
		return int64(f)
	}
	return n
}

func (s *ycsbSummary) float(series, metric string) float64 {
	f, _ := strconv.ParseFloat(s.values[series][metric], 64)
	return f
}

// returns maps each Return=<STATUS> of series to its count.
func (s *ycsbSummary) returns(series string) map[string]int64 {
	out := map[string]int64{}
	for k := range s.values[series] {
		if st, ok := strings.CutPrefix(k, "Return="); ok {
			out[st] = s.int(series, k)
		}
	}
	return out
}

// dbOps are the operations that reach the database; READ-MODIFY-WRITE is
// measured on top of its READ and UPDATE, VERIFY and CLEANUP are not
// database operations.
var dbOps = []string{"READ", "UPDATE", "INSERT", "SCAN", "DELETE"}

// operations is the number of workload operations the summary accounts
// for: every database call, successful or failed, with each
// read-modify-write counted once (it appears under READ and UPDATE).
func (s *ycsbSummary) operations() int64 {
	var n int64
	for _, op := range dbOps {
		n += s.int(op, "Operations") + s.int(op+"-FAILED", "Operations")
	}
	return n - s.int("READ-MODIFY-WRITE", "Operations")
}

// returnTotal is the same count from the Return= lines.
func (s *ycsbSummary) returnTotal() int64 {
	var n int64
	for _, op := range dbOps {
		for _, c := range s.returns(op) {
			n += c
		}
	}
	return n - s.int("READ-MODIFY-WRITE", "Operations")
}

// nonOK lists every Return= line of a database operation that is not OK.
func (s *ycsbSummary) nonOK() map[string]int64 {
	out := map[string]int64{}
	for _, op := range dbOps {
		for st, c := range s.returns(op) {
			if st != "OK" && st != "BATCHED_OK" {
				out[op+" Return="+st] = c
			}
		}
	}
	return out
}

// statusRE matches YCSB's status line: "<date> <time> <sec> sec: <n> operations; ...".
var statusRE = regexp.MustCompile(`^(?:\S+ )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3} (\d+) sec: (\d+) operations;`)

// statusLine is one parsed status line.
type statusLine struct {
	timedLine
	sec int64
	ops int64
}

func parseStatus(lines []timedLine) []statusLine {
	var out []statusLine
	for _, l := range lines {
		m := statusRE.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		ops, _ := strconv.ParseInt(m[2], 10, 64)
		out = append(out, statusLine{l, sec, ops})
	}
	return out
}

func splitLines(s string) []timedLine {
	var out []timedLine
	for _, l := range strings.Split(s, "\n") {
		out = append(out, timedLine{text: l})
	}
	return out
}

// checkRunSummary checks a finished run or load: exit 0, the [OVERALL]
// lines, every operation accounted for in the per-operation blocks and in
// their Return= lines, and the last status line (runs use -s) agreeing.
// It returns the summary for further checks.
func checkRunSummary(t *testing.T, r *cliResult, ops int64) *ycsbSummary {
	t.Helper()
	requireExit(t, r, 0)
	s := parseSummary(t, r.stdout)
	require.True(t, s.has("OVERALL"), "no [OVERALL] lines:\n%s", r)
	assert.Greater(t, s.int("OVERALL", "RunTime(ms)"), int64(0), "[OVERALL] RunTime(ms)")
	assert.Greater(t, s.float("OVERALL", "Throughput(ops/sec)"), 0.0, "[OVERALL] Throughput(ops/sec)")
	assert.Equal(t, ops, s.operations(), "Operations of %v (+ -FAILED) minus READ-MODIFY-WRITE", dbOps)
	assert.Equal(t, ops, s.returnTotal(), "Return= counts of %v minus READ-MODIFY-WRITE", dbOps)
	if st := parseStatus(splitLines(r.stderr)); len(st) > 0 {
		assert.Equal(t, ops, st[len(st)-1].ops, "operations in the last status line")
	}
	return s
}

// requireOnlyOK fails when any database operation returned anything but OK
// (BATCHED_OK counts as OK).
func requireOnlyOK(t *testing.T, s *ycsbSummary, what string) {
	t.Helper()
	assert.Empty(t, s.nonOK(), "%s: non-OK returns", what)
}

// ---- per-database description -----------------------------------------------

// cliTarget describes one database to cliSuite.
type cliTarget struct {
	// db is the binding name given to ycsbctl; server the servers.sh name.
	db, server string
	// props connect to the server (and set timeouts); they are passed as
	// -p to every command and used to open the binding in-process.
	props map[string]string
	// records is the main load's recordcount; ops each workload's
	// operationcount (scanOps for workload E, whose scans may be slow).
	records, ops, scanOps int64
	// faultProps are extra properties for the server-stop run (shorter
	// per-call timeouts).
	faultProps map[string]string
	// faultRun is how long the server-stop run lasts (maxexecutiontime).
	faultRun time.Duration
	// opTimeout bounds one call during the outage.
	opTimeout time.Duration
	// scanStarts returns start keys for the shell scan check, given the
	// loaded keys; checkScan checks the keys one scan printed.
	scanStarts func(t *testing.T, keys []string) []string
	checkScan  func(t *testing.T, keys []string, start string, got []string)
	// secretProps carry credentials ({secret} stands for the secret) for
	// the credentials check; nil skips it. secretExit is the exit code
	// expected with them (the stand-in FerretDB cannot authenticate).
	secretProps map[string]string
	secretExit  int
	// invalidProps make an invalid configuration whose error names
	// invalidWant (exit code 2).
	invalidProps map[string]string
	invalidWant  string
	// counter counts records in a table through the binding (opened by
	// cliSuite from props).
	counter adapters.RecordCounter
}

// args turns props (and extra key=values) into sorted -p flags.
func (tg *cliTarget) args(extra ...map[string]string) []string {
	m := map[string]string{}
	for k, v := range tg.props {
		m[k] = v
	}
	for _, e := range extra {
		for k, v := range e {
			m[k] = v
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		out = append(out, "-p", k+"="+m[k])
	}
	return out
}

// cmd builds `<verb> <db> [-P workload] -p ...`.
func (tg *cliTarget) cmd(verb, workload string, extra map[string]string, flags ...string) []string {
	out := []string{verb, tg.db}
	if workload != "" {
		out = append(out, "-P", workload)
	}
	out = append(out, tg.args(extra)...)
	return append(out, flags...)
}

func (tg *cliTarget) open(t *testing.T) {
	info, err := adapters.Lookup(tg.db)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := info.Driver.Open(ctx, properties.FromMap(tg.props))
	require.NoError(t, err)
	t.Cleanup(func() {
		if c, ok := db.(adapters.Closer); ok {
			_ = c.Close()
		}
	})
	rc, ok := db.(adapters.RecordCounter)
	require.True(t, ok, "%s implements RecordCounter", tg.db)
	tg.counter = rc
}

func (tg *cliTarget) count(t *testing.T, table string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n, err := tg.counter.CountRecords(ctx, table)
	require.NoError(t, err, "counting %s", table)
	return n
}

// cmdTimeout bounds one ycsbctl command in these tests.
const cmdTimeout = 5 * time.Minute

// schemaCheck runs init or drop on table and checks that it says what
// it did (want) and not the opposite.
func (tg *cliTarget) schema(t *testing.T, verb, table, want string) string {
	t.Helper()
	r := runCLI(t, cmdTimeout, "", tg.cmd(verb, "", map[string]string{"table": table})...)
	requireExit(t, r, 0)
	out := strings.TrimSpace(r.stdout)
	t.Logf("%s %s: %s", verb, table, out)
	require.Contains(t, out, want, "%s", r)
	return out
}

// load loads table and checks the summary (every record inserted with
// OK or BATCHED_OK) and the exact record count. It returns the summary.
func (tg *cliTarget) load(t *testing.T, workload, table string, records int64, threads int, extra map[string]string) *ycsbSummary {
	t.Helper()
	p := map[string]string{"table": table, "recordcount": strconv.FormatInt(records, 10)}
	for k, v := range extra {
		p[k] = v
	}
	r := runCLI(t, cmdTimeout, "", tg.cmd("load", workload, p, "-threads", strconv.Itoa(threads), "-s")...)
	requireExit(t, r, 0)
	s := parseSummary(t, r.stdout)
	require.True(t, s.has("OVERALL"), "%s", r)
	var inserted int64
	for st, c := range s.returns("INSERT") {
		require.Contains(t, []string{"OK", "BATCHED_OK"}, st, "load returned %s %d times", st, c)
		inserted += c
	}
	require.Equal(t, records, inserted, "INSERT Return= counts")
	t.Logf("loaded %d records into %s at %.0f records/s", records, table, s.float("OVERALL", "Throughput(ops/sec)"))
	require.Equal(t, records, tg.count(t, table), "records in %s after load", table)
	return s
}

// run runs workload and checks the summary; it returns it.
func (tg *cliTarget) run(t *testing.T, workload string, ops int64, extra map[string]string) *ycsbSummary {
	t.Helper()
	p := map[string]string{"operationcount": strconv.FormatInt(ops, 10)}
	for k, v := range extra {
		p[k] = v
	}
	r := runCLI(t, cmdTimeout, "", tg.cmd("run", workload, p, "-threads", "8", "-s")...)
	s := checkRunSummary(t, r, ops)
	t.Logf("%s: %d operations at %.0f ops/s; returns %s", workload, ops, s.float("OVERALL", "Throughput(ops/sec)"), describeReturns(s))
	return s
}

func describeReturns(s *ycsbSummary) string {
	var parts []string
	for _, op := range dbOps {
		rs := s.returns(op)
		keys := make([]string, 0, len(rs))
		for k := range rs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %s=%d", op, k, rs[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// shellScan runs `ycsbctl shell` with "scan start n" and returns the keys
// it printed.
func (tg *cliTarget) shellScan(t *testing.T, start string, n int) []string {
	t.Helper()
	r := runCLI(t, 2*time.Minute, fmt.Sprintf("scan %s %d\nquit\n", start, n), tg.cmd("shell", "", nil)...)
	requireExit(t, r, 0)
	require.Contains(t, r.stdout, "Result: OK", "%s", r)
	var keys []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if k, ok := strings.CutPrefix(l, "  key="); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// loadedKeys are the keys of records [0, n) with YCSB's default hashed
// insert order.
func loadedKeys(n int64) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ycsbKeyFor(int64(i))
	}
	return out
}

// checkSortedScan is checkScan for databases that scan in byte order of the
// keys (HBase, MongoDB's _id): the printed keys must be exactly the n keys
// that sort at or after start.
func checkSortedScan(t *testing.T, keys []string, start string, got []string) {
	t.Helper()
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	i := sort.SearchStrings(sorted, start)
	want := sorted[i:min(i+len(got), len(sorted))]
	require.NotEmpty(t, got, "scan from %s printed no keys", start)
	require.True(t, sort.StringsAreSorted(got), "scan from %s not in key order: %v", start, got)
	require.Equal(t, want, got, "scan from %s", start)
}

// ---- the suite ------------------------------------------------------------------

func cliSuite(t *testing.T, tg *cliTarget) {
	cliBinary(t)
	tg.open(t)
	const table = "usertable"
	records := tg.records

	t.Run("SchemaDropInit", func(t *testing.T) {
		first := tg.schema(t, "drop", table, "")
		assert.True(t, strings.Contains(first, "dropped") || strings.Contains(first, "does not exist"), first)
		second := tg.schema(t, "drop", table, "does not exist")
		assert.NotContains(t, second, "dropped")
		tg.schema(t, "init", table, "created")
		again := tg.schema(t, "init", table, "already exists")
		assert.NotContains(t, again, "created")
	})

	t.Run("InvalidConfig", func(t *testing.T) {
		p := map[string]string{"operationcount": "10"}
		for k, v := range tg.invalidProps {
			p[k] = v
		}
		r := runCLI(t, time.Minute, "", tg.cmd("run", "workloada", p)...)
		requireExit(t, r, 2)
		assert.Contains(t, r.stderr, tg.invalidWant)
		assert.NotContains(t, r.stdout, "[OVERALL]")
	})

	loaded := t.Run("Load", func(t *testing.T) {
		s := tg.load(t, "workloada", table, records, 8, nil)
		assert.Equal(t, records, s.int("INSERT", "Operations"))
		assert.Equal(t, records, s.int("INSERT", "Return=OK"))
	})
	if !loaded {
		t.Fatal("load failed; the later steps need the loaded table")
	}

	t.Run("ScanOrder", func(t *testing.T) {
		keys := loadedKeys(records)
		for _, start := range tg.scanStarts(t, keys) {
			got := tg.shellScan(t, start, 20)
			require.Len(t, got, 20, "scan from %s", start)
			tg.checkScan(t, keys, start, got)
		}
	})

	t.Run("Workloads", func(t *testing.T) {
		// Workloads D and E insert records recordcount, recordcount+1, ...:
		// each run is told the current count so that its inserts never
		// collide with an earlier run's and its reads only pick keys that
		// exist.
		for _, w := range []string{"a", "b", "c", "f", "d", "e"} {
			ok := t.Run("workload"+w, func(t *testing.T) {
				ops := tg.ops
				if w == "e" {
					ops = tg.scanOps
				}
				s := tg.run(t, "workload"+w, ops, map[string]string{"recordcount": strconv.FormatInt(records, 10)})
				assert.Zero(t, s.returns("READ")["NOT_FOUND"], "READ Return=NOT_FOUND")
				requireOnlyOK(t, s, "workload"+w)
				switch w {
				case "c":
					assert.Equal(t, ops, s.int("READ", "Operations"))
				case "f":
					assert.Equal(t, s.int("READ-MODIFY-WRITE", "Operations"), s.int("UPDATE", "Operations"))
				case "e":
					assert.Greater(t, s.int("SCAN", "Operations"), int64(0))
				}
				if ins := s.int("INSERT", "Return=OK"); ins > 0 {
					records += ins
					assert.Equal(t, records, tg.count(t, table), "records after workload%s's %d inserts", w, ins)
				}
			})
			if !ok {
				return
			}
		}
	})

	t.Run("DataIntegrity", func(t *testing.T) {
		const di = "ycsbctl_di"
		tg.schema(t, "init", di, "created")
		n := min(records, 1000)
		tg.load(t, "workloada", di, n, 8, map[string]string{"dataintegrity": "true"})
		for _, w := range []string{"workloadc", "workloadf"} {
			s := tg.run(t, w, tg.ops, map[string]string{"table": di, "recordcount": strconv.FormatInt(n, 10), "dataintegrity": "true"})
			requireOnlyOK(t, s, w)
			v := s.returns("VERIFY")
			t.Logf("%s: VERIFY returns %v", w, v)
			assert.Greater(t, v["OK"], int64(0), "VERIFY Return=OK")
			assert.Zero(t, v["UNEXPECTED_STATE"], "VERIFY Return=UNEXPECTED_STATE")
			assert.Zero(t, v["ERROR"], "VERIFY Return=ERROR")
			assert.Equal(t, s.int("READ", "Return=OK"), v["OK"], "every successful read verified")
		}
		tg.schema(t, "drop", di, "dropped")
	})

	t.Run("BulkLoad", func(t *testing.T) {
		t.Run("batchsize100", func(t *testing.T) {
			const bt = "ycsbctl_bulk"
			tg.schema(t, "init", bt, "created")
			s := tg.load(t, "workloada", bt, 2000, 8, map[string]string{"batchsize": "100"})
			// One INSERT measurement per batch call: 8 threads of 250
			// records each send 3 batches (100, 100, 50).
			assert.Equal(t, int64(24), s.int("INSERT", "Operations"), "batch calls")
			assert.Equal(t, int64(2000-24), s.int("INSERT", "Return=BATCHED_OK"))
			tg.schema(t, "drop", bt, "dropped")
		})
		t.Run("comparison2014-bulkload", func(t *testing.T) {
			// The 2014 comparison's bulk-load shape (batches of 3000,
			// 10-byte fields, zero-padded keys) on a small record count:
			// 2 threads of 3250 records send 3000 + 250 each.
			const bt = "ycsbctl_bulk3000"
			tg.schema(t, "init", bt, "created")
			s := tg.load(t, "comparison2014-bulkload", bt, 6500, 2, nil)
			assert.Equal(t, int64(4), s.int("INSERT", "Operations"), "batch calls")
			tg.schema(t, "drop", bt, "dropped")
		})
	})

	// HBase has no client credentials; the other adapters must hide theirs.
	if tg.secretProps != nil {
		t.Run("CredentialsNotShown", func(t *testing.T) { cliCredentials(t, tg, records) })
	}

	t.Run("Distributed", func(t *testing.T) { cliDistributed(t, tg) })

	// Last: leaves the server stopped.
	t.Run("ServerStopped", func(t *testing.T) { cliServerStopped(t, tg, records) })
}

// ---- credentials --------------------------------------------------------------

// cliCredentials runs workload C with credentials and a run bundle and
// checks that the secret shows up nowhere: not on stdout, not on stderr
// (status lines, notices, errors), not in any file of the bundle. The
// issue: "Credentials never appear in logs, status lines or the run
// bundle."
func cliCredentials(t *testing.T, tg *cliTarget, records int64) {
	const secret = "S3cret-ycsbctl-it-9f27"
	p := map[string]string{
		"recordcount":    strconv.FormatInt(records, 10),
		"operationcount": "200",
	}
	for k, v := range tg.secretProps {
		p[k] = strings.ReplaceAll(v, "{secret}", secret)
	}
	dir := t.TempDir()
	r := runCLI(t, cmdTimeout, "", tg.cmd("run", "workloadc", p, "-threads", "2", "-s", "--results", dir)...)
	requireExit(t, r, tg.secretExit)
	for _, out := range []struct{ name, text string }{{"stdout", r.stdout}, {"stderr", r.stderr}} {
		for _, l := range strings.Split(out.text, "\n") {
			assert.NotContains(t, l, secret, "the secret is printed on %s", out.name)
		}
	}
	checkNoSecretInDir(t, dir, secret)
}

// checkNoSecretInDir fails for every file under dir (a run bundle) that
// holds secret.
func checkNoSecretInDir(t *testing.T, dir, secret string) {
	t.Helper()
	var files []string
	require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files = append(files, rel)
		if i := bytes.Index(b, []byte(secret)); i >= 0 {
			lo, hi := max(0, i-80), min(len(b), i+len(secret)+20)
			t.Errorf("the secret is in the run bundle's %s: ...%q...", rel, b[lo:hi])
		}
		return nil
	}))
	t.Logf("run bundle files checked: %v", files)
}

// ---- distributed run ------------------------------------------------------------

// requireCoordinatorCommands fails the test unless the binary has the
// coordinator and agent commands: they exist, so a build without them is
// a regression, not a reason to skip the distributed checks.
func requireCoordinatorCommands(t *testing.T) {
	t.Helper()
	for _, c := range []string{"coordinator", "agent"} {
		r := runCLI(t, time.Minute, "", c, "--help")
		require.Equal(t, 0, r.exit, "ycsbctl %s --help: the command must exist\nstderr: %s", c, r.stderr)
		require.NotContains(t, r.stderr, "unknown command", "ycsbctl %s --help", c)
	}
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(t *testing.T, n int) []int {
	var ls []net.Listener
	var out []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// waitListening waits until addr accepts TCP connections.
func waitListening(t *testing.T, addr string, p *cliProc, within time.Duration) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("agent at %s exited: %s", addr, p.res)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("agent at %s not listening after %s", addr, within)
}

// distBundle is the part of a coordinator's run.json these tests read.
type distBundle struct {
	ExitCode int `json:"exit_code"`
	Plan     struct {
		InsertStart int64 `json:"insertstart"`
		InsertCount int64 `json:"insertcount"`
		Agents      []struct {
			Address        string `json:"address"`
			InsertStart    int64  `json:"insertstart"`
			InsertCount    int64  `json:"insertcount"`
			OperationCount int64  `json:"operationcount"`
		} `json:"agents"`
	} `json:"plan"`
	Agents []struct {
		Address    string `json:"address"`
		State      string `json:"state"`
		Operations int64  `json:"operations_received"`
	} `json:"agents"`
}

func readDistBundle(t *testing.T, dir string) *distBundle {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err, "the coordinator's run bundle")
	var out distBundle
	require.NoError(t, json.Unmarshal(b, &out))
	return &out
}

// cliDistributed starts 3 agents on 127.0.0.1 and drives a load and a
// workload A run through `ycsbctl coordinator` against the real server.
// The load must split [0, recordcount) into 3 disjoint parts that together
// insert every record exactly once (checked in the database and in the run
// bundle's plan and per-agent counts); the run's merged summary must
// account for every operation, with each agent doing a share.
func cliDistributed(t *testing.T, tg *cliTarget) {
	requireCoordinatorCommands(t)
	const dt = "ycsbctl_dist"
	tg.schema(t, "init", dt, "created")
	ports := freePorts(t, 3)
	var addrs []string
	var agents []*cliProc
	for _, port := range ports {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		a := startCLI(t, 15*time.Minute, "", "agent", "--listen", addr)
		agents = append(agents, a)
		addrs = append(addrs, addr)
	}
	for i, a := range agents {
		waitListening(t, addrs[i], a, time.Minute)
	}
	list := strings.Join(addrs, ",")
	records := tg.records
	coordinator := func(t *testing.T, verb string, p map[string]string, dir string) *cliResult {
		args := append([]string{"coordinator"}, tg.cmd(verb, "workloada", p,
			"--agents", list, "-threads", "4", "-s", "--results", dir)...)
		return runCLI(t, cmdTimeout, "", args...)
	}

	t.Run("Load", func(t *testing.T) {
		dir := t.TempDir()
		r := coordinator(t, "load", map[string]string{"table": dt, "recordcount": strconv.FormatInt(records, 10)}, dir)
		requireExit(t, r, 0)
		s := parseSummary(t, r.stdout)
		require.True(t, s.has("OVERALL"), "%s", r)
		assert.Equal(t, records, s.int("INSERT", "Return=OK"), "merged INSERT Return=OK")
		assert.Equal(t, records, s.int("INSERT", "Operations"), "merged INSERT Operations")
		assert.Equal(t, records, tg.count(t, dt), "records in %s after a load split over 3 agents", dt)
		b := readDistBundle(t, dir)
		require.Len(t, b.Plan.Agents, 3)
		next := int64(0)
		var got int64
		for i, a := range b.Plan.Agents {
			t.Logf("agent %d %s: insertstart=%d insertcount=%d; inserted %d", i, a.Address, a.InsertStart, a.InsertCount, b.Agents[i].Operations)
			assert.Equal(t, next, a.InsertStart, "agent %d's range starts where the previous ended", i)
			assert.Greater(t, a.InsertCount, int64(0), "agent %d has a share", i)
			assert.Equal(t, a.InsertCount, b.Agents[i].Operations, "agent %d inserted its range", i)
			next = a.InsertStart + a.InsertCount
			got += b.Agents[i].Operations
		}
		assert.Equal(t, records, next, "the ranges cover [0, recordcount)")
		assert.Equal(t, records, got)
	})
	t.Run("Run", func(t *testing.T) {
		dir := t.TempDir()
		r := coordinator(t, "run", map[string]string{"table": dt, "recordcount": strconv.FormatInt(records, 10),
			"operationcount": strconv.FormatInt(tg.ops, 10)}, dir)
		s := checkRunSummary(t, r, tg.ops)
		assert.Zero(t, s.returns("READ")["NOT_FOUND"], "READ Return=NOT_FOUND")
		requireOnlyOK(t, s, "distributed workloada")
		t.Logf("distributed workloada: %s", describeReturns(s))
		b := readDistBundle(t, dir)
		var sum int64
		for i, a := range b.Agents {
			assert.Greater(t, a.Operations, int64(0), "agent %d did operations", i)
			assert.Equal(t, "finished", a.State, "agent %d", i)
			sum += a.Operations
		}
		assert.Equal(t, tg.ops, sum, "per-agent operations add up to operationcount")
	})
	if tg.secretProps != nil && tg.secretExit == 0 {
		t.Run("CredentialsNotShown", func(t *testing.T) {
			// The same check as the single-host one, for the coordinator
			// and the agents it drives.
			const secret = "S3cret-ycsbctl-dist-41c3"
			p := map[string]string{"table": dt, "recordcount": strconv.FormatInt(records, 10), "operationcount": "300"}
			for k, v := range tg.secretProps {
				p[k] = strings.ReplaceAll(v, "{secret}", secret)
			}
			dir := t.TempDir()
			r := coordinator(t, "run", p, dir)
			requireExit(t, r, 0)
			assert.NotContains(t, r.stdout, secret, "coordinator stdout")
			assert.NotContains(t, r.stderr, secret, "coordinator stderr")
			for i, a := range agents {
				assert.NotContains(t, a.stderr.String()+a.stdout.String(), secret, "agent %d's output", i)
			}
			checkNoSecretInDir(t, dir, secret)
		})
	}
	tg.schema(t, "drop", dt, "dropped")
	// Agents stop cleanly on SIGINT.
	for i, a := range agents {
		require.NoError(t, a.cmd.Process.Signal(os.Interrupt))
		select {
		case <-a.done:
			assert.Equal(t, 0, a.res.exit, "agent %s exit code after SIGINT: %s", addrs[i], a.res)
		case <-time.After(30 * time.Second):
			t.Errorf("agent %s still running 30s after SIGINT", addrs[i])
			a.cancel()
			<-a.done
		}
	}
}

// ---- server stopped mid-run -------------------------------------------------

// failedRE finds "[READ-FAILED: Count=N" and the like in a status line.
var failedRE = regexp.MustCompile(`\[([A-Z-]+)-FAILED: Count=(\d+)`)

// cliServerStopped runs workload A for faultRun seconds with status lines
// every second, stops the server a few seconds in, and checks that ycsbctl
// keeps going, counts and shows the failures, prints a complete summary,
// exits on time, and (ycsbctl.maxerrorrate=0) exits with 5.
func cliServerStopped(t *testing.T, tg *cliTarget, records int64) {
	secs := int64(tg.faultRun / time.Second)
	p := map[string]string{
		"recordcount":          strconv.FormatInt(records, 10),
		"operationcount":       "0",
		"maxexecutiontime":     strconv.FormatInt(secs, 10),
		"status.interval":      "1",
		"ycsbctl.maxerrorrate": "0",
	}
	for k, v := range tg.faultProps {
		p[k] = v
	}
	// Bound: the run, plus calls in flight finishing within their
	// timeout, plus closing the binding.
	limit := tg.faultRun + 2*tg.opTimeout + 30*time.Second
	proc := startCLI(t, limit+time.Minute, "", tg.cmd("run", "workloada", p, "-threads", "8", "-s")...)

	// Let it run against the live server for a few status lines.
	waitFor := time.Now().Add(2 * time.Minute)
	for {
		st := parseStatus(proc.stderr.Lines())
		if len(st) >= 3 && st[len(st)-1].ops > 0 {
			break
		}
		select {
		case <-proc.done:
			t.Fatalf("run ended before the server was stopped: %s", proc.res)
		default:
		}
		require.True(t, time.Now().Before(waitFor), "no progress in the status lines: %s", proc.stderr.String())
		time.Sleep(200 * time.Millisecond)
	}
	beforeStop := time.Now()
	stopServer(t, tg.server)
	stopped := time.Now()
	t.Logf("server stopped %.1fs into the run (the stop took %s)", stopped.Sub(proc.start).Seconds(), stopped.Sub(beforeStop).Round(time.Millisecond))
	require.Less(t, stopped.Sub(proc.start), tg.faultRun-5*time.Second,
		"the stop took too long to leave the run time with the server down")

	r := proc.Wait(t)
	t.Logf("run ended %s after the stop, %s after it started, exit %d", time.Since(stopped).Round(time.Millisecond), r.took.Round(time.Millisecond), r.exit)
	assert.Less(t, r.took, limit, "ycsbctl took too long to finish after the server stopped")
	requireExit(t, r, 5) // ycsbctl.maxerrorrate=0: any failure
	assert.Contains(t, r.stderr, "operations failed", "the exit reason names the failures")

	// Status lines kept coming while the server was down, and show the
	// failures.
	st := parseStatus(proc.stderr.Lines())
	var after []statusLine
	failedShown := map[string]int64{}
	for _, l := range st {
		if l.at.After(stopped) {
			after = append(after, l)
		}
		for _, m := range failedRE.FindAllStringSubmatch(l.text, -1) {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			failedShown[m[1]] += n
		}
	}
	require.NotEmpty(t, st)
	t.Logf("%d status lines, %d after the stop; failures shown in them: %v", len(st), len(after), failedShown)
	for _, l := range st {
		if failedRE.MatchString(l.text) {
			t.Logf("first status line with failures: %s", l.text)
			break
		}
	}
	assert.GreaterOrEqual(t, len(after), 3, "status lines after the server stopped")
	assert.NotEmpty(t, failedShown, "no [<OP>-FAILED: Count=...] in any status line")
	if len(after) > 0 {
		assert.GreaterOrEqual(t, after[len(after)-1].sec, secs-2, "last status line's elapsed seconds")
	}

	// A complete summary.
	s := parseSummary(t, r.stdout)
	require.True(t, s.has("OVERALL"), "no [OVERALL] after the outage:\n%s", r)
	rt := s.int("OVERALL", "RunTime(ms)")
	assert.InDelta(t, float64(secs*1000), float64(rt), float64(tg.opTimeout.Milliseconds()+3000), "[OVERALL] RunTime(ms)")
	total := s.operations()
	assert.Equal(t, total, s.returnTotal(), "Operations (+ -FAILED) and Return= counts agree")
	if len(st) > 0 {
		assert.Equal(t, total, st[len(st)-1].ops, "operations in the last status line")
	}
	var failed int64
	for _, op := range []string{"READ", "UPDATE"} {
		require.True(t, s.has(op), "[%s] block", op)
		n := s.int(op+"-FAILED", "Operations")
		failed += n
		var bad int64
		for st, c := range s.returns(op) {
			if st != "OK" {
				bad += c
				assert.Contains(t, []string{"ERROR", "SERVICE_UNAVAILABLE"}, st, "%s Return=%s", op, st)
			}
		}
		assert.Equal(t, n, bad, "%s-FAILED Operations vs %s non-OK Return= lines", op, op)
		if n > 0 {
			for _, m := range []string{"AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)", "95thPercentileLatency(us)", "99thPercentileLatency(us)"} {
				_, ok := s.values[op+"-FAILED"][m]
				assert.True(t, ok, "[%s-FAILED] %s", op, m)
			}
		}
	}
	assert.Greater(t, failed, int64(0), "failed operations in the summary")
	for op, n := range failedShown {
		assert.Equal(t, s.int(op+"-FAILED", "Operations"), n, "%s-FAILED: sum over the status lines vs the summary", op)
	}
	t.Logf("summary: %d operations, %d failed: %s", total, failed, describeReturns(s))

	// With the server gone, a new run cannot start: exit 1, promptly, with
	// a reason and no summary.
	r2 := runCLI(t, 2*time.Minute, "", tg.cmd("run", "workloada", map[string]string{
		"recordcount": strconv.FormatInt(records, 10), "operationcount": "100"}, "-threads", "2")...)
	requireExit(t, r2, 1)
	assert.Contains(t, r2.stderr, "cannot start")
	assert.NotContains(t, r2.stdout, "[OVERALL]")
	assert.Less(t, r2.took, time.Minute, "giving up on a stopped server")
	t.Logf("run against the stopped server: %s", lastLine(r2.stderr))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters/basic"
	"github.com/ycsbctl/ycsbctl/internal/cli"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a run
// (status lines, verbose DB output).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type result struct {
	code           int
	stdout, stderr string
	// dbOutput is what the basic adapter printed (basicdb.verbose).
	dbOutput string
}

var basicMu sync.Mutex // basic.Output is a package variable

// execute runs ycsbctl in-process with captured output.
func execute(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return executeWithSignals(t, stdin, func(chan<- os.Signal, ...os.Signal) {}, args...)
}

func executeWithSignals(t *testing.T, stdin string, notify func(chan<- os.Signal, ...os.Signal), args ...string) result {
	t.Helper()
	basicMu.Lock()
	defer basicMu.Unlock()
	var stdout, stderr, dbOut syncBuffer
	old := basic.Output
	basic.Output = &dbOut
	defer func() { basic.Output = old }()
	gs := &cli.GlobalState{
		Ctx:          context.Background(),
		Args:         args,
		Stdin:        strings.NewReader(stdin),
		Stdout:       &stdout,
		Stderr:       &stderr,
		Getenv:       func(string) string { return "" },
		Clock:        clock.NewReal(),
		ReadFile:     properties.ReadFile,
		SignalNotify: notify,
		SignalStop:   func(chan<- os.Signal) {},
	}
	code := cli.Execute(gs)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String(), dbOutput: dbOut.String()}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// TestBadInput checks that invalid configurations are rejected with exit
// code 2 and a message naming the property or flag, before any operation
// is sent.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	a := func(extra ...string) []string {
		// A run that would print every operation if it got going.
		return append([]string{"run", "basic", "-P", "workloada", "-p", "basicdb.verbose=true", "-p", "embedded.dir=" + dir}, extra...)
	}
	l := func(extra ...string) []string {
		return append([]string{"load", "basic", "-p", "basicdb.verbose=true", "-p", "recordcount=100"}, extra...)
	}
	tests := []struct {
		name string
		args []string
		want []string // all must appear in stderr
	}{
		{"unknown db", []string{"run", "nosuchdb", "-P", "workloada"}, []string{`"nosuchdb"`, "basic", "embedded"}},
		{"missing -P file", a("-P", filepath.Join(dir, "nosuchfile")), []string{"-P", "nosuchfile"}},
		{"unreadable -P file (a directory)", a("-P", dir), []string{"-P", dir}},
		{"malformed -p", a("-p", "recordcount"), []string{"-p", "recordcount", "key=value"}},
		{"-p with empty key", a("-p", "=5"), []string{"-p", "key=value"}},
		{"non-numeric recordcount", a("-p", "recordcount=many"), []string{"recordcount", "many"}},
		{"non-numeric operationcount", a("-p", "operationcount=1e3"), []string{"operationcount"}},
		{"negative operationcount", a("-p", "operationcount=-1"), []string{"operationcount", "-1"}},
		{"negative recordcount", a("-p", "recordcount=-10"), []string{"recordcount"}},
		{"all proportions zero", a("-p", "readproportion=0", "-p", "updateproportion=0"), []string{"readproportion", "updateproportion"}},
		{"proportion above 1", a("-p", "updateproportion=1.5"), []string{"updateproportion"}},
		{"unknown requestdistribution", a("-p", "requestdistribution=gaussian"), []string{"requestdistribution", "gaussian", "zipfian"}},
		{"insertstart+insertcount > recordcount", a("-p", "recordcount=100", "-p", "insertstart=50", "-p", "insertcount=60"), []string{"insertcount", "recordcount"}},
		{"-threads 0", a("-threads", "0"), []string{"threads"}},
		{"-threads not a number", a("-threads", "many"), []string{"threads"}},
		{"threadcount negative", a("-p", "threadcount=-2"), []string{"threadcount"}},
		{"zipfian without operationcount", l("-p", "requestdistribution=zipfian"), []string{"operationcount", "zipfian"}},
		{"dataintegrity with uniform field length", a("-p", "dataintegrity=true", "-p", "fieldlengthdistribution=uniform"), []string{"fieldlengthdistribution", "dataintegrity"}},
		{"bad measurement.interval", a("-p", "measurement.interval=sometimes"), []string{"measurement.interval", "op, intended or both"}},
		{"bad exporter", a("-p", "exporter=site.ycsb.measurements.exporter.XMLExporter"), []string{"exporter", "TextMeasurementsExporter"}},
		{"non-boolean readallfields", a("-p", "readallfields=yes"), []string{"readallfields", "true or false"}},
		{"negative -target", a("-target", "-5"), []string{"target"}},
		{"negative target property", a("-p", "target=-5"), []string{"target"}},
		{"bad fieldlengthdistribution", a("-p", "fieldlengthdistribution=normal"), []string{"fieldlengthdistribution", "normal"}},
		{"minscanlength > maxscanlength", a("-p", "minscanlength=50", "-p", "maxscanlength=10"), []string{"minscanlength", "maxscanlength"}},
		{"unknown measurementtype", a("-p", "measurementtype=rawdata"), []string{"measurementtype", "hdrhistogram"}},
		{"operationcount=0 without maxexecutiontime", a("-p", "operationcount=0"), []string{"operationcount", "maxexecutiontime"}},
		{"bad hdrhistogram.percentiles", a("-p", "hdrhistogram.percentiles=50,abc"), []string{"hdrhistogram.percentiles"}},
		{"percentile above 100", a("-p", "hdrhistogram.percentiles=50,101"), []string{"hdrhistogram.percentiles"}},
		{"negative maxexecutiontime", a("-p", "maxexecutiontime=-1"), []string{"maxexecutiontime"}},
		{"histogram field length with missing file", a("-p", "fieldlengthdistribution=histogram", "-p", "fieldlengthhistogram="+filepath.Join(dir, "nohist.txt")), []string{"fieldlengthhistogram", "nohist.txt"}},
		{"bad status.interval", a("-p", "status.interval=0"), []string{"status.interval"}},
		{"non-numeric status.interval", a("-p", "status.interval=often"), []string{"status.interval"}},
		{"negative warmupops", a("-p", "warmupops=-5"), []string{"warmupops"}},
		{"negative warmuptime", a("-p", "warmuptime=-1"), []string{"warmuptime"}},
		{"unknown workload class", a("-p", "workload=site.ycsb.workloads.TimeSeriesWorkload"), []string{"workload", "CoreWorkload"}},
		{"load without recordcount", []string{"load", "basic", "-p", "basicdb.verbose=true"}, []string{"recordcount"}},
		{"bad timeseries.granularity", a("-p", "measurementtype=timeseries", "-p", "timeseries.granularity=0"), []string{"timeseries.granularity"}},
		{"non-boolean hdrhistogram.fileoutput", a("-p", "hdrhistogram.fileoutput=on"), []string{"hdrhistogram.fileoutput"}},
		{"bad adapter property", a("-p", "basicdb.simulatedelay=-3"), []string{"basicdb.simulatedelay"}},
		{"fieldcount zero", a("-p", "fieldcount=0"), []string{"fieldcount"}},
		{"zeropadding zero", l("-p", "zeropadding=0"), []string{"zeropadding"}},
		{"bad maxerrorrate", a("-p", "ycsbctl.maxerrorrate=2"), []string{"ycsbctl.maxerrorrate"}},
		{"unknown flag", a("-bogus"), []string{"bogus"}},
		{"too many arguments", []string{"run", "basic", "extra", "-P", "workloada"}, []string{`"basic" "extra"`, "at most one positional argument"}},
		{"shell: unknown db", []string{"shell", "nosuchdb"}, []string{`"nosuchdb"`, "basic"}},
		{"agent: non-loopback listen without TLS", []string{"agent", "--listen", "192.0.2.1:7420"}, []string{"--listen", "192.0.2.1", "--insecure-listen"}},
		{"-P /dev/zero", a("-P", "/dev/zero"), []string{"-P", "/dev/zero", "binary", "text file"}},
		{"-P binary file", a("-P", writeFile(t, dir, "app.bin", "recordcount=1\n\x7fELF\x02\x01\x00\x00")), []string{"-P", "app.bin", "binary", "line 2"}},
		{"-P file over the size cap", a("-P", writeFile(t, dir, "huge.properties", strings.Repeat("# padding padding padding\n", properties.MaxFileBytes/26+1))), []string{"-P", "huge.properties", "4 MiB"}},
		{"-P malformed \\u escape", a("-P", writeFile(t, dir, "badu.properties", "recordcount=10\nfieldnameprefix=f\\uZZZZ\n")), []string{"-P", "badu.properties", "line 2", `\uZZZZ`, "fieldnameprefix", "four hex digits"}},
		{"-P truncated \\u escape in a key", a("-P", writeFile(t, dir, "shortu.properties", "# c\nab\\u12=1\n")), []string{"-P", "shortu.properties", "line 2", `\u12`}},
		// Hardening (issue: verdicts, bounded input): values that would
		// overflow a duration, flood, or exhaust memory, with the valid
		// range named.
		{"threads beyond memory", a("-threads", "1048576"), []string{"threadcount", "1048576", "from 1 to", "KiB"}},
		{"threadcount 1e8", a("-p", "threadcount=100000000"), []string{"threadcount", "from 1 to"}},
		{"maxexecutiontime overflowing", a("-p", "maxexecutiontime=18446744074"), []string{"maxexecutiontime", "315360000"}},
		{"target too small to mean anything", a("-target", "1e-300"), []string{"target", "0.001"}},
		{"status.interval flooding", a("-p", "status.interval=1e-9"), []string{"status.interval", "0.01"}},
		{"warmuptime overflowing", a("-p", "warmuptime=9300000000"), []string{"warmuptime", "3.1536e+08"}},
		{"metrics linger negative", a("-p", "ycsbctl.metrics.linger=-1"), []string{"ycsbctl.metrics.linger"}},
		{"exportfile in a missing directory", a("-p", "exportfile="+filepath.Join(dir, "nodir", "out.txt")), []string{"exportfile", "nodir"}},
		{"hdr output path under missing directories", a("-p", "hdrhistogram.fileoutput=true", "-p", "hdrhistogram.output.path="+filepath.Join(dir, "a", "b", "c")+"/"),
			[]string{"hdrhistogram.output.path", filepath.Join("a", "b", "c")}},
		{"agent lease shorter than its heartbeat", []string{"agent", "--lease", "100ms"}, []string{"--lease", "at least 2s"}},
		{"agent-timeout shorter than a heartbeat", []string{"coordinator", "run", "basic", "--agents", "127.0.0.1:1", "--agent-timeout", "200ms",
			"-p", "operationcount=10"}, []string{"--agent-timeout", "at least 2s"}},
		{"unknown command", []string{"frobnicate"}, []string{"unknown command", "frobnicate"}},
		{"coordinator: unknown subcommand", []string{"coordinator", "walk"}, []string{"unknown command", "walk"}},
		{"unknown -db class", []string{"run", "-db", "site.ycsb.db.NoSuchClient", "-P", "workloada"}, []string{"-db", "site.ycsb.db.NoSuchClient", "site.ycsb.db.CassandraCQLClient", "basic"}},
		{"unknown db property", []string{"run", "-P", "workloada", "-p", "db=site.ycsb.db.RedisClient"}, []string{"property db", "site.ycsb.db.RedisClient", "site.ycsb.db.MongoDbClient", "hbase"}},
		{"positional db and -db disagree", a("-db", "site.ycsb.db.MongoDbClient"), []string{`"basic"`, "-db", "site.ycsb.db.MongoDbClient", "mongodb"}},
		{"positional db and db property disagree", a("-p", "db=site.ycsb.db.hbase2.HBaseClient2"), []string{`"basic"`, "property db", "site.ycsb.db.hbase2.HBaseClient2"}},
		{"db in a -P file disagrees", a("-P", writeFile(t, dir, "dbfile", "db=site.ycsb.db.CassandraCQLClient\n")), []string{`"basic"`, "dbfile", "site.ycsb.db.CassandraCQLClient"}},
		{"-db empty", []string{"run", "-db", "", "-P", "workloada"}, []string{"-db"}},
		{"-load with run", a("-load"), []string{"-load", `"run"`}},
		{"-t with load", l("-t"), []string{"-t", `"load"`}},
		{"-load and -t", []string{"-load", "-t", "-db", "site.ycsb.BasicDB", "-P", "workloada"}, []string{"-load", "-t"}},
	}
	// Measurement types and their options (measurementtype, raw,
	// histogram, error naming, trackruntime): keep these in this block.
	tests = append(tests, []struct {
		name string
		args []string
		want []string
	}{
		{"unknown measurementtype", a("-p", "measurementtype=histo"), []string{"measurementtype", "hdrhistogram+raw"}},
		{"histogram.buckets zero", a("-p", "measurementtype=histogram", "-p", "histogram.buckets=0"), []string{"histogram.buckets"}},
		{"histogram.buckets not a number", a("-p", "histogram.buckets=many"), []string{"histogram.buckets", "many"}},
		{"histogram.buckets too many", a("-p", "histogram.buckets=100000000000"), []string{"histogram.buckets"}},
		{"measurement.raw.no_summary not a bool", a("-p", "measurement.raw.no_summary=maybe"), []string{"measurement.raw.no_summary", "true or false"}},
		{"raw output file in a missing directory", a("-p", "measurementtype=raw", "-p", "measurement.raw.output_file="+filepath.Join(dir, "no", "raw.csv")), []string{"measurement.raw.output_file"}},
		{"reportlatencyforeacherror not a bool", a("-p", "reportlatencyforeacherror=yes"), []string{"reportlatencyforeacherror", "true or false"}},
		{"latencytrackederrors unknown status", a("-p", "latencytrackederrors=ERROR,OOPS"), []string{"latencytrackederrors", "NOT_FOUND"}},
		{"latencytrackederrors lists a success", a("-p", "latencytrackederrors=OK"), []string{"latencytrackederrors"}},
		{"ycsbctl.trackruntime not a bool", a("-p", "ycsbctl.trackruntime=perhaps"), []string{"ycsbctl.trackruntime"}},
		{"measurement.trackjvm not a bool", a("-p", "measurement.trackjvm=perhaps"), []string{"measurement.trackjvm"}},
		{"per-measurement .hdr logs in a missing directory", a("-p", "hdrhistogram.fileoutput=true", "-p", "hdrhistogram.output.path="+filepath.Join(dir, "no", "such", "x-")), []string{"hdrhistogram.output.path"}},
	}...)
	require.GreaterOrEqual(t, len(tests), 55)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := execute(t, "", tc.args...)
			assert.Equal(t, int(exitcode.InvalidConfig), r.code, "exit code; stderr:\n%s", r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w, "the message names %q", w)
			}
			assert.Contains(t, r.stderr, "Error: ")
			assert.Equal(t, 1, strings.Count(r.stderr, "Error: "), "one message: %s", r.stderr)
			assert.Empty(t, r.dbOutput, "an operation was sent")
			assert.NotContains(t, r.stdout, "[OVERALL]")
			assert.NotContains(t, r.stderr, "Starting test.")
		})
	}
}

var opLine = regexp.MustCompile(`(?m)^\[([A-Za-z-]+)\], Operations, (\d+)$`)

func operations(out string) map[string]int64 {
	m := map[string]int64{}
	for _, g := range opLine.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(g[2], 10, 64)
		m[g[1]] = n
	}
	return m
}

func quiet(args ...string) []string {
	return append(args, "-p", "basicdb.verbose=false")
}

func TestBuiltinWorkloadWithoutFile(t *testing.T) {
	t.Chdir(t.TempDir()) // no file named workloada here
	r := execute(t, "", quiet("run", "basic", "-P", "workloada")...)
	require.Equal(t, 0, r.code, r.stderr)
	ops := operations(r.stdout)
	assert.Equal(t, int64(1000), ops["READ"]+ops["UPDATE"], "workloada's operationcount=1000")
	assert.Greater(t, ops["READ"], int64(0))
	assert.Greater(t, ops["UPDATE"], int64(0))
	assert.Contains(t, r.stdout, "[OVERALL], RunTime(ms), ")
	assert.Contains(t, r.stdout, "[OVERALL], Throughput(ops/sec), ")
	assert.Contains(t, r.stdout, "[READ], Return=OK, ")
	assert.Contains(t, r.stderr, "Starting test.")
	assert.Empty(t, r.dbOutput)
}

func TestFileWinsOverBuiltin(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, dir, "workloada", "recordcount=100\noperationcount=42\nreadproportion=1\nupdateproportion=0\nrequestdistribution=uniform\n")
	r := execute(t, "", quiet("run", "basic", "-P", "workloada")...)
	require.Equal(t, 0, r.code, r.stderr)
	ops := operations(r.stdout)
	assert.Equal(t, map[string]int64{"READ": 42, "CLEANUP": 1}, ops)
}

func TestOverridesBeatFiles(t *testing.T) {
	dir := t.TempDir()
	f1 := writeFile(t, dir, "one", "recordcount=100\noperationcount=10\nreadproportion=1\nupdateproportion=0\n")
	f2 := writeFile(t, dir, "two", "operationcount=20\n")
	tests := []struct {
		name string
		args []string
		want int64
	}{
		{"files apply in order", []string{"-P", f1, "-P", f2}, 20},
		{"later file wins", []string{"-P", f2, "-P", f1}, 10},
		{"-p beats -P", []string{"-P", f1, "-p", "operationcount=33", "-P", f2}, 33},
		{"-p before -P still wins", []string{"-p", "operationcount=7", "-P", f1}, 7},
		{"-p beats built-in", []string{"-P", "workloadc", "-p", "operationcount=15"}, 15},
		{"last -p wins", []string{"-P", f1, "-p", "operationcount=5", "-p", "operationcount=6"}, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := execute(t, "", quiet(append([]string{"run", "basic"}, tc.args...)...)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, tc.want, operations(r.stdout)["READ"])
		})
	}
}

func TestThreadsFlag(t *testing.T) {
	r := execute(t, "", quiet("run", "basic", "-P", "workloadc", "-threads", "3", "-p", "operationcount=100")...)
	require.Equal(t, 0, r.code, r.stderr)
	ops := operations(r.stdout)
	assert.Equal(t, int64(100), ops["READ"])
	assert.Equal(t, int64(3), ops["CLEANUP"], "one CLEANUP per thread")
	// -threads beats -p threadcount, like every command-line setting.
	r = execute(t, "", quiet("run", "basic", "-P", "workloadc", "-p", "threadcount=5", "-threads", "2", "-p", "operationcount=10")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, int64(2), operations(r.stdout)["CLEANUP"])
}

func TestWorkloadsCommand(t *testing.T) {
	r := execute(t, "", "workloads")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	assert.Len(t, lines, 21)
	for _, l := range lines {
		assert.Regexp(t, `^(workload[a-g]|comparison2014-\w+|hbase-pe-\w+)\s+\S`, l)
	}
	assert.Contains(t, r.stdout, "workloadg")
	assert.Contains(t, r.stdout, "comparison2014-bulkload")
}

func TestDBsCommand(t *testing.T) {
	r := execute(t, "", "dbs")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "basic: ")
	assert.Contains(t, r.stdout, "embedded [default]: ")
	assert.Regexp(t, `(?m)^    basicdb.verbose\s+true\s+\S`, r.stdout, "name, default, help")
	assert.Regexp(t, `(?m)^    cassandra.readconsistencylevel\s+QUORUM\s`, r.stdout)
	assert.Contains(t, r.stdout, "YCSB classes: site.ycsb.db.CassandraCQLClient")
	// Every adapter but embedded stands in for a YCSB binding and says how
	// it differs.
	assert.Equal(t, 5, strings.Count(r.stdout, "  Differs from YCSB:\n"))
}

func TestBasicVerbose(t *testing.T) {
	r := execute(t, "", "run", "basic", "-P", "workloada", "-p", "operationcount=20", "-p", "basicdb.verbose=true")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimRight(r.dbOutput, "\n"), "\n")
	require.Len(t, lines, 20)
	reads := 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "READ usertable user"):
			reads++
			assert.Regexp(t, `^READ usertable user\d+ \[ <all fields>\]$`, l)
		case strings.HasPrefix(l, "UPDATE usertable user"):
			assert.Regexp(t, `^UPDATE usertable user\d+ \[ field\d=.{100} \]$`, l)
		default:
			t.Errorf("unexpected line %q", l)
		}
	}
	assert.Equal(t, operations(r.stdout)["READ"], int64(reads))
}

func TestLoadThenRunEmbedded(t *testing.T) {
	dir := t.TempDir()
	common := []string{"-P", "workloada", "-p", "embedded.dir=" + dir, "-p", "recordcount=300", "-p", "operationcount=600", "-p", "dataintegrity=true"}
	r := execute(t, "", append([]string{"load"}, common...)...) // default db: embedded
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, int64(300), operations(r.stdout)["INSERT"])
	assert.Contains(t, r.stdout, "[INSERT], Return=OK, 300\n")

	r = execute(t, "", append([]string{"run", "embedded", "-threads", "2"}, common...)...)
	require.Equal(t, 0, r.code, r.stderr)
	ops := operations(r.stdout)
	assert.Equal(t, int64(600), ops["READ"]+ops["UPDATE"])
	assert.NotContains(t, r.stdout, "NOT_FOUND")
	assert.NotContains(t, r.stdout, "UNEXPECTED_STATE")
	assert.Contains(t, r.stdout, fmt.Sprintf("[VERIFY], Return=OK, %d\n", ops["READ"]))
}

func TestShell(t *testing.T) {
	dir := t.TempDir()
	script := strings.Join([]string{
		"help",
		"table",
		"insert user1 field0=a field1=b",
		"insert user2 field0=c",
		"read user1",
		"read user1 field1",
		"update user1 field0=z",
		"read user1",
		"scan user0 5",
		"delete user2",
		"read user2",
		"delete user2",
		"table other",
		"read user1",
		"bogus",
		"quit",
	}, "\n") + "\n"
	r := execute(t, script, "shell", "-p", "embedded.dir="+dir)
	require.Equal(t, 0, r.code, r.stderr)
	out := r.stdout
	for _, want := range []string{
		"YCSB Command Line client",
		"Commands:",
		"Using table \"usertable\"",
		"Result: OK",
		"Return code: OK\nfield0=a\nfield1=b\n",
		"Return code: OK\nfield1=b\n",
		"Record 0\n  key=user1\n",
		"Record 1\n  key=user2\n  field0=c\n",
		"Return result: OK",
		"Return code: NOT_FOUND",
		"Return result: NOT_FOUND",
		"Using table \"other\"",
		"Error: unknown command \"bogus\"",
	} {
		assert.Contains(t, out, want)
	}
	// update keeps the other fields.
	assert.Regexp(t, `Return code: OK\nfield1=b\n\d+ ms\n> Result: OK\n\d+ ms\n> Return code: OK\n(field0=z\nfield1=b|field1=b\nfield0=z)\n`, out)
	// The data persists for the next command.
	r = execute(t, "read user1\n", "shell", "embedded", "-p", "embedded.dir="+dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "field0=z")
}

func TestExportFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		exporter string
		check    func(t *testing.T, b []byte)
	}{
		{"site.ycsb.measurements.exporter.TextMeasurementsExporter", func(t *testing.T, b []byte) {
			assert.Contains(t, string(b), "[OVERALL], RunTime(ms), ")
			assert.Contains(t, string(b), "[READ], Operations, 50\n")
		}},
		{"site.ycsb.measurements.exporter.JSONMeasurementsExporter", func(t *testing.T, b []byte) {
			lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
			require.Greater(t, len(lines), 5)
			for _, l := range lines {
				assert.True(t, json.Valid(l), "%s", l)
			}
			assert.Contains(t, string(b), `{"metric":"READ","measurement":"Operations","value":50}`)
		}},
		{"site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter", func(t *testing.T, b []byte) {
			require.True(t, json.Valid(b))
			var arr []map[string]any
			require.NoError(t, json.Unmarshal(b, &arr))
			assert.Equal(t, "OVERALL", arr[0]["metric"])
		}},
	}
	for i, tc := range tests {
		t.Run(tc.exporter, func(t *testing.T) {
			file := filepath.Join(dir, fmt.Sprintf("out%d", i))
			r := execute(t, "", quiet("run", "basic", "-P", "workloadc", "-p", "operationcount=50", "-p", "exporter="+tc.exporter, "-p", "exportfile="+file)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.NotContains(t, r.stdout, "[OVERALL]", "results go to the export file")
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			tc.check(t, b)
		})
	}
	// exporter without exportfile writes to stdout.
	r := execute(t, "", quiet("run", "basic", "-P", "workloadc", "-p", "operationcount=5", "-p", "exporter=site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, json.Valid([]byte(r.stdout)), r.stdout)
}

func TestHdrFileOutput(t *testing.T) {
	dir := t.TempDir()
	r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=3000", "-p", "target=6000",
		"-p", "status.interval=0.1", "-p", "hdrhistogram.fileoutput=true", "-p", "hdrhistogram.output.path="+dir+"/",
		"-p", "measurement.interval=both")...)
	require.Equal(t, 0, r.code, r.stderr)
	f, err := os.Open(filepath.Join(dir, "ycsbctl.hlog"))
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	counts := map[string]int64{}
	reader := hdrhistogram.NewHistogramLogReader(f)
	intervals := 0
	for {
		h, err := reader.NextIntervalHistogram()
		require.NoError(t, err)
		if h == nil {
			break
		}
		intervals++
		counts[h.Tag()] += h.TotalCount()
		assert.Greater(t, h.StartTimeMs(), int64(1_600_000_000_000), "absolute timestamps")
	}
	assert.Greater(t, intervals, 2)
	ops := operations(r.stdout)
	assert.Equal(t, ops["READ"], counts["READ"])
	assert.Equal(t, ops["UPDATE"], counts["UPDATE"])
	assert.Equal(t, ops["READ"], counts["Intended-READ"])
	assert.Equal(t, int64(3000), counts["READ"]+counts["UPDATE"])
}

func TestTimeseries(t *testing.T) {
	r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=2000", "-p", "target=5000",
		"-p", "measurementtype=timeseries", "-p", "timeseries.granularity=100")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "PercentileLatency")
	series := regexp.MustCompile(`(?m)^\[READ\], (\d+), [0-9.E-]+$`).FindAllStringSubmatch(r.stdout, -1)
	require.GreaterOrEqual(t, len(series), 3, r.stdout)
	last := int64(-1)
	for _, s := range series {
		off, _ := strconv.ParseInt(s[1], 10, 64)
		assert.Greater(t, off, last, "increasing offsets")
		assert.Zero(t, off%100, "offsets on the granularity")
		last = off
	}
}

func TestStatusLines(t *testing.T) {
	r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=1500", "-target", "5000",
		"-s", "-l", "LBL ", "-p", "status.interval=0.1")...)
	require.Equal(t, 0, r.code, r.stderr)
	re := regexp.MustCompile(`(?m)^LBL \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}:\d{3} \d+ sec: \d+ operations; .*$`)
	lines := re.FindAllString(r.stderr, -1)
	require.GreaterOrEqual(t, len(lines), 2, r.stderr)
	assert.Contains(t, r.stderr, "current ops/sec; ")
	assert.Contains(t, r.stderr, "est completion in ")
	assert.Regexp(t, `\[READ: Count=\d+, Max=\d+, Min=\d+, Avg=[0-9.]+, 50=\d+, 90=\d+, 99=\d+, 99.9=\d+, 99.99=\d+\] `, r.stderr)
	assert.Contains(t, lines[len(lines)-1], " 1500 operations; ", "the final line counts every operation")
	// Without -s there are no status lines.
	r = execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=100")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "operations; ")
}

func TestWarmupAndTimedRun(t *testing.T) {
	r := execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=500", "-p", "warmupops=200")...)
	require.Equal(t, 0, r.code, r.stderr)
	ops := operations(r.stdout)
	assert.Equal(t, int64(500), ops["READ"]+ops["UPDATE"])
	assert.Contains(t, r.stdout, "[WARMUP], Operations(not measured), 200")
	assert.Contains(t, r.stderr, "neither measured nor counted")

	r = execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=0", "-p", "maxexecutiontime=1")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `\[OVERALL\], RunTime\(ms\), 1\d{3}\n`, r.stdout)
}

func TestInterruptStopsGracefully(t *testing.T) {
	notify := func(c chan<- os.Signal, _ ...os.Signal) {
		go func() {
			time.Sleep(300 * time.Millisecond)
			c <- os.Interrupt
		}()
	}
	start := time.Now()
	r := executeWithSignals(t, "", notify, quiet("run", "basic", "-P", "workloada", "-p", "operationcount=0", "-p", "maxexecutiontime=60")...)
	assert.Less(t, time.Since(start), 20*time.Second)
	assert.Equal(t, int(exitcode.Stopped), r.code, r.stderr)
	assert.Contains(t, r.stderr, "Interrupted")
	assert.Contains(t, r.stdout, "[OVERALL], RunTime(ms), ", "results are still reported")
	assert.Contains(t, r.stdout, "[NOTE], Stopped early: interrupted by operator")
	assert.Greater(t, operations(r.stdout)["READ"], int64(0))
}

func TestMaxErrorRate(t *testing.T) {
	dir := t.TempDir() // an empty store: every read is NOT_FOUND
	args := []string{"run", "embedded", "-P", "workloadc", "-p", "embedded.dir=" + dir, "-p", "operationcount=50"}
	r := execute(t, "", append(args, "-p", "ycsbctl.maxerrorrate=0.5")...)
	assert.Equal(t, int(exitcode.DBErrors), r.code, r.stderr)
	assert.Contains(t, r.stdout, "[READ], Return=NOT_FOUND, 50\n")
	assert.Contains(t, r.stderr, "50 of 50 operations failed")
	// Without the threshold, a run in which every operation failed still
	// fails (it measured nothing but failures), and says why.
	r = execute(t, "", args...)
	assert.Equal(t, int(exitcode.DBErrors), r.code, r.stderr)
	assert.Contains(t, r.stdout, "[READ-FAILED], Operations, 50\n")
	assert.Contains(t, r.stderr, "every operation failed")
	assert.Contains(t, r.stderr, "was the data loaded")
	// A few failures among many successes keep exit 0, as YCSB.
	r = execute(t, "", quiet("run", "basic", "-P", "workloada", "-p", "operationcount=200")...)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "WARNING")
}

// TestYCSBDatabaseSelection runs YCSB-style command lines: the binding class
// in -db, -p db or a -P file, and Java's -load/-t phase switches, and checks
// that the named adapter (basic, which prints every operation) ran.
func TestYCSBDatabaseSelection(t *testing.T) {
	dir := t.TempDir()
	wl := writeFile(t, dir, "w", "db=site.ycsb.BasicDB\nrecordcount=10\noperationcount=5\nbasicdb.verbose=true\n")
	tests := []struct {
		name string
		args []string
		want string // an operation basic prints
	}{
		{"-p db=CLASS", []string{"run", "-P", "workloada", "-p", "db=site.ycsb.BasicDB", "-p", "recordcount=10", "-p", "operationcount=5", "-p", "basicdb.verbose=true"}, "usertable"},
		{"db in -P file", []string{"run", "-P", wl}, "usertable"},
		{"-db CLASS with -t", []string{"-t", "-db", "site.ycsb.BasicDB", "-P", wl}, "usertable"},
		{"-load -db CLASS", []string{"-load", "-db", "com.yahoo.ycsb.BasicDB", "-P", wl}, "INSERT"},
		{"positional and db agree", []string{"load", "basic", "-P", wl}, "INSERT"},
		{"class as positional", []string{"run", "site.ycsb.BasicDB", "-P", wl}, "usertable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := execute(t, "", tc.args...)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.dbOutput, tc.want)
			assert.NotContains(t, r.stderr, "No database named")
		})
	}
}

func TestEmbeddedDefaultIsSaidFirst(t *testing.T) {
	dir := t.TempDir()
	r := execute(t, "", "load", "-P", "workloada", "-p", "recordcount=5", "-p", "embedded.dir="+dir)
	require.Equal(t, 0, r.code, r.stderr)
	first, _, _ := strings.Cut(r.stderr, "\n")
	assert.Contains(t, first, "embedded")
	assert.Contains(t, first, "No database named")
	r = execute(t, "", "load", "embedded", "-P", "workloada", "-p", "recordcount=5", "-p", "embedded.dir="+dir)
	assert.NotContains(t, r.stderr, "No database named")
}

package telemetry

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// The fixtures are two snapshots of this machine's /proc a second apart
// (testdata/record.sh): a JVM running Cassandra's main class that burns
// CPU and writes 1 MiB with fsync in a loop, and a Python loop standing
// for the load generator.

var cassandra = []adapters.ServerProcess{{Role: "cassandra", MainClass: "org.apache.cassandra.service.CassandraDaemon"}}

type fixture struct {
	db, client int
	ns         [2]int64
}

func loadFixture(t testing.TB) fixture {
	t.Helper()
	var f fixture
	b, err := os.ReadFile("testdata/pids")
	require.NoError(t, err)
	for _, kv := range strings.Fields(string(b)) {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		switch k {
		case "db":
			f.db = n
		case "client":
			f.client = n
		}
	}
	for i := range f.ns {
		b, err := os.ReadFile(filepath.Join("testdata", "proc"+strconv.Itoa(i), ".unix_ns"))
		require.NoError(t, err)
		f.ns[i], err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		require.NoError(t, err)
	}
	return f
}

// readFixture reads both snapshots the way the sampler reads /proc.
func readFixture(t testing.TB, f fixture) (reading, reading) {
	t.Helper()
	var out [2]reading
	for i := range out {
		src, err := newSource(filepath.Join("testdata", "proc"+strconv.Itoa(i)), "testdata/sys", f.client)
		require.NoError(t, err)
		fd := &finder{fs: src.fs, self: f.client, patterns: cassandra}
		got, err := fd.look()
		require.NoError(t, err)
		require.Equal(t, []found{{pid: f.db, role: "cassandra"}}, got, "the JVM is found by its main class, the load generator never")
		out[i] = src.read(f.ns[i], pidsOf(got))
		require.Empty(t, out[i].missing)
	}
	return out[0], out[1]
}

// field reads "key: value" files (/proc/PID/io) and the numbered fields
// of /proc/PID/stat, independently of procfs.
func ioField(t testing.TB, path, key string) float64 {
	t.Helper()
	fh, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = fh.Close() }()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == key {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("%s: no %s", path, key)
	return 0
}

// cpuTicks returns a process' utime+stime in clock ticks (fields 14 and
// 15 of /proc/PID/stat, counted after the command in parentheses).
func cpuTicks(t testing.TB, path string) float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return u + s
}

// statCPU returns the host's cpu line as ticks by column.
func statCPU(t testing.TB, dir string) []float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	require.NoError(t, err)
	line := strings.SplitN(string(b), "\n", 2)[0]
	var out []float64
	for _, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		out = append(out, v)
	}
	return out
}

func TestSummaryOfRecordedSnapshots(t *testing.T) {
	f := loadFixture(t)
	r0, r1 := readFixture(t, f)
	smp, err := rates(&r0, &r1)
	require.NoError(t, err)
	span := float64(f.ns[1]-f.ns[0]) / 1e9
	iv := summarize([]sample{smp})

	assert.Equal(t, 1, iv.Samples)
	assert.Equal(t, 2, iv.Cores, "the machine the fixtures come from has 2 cores")

	// Host CPU: shares of the ticks every column of the cpu line grew by
	// (user+nice, system+irq+softirq, iowait, steal, idle).
	c0, c1 := statCPU(t, "testdata/proc0"), statCPU(t, "testdata/proc1")
	d := make([]float64, 8)
	for i := range d {
		d[i] = c1[i] - c0[i]
	}
	total := d[0] + d[1] + d[2] + d[3] + d[4] + d[5] + d[6] + d[7]
	assert.InDelta(t, 100*(d[0]+d[1])/total, iv.CPU.User, 1e-6)
	assert.InDelta(t, 100*(d[2]+d[5]+d[6])/total, iv.CPU.System, 1e-6)
	assert.InDelta(t, 100*d[4]/total, iv.CPU.IOWait, 1e-6)
	assert.InDelta(t, 100*d[7]/total, iv.CPU.Steal, 1e-6)
	assert.InDelta(t, 100*d[3]/total, iv.CPU.Idle, 1e-6)
	assert.InDelta(t, 100, iv.CPU.User+iv.CPU.System+iv.CPU.IOWait+iv.CPU.Steal+iv.CPU.Idle, 1e-6)
	assert.InDelta(t, iv.CPU.Busy(), iv.BusyMax, 1e-9, "one sample: its busy share is the worst")

	// The database JVM: CPU from its stat, writes from its io file.
	dbDir := func(i int) string { return filepath.Join("testdata", "proc"+strconv.Itoa(i), strconv.Itoa(f.db)) }
	wantDBCPU := (cpuTicks(t, filepath.Join(dbDir(1), "stat")) - cpuTicks(t, filepath.Join(dbDir(0), "stat"))) / 100 / span / 2 * 100
	assert.InDelta(t, wantDBCPU, iv.DB.CPUPct, 1e-6)
	assert.Greater(t, iv.DB.CPUPct, 10.0, "the stand-in burns CPU")
	wantWrite := ioField(t, filepath.Join(dbDir(1), "io"), "write_bytes") - ioField(t, filepath.Join(dbDir(0), "io"), "write_bytes")
	assert.Greater(t, wantWrite, 0.0, "the stand-in writes with fsync")
	assert.InDelta(t, wantWrite/span, iv.DB.WriteBps, 1e-3)
	assert.InDelta(t, wantWrite, float64(iv.DB.WriteBytes), 1)
	assert.Equal(t, 1, iv.DB.Count)
	assert.Positive(t, iv.DB.RSSMax)
	assert.Positive(t, iv.DB.ThreadsMax, "a JVM has threads")
	assert.Positive(t, iv.DB.FilesMax)

	// The load generator.
	cDir := func(i int) string { return filepath.Join("testdata", "proc"+strconv.Itoa(i), strconv.Itoa(f.client)) }
	wantClient := (cpuTicks(t, filepath.Join(cDir(1), "stat")) - cpuTicks(t, filepath.Join(cDir(0), "stat"))) / 100 / span / 2 * 100
	assert.InDelta(t, wantClient, iv.Client.CPUPct, 1e-6)
	assert.Greater(t, iv.Client.CPUPct, 10.0, "the stand-in loops")

	// Disks: whole disks only, the one written to first.
	require.NotEmpty(t, iv.Disks)
	for _, dk := range iv.Disks {
		assert.NotRegexp(t, `^(loop|zram|ram)|[0-9]p?[0-9]+$`, dk.Name, "loop, RAM and partition devices are left out")
	}
	assert.Equal(t, "vda", iv.Disks[0].Name)
	assert.Positive(t, iv.Disks[0].WriteBps, "fsync reaches the disk")
	assert.Positive(t, iv.Disks[0].UtilPct)
	assert.LessOrEqual(t, iv.Disks[0].UtilPct, 100.0)

	// Memory from meminfo, in bytes.
	assert.Positive(t, iv.MemTotal)
	assert.Greater(t, iv.MemTotal, iv.MemAvailableMin)
	assert.Positive(t, iv.MemAvailableMin)

	// Links: the load generator's namespace (lo and eth0 here).
	require.NotEmpty(t, iv.Links)

	// One raw point, whose totals agree with the summary.
	require.Len(t, iv.Points, 1)
	p := iv.Points[0]
	assert.Equal(t, f.ns[1], p.UnixNs)
	assert.InDelta(t, iv.DiskWriteBps(), p.DiskWriteBps, 1e-6)
	assert.InDelta(t, iv.DB.CPUPct, p.DBCPUPct, 1e-9)
}

// Means are weighted by the time each sample covers, maxima are the worst
// sample's, counts add up.
func TestSummaryWeightsAndMaxima(t *testing.T) {
	ss := []sample{
		{ns: 1e9, span: 1, cores: 4, cpu: CPU{User: 80, System: 10, Idle: 10}, mem: memReading{total: 100, available: 40, cached: 10, swapUsed: 1},
			disks: []diskRate{{name: "sda", wrBps: 1000, util: 50, wrIOPS: 10, await: 2}}, links: []linkRate{{name: "eth0", rxBps: 10, errs: 2}},
			retrans: 3, db: procRate{count: 1, cpuPct: 50, rss: 500, wrBps: 100}},
		{ns: 4e9, span: 3, cores: 4, cpu: CPU{User: 20, IOWait: 40, Idle: 40}, mem: memReading{total: 100, available: 20, cached: 30, swapUsed: 5},
			disks: []diskRate{{name: "sda", wrBps: 3000, util: 90, wrIOPS: 30, await: 6}, {name: "sdb"}}, links: []linkRate{{name: "eth0", rxBps: 30, drops: 1}, {name: "lo"}},
			retrans: 1, db: procRate{count: 2, cpuPct: 10, rss: 900, wrBps: 300}},
	}
	iv := summarize(ss)
	assert.Equal(t, 2, iv.Samples)
	assert.InDelta(t, 80*0.25+20*0.75, iv.CPU.User, 1e-9)
	assert.InDelta(t, 40*0.75, iv.CPU.IOWait, 1e-9)
	assert.InDelta(t, 90, iv.BusyMax, 1e-9)
	assert.InDelta(t, 40, iv.IOWaitMax, 1e-9)
	assert.Equal(t, int64(20), iv.MemAvailableMin)
	assert.Equal(t, int64(5), iv.SwapUsedMax)
	assert.Equal(t, int64(4), iv.TCPRetransmits)
	require.Len(t, iv.Disks, 1, "an idle disk is left out when another moved data")
	assert.InDelta(t, 1000*0.25+3000*0.75, iv.Disks[0].WriteBps, 1e-9)
	assert.InDelta(t, 3000, iv.Disks[0].WriteBpsMax, 1e-9)
	assert.InDelta(t, 90, iv.Disks[0].UtilPctMax, 1e-9)
	assert.InDelta(t, (2*10+6*90)/100.0, iv.Disks[0].AwaitMs, 1e-9, "await is weighted by I/Os")
	require.Len(t, iv.Links, 1)
	assert.Equal(t, int64(2), iv.Links[0].Errors)
	assert.Equal(t, int64(1), iv.Links[0].Drops)
	assert.Equal(t, 2, iv.DB.Count)
	assert.Equal(t, int64(900), iv.DB.RSSMax)
	assert.InDelta(t, 50, iv.DB.CPUPctMax, 1e-9)
	assert.Equal(t, int64(100+900), iv.DB.WriteBytes)
	assert.Len(t, iv.Points, 2)

	empty := summarize(nil)
	assert.Equal(t, 0, empty.Samples)
	assert.Empty(t, empty.Points)
}

// The wire form carries everything a summary holds (at float32
// precision), and an agent's nonsense is refused with its field named.
func TestWireRoundTripAndBounds(t *testing.T) {
	f := loadFixture(t)
	r0, r1 := readFixture(t, f)
	smp, err := rates(&r0, &r1)
	require.NoError(t, err)
	iv := summarize([]sample{smp, smp})
	iv.Internals = &Internals{Product: "Cassandra 5.0.9", Source: "system_views on 127.0.0.1", Metrics: []Metric{{Name: "compactions_pending", Value: 3}}}
	iv.Notes = []string{"telemetry: database processes on h1: cassandra (pid 1)"}
	iv.ClientCPUs = 1.5
	back, err := FromPB(ToPB(iv))
	require.NoError(t, err)
	assert.Equal(t, 1.5, back.ClientCPUs)
	assert.Equal(t, iv.Samples, back.Samples)
	assert.InDelta(t, iv.CPU.User, back.CPU.User, 1e-3)
	assert.InDelta(t, iv.DB.WriteBps, back.DB.WriteBps, iv.DB.WriteBps*1e-6)
	assert.Equal(t, iv.DB.WriteBytes, back.DB.WriteBytes)
	assert.Equal(t, iv.Internals, back.Internals)
	assert.Equal(t, iv.Notes, back.Notes)
	require.Len(t, back.Points, 2)
	assert.InDelta(t, iv.Points[0].CPU.Idle, back.Points[0].CPU.Idle, 1e-3, "idle is what the rest leaves")
	assert.Equal(t, len(iv.Disks), len(back.Disks))

	bad := ToPB(iv)
	bad.CpuUser = float32(math.NaN())
	_, err = FromPB(bad)
	assert.ErrorContains(t, err, "cpu_user")
	bad = ToPB(iv)
	bad.Db.RssMaxBytes = -1
	_, err = FromPB(bad)
	assert.ErrorContains(t, err, "db rss")
	bad = ToPB(iv)
	bad.ClientCpus = -2
	_, err = FromPB(bad)
	assert.ErrorContains(t, err, "client_cpus")
	bad = ToPB(iv)
	bad.CpuIdle = 250
	_, err = FromPB(bad)
	assert.ErrorContains(t, err, "cpu_idle")
	bad = ToPB(iv)
	for range maxWireDevices {
		bad.Disks = append(bad.Disks, bad.Disks[0])
	}
	_, err = FromPB(bad)
	assert.ErrorContains(t, err, "disks")
}

// An interval's telemetry stays a few KB in the record: ten 1 s points,
// eight disks and links, a page of internals.
func TestRecordSizeStaysSmall(t *testing.T) {
	f := loadFixture(t)
	r0, r1 := readFixture(t, f)
	smp, err := rates(&r0, &r1)
	require.NoError(t, err)
	ss := make([]sample, 10)
	for i := range ss {
		ss[i] = smp
		ss[i].ns += int64(i) * 1e9
	}
	iv := summarize(ss)
	iv.Internals = &Internals{Product: "Cassandra 5.0.9", Source: "system_views on 127.0.0.1"}
	for i := range 30 {
		iv.Internals.Metrics = append(iv.Internals.Metrics, Metric{Name: "thread_pool_" + strconv.Itoa(i) + "_pending", Value: float64(i)})
	}
	b, err := proto.Marshal(ToPB(iv))
	require.NoError(t, err)
	t.Logf("telemetry of a 10 s interval: %d bytes on the wire", len(b))
	assert.Less(t, len(b), 4096)
}

func TestParsePids(t *testing.T) {
	p, err := ParsePids("")
	require.NoError(t, err)
	assert.False(t, p.Set())
	p, err = ParsePids("/var/run/cassandra.pid")
	require.NoError(t, err)
	assert.Equal(t, "/var/run/cassandra.pid", p.File)
	p, err = ParsePids("12, 34")
	require.NoError(t, err)
	assert.Equal(t, []int{12, 34}, p.List)
	p, err = ParsePids("mongo[ds]")
	require.NoError(t, err)
	assert.True(t, p.Pattern.MatchString("mongod"))
	_, err = ParsePids("mongo[")
	assert.ErrorContains(t, err, "regular expression")
	_, err = ParsePids("0")
	assert.Error(t, err)
}

// A user's pattern replaces the adapter's knowledge; a pid file is read
// at every look.
func TestFinderUserPids(t *testing.T) {
	f := loadFixture(t)
	src, err := newSource("testdata/proc0", "testdata/sys", f.client)
	require.NoError(t, err)
	re, _ := ParsePids("python")
	fd := &finder{fs: src.fs, self: -1, patterns: cassandra, user: re}
	got, err := fd.look()
	require.NoError(t, err)
	assert.Equal(t, []int{f.client}, pidsOf(got), "the pattern matches the command line")
	pf := filepath.Join(t.TempDir(), "db.pid")
	require.NoError(t, os.WriteFile(pf, []byte(strconv.Itoa(f.db)+"\n"), 0o644))
	fd.user = Pids{File: pf}
	got, err = fd.look()
	require.NoError(t, err)
	assert.Equal(t, []found{{pid: f.db, role: "java"}}, got)
	require.NoError(t, os.WriteFile(pf, []byte("garbage"), 0o644))
	_, err = fd.look()
	assert.ErrorContains(t, err, "not a pid")
}

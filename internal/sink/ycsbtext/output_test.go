package ycsbtext_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/sink/ycsbtext"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./output -update")
	assert.Equal(t, string(want), string(got), "output differs from %s (run with -update after checking the change)", path)
}

const t0 = int64(1_700_000_000_000_000_000) // Unix ns of the fixture's start

func record(iv *measurement.Interval, s measurement.Series, vals ...int64) {
	if iv.Hist[s] == nil {
		iv.Hist[s] = measurement.NewHistogram()
	}
	for _, v := range vals {
		if err := iv.Hist[s].RecordValue(v); err != nil {
			panic(err)
		}
	}
}

func ser(op measurement.Op, kind measurement.Kind, failed bool) measurement.Series {
	return measurement.SeriesOf(op, kind, failed)
}

// fixture is a deterministic run: reads with a heavy tail, updates, a few
// failed reads, intended latencies, verification results and cleanup.
func fixture() *measurement.Interval {
	iv := measurement.NewInterval(0, t0, t0+10_123_000_000)
	for i := int64(1); i <= 1000; i++ {
		record(iv, ser(measurement.Read, measurement.Service, false), i*1500)
		record(iv, ser(measurement.Read, measurement.Intended, false), i*1500+20_000)
		if i%2 == 0 {
			record(iv, ser(measurement.Update, measurement.Service, false), 3000+i*i*7)
			record(iv, ser(measurement.Update, measurement.Intended, false), 3000+i*i*7+50_000)
		}
	}
	record(iv, ser(measurement.Read, measurement.Service, false), 250_000_000) // tail
	record(iv, ser(measurement.Read, measurement.Service, true), 5_000, 7_000, 9_000)
	record(iv, ser(measurement.Read, measurement.Intended, true), 25_000, 27_000, 29_000)
	record(iv, ser(measurement.Verify, measurement.Service, false), 800, 900, 1_100)
	record(iv, ser(measurement.Cleanup, measurement.Service, false), 40_000, 1_234_567)
	iv.Returns[measurement.Read][adapters.OK] = 1001
	iv.Returns[measurement.Read][adapters.NotFound] = 3
	iv.Returns[measurement.Update][adapters.OK] = 500
	iv.Returns[measurement.Verify][adapters.OK] = 2
	iv.Returns[measurement.Verify][adapters.UnexpectedState] = 1
	iv.Ops = 1504
	return iv
}

func fixtureSummary() *ycsbtext.Summary {
	return &ycsbtext.Summary{
		RunTime:     10_123 * time.Millisecond,
		Total:       fixture(),
		Percentiles: []float64{50, 95, 99, 99.9},
		Warmup:      200,
		Notes:       []string{"Stopped early: interrupted by operator"},
	}
}

func export(t *testing.T, exporter string, s *ycsbtext.Summary) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, ycsbtext.Export(&b, exporter, s))
	return b.Bytes()
}

func TestTextExporterGolden(t *testing.T) {
	got := export(t, ycsbtext.TextExporter, fixtureSummary())
	golden(t, "text", got)
	assert.Equal(t, got, export(t, "text", fixtureSummary()), "short name")
	assert.Equal(t, got, export(t, "", fixtureSummary()), "default exporter")

	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	assert.Equal(t, "[OVERALL], RunTime(ms), 10123", lines[0])
	assert.Equal(t, "[OVERALL], Throughput(ops/sec), 148.57255754223056", lines[1])
	re := regexp.MustCompile(`^\[[A-Za-z-]+\], [^,]+, \S+$`)
	for _, l := range lines {
		assert.Regexp(t, re, l)
	}
	text := string(got)
	for _, want := range []string{
		"[READ], Operations, 1001\n",
		"[READ], 50thPercentileLatency(us), ",
		"[READ], 99.9PercentileLatency(us), ",
		"[READ], Return=OK, 1001\n",
		"[READ], Return=NOT_FOUND, 3\n",
		"[READ-FAILED], Operations, 3\n",
		"[UPDATE], Return=OK, 500\n",
		"[VERIFY], Return=UNEXPECTED_STATE, 1\n",
		"[CLEANUP], Operations, 2\n",
		"[Intended-READ], Operations, 1000\n",
		"[Intended-UPDATE], Operations, 500\n",
	} {
		assert.Contains(t, text, want)
	}
	// Return codes belong to the plain block, right after its percentiles.
	assert.Less(t, strings.Index(text, "[READ], 99.9PercentileLatency"), strings.Index(text, "[READ], Return=OK"))
	assert.Less(t, strings.Index(text, "[READ], Return=NOT_FOUND"), strings.Index(text, "[READ-FAILED], Operations"))
	// Intended blocks come after all service blocks.
	assert.Less(t, strings.Index(text, "[CLEANUP]"), strings.Index(text, "[Intended-READ]"))
	assert.NotContains(t, text, "[Intended-READ], Return=")
}

func TestTextExporterFailedOnlyOp(t *testing.T) {
	// Every read failed: YCSB still prints a [READ] block (its return
	// codes), with the empty histogram's 0.0 mean and zero latencies.
	iv := measurement.NewInterval(0, t0, t0+1e9)
	record(iv, ser(measurement.Read, measurement.Service, true), 1_000_000, 2_000_000)
	iv.Returns[measurement.Read][adapters.NotFound] = 2
	iv.Ops = 2
	s := &ycsbtext.Summary{RunTime: time.Second, Total: iv, Percentiles: []float64{50, 99}}
	got := export(t, ycsbtext.TextExporter, s)
	golden(t, "text_failed_only", got)
	assert.Contains(t, string(got), "[READ], Operations, 0\n[READ], AverageLatency(us), 0.0\n[READ], MinLatency(us), 0\n[READ], MaxLatency(us), 0\n[READ], 50thPercentileLatency(us), 0\n[READ], 99thPercentileLatency(us), 0\n[READ], Return=NOT_FOUND, 2\n")
	assert.NotContains(t, string(got), "NaN")
	// The JSON exporters must stay valid too.
	for _, l := range bytes.Split(bytes.TrimSpace(export(t, ycsbtext.JSONExporter, s)), []byte("\n")) {
		assert.True(t, json.Valid(l), "%s", l)
	}
}

func TestTextExporterVerbose(t *testing.T) {
	iv := measurement.NewInterval(0, t0, t0+1e9)
	// 1000 and 1300 ns print as 1 µs: one line with both counts.
	record(iv, ser(measurement.Read, measurement.Service, false), 1000, 1300, 2500, 2500, 2600, 7_000_000)
	iv.Returns[measurement.Read][adapters.OK] = 6
	iv.Ops = 6
	s := &ycsbtext.Summary{RunTime: time.Second, Total: iv, Percentiles: []float64{50}, Verbose: true}
	got := string(export(t, ycsbtext.TextExporter, s))
	golden(t, "text_verbose", []byte(got))
	assert.Contains(t, got, "[READ], 1, 2.0\n[READ], 2, 3.0\n")
	assert.Regexp(t, `\[READ\], 700\d, 1\.0\n`, got)
	seen := map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		if m := regexp.MustCompile(`^\[READ\], (\d+), `).FindStringSubmatch(l); m != nil {
			assert.False(t, seen[m[1]], "value %s printed twice", m[1])
			seen[m[1]] = true
		}
	}
}

func TestTimeseriesLines(t *testing.T) {
	total := measurement.NewInterval(0, t0, t0+3e9)
	var ivs []*measurement.Interval
	for k := int64(0); k < 3; k++ {
		// The last interval starts 1.3 ms late, as a coordinator's merged
		// final sliver does when only the agent that started later cut one;
		// its bucket is still 2000.
		late := int64(0)
		if k == 2 {
			late = 1_300_000
		}
		iv := measurement.NewInterval(k+1, t0+k*1e9+late, t0+(k+1)*1e9)
		if k != 1 { // the second second has no reads
			record(iv, ser(measurement.Read, measurement.Service, false), (k+1)*10_000, (k+1)*30_000)
		}
		record(iv, ser(measurement.Update, measurement.Service, false), 5_000)
		iv.Returns[measurement.Update][adapters.OK] = 1
		iv.Ops = 1
		ivs = append(ivs, iv)
		total.Add(iv)
	}
	total.Returns[measurement.Read][adapters.OK] = 4
	total.Ops += 4
	total.StartNs = t0
	s := &ycsbtext.Summary{RunTime: 3 * time.Second, Total: total, Percentiles: []float64{50, 95, 99}, Timeseries: ivs, Granularity: time.Second}
	got := string(export(t, ycsbtext.TextExporter, s))
	golden(t, "text_timeseries", []byte(got))
	assert.Contains(t, got, "[READ], Operations, 4\n[READ], AverageLatency(us), ")
	assert.Contains(t, got, "[READ], Return=OK, 4\n[READ], 0, 20.0")
	assert.Regexp(t, `\[READ\], 2000, 60\.\d+\n`, got)
	assert.NotContains(t, got, "[READ], 1000,")
	assert.Contains(t, got, "[UPDATE], 0, 5.0")
	assert.Contains(t, got, "[UPDATE], 1000, 5.0")
	assert.Contains(t, got, "[UPDATE], 2000, 5.0")
	assert.NotContains(t, got, "PercentileLatency", "timeseries prints no percentiles, as YCSB")
}

func TestJSONExporter(t *testing.T) {
	s := fixtureSummary()
	got := export(t, ycsbtext.JSONExporter, s)
	golden(t, "json", got)
	assert.Equal(t, got, export(t, "json", s))
	want := ycsbtext.Lines(s)
	sc := bufio.NewScanner(bytes.NewReader(got))
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		require.True(t, json.Valid(line), "line %d is not valid JSON: %s", n+1, line)
		var obj map[string]any
		require.NoError(t, json.Unmarshal(line, &obj))
		require.Less(t, n, len(want))
		assert.Equal(t, want[n].Metric, obj["metric"])
		assert.Equal(t, want[n].Measurement, obj["measurement"])
		assert.Contains(t, obj, "value")
		n++
	}
	assert.Equal(t, len(want), n)
}

func TestJSONArrayExporter(t *testing.T) {
	s := fixtureSummary()
	got := export(t, ycsbtext.JSONArrayExporter, s)
	golden(t, "jsonarray", got)
	assert.Equal(t, got, export(t, "jsonarray", s))
	require.True(t, json.Valid(got), "not one valid JSON document")
	var arr []struct {
		Metric      string   `json:"metric"`
		Measurement string   `json:"measurement"`
		Value       *float64 `json:"value"`
	}
	require.NoError(t, json.Unmarshal(got, &arr))
	want := ycsbtext.Lines(s)
	require.Len(t, arr, len(want))
	for i, l := range want {
		assert.Equal(t, l.Metric, arr[i].Metric)
		assert.Equal(t, l.Measurement, arr[i].Measurement)
		require.NotNil(t, arr[i].Value, l.Measurement)
		switch v := l.Value.(type) {
		case int64:
			assert.Equal(t, float64(v), *arr[i].Value)
		case float64:
			assert.InDelta(t, v, *arr[i].Value, 1e-9)
		}
	}
	assert.Equal(t, "OVERALL", arr[0].Metric)
	assert.Equal(t, "RunTime(ms)", arr[0].Measurement)
	assert.Equal(t, 10123.0, *arr[0].Value)
}

// Java's JSON exporters write every value as its text exporter does:
// longs plainly, doubles with Double.toString ("500.0", "1.5E7"), and the
// fields in the order metric, measurement, value. A run whose throughput
// is a whole number (here 1000 ops in 2 s) must give "500.0", as Java,
// not 500.
func TestJSONExportersWriteJavaNumbers(t *testing.T) {
	fast := fixtureSummary()
	fast.RunTime = 2 * time.Second
	fast.Total.Ops = 1000
	big := fixtureSummary()
	big.RunTime = time.Millisecond
	big.Total.Ops = 20000 // 2.0E7 ops/s
	for _, s := range []*ycsbtext.Summary{fixtureSummary(), fast, big} {
		var text []string
		for _, l := range bytes.Split(bytes.TrimSpace(export(t, ycsbtext.TextExporter, s)), []byte("\n")) {
			parts := strings.SplitN(string(l), ", ", 3)
			require.Len(t, parts, 3)
			text = append(text, parts[2])
		}
		type rec struct {
			Metric      string          `json:"metric"`
			Measurement string          `json:"measurement"`
			Value       json.RawMessage `json:"value"`
		}
		var arr []rec
		require.NoError(t, json.Unmarshal(export(t, ycsbtext.JSONArrayExporter, s), &arr))
		require.Len(t, arr, len(text))
		for i, r := range arr {
			assert.Equal(t, text[i], string(r.Value), "[%s] %s", r.Metric, r.Measurement)
		}
		for i, l := range bytes.Split(bytes.TrimSpace(export(t, ycsbtext.JSONExporter, s)), []byte("\n")) {
			var r rec
			require.NoError(t, json.Unmarshal(l, &r))
			assert.Equal(t, text[i], string(r.Value), "[%s] %s", r.Metric, r.Measurement)
			assert.Regexp(t, `^\{"metric":.*,"measurement":.*,"value":`, string(l), "Java's field order")
		}
	}
	assert.Contains(t, string(export(t, ycsbtext.JSONExporter, fast)), `"measurement":"Throughput(ops/sec)","value":500.0}`)
	assert.Contains(t, string(export(t, ycsbtext.JSONExporter, big)), `"measurement":"Throughput(ops/sec)","value":2.0E7}`)
}

func TestJSONNonFinite(t *testing.T) {
	// Zero run time with operations: Java prints Infinity; JSON carries null.
	iv := measurement.NewInterval(0, t0, t0)
	iv.Ops = 5
	s := &ycsbtext.Summary{Total: iv}
	assert.Contains(t, string(export(t, ycsbtext.TextExporter, s)), "[OVERALL], Throughput(ops/sec), Infinity\n")
	lines := bytes.Split(bytes.TrimSpace(export(t, ycsbtext.JSONExporter, s)), []byte("\n"))
	require.Len(t, lines, 2)
	for _, l := range lines {
		assert.True(t, json.Valid(l), "%s", l)
	}
	assert.JSONEq(t, `{"metric":"OVERALL","measurement":"Throughput(ops/sec)","value":null}`, string(lines[1]))
	arr := export(t, ycsbtext.JSONArrayExporter, s)
	require.True(t, json.Valid(arr), "%s", arr)
	assert.JSONEq(t, `[{"metric":"OVERALL","measurement":"RunTime(ms)","value":0},{"metric":"OVERALL","measurement":"Throughput(ops/sec)","value":null}]`, string(arr))
}

func TestExporterNames(t *testing.T) {
	for _, n := range []string{ycsbtext.TextExporter, ycsbtext.JSONExporter, ycsbtext.JSONArrayExporter, "text", "json", "jsonarray"} {
		assert.NoError(t, ycsbtext.CheckExporter(n), n)
	}
	for _, n := range []string{"xml", "site.ycsb.measurements.exporter.Text", "TEXT"} {
		err := ycsbtext.CheckExporter(n)
		require.Error(t, err, n)
		assert.Contains(t, err.Error(), `"exporter"`)
		assert.Contains(t, err.Error(), ycsbtext.TextExporter)
		assert.Error(t, ycsbtext.Export(&bytes.Buffer{}, n, fixtureSummary()))
	}
}

func TestJavaDouble(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0.0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1.0, "1.0"},
		{-1.0, "-1.0"},
		{0.001, "0.001"},
		{0.0001, "1.0E-4"},
		{0.00012345, "1.2345E-4"},
		{0.5, "0.5"},
		{100, "100.0"},
		{1234567.0, "1234567.0"},
		{9999999.0, "9999999.0"},
		{1.0e7, "1.0E7"},
		{1.5e7, "1.5E7"},
		{12345678.9, "1.23456789E7"},
		{1e21, "1.0E21"},
		{2557544.757033248, "2557544.757033248"},
		{148.5725575422306, "148.5725575422306"},
		{1.27, "1.27"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		{math.MaxFloat64, "1.7976931348623157E308"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, ycsbtext.JavaDouble(tc.in))
		})
	}
}

func TestOrdinal(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1, "1st"}, {2, "2nd"}, {3, "3rd"}, {4, "4th"}, {10, "10th"},
		{11, "11th"}, {12, "12th"}, {13, "13th"}, {21, "21st"}, {22, "22nd"}, {23, "23rd"},
		{50, "50th"}, {95, "95th"}, {99, "99th"}, {100, "100th"}, {111, "111th"}, {101, "101st"},
		{99.9, "99.9"}, {99.99, "99.99"}, {0.5, "0.5"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, ycsbtext.Ordinal(tc.in), "%v", tc.in)
	}
}

func TestRemaining(t *testing.T) {
	tests := []struct {
		secs int64
		want string
	}{
		// YCSB's RemainingFormatter chooses "second" by the length of the
		// text written so far, i.e. the digits: one digit reads "second".
		{0, "0 second "},
		{1, "1 second "},
		{9, "9 second "},
		{10, "10 seconds "},
		{45, "45 seconds "},
		{59, "59 seconds "},
		{60, "1 minute "},
		{61, "1 minute "},
		{150, "2 minutes "},
		{3600, "1 hour "},
		{3661, "1 hour 1 minute "},
		{7322, "2 hours 2 minutes "},
		{86400, "1 day "},
		{86400 + 3600 + 60 + 1, "1 day 1 hour "},
		{3*86400 + 5*3600 + 30*60, "3 days 5 hours "},
		{2*86400 + 59, "2 days "},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, ycsbtext.Remaining(tc.secs), "%d s", tc.secs)
	}
}

var statusRe = regexp.MustCompile(`^(?P<label>.*?)(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}:\d{3}) (\d+) sec: (\d+) operations; `)

func statusFixture() (iv, cum *measurement.Interval) {
	iv = measurement.NewInterval(2, t0+10e9, t0+20e9)
	for i := int64(1); i <= 500; i++ {
		record(iv, ser(measurement.Read, measurement.Service, false), i*2000)
		record(iv, ser(measurement.Update, measurement.Service, false), i*4000)
	}
	record(iv, ser(measurement.Read, measurement.Intended, false), 9_000_000)
	iv.Ops = 1000
	cum = iv.Clone()
	cum.Ops = 1500
	return iv, cum
}

func TestStatusLine(t *testing.T) {
	at := time.Date(2026, 11, 5, 9, 7, 3, 45_678_000, time.UTC)
	iv, cum := statusFixture()
	empty := measurement.NewInterval(1, t0, t0+10e9)
	tests := []struct {
		name     string
		label    string
		p        run.Progress
		iv, cum  *measurement.Interval
		contains []string
		absent   []string
	}{
		{
			name: "budget", p: run.Progress{Elapsed: 20500 * time.Millisecond, Budget: 3000},
			iv: iv, cum: cum,
			contains: []string{"2026-11-05 09:07:03:045 20 sec: 1500 operations; 100 current ops/sec; est completion in 21 seconds [READ: Count=500, Max=1000, Min=2, Avg=501.",
				"[UPDATE: Count=500, Max=2000, Min=4, Avg=1002.", "[Intended-READ: Count=1, Max=900"},
		},
		{
			name: "label", label: "mylabel ", p: run.Progress{Elapsed: 20 * time.Second},
			iv: iv, cum: cum,
			contains: []string{"mylabel 2026-11-05 09:07:03:045 20 sec: 1500 operations; 100 current ops/sec; [READ: "},
			absent:   []string{"est completion"},
		},
		{
			name: "nothing yet", p: run.Progress{Elapsed: 10 * time.Second, Budget: 1000},
			iv: empty, cum: empty,
			contains: []string{"2026-11-05 09:07:03:045 10 sec: 0 operations; "},
			absent:   []string{"current ops/sec", "est completion", "["},
		},
		{
			name: "final", p: run.Progress{Elapsed: 30 * time.Second, Budget: 3000, Final: true},
			iv: iv, cum: cum,
			contains: []string{" 30 sec: 1500 operations; 100 current ops/sec; [READ: "},
			absent:   []string{"est completion"},
		},
		{
			name: "time limit sooner than budget", p: run.Progress{Elapsed: 20 * time.Second, Budget: 1_000_000, MaxExecution: 2 * time.Minute},
			iv: iv, cum: cum,
			contains: []string{"est completion in 1 minute 40 seconds "[:len("est completion in 1 minute ")]},
		},
		{
			name: "long estimate", p: run.Progress{Elapsed: 10 * time.Second, Budget: 1500 + 150*90061},
			iv: iv, cum: cum,
			contains: []string{"est completion in 1 day 1 hour ["},
		},
		{
			name: "warm-up", p: run.Progress{Warmup: true, WarmupOps: 777, Elapsed: 0},
			iv: empty, cum: empty,
			contains: []string{"2026-11-05 09:07:03:045 0 sec: warm-up: 777 operations (not measured); "},
			absent:   []string{"current ops/sec", "["},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := ycsbtext.StatusLine(tc.label, at, tc.p, tc.iv, tc.cum)
			if !tc.p.Warmup {
				assert.Regexp(t, statusRe, line)
			}
			assert.True(t, strings.HasPrefix(line, tc.label))
			for _, c := range tc.contains {
				assert.Contains(t, line, c)
			}
			for _, a := range tc.absent {
				assert.NotContains(t, line, a)
			}
			assert.NotContains(t, line, "\n")
		})
	}
}

func TestStatusLineGolden(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	iv, cum := statusFixture()
	var b strings.Builder
	for _, p := range []run.Progress{
		{Warmup: true, WarmupOps: 10},
		{Elapsed: 10 * time.Second, Budget: 3000},
		{Elapsed: 20 * time.Second, Budget: 3000},
		{Elapsed: 25 * time.Second, Budget: 3000, Final: true},
	} {
		b.WriteString(ycsbtext.StatusLine("[demo] ", at, p, iv, cum))
		b.WriteByte('\n')
	}
	golden(t, "status", []byte(b.String()))
	// YCSB's SimpleDateFormat "yyyy-MM-dd HH:mm:ss:SSS": milliseconds
	// after a colon, zero padded.
	assert.Contains(t, b.String(), "2026-01-02 03:04:05:006 ")
	// Local time, as YCSB's SimpleDateFormat uses the default time zone.
	loc := time.FixedZone("X", 5*3600+30*60)
	assert.Contains(t, ycsbtext.StatusLine("", at.In(loc), run.Progress{}, iv, cum), "2026-01-02 08:34:05:006 ")
}

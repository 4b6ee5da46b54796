//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// measureLine is one text-exporter line, in output order.
type measureLine struct{ metric, measurement, value string }

// measureBlocks parses a YCSB text summary into each metric's lines, in
// order. YCSB prints measurements in hash-map order, so blocks are keyed
// by metric and compared block by block.
func measureBlocks(t *testing.T, out string) map[string][]measureLine {
	t.Helper()
	blocks := map[string][]measureLine{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	line := regexp.MustCompile(`^\[([^\]]+)\], (.*), ([^,]*)$`)
	for sc.Scan() {
		g := line.FindStringSubmatch(sc.Text())
		if g == nil {
			continue
		}
		blocks[g[1]] = append(blocks[g[1]], measureLine{g[1], g[2], g[3]})
	}
	require.NoError(t, sc.Err())
	return blocks
}

// valueKind classifies a printed value the way Java prints it: a long or
// int ("12", "-1"), a double ("0.5", "1.0E-4", "NaN").
func valueKind(v string) string {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return "long"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil || v == "NaN" || v == "Infinity" {
		if strings.ContainsAny(v, ".EN") {
			return "double"
		}
	}
	return "other:" + v
}

// exactMeasurements are the lines whose values must match Java's exactly
// for the same BasicDB run: counts, not latencies (the two clients run at
// different speeds).
var exactMeasurement = regexp.MustCompile(`^(Operations|Total Operations|Return=.*|Below is a summary of latency in microseconds:)$`)

// TestJavaYCSBMeasurementTypes runs Java YCSB 0.17.0's client (BasicDB)
// and ycsbctl's basic adapter on the same read-only run for every
// measurement type and compares their summaries block by block: the same
// measurement names (Hdr/Bucket/Raw prefixes included), the same lines in
// the same order, the same value types (Java long vs double), and the same
// counts. Latencies differ between the runs and are not compared, nor is
// which 1 ms bucket a call fell in; every bucket block must hold all the
// operations. The raw type's sample files and
// hdrhistogram.fileoutput's per-measurement logs are compared by name,
// header and line count.
func TestJavaYCSBMeasurementTypes(t *testing.T) {
	if os.Getenv("YCSBCTL_SKIP_JAVAYCSB") == "1" {
		t.Skip("YCSBCTL_SKIP_JAVAYCSB=1")
	}
	root := interopRoot(t)
	cpOut, err := exec.Command("bash", filepath.Join(root, "integration", "scripts", "javaycsb.sh")).Output()
	require.NoError(t, err, "fetching Java YCSB core from Maven Central")
	cp := strings.TrimSpace(string(cpOut))
	// YCSB 0.17.0's HdrHistogram 2.1.4 needs javax.xml.bind to write
	// hdrhistogram.fileoutput logs, which JDK 11+ no longer has.
	jaxb := filepath.Join(os.Getenv("HOME"), ".m2", "repository", "javax", "xml", "bind", "jaxb-api", "2.3.1", "jaxb-api-2.3.1.jar")
	if !fileExists(jaxb) {
		out, err := exec.Command("mvn", "-B", "-q", "dependency:get", "-Dartifact=javax.xml.bind:jaxb-api:2.3.1", "-Dtransitive=false").CombinedOutput()
		require.NoError(t, err, "fetching jaxb-api from Maven Central: %s", out)
	}
	cp += string(os.PathListSeparator) + jaxb
	bin := interopBinary(t)
	java := "java"
	if j := "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"; fileExists(j) {
		java = j
	}
	const ops = 500
	cases := []struct {
		name  string
		props []string
	}{
		{"hdrhistogram", []string{"measurementtype=hdrhistogram", "hdrhistogram.percentiles=50,90,99.9"}},
		{"hdrhistogram-default-percentiles", []string{"measurementtype=hdrhistogram", "hdrhistogram.percentiles=95,99"}},
		{"hdrhistogram-verbose", []string{"measurementtype=hdrhistogram", "measurement.histogram.verbose=true"}},
		{"histogram", []string{"measurementtype=histogram"}},
		{"histogram-buckets-verbose", []string{"measurementtype=histogram", "histogram.buckets=7", "measurement.histogram.verbose=true"}},
		{"hdrhistogram+histogram", []string{"measurementtype=hdrhistogram+histogram", "histogram.buckets=3"}},
		{"raw", []string{"measurementtype=raw", "measurement.raw.output_file=@RAW"}},
		{"raw-no-summary", []string{"measurementtype=raw", "measurement.raw.output_file=@RAW", "measurement.raw.no_summary=true"}},
		{"hdrhistogram+raw", []string{"measurementtype=hdrhistogram+raw", "measurement.raw.output_file=@RAW"}},
		{"hdr-fileoutput", []string{"measurementtype=hdrhistogram", "hdrhistogram.fileoutput=true", "hdrhistogram.output.path=@DIR/"}},
		{"hdrhistogram+histogram-fileoutput", []string{"measurementtype=hdrhistogram+histogram", "hdrhistogram.fileoutput=true", "hdrhistogram.output.path=@DIR/"}},
		{"both-intervals", []string{"measurementtype=histogram", "measurement.interval=both"}},
		{"reportlatencyforeacherror", []string{"reportlatencyforeacherror=true", "latencytrackederrors=NOT_FOUND"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			type side struct {
				dir, raw string
				out      string
			}
			runSide := func(who string, argv func([]string) *exec.Cmd) side {
				s := side{dir: filepath.Join(t.TempDir(), who)}
				require.NoError(t, os.MkdirAll(s.dir, 0o755))
				s.raw = filepath.Join(s.dir, "raw.csv")
				args := []string{"-P", filepath.Join(root, "workloads", "workloadc"), "-threads", "1",
					"-p", "basicdb.verbose=false", "-p", "recordcount=1000", "-p", "operationcount=" + strconv.Itoa(ops)}
				// YCSB 0.17.0 defaults hdrhistogram.percentiles to
				// 95,99, later YCSB (and ycsbctl) to 50,95,99: the
				// measurement types are compared with the same list.
				props := append([]string{"hdrhistogram.percentiles=50,95,99"}, tc.props...)
				for _, p := range props {
					p = strings.ReplaceAll(p, "@RAW", s.raw)
					p = strings.ReplaceAll(p, "@DIR", s.dir)
					args = append(args, "-p", p)
				}
				cmd := argv(args)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				require.NoError(t, err, "%s: %s", who, stderr.String())
				s.out = string(out)
				return s
			}
			j := runSide("java", func(a []string) *exec.Cmd {
				return exec.Command(java, append([]string{"-cp", cp, "site.ycsb.Client", "-t", "-db", "site.ycsb.BasicDB"}, a...)...)
			})
			g := runSide("ycsbctl", func(a []string) *exec.Cmd { return exec.Command(bin, append([]string{"run", "basic"}, a...)...) })
			jb, gb := measureBlocks(t, j.out), measureBlocks(t, g.out)

			// Java's JVM lines and ycsbctl's notes are each their own.
			for name := range jb {
				if strings.HasPrefix(name, "TOTAL_GC") {
					delete(jb, name)
				}
			}
			delete(gb, "NOTE")
			require.Equal(t, sortedKeys(jb), sortedKeys(gb), "the same measurements\njava:\n%s\nycsbctl:\n%s", j.out, g.out)
			for name, jl := range jb {
				gl := gb[name]
				var jm, gm []string
				for _, l := range jl {
					jm = append(jm, l.measurement)
				}
				for _, l := range gl {
					gm = append(gm, l.measurement)
				}
				if name == "OVERALL" {
					require.Equal(t, jm, gm, name)
					continue
				}
				// Verbose HdrHistogram lines list the values that were
				// recorded, which differ between runs: compare the
				// fixed part and the kinds.
				jfix, gfix := fixedPart(jl), fixedPart(gl)
				require.Equal(t, names(jfix), names(gfix), "lines of [%s]", name)
				for i := range jfix {
					jv, gv := jfix[i].value, gfix[i].value
					assert.Equal(t, valueKind(jv), valueKind(gv), "[%s], %s: java %s, ycsbctl %s", name, jfix[i].measurement, jv, gv)
					if exactMeasurement.MatchString(jfix[i].measurement) {
						assert.Equal(t, jv, gv, "[%s], %s", name, jfix[i].measurement)
					}
				}
				// The 1 ms buckets hold every operation on both sides
				// (which bucket depends on each run's speed).
				if isBucketBlock(tc.props, gfix) {
					for _, side := range [][]measureLine{jfix, gfix} {
						var ops, inBuckets int64
						for _, l := range side {
							n, _ := strconv.ParseInt(l.value, 10, 64)
							switch {
							case l.measurement == "Operations":
								ops = n
							case isBucketLine(tc.props, l.measurement):
								inBuckets += n
							}
						}
						assert.Equal(t, ops, inBuckets, "[%s] buckets", name)
					}
				}
				if len(jl) != len(jfix) {
					assert.NotEmpty(t, gl[len(gfix):], "[%s] verbose value lines", name)
					for _, l := range gl[len(gfix):] {
						assert.Equal(t, "double", valueKind(l.value), "[%s], %s", name, l.measurement)
					}
				}
			}
			if strings.Contains(strings.Join(tc.props, " "), "raw.output_file") {
				compareRawFiles(t, j.raw, g.raw)
			}
			if strings.Contains(strings.Join(tc.props, " "), "fileoutput=true") {
				compareHdrLogs(t, j.dir, g.dir)
			}
			t.Logf("%d measurements alike", len(jb))
		})
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func names(ls []measureLine) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.measurement)
	}
	return out
}

// fixedPart drops the HdrHistogram verbose lines (a recorded value as the
// measurement, a double count as the value).
func fixedPart(ls []measureLine) []measureLine {
	var out []measureLine
	for _, l := range ls {
		if _, err := strconv.ParseInt(l.measurement, 10, 64); err == nil && valueKind(l.value) == "double" {
			continue
		}
		out = append(out, l)
	}
	return out
}

// isBucketBlock reports whether a block has the histogram type's verbose
// bucket lines.
func isBucketBlock(props []string, ls []measureLine) bool {
	for _, l := range ls {
		if strings.HasPrefix(l.measurement, ">") && isBucketLine(props, l.measurement) {
			return true
		}
	}
	return false
}

// isBucketLine reports whether a measurement is one of the histogram
// type's 1 ms bucket lines ("0", "1", ">1000").
func isBucketLine(props []string, m string) bool {
	hist := false
	for _, p := range props {
		if strings.HasPrefix(p, "measurementtype=") && strings.Contains(p, "histogram") && p != "measurementtype=hdrhistogram" {
			hist = true
		}
	}
	if !hist {
		return false
	}
	if strings.HasPrefix(m, ">") {
		return true
	}
	_, err := strconv.Atoi(m)
	return err == nil
}

// compareRawFiles checks both raw files hold the same measurements'
// headers and sample counts, each sample as "<NAME>,<epoch ms>,<µs>".
func compareRawFiles(t *testing.T, jpath, gpath string) {
	t.Helper()
	count := func(path string) (map[string]int, map[string]bool) {
		b, err := os.ReadFile(path)
		require.NoError(t, err, path)
		samples, headers := map[string]int{}, map[string]bool{}
		sample := regexp.MustCompile(`^([A-Za-z-]+),\d{13},\d+$`)
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if n, ok := strings.CutSuffix(line, " latency raw data: op, timestamp(ms), latency(us)"); ok {
				headers[n] = true
				continue
			}
			g := sample.FindStringSubmatch(line)
			require.NotNil(t, g, "%s: raw line %q", path, line)
			samples[g[1]]++
		}
		return samples, headers
	}
	js, jh := count(jpath)
	gs, gh := count(gpath)
	assert.Equal(t, jh, gh, "raw headers")
	assert.Equal(t, js, gs, "raw samples per measurement")
}

// compareHdrLogs checks both runs wrote the same per-measurement .hdr
// logs with YCSB's header lines.
func compareHdrLogs(t *testing.T, jdir, gdir string) {
	t.Helper()
	list := func(dir string) []string {
		m, err := filepath.Glob(filepath.Join(dir, "*.hdr"))
		require.NoError(t, err)
		var out []string
		for _, p := range m {
			out = append(out, filepath.Base(p))
		}
		sort.Strings(out)
		return out
	}
	jf, gf := list(jdir), list(gdir)
	require.NotEmpty(t, jf)
	assert.Equal(t, jf, gf, ".hdr logs")
	head := regexp.MustCompile(`^#\[Logging for: (\S+)\]\n#\[Histogram log format version 1\.[123]\]\n#\[StartTime: \d+\.\d{3} \(seconds since epoch\), [^\]]+\]\n"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n`)
	for _, f := range gf {
		for _, dir := range []string{jdir, gdir} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			g := head.FindStringSubmatch(string(b))
			require.NotNil(t, g, "%s header:\n%s", filepath.Join(dir, f), b)
			assert.Equal(t, strings.TrimSuffix(f, ".hdr"), g[1])
			assert.Regexp(t, `(?m)^\d+\.\d{3},\d+\.\d{3},\d+\.\d{3},HIST`, string(b), "interval lines relative to StartTime")
		}
	}
}

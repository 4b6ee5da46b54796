package metrics

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/telemetry"
	"github.com/ycsbctl/ycsbctl/internal/testutil/tools"
)

// TestLayoutMatchesLibrary checks our index-to-value mapping against the
// library's own bucket iteration for the shared geometry.
func TestLayoutMatchesLibrary(t *testing.T) {
	h := measurement.NewHistogram()
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		_ = h.RecordValue(int64(math.Exp(r.Float64()*25)) + 1)
	}
	_ = h.RecordValue(measurement.HighestNs)
	bars := h.Distribution()
	l := layoutOf(h)
	counts := h.Export().Counts
	checked := 0
	for idx, c := range counts {
		if c == 0 {
			continue
		}
		lo, w := l.span(idx)
		b := bars[idx]
		if b.Count != c || b.From != lo || b.To != lo+w-1 {
			t.Fatalf("index %d: ours [%d, %d] count %d, library [%d, %d] count %d", idx, lo, lo+w-1, c, b.From, b.To, b.Count)
		}
		checked++
	}
	if checked < 100 {
		t.Fatalf("only %d buckets checked", checked)
	}
}

func decodeNative(h *dto.Histogram) map[int]int64 {
	out := map[int]int64{}
	idx, delta, cur := 0, 0, int64(0)
	for _, s := range h.GetPositiveSpan() {
		idx += int(s.GetOffset())
		for range s.GetLength() {
			cur += h.GetPositiveDelta()[delta]
			delta++
			if cur != 0 {
				out[idx] = cur
			}
			idx++
		}
	}
	return out
}

// TestNativeBucketsMatchClientGolang compares our bucket keys and span
// encoding with client_golang's own native histogram at the same schema.
func TestNativeBucketsMatchClientGolang(t *testing.T) {
	ph := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "x", Help: "x", NativeHistogramBucketFactor: 1.1,
		NativeHistogramMaxBucketNumber: 10000, Buckets: ClassicBuckets[:],
	})
	var acc accumulator
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		ns := int64(math.Exp(r.Float64()*22)) + 1
		ph.Observe(float64(ns) / 1e9)
		acc.addValue(ns, 1)
	}
	// Exact powers of two sit on a bucket boundary.
	for _, ns := range []int64{1 << 20, 1 << 25, 1_000_000_000} {
		ph.Observe(float64(ns) / 1e9)
		acc.addValue(ns, 1)
	}
	var want dto.Metric
	if err := ph.Write(&want); err != nil {
		t.Fatal(err)
	}
	var got dto.Histogram
	acc.write(&got)
	if want.Histogram.GetSchema() != got.GetSchema() {
		t.Fatalf("schema %d, client_golang %d", got.GetSchema(), want.Histogram.GetSchema())
	}
	wm, gm := decodeNative(want.Histogram), decodeNative(&got)
	if len(wm) != len(gm) {
		t.Fatalf("%d native buckets, client_golang %d", len(gm), len(wm))
	}
	for k, v := range wm {
		if gm[k] != v {
			t.Fatalf("bucket %d: %d, client_golang %d", k, gm[k], v)
		}
	}
	for i, b := range want.Histogram.Bucket {
		if b.GetCumulativeCount() != got.Bucket[i].GetCumulativeCount() {
			t.Fatalf("classic le=%g: %d, client_golang %d", b.GetUpperBound(), got.Bucket[i].GetCumulativeCount(), b.GetCumulativeCount())
		}
	}
	if got.GetSampleCount() != want.Histogram.GetSampleCount() || math.Abs(got.GetSampleSum()-want.Histogram.GetSampleSum()) > 1e-6*want.Histogram.GetSampleSum() {
		t.Fatalf("count/sum %d/%g, client_golang %d/%g", got.GetSampleCount(), got.GetSampleSum(), want.Histogram.GetSampleCount(), want.Histogram.GetSampleSum())
	}
}

func TestNativeSpansGaps(t *testing.T) {
	var dense [nativeLen]uint64
	set := func(key int, v uint64) { dense[key-nativeMinKey] = v }
	set(-10, 1)
	set(-8, 2) // gap of 1: zero delta, same span
	set(-4, 3) // gap of 3: new span
	spans, deltas := nativeSpans(dense[:])
	if len(spans) != 2 || spans[0].GetOffset() != -10 || spans[0].GetLength() != 3 || spans[1].GetOffset() != 3 || spans[1].GetLength() != 1 {
		t.Fatalf("spans %v", spans)
	}
	if want := []int64{1, -1, 2, 1}; !equal(deltas, want) {
		t.Fatalf("deltas %v, want %v", deltas, want)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// interval builds an interval with n READs spread over a latency range
// and some failed UPDATEs.
func interval(seed uint64, reads int, failed int) *measurement.Interval {
	iv := measurement.NewInterval(1, time.Now().Add(-10*time.Second).UnixNano(), time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, seed))
	rd := measurement.NewHistogram()
	for range reads {
		_ = rd.RecordValue(int64(100_000 + r.ExpFloat64()*400_000))
	}
	iv.Hist[measurement.SeriesOf(measurement.Read, measurement.Service, false)] = rd
	iv.Returns[measurement.Read][adapters.OK] = int64(reads)
	if failed > 0 {
		uf := measurement.NewHistogram()
		for range failed {
			_ = uf.RecordValue(5_000_000)
		}
		iv.Hist[measurement.SeriesOf(measurement.Update, measurement.Service, true)] = uf
		iv.Returns[measurement.Update][adapters.Error] = int64(failed)
	}
	iv.Ops = int64(reads + failed)
	return iv
}

func newTestExporter() *Exporter {
	e := New()
	e.SetRun(RunInfo{RunID: "r1", Phase: "run", Workload: "workloada", DB: "basic", Start: time.Now()})
	return e
}

func findMetric(t *testing.T, mfs []*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.Metric {
			for k, v := range labels {
				found := false
				for _, lp := range m.Label {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			return m
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return nil
}

func TestExporterAggregatesAgents(t *testing.T) {
	e := newTestExporter()
	merged := measurement.NewInterval(0, 0, 0)
	for i, name := range []string{"a1", "a2", "a3"} {
		for k := range 3 {
			iv := interval(uint64(i*10+k+1), 3000, 2)
			e.ObserveInterval(name, iv)
			merged.Add(iv)
		}
		e.SetAgentStatus(name, AgentStatus{State: run.AgentRunning, ClockOffset: time.Millisecond, Lag: 2 * time.Millisecond, CPUSeconds: 1.5})
	}
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	// Counters per agent add up to the merged returns.
	var reads float64
	for _, a := range []string{"a1", "a2", "a3"} {
		reads += findMetric(t, mfs, "ycsbctl_operations_total", map[string]string{"agent": a, "op": "READ", "status": "OK"}).Counter.GetValue()
	}
	if int64(reads) != merged.Returns[measurement.Read][adapters.OK] {
		t.Fatalf("reads %v, want %d", reads, merged.Returns[measurement.Read][adapters.OK])
	}
	findMetric(t, mfs, "ycsbctl_operations_total", map[string]string{"agent": "a2", "op": "UPDATE", "status": "ERROR"})
	findMetric(t, mfs, "ycsbctl_operation_duration_seconds", map[string]string{"agent": "a2", "op": "UPDATE", "outcome": "failed", "kind": "service"})
	findMetric(t, mfs, "ycsbctl_run_info", map[string]string{"run_id": "r1", "phase": "run", "db": "basic", "workload": "workloada"})
	st := findMetric(t, mfs, "ycsbctl_agent_state", map[string]string{"agent": "a1", "state": "running"})
	if st.Gauge.GetValue() != 1 {
		t.Fatal("running state not 1")
	}
	// Summing native buckets over agents, as sum without(agent) does,
	// gives a p99 within one native bucket (~9 %) of the exact merged HDR.
	sum := map[int]int64{}
	var count uint64
	for _, a := range []string{"a1", "a2", "a3"} {
		m := findMetric(t, mfs, "ycsbctl_operation_duration_seconds", map[string]string{"agent": a, "op": "READ", "outcome": "ok"})
		for k, v := range decodeNative(m.Histogram) {
			sum[k] += v
		}
		count += m.Histogram.GetSampleCount()
	}
	hdr := merged.Hist[measurement.SeriesOf(measurement.Read, measurement.Service, false)]
	if int64(count) != hdr.TotalCount() {
		t.Fatalf("count %d, merged %d", count, hdr.TotalCount())
	}
	exact := float64(hdr.ValueAtPercentile(99)) / 1e9
	est := nativeQuantile(sum, count, 0.99)
	if math.Abs(est-exact)/exact > 0.1 {
		t.Fatalf("native p99 %g, exact %g", est, exact)
	}
}

// nativeQuantile returns the upper bound of the bucket holding quantile q.
func nativeQuantile(b map[int]int64, count uint64, q float64) float64 {
	rank := q * float64(count)
	var seen float64
	for k := nativeMinKey; k <= nativeMaxKey; k++ {
		seen += float64(b[k])
		if seen >= rank {
			return math.Exp2(float64(k) / 8)
		}
	}
	return math.Inf(1)
}

func TestNewRunResets(t *testing.T) {
	e := newTestExporter()
	e.ObserveInterval("a", interval(1, 10, 0))
	e.SetRun(RunInfo{RunID: "r2", Phase: "load"})
	mfs, _ := e.Registry().Gather()
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			for _, lp := range m.Label {
				if lp.GetName() == "run_id" && lp.GetValue() == "r1" {
					t.Fatalf("%s still exposes run r1", mf.GetName())
				}
			}
		}
	}
}

func TestIntendedMode(t *testing.T) {
	e := New()
	e.SetRun(RunInfo{RunID: "r", Mode: measurement.ModeIntended})
	e.ObserveInterval("x", interval(1, 10, 0))
	mfs, _ := e.Registry().Gather()
	findMetric(t, mfs, "ycsbctl_operation_duration_seconds", map[string]string{"op": "READ", "kind": "intended"})
}

func populated() *Exporter {
	e := newTestExporter()
	e.SetRun(RunInfo{RunID: "r1", Phase: "run", Workload: "workloada", DB: "basic", Start: time.Now(), HostMetrics: true})
	e.ObserveInterval("local", interval(7, 2000, 3))
	e.SetAgentStatus("local", AgentStatus{State: run.AgentRunning, CPUSeconds: 0.5})
	e.SetTelemetry("local", "h1", hostInterval(1))
	return e
}

func hostInterval(k float64) *telemetry.Interval {
	return &telemetry.Interval{Samples: 10, Cores: 4, CPU: telemetry.CPU{User: 30 * k, System: 10, IOWait: 5, Idle: 55 - 30*k}, MemAvailableMin: 8 << 30,
		Disks: []telemetry.Device{{Name: "vda", WriteBps: 2e6, UtilPct: 40}}, Links: []telemetry.Link{{Name: "eth0", RxBps: 1e6, TxBps: 2e6}}, TCPRetransmits: 3,
		DB: telemetry.Process{Count: 1, CPUPct: 20 * k, RSSMax: 1 << 30, ThreadsMax: 100, FilesMax: 300, WriteBytes: 5e6}, Client: telemetry.Process{Count: 1, CPUPct: 7, RSSMax: 50 << 20},
		Internals: &telemetry.Internals{Product: "Cassandra 5.0.9", Metrics: []telemetry.Metric{{Name: "compactions_pending", Value: 2}}}}
}

// The database process and load generator gauges by host, the
// internals, the write counter over intervals; host-wide figures only
// with ycsbctl.telemetry.hostmetrics.
func TestTelemetryGauges(t *testing.T) {
	e := newTestExporter()
	e.SetTelemetry("10.0.0.1:7420", "h1", hostInterval(1))
	e.SetTelemetry("10.0.0.1:7420", "h1", hostInterval(2))
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	l := map[string]string{"agent": "10.0.0.1:7420", "host": "h1"}
	if v := findMetric(t, mfs, "ycsbctl_db_process_cpu_ratio", l).Gauge.GetValue(); v != 0.4 {
		t.Errorf("db cpu %v, want the latest interval's 40%% as 0.4", v)
	}
	if v := findMetric(t, mfs, "ycsbctl_db_process_write_bytes_total", l).Counter.GetValue(); v != 10e6 {
		t.Errorf("written %v, want both intervals' 10e6", v)
	}
	if v := findMetric(t, mfs, "ycsbctl_db_process_resident_memory_bytes", l).Gauge.GetValue(); v != 1<<30 {
		t.Errorf("rss %v", v)
	}
	findMetric(t, mfs, "ycsbctl_load_generator_cpu_ratio", l)
	findMetric(t, mfs, "ycsbctl_db_internal", map[string]string{"host": "h1", "product": "Cassandra 5.0.9", "name": "compactions_pending"})
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "ycsbctl_host_") {
			t.Errorf("%s exposed without ycsbctl.telemetry.hostmetrics", mf.GetName())
		}
	}
	mfs, _ = populated().Registry().Gather()
	findMetric(t, mfs, "ycsbctl_host_cpu_ratio", map[string]string{"host": "h1", "mode": "iowait"})
	findMetric(t, mfs, "ycsbctl_host_disk_written_bytes_per_second", map[string]string{"host": "h1"})
}

func TestLint(t *testing.T) {
	e := populated()
	problems, err := testutil.CollectAndLint((*collector)(e))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	problems, err = testutil.GatherAndLint(e.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint (registry): %s: %s", p.Metric, p.Text)
	}
}

func textExposition(t *testing.T, g prometheus.Gatherer) []byte {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestPromtool runs `promtool check metrics` (Debian package prometheus)
// on the text exposition.
func TestPromtool(t *testing.T) {
	path := tools.Require(t, "promtool")
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(textExposition(t, populated().Registry()))
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestServeTextAndProtobuf(t *testing.T) {
	e := populated()
	s, err := Listen("127.0.0.1:0", e.Handler())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the metrics server: %v", err)
		}
	}()
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err = errors.Join(err, resp.Body.Close()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`ycsbctl_operations_total{agent="local",op="READ",run_id="r1",status="OK"} 2000`, `ycsbctl_operation_duration_seconds_bucket{`, `le="+Inf"`, "process_cpu_seconds_total", "go_goroutines"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("text exposition lacks %q", want)
		}
	}
	// Prometheus asks for protobuf when native histograms are enabled;
	// the native parts must be there.
	req, _ := http.NewRequest("GET", s.URL(), nil)
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := resp.Body.Close(); err != nil {
			t.Errorf("closing the response: %v", err)
		}
	}()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	found := false
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			break
		}
		if mf.GetName() == "ycsbctl_operation_duration_seconds" {
			for _, m := range mf.Metric {
				if m.Histogram.GetSchema() == NativeSchema && len(m.Histogram.PositiveSpan) > 0 && len(m.Histogram.Bucket) == len(ClassicBuckets) {
					found = true
				}
			}
		}
	}
	if !found {
		t.Fatal("protobuf exposition has no histogram with both native and classic parts")
	}
}

func TestNormalizeAddr(t *testing.T) {
	for in, want := range map[string]string{
		"9464":          "127.0.0.1:9464",
		":9464":         "127.0.0.1:9464",
		"0.0.0.0:9000":  "0.0.0.0:9000",
		"localhost":     "localhost:9464",
		"[::1]:9464":    "[::1]:9464",
		"127.0.0.1:0":   "127.0.0.1:0",
		"example.org:1": "example.org:1",
	} {
		got, err := NormalizeAddr(in)
		if err != nil || got != want {
			t.Errorf("NormalizeAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "host:port", "1.2.3.4:99999"} {
		if _, err := NormalizeAddr(bad); err == nil {
			t.Errorf("NormalizeAddr(%q) accepted", bad)
		}
	}
}

// The sink exposes a single host exactly as one agent named "local":
// warm-up neither counted nor timed, state following the run, CPU added
// once per interval.
func TestSinkSingleHost(t *testing.T) {
	e := newTestExporter()
	o := e.NewSink(RunInfo{RunID: "r1", Phase: "run", DB: "basic"}, nil)
	self := run.SelfView{Name: run.LocalAgent}
	var seq int64
	emit := func(iv *measurement.Interval, p run.Progress, cpu float64) {
		seq++
		iv.Seq = seq
		u := &run.Update{RunID: "r1", Interval: iv, Cumulative: iv, Progress: p}
		self.Describe(u, cpu)
		o.OnInterval(u)
	}
	emit(interval(1, 5, 0), run.Progress{Warmup: true}, 1)
	emit(interval(2, 50, 0), run.Progress{Lag: 3 * time.Millisecond}, 1.5)
	emit(interval(3, 50, 0), run.Progress{Final: true}, 2.25)
	mfs, _ := e.Registry().Gather()
	if v := findMetric(t, mfs, "ycsbctl_operations_total", map[string]string{"op": "READ", "agent": "local"}).Counter.GetValue(); v != 100 {
		t.Fatalf("reads %v, want 100 (warm-up not counted)", v)
	}
	if v := findMetric(t, mfs, "ycsbctl_agent_state", map[string]string{"state": "finished"}).Gauge.GetValue(); v != 1 {
		t.Fatal("not finished")
	}
	if v := findMetric(t, mfs, "ycsbctl_agent_cpu_seconds_total", map[string]string{"agent": "local"}).Counter.GetValue(); v != 1.25 {
		t.Fatalf("cpu %v, want 1.25 (counted from the first measured interval)", v)
	}
}

func BenchmarkObserveInterval(b *testing.B) {
	e := newTestExporter()
	iv := interval(1, 100000, 100)
	for b.Loop() {
		e.ObserveInterval("a", iv)
	}
}

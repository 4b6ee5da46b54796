package coordinator

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/internal/exitcode"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/transport"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// TestProcessAgentRuntime: in a distributed run ycsbctl.trackruntime
// reports the agents' processes, not the coordinator's. The two agents
// are separate processes made recognisable: each holds a heap ballast of
// its own size (48 and 256 MiB, far above this coordinator's heap) and
// the second forces a collection every 20 ms.
func TestProcessAgentRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const smallMB, bigMB = 48, 256
	a0 := spawnAgent(t, "agent-0", procAgentConfig{LeaseMs: 5000, BallastMB: smallMB})
	a1 := spawnAgent(t, "agent-1", procAgentConfig{LeaseMs: 5000, BallastMB: bigMB, GCEveryMs: 20})

	const threads = 24
	r := runCoord(t, runConfig{DB: "basic", Phase: run.Run, Agents: []string{a0.addr, a1.addr}, Status: true,
		Props: properties.FromMap(baseProps(map[string]string{"target": "2000", "threadcount": strconv.Itoa(threads),
			"measurement.trackjvm": "true"}))})
	if r.code != exitcode.OK {
		t.Fatalf("run: %v %v", r.code, r.err)
	}
	// The coordinator (this process) could not have produced the heap
	// figures below.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if own := ms.HeapInuse >> 20; own >= smallMB {
		t.Fatalf("this process holds %d MiB of heap; the test cannot tell it from the agents", own)
	}

	// Every status line shows both agents' samples.
	block := func(series string) [][]int64 {
		re := regexp.MustCompile(`\[` + series + `: Count=(\d+), Max=(\d+), Min=(\d+), Avg=[0-9.]+, 90=\d+, 99=\d+, 99\.9=\d+, 99\.99=\d+\]`)
		var out [][]int64
		for _, m := range re.FindAllStringSubmatch(r.stderr, -1) {
			var v []int64
			for _, s := range m[1:] {
				n, _ := strconv.ParseInt(s, 10, 64)
				v = append(v, n)
			}
			out = append(out, v)
		}
		return out
	}
	// Count is the agents whose record of the interval had arrived when
	// its status line was printed: both, or on a loaded machine (and for
	// the last interval, which one agent may end a moment later) only
	// one, whose sample is then both Max and Min.
	heap := block("HEAP_IN_USE_MB")
	if len(heap) < 4 {
		t.Fatalf("%d status lines with the heap series, want several", len(heap))
	}
	both := 0
	for _, h := range heap {
		switch h[0] {
		case 1:
			if h[1] != h[2] || h[1] < smallMB {
				t.Errorf("heap block from one agent Max=%d Min=%d: want one sample, at least either agent's ballast (%d MB)", h[1], h[2], smallMB)
			}
		case 2:
			both++
			if h[1] < bigMB || h[2] < smallMB || h[2] >= bigMB {
				t.Errorf("heap block Count=2 Max=%d Min=%d: want Max>=%d (agent-1), %d<=Min<%d (agent-0)", h[1], h[2], bigMB, smallMB, bigMB)
			}
		default:
			t.Errorf("heap block Count=%d from 2 agents", h[0])
		}
	}
	if both < len(heap)/2 {
		t.Errorf("only %d of %d status lines hold both agents' runtime samples", both, len(heap))
	}
	var maxG int64
	for i, g := range block("GOROUTINES") {
		if i < len(heap) && g[0] != heap[i][0] {
			t.Errorf("goroutine block %d Count=%d, but its heap block counts %d agents", i, g[0], heap[i][0])
		}
		maxG = max(maxG, g[1])
	}
	if maxG < threads {
		t.Errorf("goroutines peaked at %d; an agent runs %d workers", maxG, threads)
	}
	if gcs := block("GCS"); len(gcs) == 0 || slices.MaxFunc(gcs, func(a, b []int64) int { return int(a[1] - b[1]) })[1] < 2 {
		t.Errorf("GCS blocks %v: agent-1 forces a collection every 20 ms", gcs)
	}

	for _, c := range []struct {
		metric, meas string
		min, max     float64
	}{
		{"RUNTIME_AGENTS", "Count", 2, 2},
		{"MAX_HEAP_IN_USE_MB", "MBs", bigMB, 1 << 20},
		{"MIN_HEAP_IN_USE_MB", "MBs", smallMB, bigMB - 1},
		{"MAX_GOROUTINES", "Count", threads, 1 << 20},
		// ~1.5 s of forced collections every 20 ms on agent-1 alone.
		{"TOTAL_GCs", "Count", 25, 1 << 20},
	} {
		if v := summaryValue(t, r.stdout, c.metric, c.meas); v < c.min || v > c.max {
			t.Errorf("[%s], %s = %v, want %v..%v", c.metric, c.meas, v, c.min, c.max)
		}
	}
	if strings.Contains(r.stdout, "coordinator's own") {
		t.Error("the summary still says the coordinator's process is reported")
	}
	const note = "[NOTE], ycsbctl.trackruntime: the runtime figures are the agents' own processes (2 reporting)"
	if !strings.Contains(r.stdout, note) {
		t.Errorf("no %q", note)
	}
	// For -v: the agents' figures as printed.
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "GC") || strings.Contains(l, "HEAP") || strings.Contains(l, "GOROUTINES") || strings.Contains(l, "RUNTIME_AGENTS") {
			t.Log(l)
		}
	}
	if i := strings.LastIndex(r.stderr, "[GOROUTINES:"); i >= 0 {
		t.Log("last status line's runtime part: " + strings.SplitN(r.stderr[i:], "\n", 2)[0])
	}
	// run.json carries the same lines.
	rep := readReport(t, r.dir)
	lines := strings.Join(rep.Summary.Lines, "\n")
	for _, want := range []string{"[RUNTIME_AGENTS], Count, 2", note} {
		if !strings.Contains(lines, want) {
			t.Errorf("run.json summary lacks %q", want)
		}
	}
}

// TestInProcessRawDroppedSummed: every agent counts the raw samples it
// could not write and the coordinator reports their sum as a single host
// reports its own, in the summary and run.json. The agents' raw output is
// /dev/full, so every write fails and every sample counts.
func TestInProcessRawDroppedSummed(t *testing.T) {
	agents := []string{testAgent(t, agent.Config{}), testAgent(t, agent.Config{})}
	props := baseProps(map[string]string{"measurementtype": "raw", "measurement.raw.output_file": "/dev/full"})
	r := runCoord(t, runConfig{DB: "basic", Phase: run.Run, Agents: agents, Props: properties.FromMap(props)})
	if r.code != exitcode.OK {
		t.Fatalf("run: %v %v", r.code, r.err)
	}
	m := regexp.MustCompile(`(?m)^\[NOTE\], (measurementtype: (\d+) raw samples dropped \(measured but not written\)), 0$`).FindAllStringSubmatch(r.stdout, -1)
	if len(m) != 1 {
		t.Fatalf("want one dropped-samples note, got %v", m)
	}
	dropped, _ := strconv.ParseInt(m[0][2], 10, 64)
	// Every measured sample: the operations, and one CLEANUP per thread
	// on each agent.
	want := int64(summaryValue(t, r.stdout, "READ", "Total Operations") + summaryValue(t, r.stdout, "UPDATE", "Total Operations") +
		summaryValue(t, r.stdout, "CLEANUP", "Total Operations"))
	if want < 3000 || dropped != want {
		t.Errorf("%d raw samples dropped, want %d (every sample of both agents)", dropped, want)
	}
	rep := readReport(t, r.dir)
	if !slices.Contains(rep.StatusReasons, m[0][1]) {
		t.Errorf("run.json status reasons %q lack the dropped count", rep.StatusReasons)
	}

	// Nothing dropped: the count is still stated, as on a single host.
	props["measurement.raw.output_file"] = filepath.Join(t.TempDir(), "raw.csv")
	r = runCoord(t, runConfig{DB: "basic", Phase: run.Run, Agents: agents, Props: properties.FromMap(props)})
	if r.code != exitcode.OK {
		t.Fatalf("run: %v %v", r.code, r.err)
	}
	if !strings.Contains(r.stdout, "[NOTE], measurementtype: 0 raw samples dropped") {
		t.Errorf("no zero count in:\n%s", r.stdout)
	}
}

// TestOldAgentsSayNoRuntimeOrRawCount: agents that predate the runtime
// samples and the raw count (simulated: they send neither) are named in
// the notes; no zeros are printed for them.
func TestOldAgentsSayNoRuntimeOrRawCount(t *testing.T) {
	tmpl := mustRecord(t, 0, sixOpInterval(rand.New(rand.NewPCG(5, 6)), 1, 500))
	var addrs []string
	for i := 0; i < 2; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		gs := grpc.NewServer(grpc.MaxRecvMsgSize(transport.MaxMessageBytes))
		pb.RegisterAgentServer(gs, &simAgent{idx: i, templates: []*pb.IntervalRecord{tmpl}, intervals: 3, pace: 10 * time.Millisecond})
		go func() { _ = gs.Serve(ln) }()
		t.Cleanup(gs.Stop)
		addrs = append(addrs, ln.Addr().String())
	}
	if tmpl.Runtime != nil {
		t.Fatal("the simulated old agent must send no runtime sample")
	}
	var out strings.Builder
	code, err := runSession(context.Background(), runConfig{DB: "basic", Phase: run.Run, Agents: addrs, Stdout: &out, Stderr: io.Discard,
		Props: properties.FromMap(map[string]string{"recordcount": "1000", "operationcount": "3000", "ycsbctl.trackruntime": "true", "measurementtype": "raw"})})
	if code != exitcode.OK {
		t.Fatalf("run: %v %v\n%s", code, err, out.String())
	}
	s := out.String()
	for _, want := range []string{
		"[NOTE], ycsbctl.trackruntime: no agent sent runtime samples",
		"[NOTE], measurementtype: agent 0 (" + addrs[0] + ") and agent 1 (" + addrs[1] + ") did not report how many raw samples it could not write",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in:\n%s", want, s)
		}
	}
	for _, not := range []string{"[TOTAL_GCs]", "[MAX_GOROUTINES]", "raw samples dropped"} {
		if strings.Contains(s, not) {
			t.Errorf("%q printed for agents that sent nothing:\n%s", not, s)
		}
	}
}

// TestRuntimeSampleWireRoundTrip: the runtime sample and the raw count
// survive the wire, and an absent raw count stays absent (not zero).
func TestRuntimeSampleWireRoundTrip(t *testing.T) {
	rec := &pb.IntervalRecord{AgentIndex: 1, Seq: 7, Runtime: &pb.RuntimeSample{Goroutines: 31, HeapInUseMb: 77, Gcs: 3, GcPauseNs: 4_500_000,
		TotalGcs: 40, TotalGcPauseNs: 90_000_000}}
	b, err := proto.Marshal(&pb.AgentMsg{Msg: &pb.AgentMsg_Interval{Interval: rec}})
	if err != nil {
		t.Fatal(err)
	}
	var back pb.AgentMsg
	if err := proto.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := runtimeFromPB(back.GetInterval().GetRuntime())
	want := run.RuntimeSample{Goroutines: 31, HeapInUseMB: 77, GCs: 3, GCPause: 4500 * time.Microsecond, TotalGCs: 40, TotalGCPause: 90 * time.Millisecond}
	if *got != want {
		t.Errorf("runtime sample %+v, want %+v", *got, want)
	}
	if neg := runtimeFromPB(&pb.RuntimeSample{Goroutines: -1, GcPauseNs: -5}); neg.Goroutines != 0 || neg.GCPause != 0 {
		t.Errorf("negative figures read as %+v", *neg)
	}

	for _, c := range []struct {
		name string
		set  *int64
	}{{"absent", nil}, {"zero", proto.Int64(0)}, {"some", proto.Int64(1234)}} {
		b, err := proto.Marshal(&pb.AgentMsg{Msg: &pb.AgentMsg_Final{Final: &pb.Final{AgentIndex: 1, RawSamplesDropped: c.set}}})
		if err != nil {
			t.Fatal(err)
		}
		var back pb.AgentMsg
		if err := proto.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		f := back.GetFinal()
		if (f.RawSamplesDropped == nil) != (c.set == nil) || (c.set != nil && *f.RawSamplesDropped != *c.set) {
			t.Errorf("%s: raw_samples_dropped came back as %v", c.name, f.RawSamplesDropped)
		}
	}
}

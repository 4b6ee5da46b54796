package wire

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/testutil/fuzzbound"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"
)

// FuzzDecodeHistogram decodes any bytes as an agent's histogram.
func FuzzDecodeHistogram(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 100, 5000} {
		b, _ := EncodeHistogram(randomHistogram(r, n))
		f.Add(b)
	}
	ok := varints(5, -10, 3)
	f.Add(handcraft(3, 1, measurement.HighestNs, 1, ok, int32(len(ok))))
	f.Add(hc(varints(-1 << 40)))
	f.Add(hc([]byte{0x80}))
	f.Add([]byte{0x1c, 0x84, 0x93, 0x14, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		defer fuzzbound.Start(b)()
		var s Sparse
		err := DecodeSparse(b, &s)
		if err != nil {
			return
		}
		// Whatever decodes must be internally consistent and mergeable
		// without error, and re-encode to an equivalent payload.
		var total int64
		prev := int32(-1)
		for i, idx := range s.Index {
			if idx <= prev || idx >= shared.countsLen || s.Count[i] <= 0 {
				t.Fatalf("bad bucket %d count %d", idx, s.Count[i])
			}
			prev = idx
			total += s.Count[i]
		}
		if total != s.Total || total > MaxHistogramTotal {
			t.Fatalf("total %d vs %d", total, s.Total)
		}
		h := measurement.NewHistogram()
		if err := s.AddTo(h); err != nil {
			t.Fatal(err)
		}
		if h.TotalCount() != s.Total {
			t.Fatal("merge lost values")
		}
		b2, err := EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		h2, err := DecodeHistogram(b2)
		if err != nil || !h2.Equals(h) {
			t.Fatalf("re-encode: %v", err)
		}
	})
}

// FuzzDecodeRecord decodes any bytes as an agent's interval record, as
// the coordinator (and a spool's reader) does. Invariants: it never
// panics nor takes long; an accepted record is within the bounds the
// merge relies on, merges into an interval without error, and,
// re-encoded as an agent encodes its intervals, decodes to the same
// figures.
func FuzzDecodeRecord(f *testing.F) {
	r := rand.New(rand.NewPCG(34, 6))
	for _, n := range []int{0, 1, 300} {
		iv := measurement.NewInterval(int64(n+1), 1e18, 1e18+1e9)
		iv.Hist[measurement.SeriesOf(measurement.Read, measurement.Service, false)] = randomHistogram(r, n)
		iv.Returns[measurement.Read][adapters.OK] = int64(n)
		iv.Ops = int64(n)
		rec, err := RecordFromInterval(1, iv)
		if err != nil {
			f.Fatal(err)
		}
		rec.CpuSeconds, rec.LagNs, rec.Final = 0.5, 10, n == 300
		rec.Telemetry = &pb.Telemetry{Samples: 2, Cores: 4, CpuUser: 10, CpuIdle: 80}
		b, _ := proto.Marshal(rec)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<20 {
			return
		}
		defer fuzzbound.Start(b)()
		var rec pb.IntervalRecord
		if proto.Unmarshal(b, &rec) != nil {
			return
		}
		var d Decoded
		if DecodeRecord(&rec, &d) != nil {
			return
		}
		if d.Seq < 1 || d.Seq > MaxSeq || d.EndNs < d.StartNs || d.Ops < 0 || d.Ops > MaxCount || len(d.Series) != len(d.Hist) {
			t.Fatalf("accepted out of bounds: %+v", d)
		}
		iv := measurement.NewInterval(d.Seq, d.StartNs, d.EndNs)
		if err := d.AddTo(iv); err != nil {
			t.Fatalf("accepted, then the merge fails: %v", err)
		}
		for i, s := range d.Series {
			if got := iv.Hist[s].TotalCount(); got != d.Hist[i].Total {
				t.Fatalf("series %s: %d merged of %d", s.Name(), got, d.Hist[i].Total)
			}
		}
		again, err := RecordFromInterval(rec.AgentIndex, iv)
		if err != nil {
			t.Fatalf("re-encoding what was accepted: %v", err)
		}
		var d2 Decoded
		if err := DecodeRecord(again, &d2); err != nil {
			t.Fatalf("re-encoded record refused: %v", err)
		}
		if d2.Ops != d.Ops || d2.Returns != d.Returns || !sameSeries(&d, &d2) {
			t.Fatalf("re-encoded record decodes differently:\n%+v\n%+v", d, d2)
		}
	})
}

// sameSeries compares two decoded records' histograms, series by series
// (an empty one is not sent again).
func sameSeries(a, b *Decoded) bool {
	m := func(d *Decoded) map[measurement.Series]Sparse {
		out := map[measurement.Series]Sparse{}
		for i, s := range d.Series {
			if d.Hist[i].Total > 0 {
				out[s] = Sparse{Index: d.Hist[i].Index, Count: d.Hist[i].Count, Total: d.Hist[i].Total}
			}
		}
		return out
	}
	return reflect.DeepEqual(m(a), m(b))
}

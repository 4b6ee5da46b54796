package wire

import (
	"math/rand/v2"
	"testing"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// Adding decoded histograms through Dense gives exactly the histogram of
// all values.
func TestDenseMergeIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	want := measurement.NewHistogram()
	d := NewDense()
	var sp Sparse
	for part := 0; part < 5; part++ {
		h := measurement.NewHistogram()
		for i := 0; i < 3000; i++ {
			v := int64(r.ExpFloat64()*float64(50_000*(part+1))) + 1
			_ = h.RecordValue(v)
			_ = want.RecordValue(v)
		}
		b, err := EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := DecodeSparse(b, &sp); err != nil {
			t.Fatal(err)
		}
		d.Add(&sp)
	}
	got := measurement.NewHistogram()
	if err := d.AddTo(got); err != nil {
		t.Fatal(err)
	}
	for _, q := range []float64{0, 50, 90, 99, 99.9, 100} {
		if g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q); g != w {
			t.Fatalf("p%g: %d != %d", q, g, w)
		}
	}
	if got.TotalCount() != want.TotalCount() || got.Max() != want.Max() || got.Min() != want.Min() {
		t.Fatalf("count/min/max differ")
	}
	for _, c := range d {
		if c != 0 {
			t.Fatal("AddTo must clear the counts")
		}
	}
}

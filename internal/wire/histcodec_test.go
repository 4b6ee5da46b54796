package wire

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

func randomHistogram(r *rand.Rand, n int) *hdrhistogram.Histogram {
	h := measurement.NewHistogram()
	for i := 0; i < n; i++ {
		// Log-uniform from 1 ns to about 1 h, so every bucket range is hit.
		v := int64(math.Exp(r.Float64() * math.Log(float64(measurement.HighestNs))))
		if v < 1 {
			v = 1
		}
		if err := h.RecordValue(v); err != nil {
			panic(err)
		}
	}
	return h
}

func TestGeometryMatchesLibrary(t *testing.T) {
	if got, want := int(shared.countsLen), len(measurement.NewHistogram().Export().Counts); got != want {
		t.Fatalf("countsLen = %d, library has %d", got, want)
	}
	// valueAt must invert the library's index for every bucket: record the
	// value at index i and the library must put it at index i.
	h := measurement.NewHistogram()
	for i := int32(0); i < shared.countsLen; i += 7 {
		v := shared.valueAt(i)
		if v > measurement.HighestNs {
			break
		}
		h.Reset()
		if err := h.RecordValue(v); err != nil {
			t.Fatalf("index %d value %d: %v", i, v, err)
		}
		c := h.Export().Counts
		if c[i] != 1 {
			t.Fatalf("value %d (from index %d) landed elsewhere", v, i)
		}
	}
}

func TestRoundTripAndLibraryCompat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 10, 1000, 50000} {
		h := randomHistogram(r, n)
		b, err := EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeHistogram(b)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !got.Equals(h) {
			t.Fatalf("n=%d: round trip differs", n)
		}
		// Our bytes, base64'd, must be what the library (and so Java and
		// Python tools reading .hlog lines) decodes.
		lib, err := hdrhistogram.Decode([]byte(base64.StdEncoding.EncodeToString(b)))
		if err != nil {
			t.Fatalf("n=%d: library cannot decode our bytes: %v", n, err)
		}
		if !lib.Equals(h) {
			t.Fatalf("n=%d: library decodes different counts", n)
		}
		// And the library's encoding must decode with ours.
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.StdEncoding.DecodeString(string(enc))
		got2, err := DecodeHistogram(raw)
		if err != nil {
			t.Fatalf("n=%d: cannot decode library bytes: %v", n, err)
		}
		if !got2.Equals(h) {
			t.Fatalf("n=%d: library bytes decode differently", n)
		}
		var s Sparse
		if err := DecodeSparse(b, &s); err != nil {
			t.Fatal(err)
		}
		if s.Total != h.TotalCount() || s.Max() != h.Max() {
			t.Fatalf("n=%d: sparse total/max %d/%d, histogram %d/%d", n, s.Total, s.Max(), h.TotalCount(), h.Max())
		}
	}
}

func TestEncodeRejectsOtherGeometry(t *testing.T) {
	if _, err := EncodeHistogram(hdrhistogram.New(1, 1000, 2)); err == nil {
		t.Fatal("foreign geometry accepted")
	}
}

// handcraft builds a V2 compressed payload with an arbitrary header.
func handcraft(sig int32, lowest, highest int64, ratio float64, payload []byte, declared int32) []byte {
	var raw bytes.Buffer
	w := func(v any) { _ = binary.Write(&raw, binary.BigEndian, v) }
	w(int32(v2EncodingCookie))
	w(declared)
	w(int32(0))
	w(sig)
	w(lowest)
	w(highest)
	w(ratio)
	raw.Write(payload)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	// Into a bytes.Buffer these cannot fail; a fixture that was cut
	// short would make the decoder tests pass for the wrong reason.
	if _, err := zw.Write(raw.Bytes()); err != nil {
		panic(err)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	out := make([]byte, 8, 8+z.Len())
	binary.BigEndian.PutUint32(out, v2CompressedCookie)
	binary.BigEndian.PutUint32(out[4:], uint32(z.Len()))
	return append(out, z.Bytes()...)
}

func varints(vs ...int64) []byte {
	var b []byte
	var buf [9]byte
	for _, v := range vs {
		b = append(b, buf[:putZigZag(buf[:], v)]...)
	}
	return b
}

// hc handcrafts a payload with the shared geometry and a correct length.
func hc(payload []byte) []byte {
	return handcraft(3, 1, measurement.HighestNs, 1, payload, int32(len(payload)))
}

func TestDecodeRejects(t *testing.T) {
	ok := varints(5, -10, 3)
	cases := map[string][]byte{
		"empty":          nil,
		"short":          {1, 2, 3},
		"bad cookie":     append([]byte{0, 0, 0, 0, 0, 0, 0, 0}, 1),
		"other digits":   handcraft(2, 1, measurement.HighestNs, 1, ok, int32(len(ok))),
		"other lowest":   handcraft(3, 1000, measurement.HighestNs, 1, ok, int32(len(ok))),
		"other highest":  handcraft(3, 1, 1<<40, 1, ok, int32(len(ok))),
		"ratio":          handcraft(3, 1, measurement.HighestNs, 2, ok, int32(len(ok))),
		"negative len":   handcraft(3, 1, measurement.HighestNs, 1, ok, -1),
		"len too long":   handcraft(3, 1, measurement.HighestNs, 1, ok, int32(len(ok)+5)),
		"len too short":  handcraft(3, 1, measurement.HighestNs, 1, ok, int32(len(ok)-1)),
		"huge run":       hc(varints(-1 << 40)),
		"index overflow": hc(varints(-int64(shared.countsLen), 1)),
		"total too big":  hc(varints(MaxHistogramTotal, 1)),
		"min int run":    hc(varints(math.MinInt64)),
		"truncated var":  hc([]byte{0x80}),
		"oversize input": make([]byte, MaxHistogramBytes+1),
	}
	for name, b := range cases {
		var s Sparse
		err := DecodeSparse(b, &s)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: got %v, want a DecodeError", name, err)
		}
		if len(s.Index) != 0 || s.Total != 0 {
			t.Errorf("%s: partial result left in dst", name)
		}
	}
	// The well-formed handcrafted one decodes: 5 at index 0, 3 at 11.
	var s Sparse
	if err := DecodeSparse(handcraft(3, 1, measurement.HighestNs, 1, ok, int32(len(ok))), &s); err != nil {
		t.Fatal(err)
	}
	if s.Total != 8 || len(s.Index) != 2 || s.Index[1] != 11 {
		t.Fatalf("decoded %+v", s)
	}
	// Trailing garbage after the zlib stream is refused (length must match).
	b := append(handcraft(3, 1, measurement.HighestNs, 1, ok, int32(len(ok))), 0)
	if err := DecodeSparse(b, &s); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func BenchmarkEncodeHistogram(b *testing.B) {
	h := randomHistogram(rand.New(rand.NewPCG(5, 6)), 100000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := EncodeHistogram(h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeSparse(b *testing.B) {
	h := randomHistogram(rand.New(rand.NewPCG(5, 6)), 100000)
	enc, _ := EncodeHistogram(h)
	var s Sparse
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := DecodeSparse(enc, &s); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSparseStatsMatchLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	ps := []float64{1, 50, 90, 95, 99, 99.9, 99.99, 100}
	for _, n := range []int{1, 2, 7, 1000, 30000} {
		h := randomHistogram(r, n)
		b, _ := EncodeHistogram(h)
		var s Sparse
		if err := DecodeSparse(b, &s); err != nil {
			t.Fatal(err)
		}
		if s.Min() != h.Min() || s.Max() != h.Max() || s.Mean() != h.Mean() {
			t.Fatalf("n=%d: min/max/mean %d/%d/%v vs %d/%d/%v", n, s.Min(), s.Max(), s.Mean(), h.Min(), h.Max(), h.Mean())
		}
		want := h.ValueAtPercentilesSlice(ps)
		got := s.Percentiles(ps)
		for i := range ps {
			if got[i] != want[i] {
				t.Fatalf("n=%d p%v: %d vs %d", n, ps[i], got[i], want[i])
			}
		}
	}
}

func TestSparseAddEqualsMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	var acc, spare Sparse
	dense := measurement.NewHistogram()
	for i := 0; i < 20; i++ {
		h := randomHistogram(r, r.IntN(3000))
		dense.Merge(h)
		b, _ := EncodeHistogram(h)
		var s Sparse
		if err := DecodeSparse(b, &s); err != nil {
			t.Fatal(err)
		}
		acc.Add(&s, &spare)
	}
	got := measurement.NewHistogram()
	if err := acc.AddTo(got); err != nil {
		t.Fatal(err)
	}
	if !got.Equals(dense) || acc.Total != dense.TotalCount() {
		t.Fatal("sparse accumulation differs from a dense merge")
	}
}

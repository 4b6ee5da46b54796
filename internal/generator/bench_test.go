package generator

import "testing"

var benchSink int64

func BenchmarkRand(b *testing.B) {
	r := NewRand(1)
	var s uint64
	b.ReportAllocs()
	for b.Loop() {
		s += r.Uint64()
	}
	benchSink = int64(s)
}

func BenchmarkRandInt64n(b *testing.B) {
	r := NewRand(1)
	var s int64
	b.ReportAllocs()
	for b.Loop() {
		s += r.Int64n(1000003)
	}
	benchSink = s
}

func BenchmarkFillRandomValue1000(b *testing.B) {
	r := NewRand(1)
	buf := make([]byte, 1000)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		FillRandomValue(r, buf)
	}
}

func BenchmarkScrambledZipfianNext(b *testing.B) {
	r := NewRand(1)
	g := NewScrambledZipfian(0, 999999)
	var s int64
	b.ReportAllocs()
	for b.Loop() {
		s += g.Next(r)
	}
	benchSink = s
}

func BenchmarkZipfianNext(b *testing.B) {
	r := NewRand(1)
	g := NewZipfian(0, 999999, ZipfianConstant)
	var s int64
	b.ReportAllocs()
	for b.Loop() {
		s += g.Next(r)
	}
	benchSink = s
}

func BenchmarkUniformNext(b *testing.B) {
	r := NewRand(1)
	g := NewUniform(0, 999999)
	var s int64
	b.ReportAllocs()
	for b.Loop() {
		s += g.Next(r)
	}
	benchSink = s
}

func BenchmarkAppendKey(b *testing.B) {
	buf := make([]byte, 0, 64)
	var k int64
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendKey(buf[:0], "user", k, 1, true)
		k++
	}
}

func BenchmarkAppendDeterministicValue100(b *testing.B) {
	key := []byte("user6284781860667377211")
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendDeterministicValue(buf[:0], key, "field0", 100)
	}
}

func BenchmarkAcknowledgedCounter(b *testing.B) {
	// Single goroutine on purpose: with tight parallel loops on an
	// oversubscribed machine one descheduled goroutine can leave more than
	// 2^20 keys in flight, a genuine (upstream-identical) window overflow.
	c := NewAcknowledgedCounter(0)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Acknowledge(c.Next(nil)); err != nil {
			b.Fatal(err)
		}
	}
}

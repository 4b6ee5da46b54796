package generator

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refFillRandomValue is the byte-by-byte definition FillRandomValue must
// match: ints are taken from Uint64 draws low half first, in groups of four
// (one 24-byte block), each giving YCSB's six bytes.
func refFillRandomValue(r *Rand, dst []byte) {
	masks := [6]uint32{31, 63, 95, 31, 63, 95}
	for off := 0; off < len(dst); off += 24 {
		x, y := r.Uint64(), r.Uint64()
		ints := [4]uint32{uint32(x), uint32(x >> 32), uint32(y), uint32(y >> 32)}
		for i := 0; i < 24 && off+i < len(dst); i++ {
			b := ints[i/6]
			k := i % 6
			dst[off+i] = byte(0x20 + (b>>(5*k))&masks[k])
		}
	}
}

func TestFillRandomValueMatchesReference(t *testing.T) {
	sizes := []int{0, 1, 5, 6, 7, 23, 24, 25, 47, 48, 100, 1000, 1001}
	for _, n := range sizes {
		got, want := make([]byte, n), make([]byte, n)
		a, b := NewRand(uint64(n)), NewRand(uint64(n))
		FillRandomValue(a, got)
		refFillRandomValue(b, want)
		require.Equal(t, want, got, "size %d", n)
		require.Equal(t, b.Uint64(), a.Uint64(), "size %d: same number of draws", n)
	}
}

func TestFillRandomValueByteSets(t *testing.T) {
	// Each position within a 6-byte group has upstream's mask, so its byte
	// set is exactly {0x20 + (v & mask)}; with many draws all must appear.
	masks := [6]int{31, 63, 95, 31, 63, 95}
	var seen [6][256]bool
	buf := make([]byte, 6*1000)
	r := NewRand(13)
	for i := 0; i < 20; i++ {
		FillRandomValue(r, buf)
		for j, c := range buf {
			seen[j%6][c] = true
		}
	}
	for k, m := range masks {
		for c := 0; c < 256; c++ {
			want := c >= 0x20 && c-0x20 <= 127 && (c-0x20)&^m == 0
			require.Equal(t, want, seen[k][c], "position %d byte %#x", k, c)
		}
	}
}

// refDeterministicValue recomputes Java's String.hashCode over the whole
// string every round, exactly like upstream's StringBuilder loop.
func refDeterministicValue(key, field string, size int) string {
	s := key + ":" + field
	for len(s) < size {
		s += ":"
		var h int32
		for i := 0; i < len(s); i++ {
			h = 31*h + int32(s[i])
		}
		s += strconv.Itoa(int(h))
	}
	return s[:size]
}

func TestAppendDeterministicValue(t *testing.T) {
	key := []byte("user6284781860667377211")
	for _, size := range []int{1, 5, 29, 30, 31, 100, 101, 257, 1000} {
		want := refDeterministicValue(string(key), "field3", size)
		require.Equal(t, want, string(AppendDeterministicValue(nil, key, "field3", size)), "size %d", size)
		// Appending after existing content must not hash that content.
		got := AppendDeterministicValue([]byte("prefix"), key, "field3", size)
		require.Equal(t, "prefix"+want, string(got), "size %d", size)
	}
	require.Empty(t, AppendDeterministicValue(nil, key, "field0", 0))
	require.Equal(t, "x", string(AppendDeterministicValue([]byte("x"), key, "field0", -1)))
}

func TestAppendKey(t *testing.T) {
	require.Equal(t, "user5", string(AppendKey(nil, "user", 5, 1, false)))
	require.Equal(t, "user00042", string(AppendKey(nil, "user", 42, 5, false)))
	require.Equal(t, "user123456", string(AppendKey(nil, "user", 123456, 3, false)))
	require.Equal(t, "k0006284781860667377211", string(AppendKey(nil, "k", 0, 22, true)))
	// Like Java, padding goes before a minus sign.
	require.Equal(t, "user00-5", string(AppendKey(nil, "user", -5, 4, false)))
	require.Equal(t, "user-9223372036854775808", string(AppendKey(nil, "user", math.MinInt64, 1, false)))
	require.Equal(t, "a,user1", string(AppendKey([]byte("a,"), "user", 1, 0, false)))
}

func TestHotPathZeroAlloc(t *testing.T) {
	r := NewRand(14)
	val := make([]byte, 1000)
	keyBuf := make([]byte, 0, 64)
	detBuf := make([]byte, 0, 1100)
	key := []byte("user6284781860667377211")
	sz := NewScrambledZipfian(0, 999999)
	z := NewZipfian(0, 999, ZipfianConstant)
	u := NewUniform(0, 1000)
	hs := NewHotspot(0, 1000, 0.2, 0.8)
	ack := NewAcknowledgedCounter(0)
	d := NewDiscrete()
	d.Add(0.95, 0)
	d.Add(0.05, 1)
	h, err := NewHistogramFromReader(bytes.NewReader([]byte("BlockSize 1\n0 1\n1 2\n")))
	require.NoError(t, err)
	var sink int64
	checks := map[string]func(){
		"FillRandomValue":          func() { FillRandomValue(r, val) },
		"FillRandomValueTail":      func() { FillRandomValue(r, val[:17]) },
		"AppendKey":                func() { keyBuf = AppendKey(keyBuf[:0], "user", sink, 1, true) },
		"AppendDeterministicValue": func() { detBuf = AppendDeterministicValue(detBuf[:0], key, "field0", 1000) },
		"ScrambledZipfian":         func() { sink += sz.Next(r) },
		"Zipfian":                  func() { sink += z.Next(r) },
		"Uniform":                  func() { sink += u.Next(r) },
		"Hotspot":                  func() { sink += hs.Next(r) },
		"Discrete":                 func() { sink += int64(d.Next(r)) },
		"Histogram":                func() { sink += h.Next(r) },
		"Acknowledge":              func() { _ = ack.Acknowledge(ack.Next(r)) },
		"Rand":                     func() { sink += int64(r.Uint64()) + r.Int64n(77) + int64(r.Float64()) },
	}
	for name, f := range checks {
		require.Zero(t, testing.AllocsPerRun(200, f), name)
	}
}

func TestAppendKeyMatchesStrconv(t *testing.T) {
	vals := []int64{0, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for p := int64(1); p <= 1e18; p *= 10 {
		vals = append(vals, p-1, p, p+1, -p, -p+1)
	}
	r := NewRand(15)
	for i := 0; i < 2000; i++ {
		vals = append(vals, int64(r.Uint64())>>(r.Uint64()%64))
	}
	for _, v := range vals {
		s := strconv.FormatInt(v, 10)
		require.Equal(t, "user"+s, string(AppendKey(nil, "user", v, 0, false)), "v=%d", v)
		pad := 21 - len(s)
		want := "u" + strings.Repeat("0", pad) + s
		require.Equal(t, want, string(AppendKey(nil, "u", v, 21, false)), "v=%d", v)
	}
}

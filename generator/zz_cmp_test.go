package generator

import (
	"encoding/binary"
	"strconv"
	"testing"
)

func oldFill24(r *Rand, d *[24]byte) {
	x, y := r.Uint64(), r.Uint64()
	v1, v2 := spread6(uint32(x)), spread6(uint32(x>>32))
	v3, v4 := spread6(uint32(y)), spread6(uint32(y>>32))
	binary.LittleEndian.PutUint64(d[0:8], (v1|v2<<48)+offset8)
	binary.LittleEndian.PutUint64(d[8:16], (v2>>16|v3<<32)+offset8)
	binary.LittleEndian.PutUint64(d[16:24], (v3>>32|v4<<16)+offset8)
}

func oldFill(r *Rand, dst []byte) {
	for len(dst) >= 24 {
		oldFill24(r, (*[24]byte)(dst))
		dst = dst[24:]
	}
}

func BenchmarkZZOld(b *testing.B) {
	r := NewRand(1)
	buf := make([]byte, 1000)
	for b.Loop() {
		oldFill(r, buf)
	}
}
func BenchmarkZZNew(b *testing.B) {
	r := NewRand(1)
	buf := make([]byte, 1000)
	for b.Loop() {
		FillRandomValue(r, buf)
	}
}
func BenchmarkZZRngOnly(b *testing.B) {
	r := NewRand(1)
	var s uint64
	for b.Loop() {
		for i := 0; i < 84; i++ {
			s += r.Uint64()
		}
	}
	benchSink = int64(s)
}

const offset8 = 0x2020202020202020

func spread6(b uint32) uint64 {
	x := uint64(b)
	return x&31 |
		(x<<3)&(63<<8) |
		(x<<6)&(95<<16) |
		(x<<9)&(31<<24) |
		(x<<12)&(63<<32) |
		(x<<15)&(95<<40)
}

func oldAppendKey(dst []byte, prefix string, keynum int64, zeroPadding int, hashed bool) []byte {
	if hashed {
		keynum = FNVHash64(keynum)
	}
	var buf [20]byte
	num := strconv.AppendInt(buf[:0], keynum, 10)
	dst = append(dst, prefix...)
	for i := len(num); i < zeroPadding; i++ {
		dst = append(dst, '0')
	}
	return append(dst, num...)
}

func BenchmarkZZOldKey(b *testing.B) {
	buf := make([]byte, 0, 64)
	var k int64
	for b.Loop() {
		buf = oldAppendKey(buf[:0], "user", k, 1, true)
		k++
	}
}

func BenchmarkZZNewKey(b *testing.B) {
	buf := make([]byte, 0, 64)
	var k int64
	for b.Loop() {
		buf = AppendKey(buf[:0], "user", k, 1, true)
		k++
	}
}

func BenchmarkZZHashOnly(b *testing.B) {
	var k, s int64
	for b.Loop() {
		s += FNVHash64(k)
		k++
	}
	benchSink = s
}

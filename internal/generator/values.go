package generator

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// YCSB RandomByteIterator turns each 32-bit random int b into 6 bytes:
// 0x20 + (b >> 0,5,10,15,20,25) masked with 31,63,95,31,63,95. Bytes 0-1
// depend only on bits 0-10, bytes 2-3 on bits 10-19 and bytes 4-5 on bits
// 20-31, so three small tables (14 KiB, L1-resident) map each slice to two
// finished bytes. This measured ~20% faster than computing the six
// shift-and-mask fields per int, and FillRandomValue is on the hot path.
var (
	valueLUT01 [1 << 11]uint16
	valueLUT23 [1 << 10]uint16
	valueLUT45 [1 << 12]uint16
)

func init() {
	for i := range valueLUT01 {
		valueLUT01[i] = uint16(0x20+i&31) | uint16(0x20+(i>>5)&63)<<8
	}
	for i := range valueLUT23 {
		valueLUT23[i] = uint16(0x20+i&95) | uint16(0x20+(i>>5)&31)<<8
	}
	for i := range valueLUT45 {
		valueLUT45[i] = uint16(0x20+i&63) | uint16(0x20+(i>>5)&95)<<8
	}
}

// value6 returns the 6 value bytes of one random int, packed little-endian
// (first byte lowest). The index masks also let the compiler drop bounds
// checks.
func value6(b uint32) uint64 {
	return uint64(valueLUT01[b&(1<<11-1)]) |
		uint64(valueLUT23[(b>>10)&(1<<10-1)])<<16 |
		uint64(valueLUT45[(b>>20)&(1<<12-1)])<<32
}

// wyrand constants, shared with Rand.Uint64 so FillRandomValue can keep the
// generator state in a register and still stay in step with it.
const (
	wyInc = 0xa0761d6478bd642f
	wyXor = 0xe7037ed1a0b428db
)

// put24 stores the 24 bytes of four ints (x low, x high, y low, y high) as
// three 8-byte writes.
func put24(dst []byte, x, y uint64) {
	v1, v2 := value6(uint32(x)), value6(uint32(x>>32))
	v3, v4 := value6(uint32(y)), value6(uint32(y>>32))
	binary.LittleEndian.PutUint64(dst[0:8], v1|v2<<48)
	binary.LittleEndian.PutUint64(dst[8:16], v2>>16|v3<<32)
	binary.LittleEndian.PutUint64(dst[16:24], v3>>32|v4<<16)
}

// FillRandomValue fills dst with YCSB-style random value bytes (0x20..0x7F,
// with upstream's non-uniform per-position masks). Every 32-bit random int
// yields 6 bytes; ints come from Uint64 draws, low half first, four ints per
// 24-byte block (a short last block still consumes two draws). It does not
// allocate.
func FillRandomValue(r *Rand, dst []byte) {
	// Rand.Uint64 is inlined by hand with the state in a local: through the
	// pointer the compiler reloads and stores it on every draw.
	s := r.state
	for len(dst) >= 24 {
		s += wyInc
		hi, lo := bits.Mul64(s, s^wyXor)
		x := hi ^ lo
		s += wyInc
		hi, lo = bits.Mul64(s, s^wyXor)
		y := hi ^ lo
		// Same as put24, written out because put24 is too big to inline.
		v1, v2 := value6(uint32(x)), value6(uint32(x>>32))
		v3, v4 := value6(uint32(y)), value6(uint32(y>>32))
		binary.LittleEndian.PutUint64(dst[0:8], v1|v2<<48)
		binary.LittleEndian.PutUint64(dst[8:16], v2>>16|v3<<32)
		binary.LittleEndian.PutUint64(dst[16:24], v3>>32|v4<<16)
		dst = dst[24:]
	}
	r.state = s
	if len(dst) > 0 {
		var tail [24]byte
		x := r.Uint64()
		put24(tail[:], x, r.Uint64())
		copy(dst, tail[:])
	}
}

// AppendDeterministicValue appends the dataintegrity value of a field: start
// with "<key>:<fieldName>", then while shorter than size append ':' and the
// decimal Java String.hashCode() of everything so far (':' included), and
// truncate to size. The hash is kept incrementally, so the cost is linear and
// nothing is allocated when dst has room. Bytes stand in for Java chars,
// which is exact for ASCII keys and field names; others take
// appendDeterministicUTF16, which counts and hashes Java's chars.
func AppendDeterministicValue(dst []byte, key []byte, fieldName string, size int) []byte {
	if size <= 0 {
		return dst
	}
	if !isASCII(key) || !isASCII(fieldName) {
		return appendDeterministicUTF16(dst, key, fieldName, size)
	}
	start := len(dst)
	dst = append(dst, key...)
	dst = append(dst, ':')
	dst = append(dst, fieldName...)
	var h int32
	for _, c := range dst[start:] {
		h = 31*h + int32(c)
	}
	for len(dst)-start < size {
		dst = append(dst, ':')
		h = 31*h + ':'
		from := len(dst)
		dst = strconv.AppendInt(dst, int64(h), 10)
		for _, c := range dst[from:] {
			h = 31*h + int32(c)
		}
	}
	return dst[:start+size]
}

func isASCII[T []byte | string](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendDeterministicUTF16 is AppendDeterministicValue for a key or field
// name beyond ASCII: Java's String holds them in UTF-16, so the hash runs
// over UTF-16 units and size counts them (the value then holds more than
// size bytes in UTF-8, as Java's does), and a truncation through a
// surrogate pair leaves the lone high surrogate Java's UTF-8 encoder
// writes as "?". Invalid UTF-8 counts as U+FFFD, as Java decodes it.
func appendDeterministicUTF16(dst []byte, key []byte, fieldName string, size int) []byte {
	start := len(dst)
	dst = append(dst, key...)
	dst = append(dst, ':')
	dst = append(dst, fieldName...)
	prefixEnd := len(dst)
	var h int32
	units := 0
	for i := start; i < prefixEnd; {
		r, n := utf8.DecodeRune(dst[i:])
		i += n
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			h = 31*(31*h+r1) + r2
			units += 2
			continue
		}
		h = 31*h + r
		units++
	}
	for units < size {
		dst = append(dst, ':')
		h = 31*h + ':'
		from := len(dst)
		dst = strconv.AppendInt(dst, int64(h), 10)
		for _, c := range dst[from:] {
			h = 31*h + int32(c)
		}
		units += 1 + len(dst) - from
	}
	if units == size {
		return dst
	}
	// Cut to size units: within the ASCII tail it is bytes; within the
	// key and field name, runes.
	prefixUnits := units - (len(dst) - prefixEnd)
	if size >= prefixUnits {
		return dst[:prefixEnd+size-prefixUnits]
	}
	n := 0
	for i := start; i < prefixEnd; {
		r, w := utf8.DecodeRune(dst[i:])
		u := utf16.RuneLen(r)
		switch {
		case n+u <= size:
			n += u
			i += w
			continue
		case n < size:
			// Half a surrogate pair.
			dst[i] = '?'
			i++
		}
		return dst[:i]
	}
	return dst
}

// AppendKey appends YCSB's key name (CoreWorkload.buildKeyName): if hashed,
// keynum is replaced by FNVHash64(keynum); then prefix, '0' padding up to
// zeroPadding characters, and the decimal keynum. Like upstream, a negative
// number keeps its '-' after the padding. It does not allocate when dst has
// room.
func AppendKey(dst []byte, prefix string, keynum int64, zeroPadding int, hashed bool) []byte {
	if hashed {
		keynum = FNVHash64(keynum)
	}
	dst = append(dst, prefix...)
	u := uint64(keynum)
	width := 0
	if keynum < 0 {
		u = -u
		width = 1
	}
	width += decimalLen(u)
	for i := width; i < zeroPadding; i++ {
		dst = append(dst, '0')
	}
	if keynum < 0 {
		dst = append(dst, '-')
	}
	// Grow once and write the digits backwards, four per 64-bit division
	// (the two pairs inside are independent): this is on the per-operation
	// hot path and avoids strconv's scratch buffer and copy.
	dst = append(dst, digitsPad[:decimalLen(u)]...)
	i := len(dst)
	for u >= 10000 {
		q := u / 10000
		rem := uint32(u - q*10000)
		hi, lo := rem/100*2, rem%100*2
		dst[i-1], dst[i-2] = digitPairs[lo+1], digitPairs[lo]
		dst[i-3], dst[i-4] = digitPairs[hi+1], digitPairs[hi]
		i -= 4
		u = q
	}
	v := uint32(u)
	if v >= 100 {
		lo := v % 100 * 2
		dst[i-1], dst[i-2] = digitPairs[lo+1], digitPairs[lo]
		i -= 2
		v /= 100
	}
	if v >= 10 {
		dst[i-1], dst[i-2] = digitPairs[v*2+1], digitPairs[v*2]
	} else {
		dst[i-1] = byte('0' + v)
	}
	return dst
}

const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// digitsPad is only a source of bytes to grow a slice by up to 20 places.
const digitsPad = "00000000000000000000"

// pow10tab[i] = 10^i.
var pow10tab = [20]uint64{
	1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// decimalLen returns the number of decimal digits of u (1 for 0). The bit
// length times log10(2) (1233/4096) is the digit count or one less; one table
// comparison settles it, avoiding a division per digit.
func decimalLen(u uint64) int {
	n := bits.Len64(u) * 1233 >> 12
	if n < len(pow10tab) && u >= pow10tab[n] {
		n++
	}
	return max(n, 1)
}

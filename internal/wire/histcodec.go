package wire

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
)

// Histograms travel as HdrHistogram V2 compressed encodings — the same
// bytes a .hlog line carries in base64, so any HdrHistogram implementation
// can read them — but as raw bytes: gRPC carries binary, and base64 would
// cost a third more on every interval.
//
// The codec is ours rather than the library's Encode/Decode for two
// reasons. Decoding: payloads come from the network, so we enforce our own
// limits (size, the one shared geometry, totals) before allocating, and we
// decode into a sparse form so that the coordinator adds only non-empty
// buckets into its merge instead of materialising a 270 KB dense histogram
// per agent and series. Encoding: the library produces base64 and writes
// each varint through encoding/binary's reflection path.

// Limits on untrusted histogram payloads.
const (
	// MaxHistogramBytes caps one encoded histogram. A worst-case honest
	// payload (every bucket of the shared geometry non-zero with large
	// counts) compresses far below this.
	MaxHistogramBytes = 1 << 20
	// MaxHistogramTotal caps the values in one interval histogram of one
	// agent: about 10^12, far above any real interval, yet small enough
	// that summing 10^4 agents over 10^3 intervals cannot overflow int64.
	MaxHistogramTotal = int64(1) << 40
)

const (
	v2EncodingCookieBase   = 0x1c849303
	v2CompressedCookieBase = 0x1c849304
	// 0x10 encodes an 8-byte word size, as Java and hdrhistogram-go write.
	v2EncodingCookie   = v2EncodingCookieBase | 0x10
	v2CompressedCookie = v2CompressedCookieBase | 0x10
	v2HeaderSize       = 40
)

// geometry mirrors HdrHistogram's bucket layout for the shared geometry
// (measurement.LowestNs .. measurement.HighestNs at measurement.SigFigs).
type geometry struct {
	unitMagnitude     uint
	subHalfMagnitude  uint
	subBucketHalf     int32
	countsLen         int32
	maxPayloadVarints int64
}

var shared = newGeometry(measurement.LowestNs, measurement.HighestNs, measurement.SigFigs)

func newGeometry(lowest, highest int64, sig int) geometry {
	largestSingleUnit := 2 * math.Pow10(sig)
	subCountMag := int(math.Ceil(math.Log2(largestSingleUnit)))
	subHalfMag := subCountMag - 1
	if subHalfMag < 0 {
		subHalfMag = 0
	}
	unitMag := int(math.Floor(math.Log2(float64(lowest))))
	subCount := int64(1) << (subHalfMag + 1)
	smallestUntrackable := subCount << unitMag
	buckets := int32(1)
	for smallestUntrackable <= highest {
		if smallestUntrackable > math.MaxInt64/2 {
			buckets++
			break
		}
		smallestUntrackable <<= 1
		buckets++
	}
	half := int32(subCount / 2)
	g := geometry{unitMagnitude: uint(unitMag), subHalfMagnitude: uint(subHalfMag), subBucketHalf: half, countsLen: (buckets + 1) * half}
	g.maxPayloadVarints = int64(g.countsLen)
	return g
}

// valueAt returns the lowest value of counts index idx; recording it lands
// in the same bucket.
func (g geometry) valueAt(idx int32) int64 {
	bucket := int32(idx>>g.subHalfMagnitude) - 1
	sub := idx&(g.subBucketHalf-1) + g.subBucketHalf
	if bucket < 0 {
		sub -= g.subBucketHalf
		bucket = 0
	}
	return int64(sub) << (uint(bucket) + g.unitMagnitude)
}

// Sparse is a decoded histogram: the non-empty buckets in index order.
// Reuse one across decodes to avoid allocation.
type Sparse struct {
	Index []int32
	Count []int64
	Total int64
}

// Reset empties s, keeping its storage.
func (s *Sparse) Reset() {
	s.Index = s.Index[:0]
	s.Count = s.Count[:0]
	s.Total = 0
}

// AddTo adds every bucket of s into h, which must have the shared geometry.
// Values land in exactly the buckets they came from, so sums are exact.
func (s *Sparse) AddTo(h *hdrhistogram.Histogram) error {
	for i, idx := range s.Index {
		if err := h.RecordValues(shared.valueAt(idx), s.Count[i]); err != nil {
			return fmt.Errorf("merge histogram: %w", err)
		}
	}
	return nil
}

// Max returns the highest value recorded, at bucket resolution (the
// highest value equivalent to the top non-empty bucket), or 0.
func (s *Sparse) Max() int64 {
	if len(s.Index) == 0 {
		return 0
	}
	idx := s.Index[len(s.Index)-1]
	v := shared.valueAt(idx)
	// The bucket's width is 2^(bucket+unit): the next index's value minus
	// this one's, except across a bucket boundary; compute it directly.
	bucket := int32(idx>>shared.subHalfMagnitude) - 1
	if bucket < 0 {
		bucket = 0
	}
	return v + int64(1)<<(uint(bucket)+shared.unitMagnitude) - 1
}

var zlibWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(io.Discard, zlib.DefaultCompression)
	return w
}}

type encodeBuf struct {
	raw bytes.Buffer
	out bytes.Buffer
}

var encodeBufs = sync.Pool{New: func() any { return new(encodeBuf) }}

// EncodeHistogram returns the V2 compressed encoding of h (raw bytes, not
// base64). h must have the shared geometry.
func EncodeHistogram(h *hdrhistogram.Histogram) ([]byte, error) {
	if h.LowestTrackableValue() != measurement.LowestNs || h.HighestTrackableValue() != measurement.HighestNs || h.SignificantFigures() != measurement.SigFigs {
		return nil, errors.New("encode histogram: not the shared geometry")
	}
	return encodeCounts(h.Export().Counts)
}

func encodeCounts(counts []int64) ([]byte, error) {
	eb := encodeBufs.Get().(*encodeBuf)
	defer encodeBufs.Put(eb)
	eb.raw.Reset()
	eb.out.Reset()

	last := len(counts) - 1
	for last >= 0 && counts[last] == 0 {
		last--
	}
	var hdr [v2HeaderSize]byte
	eb.raw.Write(hdr[:]) // placeholder, filled once the payload length is known
	var vb [9]byte
	for i := 0; i <= last; {
		c := counts[i]
		if c < 0 {
			return nil, fmt.Errorf("encode histogram: negative count at index %d", i)
		}
		if c == 0 {
			j := i + 1
			for j <= last && counts[j] == 0 {
				j++
			}
			if n := j - i; n > 1 {
				eb.raw.Write(vb[:putZigZag(vb[:], -int64(n))])
				i = j
				continue
			}
		}
		eb.raw.Write(vb[:putZigZag(vb[:], c)])
		i++
	}
	raw := eb.raw.Bytes()
	binary.BigEndian.PutUint32(raw[0:], v2EncodingCookie)
	binary.BigEndian.PutUint32(raw[4:], uint32(len(raw)-v2HeaderSize))
	binary.BigEndian.PutUint32(raw[8:], 0) // normalizingIndexOffset: counts are unrotated
	binary.BigEndian.PutUint32(raw[12:], measurement.SigFigs)
	binary.BigEndian.PutUint64(raw[16:], measurement.LowestNs)
	binary.BigEndian.PutUint64(raw[24:], uint64(measurement.HighestNs))
	binary.BigEndian.PutUint64(raw[32:], math.Float64bits(1))

	var outer [8]byte
	eb.out.Write(outer[:])
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&eb.out)
	_, err := zw.Write(raw)
	if err == nil {
		err = zw.Close()
	}
	zlibWriters.Put(zw)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	out := append([]byte(nil), eb.out.Bytes()...)
	binary.BigEndian.PutUint32(out[0:], v2CompressedCookie)
	binary.BigEndian.PutUint32(out[4:], uint32(len(out)-8))
	return out, nil
}

// putZigZag writes v as HdrHistogram's ZigZag LEB128-64b9B varint (the
// ninth byte carries 8 bits) and returns the length.
func putZigZag(b []byte, v int64) int {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			b[i] = byte(u)
			return i + 1
		}
		b[i] = byte(u&0x7f) | 0x80
		u >>= 7
	}
	b[8] = byte(u)
	return 9
}

var errTruncatedVarint = errors.New("truncated varint")

// zigZag reads one varint; n == 0 means b was empty.
func zigZag(b []byte) (v int64, n int, err error) {
	var u uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0, errTruncatedVarint
		}
		c := b[i]
		if i == 8 {
			u |= uint64(c) << 56
			n = 9
			break
		}
		u |= uint64(c&0x7f) << (7 * uint(i))
		if c&0x80 == 0 {
			n = i + 1
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), n, nil
}

type decodeBuf struct {
	in      bytes.Reader
	payload []byte
	zr      io.ReadCloser
}

var decodeBufs = sync.Pool{New: func() any { return new(decodeBuf) }}

// DecodeError marks an untrusted histogram payload that was rejected.
type DecodeError struct{ Reason string }

func (e *DecodeError) Error() string { return "invalid histogram: " + e.Reason }

func bad(format string, args ...any) error {
	return &DecodeError{Reason: fmt.Sprintf(format, args...)}
}

// DecodeSparse decodes an untrusted V2 compressed histogram into dst
// (reset first). It never panics and allocates at most a bounded amount:
// the input is capped at MaxHistogramBytes, the geometry must be the shared
// one, the inflated payload may hold at most one varint per bucket, counts
// must be non-negative and sum to at most MaxHistogramTotal. On error dst
// is left empty.
func DecodeSparse(b []byte, dst *Sparse) (err error) {
	dst.Reset()
	defer func() {
		if err != nil {
			dst.Reset()
		}
	}()
	if len(b) > MaxHistogramBytes {
		return bad("%d bytes exceeds the %d byte limit", len(b), MaxHistogramBytes)
	}
	if len(b) < 8 {
		return bad("%d bytes is shorter than the 8 byte header", len(b))
	}
	if c := binary.BigEndian.Uint32(b[0:]); c&^0xf0 != v2CompressedCookieBase {
		return bad("cookie %#x is not a V2 compressed histogram", c)
	}
	if n := binary.BigEndian.Uint32(b[4:]); int64(n) != int64(len(b)-8) {
		return bad("declared compressed length %d, have %d bytes", n, len(b)-8)
	}
	db := decodeBufs.Get().(*decodeBuf)
	defer decodeBufs.Put(db)
	db.in.Reset(b[8:])
	if db.zr == nil {
		db.zr, err = zlib.NewReader(&db.in)
	} else {
		err = db.zr.(zlib.Resetter).Reset(&db.in, nil)
	}
	if err != nil {
		db.zr = nil
		return bad("zlib: %v", err)
	}
	var hdr [v2HeaderSize]byte
	if _, err := io.ReadFull(db.zr, hdr[:]); err != nil {
		return bad("header: %v", err)
	}
	if c := binary.BigEndian.Uint32(hdr[0:]); c&^0xf0 != v2EncodingCookieBase {
		return bad("inner cookie %#x is not V2", c)
	}
	plen := int64(int32(binary.BigEndian.Uint32(hdr[4:])))
	sig := int32(binary.BigEndian.Uint32(hdr[12:]))
	lowest := int64(binary.BigEndian.Uint64(hdr[16:]))
	highest := int64(binary.BigEndian.Uint64(hdr[24:]))
	ratio := math.Float64frombits(binary.BigEndian.Uint64(hdr[32:]))
	if sig != measurement.SigFigs || lowest != measurement.LowestNs || highest != measurement.HighestNs {
		return bad("geometry %d..%d at %d digits, want %d..%d at %d", lowest, highest, sig,
			measurement.LowestNs, measurement.HighestNs, measurement.SigFigs)
	}
	if ratio != 1 {
		return bad("conversion ratio %v, want 1", ratio)
	}
	if plen < 0 || plen > shared.maxPayloadVarints*9 {
		return bad("payload length %d out of range", plen)
	}
	if int64(cap(db.payload)) < plen+1 {
		db.payload = make([]byte, plen+1)
	}
	p := db.payload[:plen+1]
	n, rerr := io.ReadFull(db.zr, p)
	if int64(n) != plen || (rerr != io.ErrUnexpectedEOF && rerr != io.EOF) {
		if rerr == nil {
			return bad("payload longer than the declared %d bytes", plen)
		}
		return bad("payload: read %d of %d bytes: %v", n, plen, rerr)
	}
	p = p[:plen]
	// Reading to EOF makes zlib verify its checksum.
	if _, err := db.zr.Read(hdr[:1]); err != io.EOF {
		return bad("trailing data after payload")
	}

	var idx int64
	for len(p) > 0 {
		v, n, err := zigZag(p)
		if err != nil {
			return bad("payload: %v", err)
		}
		p = p[n:]
		if v < 0 {
			run := -v
			if run <= 0 || run > int64(shared.countsLen)-idx {
				return bad("zero run %d at index %d overflows %d buckets", run, idx, shared.countsLen)
			}
			idx += run
			continue
		}
		if idx >= int64(shared.countsLen) {
			return bad("bucket index %d beyond %d buckets", idx, shared.countsLen)
		}
		if v > 0 {
			if v > MaxHistogramTotal-dst.Total {
				return bad("total count exceeds %d", MaxHistogramTotal)
			}
			dst.Total += v
			dst.Index = append(dst.Index, int32(idx))
			dst.Count = append(dst.Count, v)
		}
		idx++
	}
	return nil
}

// DecodeHistogram decodes an untrusted payload into a new dense histogram
// with the shared geometry.
func DecodeHistogram(b []byte) (*hdrhistogram.Histogram, error) {
	var s Sparse
	if err := DecodeSparse(b, &s); err != nil {
		return nil, err
	}
	h := measurement.NewHistogram()
	if err := s.AddTo(h); err != nil {
		return nil, err
	}
	return h, nil
}

package generator

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Histogram is YCSB's HistogramGenerator (fieldlengthdistribution=histogram):
// it picks bucket b with probability count[b]/total and returns
// (b+1)*blockSize. Immutable, safe to share.
type Histogram struct {
	blockSize int64
	// Buckets with a positive count, sorted by bucket number; storing them
	// sparsely means a large bucket number cannot blow up memory.
	values []int64 // (bucket+1)*blockSize
	cum    []int64 // running total of the counts, same index as values
	total  int64
}

// NewHistogramFromFile opens path and parses it with NewHistogramFromReader.
func NewHistogramFromFile(path string) (*Histogram, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("histogram file: %w", err)
	}
	h, err := NewHistogramFromReader(f)
	if err = errors.Join(err, f.Close()); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// NewHistogramFromReader parses the upstream file format: a first line
// "BlockSize<TAB>n", then one "bucket<TAB>count" line per bucket. Fields may
// be separated by any whitespace, blank lines are skipped, and buckets that
// are not listed have count 0.
func NewHistogramFromReader(rd io.Reader) (*Histogram, error) {
	type bucket struct{ b, n int64 }
	var (
		h       Histogram
		buckets []bucket
		seen    = map[int64]bool{}
		lineNo  int
		header  bool
	)
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		lineNo++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("histogram line %d: want 2 whitespace-separated fields, got %d", lineNo, len(fields))
		}
		if !header {
			if fields[0] != "BlockSize" {
				return nil, fmt.Errorf("histogram line %d: first line must be \"BlockSize<TAB>n\", got %q", lineNo, fields[0])
			}
			bs, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || bs <= 0 {
				return nil, fmt.Errorf("histogram line %d: BlockSize must be a positive integer, got %q", lineNo, fields[1])
			}
			h.blockSize = bs
			header = true
			continue
		}
		b, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || b < 0 || b > math.MaxInt64/h.blockSize-1 {
			return nil, fmt.Errorf("histogram line %d: bucket must be a non-negative integer with (bucket+1)*BlockSize in int64 range, got %q", lineNo, fields[0])
		}
		n, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("histogram line %d: count must be a non-negative integer, got %q", lineNo, fields[1])
		}
		if seen[b] {
			return nil, fmt.Errorf("histogram line %d: bucket %d listed twice", lineNo, b)
		}
		seen[b] = true
		if n > 0 {
			buckets = append(buckets, bucket{b, n})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("histogram line %d: %w", lineNo+1, err)
	}
	if !header {
		return nil, fmt.Errorf("histogram: empty file, want a \"BlockSize<TAB>n\" first line")
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].b < buckets[j].b })
	for _, bk := range buckets {
		if h.total > math.MaxInt64-bk.n {
			return nil, fmt.Errorf("histogram: total count overflows int64")
		}
		h.total += bk.n
		h.values = append(h.values, (bk.b+1)*h.blockSize)
		h.cum = append(h.cum, h.total)
	}
	if h.total == 0 {
		return nil, fmt.Errorf("histogram: no bucket has a positive count")
	}
	return &h, nil
}

// Next returns (bucket+1)*blockSize for a bucket drawn proportionally to its
// count.
func (h *Histogram) Next(r *Rand) int64 {
	x := r.Int64n(h.total)
	// Binary search for the first cum > x; hand-written so the hot path has
	// no closure.
	lo, hi := 0, len(h.cum)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if h.cum[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return h.values[lo]
}

// Clone returns h itself (immutable).
func (h *Histogram) Clone() Long { return h }

// BlockSize returns the parsed block size.
func (h *Histogram) BlockSize() int64 { return h.blockSize }

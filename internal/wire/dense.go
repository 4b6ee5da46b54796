package wire

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Dense is a histogram as bare counts by bucket index, for the shared
// geometry. Adding a Sparse into it is one addition per non-empty bucket,
// where adding into an hdrhistogram.Histogram recomputes every bucket's
// index from its value; the coordinator merges every agent's record into
// Dense counts and builds one Histogram per series and interval at the end.
type Dense []int64

// NewDense returns empty counts for the shared geometry.
func NewDense() Dense { return make(Dense, shared.countsLen) }

// Add adds s's buckets.
func (d Dense) Add(s *Sparse) {
	for i, idx := range s.Index {
		d[idx] += s.Count[i]
	}
}

// AddTo records every non-empty bucket into h (shared geometry) and
// clears d for reuse.
func (d Dense) AddTo(h *hdrhistogram.Histogram) error {
	for idx, c := range d {
		if c == 0 {
			continue
		}
		if err := h.RecordValues(shared.valueAt(int32(idx)), c); err != nil {
			return fmt.Errorf("merge histogram: %w", err)
		}
		d[idx] = 0
	}
	return nil
}

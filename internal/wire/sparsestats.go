package wire

// Statistics straight from the sparse form, so that per-agent, per-interval
// figures (run.json) cost O(non-empty buckets) instead of a scan of a
// 33 792-bucket dense histogram per statistic. The rules are the
// library's (hdrhistogram-go v1.4.0) so the numbers are identical to
// those of a dense histogram holding the same values; a test checks it.

// width is the size of the value range that counts index idx covers.
func (g geometry) width(idx int32) int64 {
	bucket := int32(idx>>g.subHalfMagnitude) - 1
	if bucket < 0 {
		bucket = 0
	}
	return int64(1) << (uint(bucket) + g.unitMagnitude)
}

// percentileRank mirrors the library's rank rule for a non-empty histogram.
func percentileRank(p float64, total int64) int64 {
	if p > 100 {
		p = 100
	}
	rank := (p/100)*float64(total) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(total) {
		return total
	}
	return int64(rank)
}

// Min returns the lowest recorded value (lowest equivalent of its bucket).
func (s *Sparse) Min() int64 {
	if len(s.Index) == 0 {
		return 0
	}
	return shared.valueAt(s.Index[0])
}

// Mean returns the mean, summing bucket midpoints in index order as the
// library does (so the floating-point result is the same).
func (s *Sparse) Mean() float64 {
	if s.Total == 0 {
		return 0
	}
	var mean float64
	total := float64(s.Total)
	for i, idx := range s.Index {
		mid := shared.valueAt(idx) + shared.width(idx)>>1
		mean += float64(s.Count[i]) * float64(mid) / total
	}
	return mean
}

// Percentiles returns the value at each percentile (in (0, 100]), in the
// order given, as the highest value equivalent to the bucket reached.
func (s *Sparse) Percentiles(ps []float64) []int64 {
	out := make([]int64, len(ps))
	if s.Total == 0 {
		return out
	}
	for k, p := range ps {
		rank := percentileRank(p, s.Total)
		var cum int64
		for i, idx := range s.Index {
			cum += s.Count[i]
			if cum >= rank {
				out[k] = shared.valueAt(idx) + shared.width(idx) - 1
				break
			}
		}
	}
	return out
}

// Add merges o into s; both are sorted by index, so this is a linear
// merge. The result is built in spare's storage, which is then swapped
// with s's, so a caller accumulating many histograms allocates only
// while the bucket set grows.
func (s *Sparse) Add(o *Sparse, spare *Sparse) {
	if len(o.Index) == 0 {
		return
	}
	spare.Reset()
	i, j := 0, 0
	for i < len(s.Index) || j < len(o.Index) {
		switch {
		case j >= len(o.Index) || (i < len(s.Index) && s.Index[i] < o.Index[j]):
			spare.Index = append(spare.Index, s.Index[i])
			spare.Count = append(spare.Count, s.Count[i])
			i++
		case i >= len(s.Index) || o.Index[j] < s.Index[i]:
			spare.Index = append(spare.Index, o.Index[j])
			spare.Count = append(spare.Count, o.Count[j])
			j++
		default:
			spare.Index = append(spare.Index, s.Index[i])
			spare.Count = append(spare.Count, s.Count[i]+o.Count[j])
			i++
			j++
		}
	}
	spare.Total = s.Total + o.Total
	s.Index, spare.Index = spare.Index, s.Index
	s.Count, spare.Count = spare.Count, s.Count
	s.Total = spare.Total
}

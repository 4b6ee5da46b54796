package generator

// Discrete is YCSB's DiscreteGenerator: a weighted choice among values, used
// for the operation mix. Build it with Add before use; after that it is
// immutable and safe to share.
type Discrete struct {
	weights []float64
	values  []int
	sum     float64
}

// NewDiscrete returns an empty chooser.
func NewDiscrete() *Discrete { return &Discrete{} }

// Add appends a choice. Non-positive weights are ignored, as CoreWorkload
// only adds operations whose proportion is > 0.
func (d *Discrete) Add(weight float64, value int) {
	if !(weight > 0) {
		return
	}
	d.weights = append(d.weights, weight)
	d.values = append(d.values, value)
	d.sum += weight
}

// Len returns the number of choices with positive weight.
func (d *Discrete) Len() int { return len(d.values) }

// Next draws one uniform double, scales it by the total weight and walks the
// choices in insertion order. It panics if no choice was added, which is a
// configuration bug the caller must reject earlier.
func (d *Discrete) Next(r *Rand) int {
	if len(d.values) == 0 {
		panic("generator: Discrete.Next with no positive weights")
	}
	u := r.Float64() * d.sum
	for i, w := range d.weights {
		if u < w {
			return d.values[i]
		}
		u -= w
	}
	// Rounding in the running subtraction can leave u marginally above the
	// last weight; that draw belongs to the last choice.
	return d.values[len(d.values)-1]
}

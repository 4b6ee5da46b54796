// Package capacity finds the highest throughput a database sustains
// within latency objectives: an exponential ramp of the target until a
// probe fails, then bisection between the last passing and the first
// failing target to a requested precision. Each probe is a paced run at
// one target; a probe passes when it achieved its target, every
// objective holds on the intended-time latencies (coordinated omission
// corrected: raw service times would let a saturated database look
// fast), its error rate is within bounds and it was steady.
//
// The search is pure logic over a Prober, so that it is tested against a
// synthetic database; the command line's prober runs every probe as a
// real run through the same session as `run` and `coordinator run`. The
// Collector turns a probe's intervals into what the search judges, and
// Record is the search's record, capacity.json.
package capacity

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/workload"
)

// Objective is one latency objective: an operation's percentile of
// intended-time latency must not exceed a bound ("READ.p99<=10ms").
type Objective struct {
	Op         measurement.Op
	Percentile float64
	Bound      time.Duration
}

// objectiveOps are the operations an objective may name: those the core
// workload measures per call.
var objectiveOps = []measurement.Op{measurement.Read, measurement.Update, measurement.Insert, measurement.Scan,
	measurement.Delete, measurement.ReadModifyWrite}

// ParseObjective parses OPERATION.PERCENTILE<=DURATION: an operation as
// YCSB names it (READ, UPDATE, INSERT, SCAN, DELETE, READ-MODIFY-WRITE;
// any case), a percentile written p99 or p99.9, and a Go duration (10ms,
// 500us, 1.5s).
func ParseObjective(s string) (Objective, error) {
	var o Objective
	lhs, rhs, ok := strings.Cut(strings.TrimSpace(s), "<=")
	if !ok {
		return o, fmt.Errorf("%q: expected OPERATION.PERCENTILE<=DURATION, e.g. READ.p99<=10ms", s)
	}
	dot := strings.LastIndex(lhs, ".p")
	if dot < 0 {
		dot = strings.LastIndex(lhs, ".P")
	}
	if dot < 0 {
		return o, fmt.Errorf("%q: expected OPERATION.PERCENTILE before <=, e.g. READ.p99", s)
	}
	name := strings.ToUpper(strings.TrimSpace(lhs[:dot]))
	op, known := measurement.ParseOp(name)
	if known {
		known = false
		for _, k := range objectiveOps {
			known = known || k == op
		}
	}
	if !known {
		var names []string
		for _, k := range objectiveOps {
			names = append(names, k.String())
		}
		return o, fmt.Errorf("%q: unknown operation %q (expected one of %s)", s, lhs[:dot], strings.Join(names, ", "))
	}
	p, err := strconv.ParseFloat(strings.TrimSpace(lhs[dot+2:]), 64)
	if err != nil || math.IsNaN(p) || p <= 0 || p >= 100 {
		return o, fmt.Errorf("%q: percentile %q: expected p followed by a number strictly between 0 and 100, e.g. p99 or p99.9", s, lhs[dot+1:])
	}
	d, err := time.ParseDuration(strings.TrimSpace(rhs))
	if err != nil || d <= 0 {
		return o, fmt.Errorf("%q: bound %q: expected a positive duration such as 10ms, 500us or 1.5s", s, strings.TrimSpace(rhs))
	}
	return Objective{Op: op, Percentile: p, Bound: d}, nil
}

// Key names the objective's percentile as the latency tables do: "p99",
// "p99.9".
func (o Objective) Key() string { return PercentileKey(o.Percentile) }

// PercentileKey is a percentile's name in latency tables: "p50", "p99.9".
func PercentileKey(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }

func (o Objective) String() string {
	return o.Op.String() + "." + o.Key() + "<=" + o.Bound.String()
}

// MarshalJSON writes the objective as it is typed.
func (o Objective) MarshalJSON() ([]byte, error) { return json.Marshal(o.String()) }

// UnmarshalJSON reads an objective written by MarshalJSON.
func (o *Objective) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseObjective(s)
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// CheckMix refuses an objective on an operation the workload never
// measures (an UPDATE objective on read-only workload C would hold
// vacuously): before any load, naming the objective and the mix.
func CheckMix(objs []Objective, cfg *workload.Config) error {
	measured := map[measurement.Op]bool{
		measurement.Read:            cfg.ReadProp > 0 || cfg.RMWProp > 0,
		measurement.Update:          cfg.UpdateProp > 0 || cfg.RMWProp > 0,
		measurement.Insert:          cfg.InsertProp > 0,
		measurement.Scan:            cfg.ScanProp > 0,
		measurement.Delete:          cfg.DeleteProp > 0,
		measurement.ReadModifyWrite: cfg.RMWProp > 0,
	}
	for _, o := range objs {
		if !measured[o.Op] {
			var ops []string
			for _, k := range objectiveOps {
				if measured[k] {
					ops = append(ops, k.String())
				}
			}
			return fmt.Errorf("%s: the workload never does %s (its mix measures %s)", o, o.Op, strings.Join(ops, ", "))
		}
	}
	return nil
}

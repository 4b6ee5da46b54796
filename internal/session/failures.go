package session

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// WarnFailureShare is the share of failed operations above which a run's
// summary says plainly that its numbers mostly measure failures.
const WarnFailureShare = 0.01

// firstInterval keeps the first measured interval, where the likely cause
// of failures is easiest to read (nothing was loaded: every read fails
// from the start).
type firstInterval struct {
	mu sync.Mutex
	iv *measurement.Interval
}

func (f *firstInterval) OnInterval(u *run.Update) {
	if u.Progress.Warmup {
		return
	}
	f.mu.Lock()
	if f.iv == nil && u.Interval.Ops > 0 {
		f.iv = u.Interval
	}
	f.mu.Unlock()
}

func (f *firstInterval) get() *measurement.Interval {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.iv
}

// failureReport describes failed operations: how many, which (operation
// and return code, most frequent first), and the likely cause where one
// is evident. all is zero when nothing was recorded.
type failureReport struct {
	failed, all int64
	top         []string
	cause       string
}

func (r failureReport) share() float64 {
	if r.all == 0 {
		return 0
	}
	return float64(r.failed) / float64(r.all)
}

func (r failureReport) String() string {
	s := fmt.Sprintf("%d of %d operations failed (%.1f%%): %s", r.failed, r.all, 100*r.share(), strings.Join(r.top, ", "))
	if r.cause != "" {
		s += "; " + r.cause
	}
	return s
}

func reportFailures(total, first *measurement.Interval) failureReport {
	var r failureReport
	if total == nil {
		return r
	}
	type kind struct {
		name string
		n    int64
	}
	r.failed, r.all = total.Failures()
	var kinds []kind
	for op := range total.Returns {
		for st, n := range total.Returns[op] {
			if s := adapters.Status(st); n > 0 && !s.IsOK() && s != adapters.Cancelled {
				kinds = append(kinds, kind{measurement.Op(op).String() + " " + s.String(), n})
			}
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].n > kinds[j].n })
	for i, k := range kinds {
		if i == 3 {
			break
		}
		r.top = append(r.top, fmt.Sprintf("%s %d", k.name, k.n))
	}
	if first != nil {
		reads := first.ReturnTotal(measurement.Read)
		if nf := first.Returns[measurement.Read][adapters.NotFound]; reads > 0 && float64(nf) >= 0.9*float64(reads) {
			r.cause = "reads were NOT_FOUND from the start: was the data loaded, with the same recordcount, insertstart and keyprefix?"
		}
	}
	return r
}

package ycsbtext

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// StatusPrinter is the sink that prints YCSB status lines (-s). When
// intervals are cut finer than the status interval (timeseries mode), it
// adds every cut up and prints once per Every intervals, and at the end.
type StatusPrinter struct {
	W     io.Writer
	Label string
	// Every is the number of intervals per status line (1 when zero).
	Every int64
	// Now stamps each line (time.Now when nil).
	Now func() time.Time
	// Format is the measurement type's status style; Extra, when set,
	// adds to each measured line (ycsbtext.RuntimeTracker.Status).
	Format Format
	Extra  func() string

	mu      sync.Mutex
	off     bool
	pending *measurement.Interval
	last    *run.Update
	count   int64
}

// Silence stops printing (the live view has taken over the screen).
func (s *StatusPrinter) Silence() {
	s.mu.Lock()
	s.off = true
	s.mu.Unlock()
}

// OnInterval prints the status line when one is due.
func (s *StatusPrinter) OnInterval(u *run.Update) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off {
		return
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	at := now()
	if u.Progress.Warmup {
		_, _ = fmt.Fprintln(s.W, StatusLine(s.Label, at, u.Progress, u.Interval, u.Cumulative))
		return
	}
	if s.pending == nil {
		s.pending = measurement.NewInterval(0, 0, 0)
	}
	s.pending.Add(u.Interval)
	s.last = u
	s.count++
	every := max(s.Every, 1)
	if s.count%every != 0 && !u.Progress.Final {
		return
	}
	_, _ = fmt.Fprintln(s.W, StatusLineFormat(s.Label, at, u.Progress, s.pending, u.Cumulative, s.Format, s.extra()))
	s.pending = nil
}

func (s *StatusPrinter) extra() string {
	if s.Extra == nil {
		return ""
	}
	return s.Extra()
}

// Flush prints what is still pending when a run ends without an interval
// marked final (a coordinator may seal its last interval before the
// agents' ends arrive).
func (s *StatusPrinter) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off || s.pending == nil || s.last == nil {
		return
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	p := s.last.Progress
	p.Final = true
	_, _ = fmt.Fprintln(s.W, StatusLineFormat(s.Label, now(), p, s.pending, s.last.Cumulative, s.Format, s.extra()))
	s.pending = nil
}

// TimeseriesCollector keeps every measured interval for the timeseries
// measurement type's per-bucket averages.
type TimeseriesCollector struct {
	mu  sync.Mutex
	ivs []*measurement.Interval
}

// OnInterval keeps measured intervals.
func (c *TimeseriesCollector) OnInterval(u *run.Update) {
	if u.Progress.Warmup {
		return
	}
	c.mu.Lock()
	c.ivs = append(c.ivs, u.Interval)
	c.mu.Unlock()
}

// Intervals returns what was collected.
func (c *TimeseriesCollector) Intervals() []*measurement.Interval {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ivs
}

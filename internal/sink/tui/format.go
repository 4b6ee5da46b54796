package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
)

// fmtLatency renders nanoseconds with three significant digits in the
// unit that keeps the number short: 850ns, 412µs, 1.23ms, 2.50s.
func fmtLatency(ns int64) string {
	v := float64(ns)
	switch {
	case ns <= 0:
		return "-"
	case v < 1e3:
		return strconv.FormatInt(ns, 10) + "ns"
	case v < 1e6:
		return sig3(v/1e3) + "µs"
	case v < 1e9:
		return sig3(v/1e6) + "ms"
	default:
		return sig3(v/1e9) + "s"
	}
}

// sig3 prints v (>= 1) with three significant digits and no trailing
// exponent: 1.23, 12.3, 123, 1234.
func sig3(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
}

// fmtInt groups thousands: 1,234,567.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtRate renders ops/s: grouped integers from 100 up, one decimal below.
func fmtRate(r float64) string {
	if r >= 100 || r == 0 {
		return fmtInt(int64(math.Round(r)))
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

// fmtClock renders a duration as h:mm:ss.
func fmtClock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// fmtOffset renders a signed clock offset or lag compactly: +0.31ms, -2.1s.
func fmtOffset(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign = "-"
		d = -d
	}
	if d == 0 {
		return "0"
	}
	return sign + fmtLatency(int64(d))
}

// sparkline draws values as block characters scaled to their maximum.
func sparkline(vals []float64, width int) string {
	if width <= 0 || len(vals) == 0 {
		return ""
	}
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	top := 0.0
	for _, v := range vals {
		top = max(top, v)
	}
	const blocks = "▁▂▃▄▅▆▇█"
	runes := []rune(blocks)
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if top > 0 {
			i = int(math.Round(v / top * float64(len(runes)-1)))
		}
		b.WriteRune(runes[min(max(i, 0), len(runes)-1)])
	}
	return b.String()
}

// bar draws a progress bar of width cells for fraction f in [0, 1].
func bar(f float64, width int) string {
	if width <= 0 {
		return ""
	}
	f = min(max(f, 0), 1)
	full := int(math.Round(f * float64(width)))
	return strings.Repeat("█", full) + strings.Repeat("░", width-full)
}

// truncate cuts s to at most width cells, marking the cut with an ellipsis.
func truncate(s string, width int) string {
	if width <= 0 || lipgloss.Width(s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && lipgloss.Width(string(r))+1 > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

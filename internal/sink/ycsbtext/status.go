package ycsbtext

import (
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/run"
)

// StatusLine renders YCSB's periodic status line for one interval:
//
//	<label><yyyy-MM-dd HH:mm:ss:SSS> <sec> sec: <n> operations; <x> current ops/sec; est completion in <t> [READ: Count=..., ...]
//
// The bracketed statistics are the interval's own (not cumulative), in µs.
func StatusLine(label string, now time.Time, p run.Progress, iv, cum *measurement.Interval) string {
	return StatusLineFormat(label, now, p, iv, cum, Format{}, "")
}

// StatusLineFormat is StatusLine with the measurements shown in format f
// (YCSB's measurementtype) and extra appended after them (the process
// series of ycsbctl.trackruntime).
func StatusLineFormat(label string, now time.Time, p run.Progress, iv, cum *measurement.Interval, f Format, extra string) string {
	var b strings.Builder
	b.WriteString(label)
	// YCSB's SimpleDateFormat "yyyy-MM-dd HH:mm:ss:SSS"; Go layouts cannot
	// put fractional seconds after a colon, so milliseconds are added.
	b.WriteString(now.Format("2006-01-02 15:04:05"))
	b.WriteByte(':')
	ms := now.Nanosecond() / 1e6
	b.WriteByte(byte('0' + ms/100))
	b.WriteByte(byte('0' + ms/10%10))
	b.WriteByte(byte('0' + ms%10))
	b.WriteByte(' ')
	sec := int64(p.Elapsed / time.Second)
	b.WriteString(strconv.FormatInt(sec, 10))
	b.WriteString(" sec: ")
	if p.Warmup {
		b.WriteString("warm-up: ")
		b.WriteString(strconv.FormatInt(p.WarmupOps, 10))
		b.WriteString(" operations (not measured); ")
		return b.String()
	}
	total := cum.Ops
	b.WriteString(strconv.FormatInt(total, 10))
	b.WriteString(" operations; ")
	if total != 0 {
		d := time.Duration(iv.EndNs - iv.StartNs)
		cur := 0.0
		if d > 0 {
			cur = float64(iv.Ops) / d.Seconds()
		}
		b.WriteString(decimalFormat2(cur))
		b.WriteString(" current ops/sec; ")
	}
	if eta, ok := estimate(p, total); ok && !p.Final {
		b.WriteString("est completion in ")
		b.WriteString(Remaining(eta))
	}
	for _, sr := range seriesOrder() {
		h := iv.Hist[sr]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		statusBlock(&b, sr.Name(), h, f)
	}
	b.WriteString(extra)
	return b.String()
}

// hdrStatus is YCSB's HdrHistogram status block.
func hdrStatus(b *strings.Builder, name string, h *hdrhistogram.Histogram) {
	d := measurement.DigestOf(h, 50, 90, 99, 99.9, 99.99)
	b.WriteString("[")
	b.WriteString(name)
	b.WriteString(": Count=")
	b.WriteString(strconv.FormatInt(d.Count, 10))
	b.WriteString(", Max=")
	b.WriteString(strconv.FormatInt(nsToUs(d.Max), 10))
	b.WriteString(", Min=")
	b.WriteString(strconv.FormatInt(nsToUs(d.Min), 10))
	b.WriteString(", Avg=")
	b.WriteString(decimalFormat2(d.Mean / 1000))
	for i, q := range []string{"50", "90", "99", "99.9", "99.99"} {
		b.WriteString(", ")
		b.WriteString(q)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(nsToUs(d.Values[i]), 10))
	}
	b.WriteString("]")
}

// estimate returns the seconds left, from the operation budget at the
// cumulative average rate, or from the time limit, whichever is sooner.
func estimate(p run.Progress, total int64) (int64, bool) {
	var best int64 = -1
	secs := p.Elapsed.Seconds()
	if p.Budget > 0 && total > 0 && secs > 0 {
		left := p.Budget - total
		if left > 0 {
			rate := float64(total) / secs
			best = int64(float64(left)/rate + 0.999999)
		}
	}
	if p.MaxExecution > 0 {
		left := int64((p.MaxExecution - p.Elapsed + time.Second - 1) / time.Second)
		if left > 0 && (best < 0 || left < best) {
			best = left
		}
	}
	return best, best > 0
}

// Remaining formats seconds as YCSB's RemainingFormatter: days and hours,
// minutes only under a day, seconds only under a minute.
func Remaining(seconds int64) string {
	var b strings.Builder
	unit := func(n int64, one, many string) {
		b.WriteString(strconv.FormatInt(n, 10))
		if n == 1 {
			b.WriteString(one)
		} else {
			b.WriteString(many)
		}
	}
	days := seconds / 86400
	if days > 0 {
		unit(days, " day ", " days ")
		seconds -= days * 86400
	}
	hours := seconds / 3600
	if hours > 0 {
		unit(hours, " hour ", " hours ")
		seconds -= hours * 3600
	}
	if days < 1 {
		mins := seconds / 60
		if mins > 0 {
			unit(mins, " minute ", " minutes ")
			seconds -= mins * 60
		}
	}
	if b.Len() == 0 {
		// YCSB picks the word by the length of the text written so far,
		// which is then just the digits: "5 second", "45 seconds". Java
		// YCSB's status lines read so; kept for identical lines.
		b.WriteString(strconv.FormatInt(seconds, 10))
		if b.Len() == 1 {
			b.WriteString(" second ")
		} else {
			b.WriteString(" seconds ")
		}
	}
	return b.String()
}

package ycsbtext

import (
	"math"
	"strconv"
	"strings"
)

// JavaDouble formats f as Java's Double.toString does, so that YCSB's text
// exporter lines match: plain decimal with at least one fractional digit
// for 1e-3 <= |f| < 1e7, computerized scientific notation ("1.5E7")
// otherwise, with the shortest digits that round-trip.
func JavaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(f)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // e.g. 1.5E+07, 1E-04
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// decimalFormat2 formats like Java's DecimalFormat("#.##"): at most two
// fractional digits, half-even rounding, no trailing zeros.
func decimalFormat2(f float64) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return "∞"
		}
		return "-∞"
	}
	r := math.RoundToEven(f*100) / 100
	s := strconv.FormatFloat(r, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

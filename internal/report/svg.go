package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Charts are drawn here, in Go, as inline SVG: the report opens without
// a network and without running any script, prints, and stays readable
// in ten years. The page's small script only adds legend toggles and
// reports that the charts are present.

// palette is colour-blind friendly (Okabe-Ito, then a few more).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000", "#999999", "#882255"}

func color(i int) string { return palette[i%len(palette)] }

// Series is one line of a line chart.
type Series struct {
	Name  string
	Color string
	X, Y  []float64
	Dash  bool
}

// Tick is an axis tick at Value labelled Label.
type Tick struct {
	Value float64
	Label string
}

// LineChart is an x/y chart of one or more lines.
type LineChart struct {
	ID            string
	Title         string
	XLabel        string
	YLabel        string
	Width, Height int
	Series        []Series
	LogY          bool
	// LogX plots x on a log scale (with XTicks, the percentile axis).
	LogX bool
	// XTicks replaces the automatic x ticks (the percentile axis).
	XTicks  []Tick
	XFormat func(float64) string
	YFormat func(float64) string
	// XTitle formats x in point tooltips (defaults to XFormat).
	XTitle func(float64) string
	// YCap, when set, caps the y axis (100 for percent of all cores):
	// a band's rounding must not push the axis past what can happen.
	YCap float64
	// Stacked draws each series as a filled band on top of the ones
	// before it (CPU by user, system, iowait); the series share their X.
	Stacked bool
	// HLines and VLines are reference lines across the plot (an
	// objective's bound, a capacity); the axes always include them.
	HLines, VLines []RefLine
}

// stackedTops returns, per series, the running sums of the Y values of it
// and the series before it: the top edge of its band.
func (c *LineChart) stackedTops() [][]float64 {
	tops := make([][]float64, len(c.Series))
	for i, s := range c.Series {
		tops[i] = make([]float64, len(s.Y))
		for k, y := range s.Y {
			tops[i][k] = y
			if i > 0 && k < len(tops[i-1]) {
				tops[i][k] += tops[i-1][k]
			}
		}
	}
	return tops
}

// RefLine is a labelled reference line at Value.
type RefLine struct {
	Value float64
	Label string
	Color string
}

const (
	padLeft   = 72
	padRight  = 40
	padTop    = 40
	padBottom = 48
)

type scale struct {
	min, max float64
	log      bool
	a, b     float64 // pixel range
}

func (s scale) px(v float64) float64 {
	lo, hi := s.min, s.max
	if s.log {
		v, lo, hi = math.Log10(math.Max(v, 1e-300)), math.Log10(lo), math.Log10(hi)
	}
	if hi == lo {
		return (s.a + s.b) / 2
	}
	return s.a + (v-lo)/(hi-lo)*(s.b-s.a)
}

// niceStep returns a 1-2-5 step giving about n intervals over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

func linearTicks(lo, hi float64, n int, format func(float64) string) (float64, float64, []Tick) {
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep(hi-lo, n)
	lo = math.Floor(lo/step) * step
	hi = math.Ceil(hi/step) * step
	var ticks []Tick
	for v := lo; v <= hi+step/2; v += step {
		ticks = append(ticks, Tick{v, format(v)})
	}
	return lo, hi, ticks
}

// logTicks returns decade ticks (with 2 and 5 when the range is short).
func logTicks(lo, hi float64, format func(float64) string) (float64, float64, []Tick) {
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	decades := math.Log10(hi / lo)
	var ticks []Tick
	for d := lo; d <= hi*1.0001; d *= 10 {
		ticks = append(ticks, Tick{d, format(d)})
		if decades <= 3 && d < hi {
			ticks = append(ticks, Tick{2 * d, format(2 * d)}, Tick{5 * d, format(5 * d)})
		}
	}
	return lo, hi, ticks
}

func esc(s string) string { return html.EscapeString(s) }

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// SVG renders the chart.
func (c *LineChart) SVG() string {
	w, h := c.Width, c.Height
	if w == 0 {
		w = 640
	}
	if h == 0 {
		h = 300
	}
	yf := c.YFormat
	if yf == nil {
		yf = fmtNumber
	}
	xf := c.XFormat
	if xf == nil {
		xf = fmtNumber
	}
	xt := c.XTitle
	if xt == nil {
		xt = xf
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	points := 0
	var tops [][]float64
	if c.Stacked {
		tops = c.stackedTops()
	}
	for si, s := range c.Series {
		for i := range s.X {
			y := s.Y[i]
			if tops != nil {
				y = tops[si][i]
			}
			if c.LogY && y <= 0 {
				continue
			}
			xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
			ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			points++
		}
	}
	if points > 0 {
		for _, r := range c.HLines {
			if !c.LogY || r.Value > 0 {
				ymin, ymax = math.Min(ymin, r.Value), math.Max(ymax, r.Value)
			}
		}
		for _, r := range c.VLines {
			xmin, xmax = math.Min(xmin, r.Value), math.Max(xmax, r.Value)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" data-points="%d" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		esc(c.ID), points, w, h, w, h, esc(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%d" y="18">%s</text>`, padLeft, esc(c.Title))
	if points == 0 {
		fmt.Fprintf(&b, `<text class="empty" x="%d" y="%d">no data</text></svg>`, w/2, h/2)
		return b.String()
	}
	var xticks, yticks []Tick
	if len(c.XTicks) > 0 {
		xticks = c.XTicks
		xmin, xmax = xticks[0].Value, xticks[len(xticks)-1].Value
	} else {
		xmin, xmax, xticks = linearTicks(math.Min(xmin, 0), xmax, 8, xf)
	}
	if c.LogY {
		ymin, ymax, yticks = logTicks(ymin, ymax, yf)
	} else {
		top := ymax * 1.05
		if c.YCap > 0 {
			top = math.Min(top, c.YCap)
		}
		ymin, ymax, yticks = linearTicks(math.Min(ymin, 0), top, 5, yf)
	}
	xs := scale{min: xmin, max: xmax, log: c.LogX, a: padLeft, b: float64(w - padRight)}
	ys := scale{min: ymin, max: ymax, log: c.LogY, a: float64(h - padBottom), b: padTop}
	// Grid and axes.
	b.WriteString(`<g class="grid">`)
	for _, t := range yticks {
		y := ys.px(t.Value)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%s" y2="%s"/><text class="ytick" x="%d" y="%s">%s</text>`,
			padLeft, w-padRight, f1(y), f1(y), padLeft-6, f1(y+4), esc(t.Label))
	}
	for _, t := range xticks {
		x := xs.px(t.Value)
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%d" y2="%d"/><text class="xtick" x="%s" y="%d">%s</text>`,
			f1(x), f1(x), padTop, h-padBottom, f1(x), h-padBottom+16, esc(t.Label))
	}
	b.WriteString(`</g>`)
	fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d">%s</text>`, (padLeft+w-padRight)/2, h-8, esc(c.XLabel))
	fmt.Fprintf(&b, `<text class="axis" transform="translate(14 %d) rotate(-90)">%s</text>`, (padTop+h-padBottom)/2, esc(c.YLabel))
	// Lines, then points with tooltips when there are few enough.
	for i, s := range c.Series {
		col := s.Color
		if col == "" {
			col = color(i)
		}
		var d strings.Builder
		var dots strings.Builder
		if tops != nil {
			// The band: along its top, then back along the band below.
			var area strings.Builder
			for k := range s.X {
				if k == 0 {
					area.WriteString("M")
				} else {
					area.WriteString(" L")
				}
				area.WriteString(f1(xs.px(s.X[k])) + " " + f1(ys.px(tops[i][k])))
			}
			for k := len(s.X) - 1; k >= 0; k-- {
				below := 0.0
				if i > 0 && k < len(tops[i-1]) {
					below = tops[i-1][k]
				}
				area.WriteString(" L" + f1(xs.px(s.X[k])) + " " + f1(ys.px(below)))
			}
			if len(s.X) > 0 {
				fmt.Fprintf(&b, `<path class="band" data-series="%s" d="%s Z" fill="%s" fill-opacity="0.35" stroke="none"/>`, esc(s.Name), area.String(), col)
			}
		}
		n := 0
		for k := range s.X {
			yv := s.Y[k]
			if tops != nil {
				yv = tops[i][k]
			}
			if c.LogY && yv <= 0 {
				continue
			}
			x, y := xs.px(s.X[k]), ys.px(yv)
			if n == 0 {
				d.WriteString("M")
			} else {
				d.WriteString(" L")
			}
			d.WriteString(f1(x) + " " + f1(y))
			if len(s.X) <= 400 {
				fmt.Fprintf(&dots, `<circle cx="%s" cy="%s" r="3"><title>%s: %s at %s</title></circle>`, f1(x), f1(y), esc(s.Name), esc(yf(s.Y[k])), esc(xt(s.X[k])))
			}
			n++
		}
		dash := ""
		if s.Dash {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<g class="series" data-series="%s" style="color:%s"><path class="line" d="%s" stroke="%s"%s/>%s</g>`,
			esc(s.Name), col, d.String(), col, dash, dots.String())
	}
	for _, r := range c.HLines {
		y := ys.px(r.Value)
		fmt.Fprintf(&b, `<g class="ref"><line x1="%d" x2="%d" y1="%s" y2="%s" stroke="%s" stroke-dasharray="2 3"/><text x="%d" y="%s" fill="%s">%s</text></g>`,
			padLeft, w-padRight, f1(y), f1(y), refColor(r), w-padRight-4, f1(y-4), refColor(r), esc(r.Label))
	}
	for _, r := range c.VLines {
		x := xs.px(r.Value)
		// The label goes right of the line, or left of it near the
		// right edge.
		tx, anchor := x+4, "start"
		if x > float64(w-padRight)-float64(len([]rune(r.Label)))*7 {
			tx, anchor = x-4, "end"
		}
		fmt.Fprintf(&b, `<g class="ref"><line x1="%s" x2="%s" y1="%d" y2="%d" stroke="%s" stroke-dasharray="2 3"/><text x="%s" y="%d" fill="%s" style="text-anchor:%s">%s</text></g>`,
			f1(x), f1(x), padTop, h-padBottom, refColor(r), f1(tx), padTop+12, refColor(r), anchor, esc(r.Label))
	}
	// Legend along the top right: a line swatch per series.
	names, colors := make([]string, len(c.Series)), make([]string, len(c.Series))
	for i, sr := range c.Series {
		names[i], colors[i] = sr.Name, sr.Color
	}
	writeLegend(&b, float64(w-padRight), names, colors, `y="26" width="14" height="4"`, 18)
	b.WriteString(`</svg>`)
	return b.String()
}

func refColor(r RefLine) string {
	if r.Color != "" {
		return r.Color
	}
	return "#c62828"
}

// writeLegend draws legend entries right-aligned at x, last series
// rightmost: a swatch (rect with the given geometry attributes) and the
// name textGap to its right. An empty color takes the palette's.
func writeLegend(b *strings.Builder, x float64, names, colors []string, swatch string, textGap float64) {
	for i := len(names) - 1; i >= 0; i-- {
		col := colors[i]
		if col == "" {
			col = color(i)
		}
		x -= float64(len([]rune(names[i])))*7 + 26
		fmt.Fprintf(b, `<g class="legend" data-series="%s"><rect x="%s" %s fill="%s"/><text x="%s" y="32">%s</text></g>`,
			esc(names[i]), f1(x), swatch, col, f1(x+textGap), esc(names[i]))
	}
}

// Bar is one bar series of a grouped bar chart: one value per group.
type Bar struct {
	Name   string
	Color  string
	Values []float64
	// Err, when set, draws ± error whiskers (confidence intervals).
	Err []float64
	// Note marks a bar (e.g. "≈" for within noise); shown above it.
	Note []string
}

// BarChart draws groups of bars side by side.
type BarChart struct {
	ID            string
	Title         string
	YLabel        string
	Width, Height int
	Groups        []string
	Bars          []Bar
	YFormat       func(float64) string
}

// SVG renders the chart.
func (c *BarChart) SVG() string {
	w, h := c.Width, c.Height
	if w == 0 {
		w = 640
	}
	if h == 0 {
		h = 300
	}
	yf := c.YFormat
	if yf == nil {
		yf = fmtNumber
	}
	ymax := 0.0
	bars := 0
	for _, s := range c.Bars {
		for i, v := range s.Values {
			e := 0.0
			if i < len(s.Err) {
				e = s.Err[i]
			}
			ymax = math.Max(ymax, v+e)
			if v > 0 {
				bars++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" data-points="%d" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		esc(c.ID), bars, w, h, w, h, esc(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%d" y="18">%s</text>`, padLeft, esc(c.Title))
	if bars == 0 {
		fmt.Fprintf(&b, `<text class="empty" x="%d" y="%d">no data</text></svg>`, w/2, h/2)
		return b.String()
	}
	_, ymax, yticks := linearTicks(0, ymax*1.08, 5, yf)
	ys := scale{min: 0, max: ymax, a: float64(h - padBottom), b: padTop}
	b.WriteString(`<g class="grid">`)
	for _, t := range yticks {
		y := ys.px(t.Value)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%s" y2="%s"/><text class="ytick" x="%d" y="%s">%s</text>`,
			padLeft, w-padRight, f1(y), f1(y), padLeft-6, f1(y+4), esc(t.Label))
	}
	b.WriteString(`</g>`)
	fmt.Fprintf(&b, `<text class="axis" transform="translate(14 %d) rotate(-90)">%s</text>`, (padTop+h-padBottom)/2, esc(c.YLabel))
	groupW := float64(w-padLeft-padRight) / float64(max(len(c.Groups), 1))
	barW := groupW * 0.8 / float64(max(len(c.Bars), 1))
	for g, name := range c.Groups {
		gx := float64(padLeft) + groupW*float64(g)
		fmt.Fprintf(&b, `<text class="xtick" x="%s" y="%d">%s</text>`, f1(gx+groupW/2), h-padBottom+16, esc(name))
	}
	for i, s := range c.Bars {
		col := s.Color
		if col == "" {
			col = color(i)
		}
		fmt.Fprintf(&b, `<g class="series" data-series="%s">`, esc(s.Name))
		for g := range c.Groups {
			if g >= len(s.Values) {
				continue
			}
			v := s.Values[g]
			x := float64(padLeft) + groupW*float64(g) + groupW*0.1 + barW*float64(i)
			y := ys.px(v)
			tip := fmt.Sprintf("%s, %s: %s", s.Name, c.Groups[g], yf(v))
			if g < len(s.Err) && s.Err[g] > 0 {
				tip += " ± " + yf(s.Err[g])
			}
			fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				f1(x), f1(y), f1(math.Max(barW-2, 1)), f1(ys.px(0)-y), col, esc(tip))
			cx := x + barW/2 - 1
			top := y
			if g < len(s.Err) && s.Err[g] > 0 {
				y1, y2 := ys.px(v-s.Err[g]), ys.px(v+s.Err[g])
				top = y2
				fmt.Fprintf(&b, `<path class="err" d="M%s %s V%s M%s %s H%s M%s %s H%s"/>`,
					f1(cx), f1(y1), f1(y2), f1(cx-4), f1(y1), f1(cx+4), f1(cx-4), f1(y2), f1(cx+4))
			}
			if g < len(s.Note) && s.Note[g] != "" {
				fmt.Fprintf(&b, `<text class="note" x="%s" y="%s">%s</text>`, f1(cx), f1(top-4), esc(s.Note[g]))
			}
		}
		b.WriteString(`</g>`)
	}
	names, colors := make([]string, len(c.Bars)), make([]string, len(c.Bars))
	for i, br := range c.Bars {
		names[i], colors[i] = br.Name, br.Color
	}
	writeLegend(&b, float64(w-padRight), names, colors, `y="22" width="12" height="12"`, 16)
	b.WriteString(`</svg>`)
	return b.String()
}

// fmtNumber formats axis values compactly: 1.5k, 2M, 0.25.
func fmtNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimFloat(v/1e9) + "G"
	case a >= 1e6:
		return trimFloat(v/1e6) + "M"
	case a >= 1e4:
		return trimFloat(v/1e3) + "k"
	default:
		return trimFloat(v)
	}
}

func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// fmtMicros formats a latency given in microseconds: 850µs, 1.2ms, 3s.
func fmtMicros(us float64) string {
	switch {
	case us <= 0:
		return "0"
	case us < 1:
		return trimFloat(us*1000) + "ns"
	case us < 1000:
		return trimFloat(roundSig(us, 3)) + "µs"
	case us < 1e6:
		return trimFloat(roundSig(us/1000, 3)) + "ms"
	default:
		return trimFloat(roundSig(us/1e6, 3)) + "s"
	}
}

func roundSig(v float64, sig int) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(sig)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// fmtSeconds formats an elapsed time axis: 45s, 2m30s, 1h05m.
func fmtSeconds(s float64) string {
	switch {
	case s < 120:
		return trimFloat(s) + "s"
	case s < 7200:
		m := int(s) / 60
		return fmt.Sprintf("%dm%02ds", m, int(s)%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(s)/3600, int(s)/60%60)
	}
}

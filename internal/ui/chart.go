package ui

import (
	"strconv"
	"strings"
	"time"
)

// Charts are inline SVG drawn from these views by the templates: no
// script, no style attribute (the Content-Security-Policy allows neither);
// series colours are CSS classes s0..s7 of console.css.

// Chart geometry, in SVG user units.
const (
	chartW    = 960
	chartH    = 220
	chartLeft = 48
	chartTop  = 10
	chartBot  = 28
	chartPadR = 12
)

// maxSeries is how many series a line chart draws (the most frequent
// contract versions); the others are listed in its table only.
const maxSeries = 8

// lineChart is a chart of values in [0,1] per day, one line per series.
type lineChart struct {
	W, H   int
	Series []lineSeries
	YTicks []tick
	XTicks []tick
	// Left, Right, Top, Bottom are the plot area's edges.
	Left, Right, Top, Bottom int
}

// lineSeries is one line: its points as an SVG points list and a dot
// (with a tooltip) per point.
type lineSeries struct {
	Name   string
	Class  string
	Points string
	Dots   []dot
}

type dot struct {
	X, Y  float64
	Title string
}

type tick struct {
	Pos   float64
	Label string
}

// barChart is a chart of counts per day, each bar split into a passing
// and a failing part.
type barChart struct {
	W, H   int
	Bars   []bar
	YTicks []tick
	XTicks []tick
	// Left, Right, Top, Bottom are the plot area's edges.
	Left, Right, Top, Bottom int
}

type bar struct {
	X, W           float64
	PassY, PassH   float64
	FailY, FailH   float64
	Title          string
	Passed, Failed int64
}

// dayAxis maps days to x positions across the plot area.
type dayAxis struct {
	days        []time.Time
	left, width float64
}

func newDayAxis(days []time.Time) dayAxis {
	return dayAxis{days: days, left: chartLeft, width: chartW - chartLeft - chartPadR}
}

// slot is the width of one day.
func (a dayAxis) slot() float64 { return a.width / float64(max(len(a.days), 1)) }

// x is the centre of day i.
func (a dayAxis) x(i int) float64 { return a.left + a.slot()*(float64(i)+0.5) }

// ticks labels about eight days evenly spread.
func (a dayAxis) ticks() []tick {
	n := len(a.days)
	step := max(1, (n+7)/8)
	var out []tick
	for i := 0; i < n; i += step {
		out = append(out, tick{Pos: a.x(i), Label: a.days[i].Format("Jan 2")})
	}
	return out
}

func plotY(v float64) float64 {
	h := float64(chartH - chartTop - chartBot)
	return float64(chartTop) + h*(1-min(max(v, 0), 1))
}

// newLineChart draws values[s][i] (NaN-free; ok[s][i] false for no value)
// of each series over days.
func newLineChart(days []time.Time, names []string, values [][]float64, has [][]bool, format func(float64) string) *lineChart {
	ax := newDayAxis(days)
	c := &lineChart{W: chartW, H: chartH, XTicks: ax.ticks(),
		Left: chartLeft, Right: chartW - chartPadR, Top: chartTop, Bottom: chartH - chartBot}
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.YTicks = append(c.YTicks, tick{Pos: plotY(v), Label: strconv.Itoa(int(v*100)) + "%"})
	}
	for s, name := range names {
		ls := lineSeries{Name: name, Class: "s" + strconv.Itoa(s%maxSeries)}
		var pts []string
		for i := range days {
			if !has[s][i] {
				continue
			}
			x, y := ax.x(i), plotY(values[s][i])
			pts = append(pts, strconv.FormatFloat(x, 'f', 1, 64)+","+strconv.FormatFloat(y, 'f', 1, 64))
			ls.Dots = append(ls.Dots, dot{X: x, Y: y, Title: name + ", " + days[i].Format("2006-01-02") + ": " + format(values[s][i])})
		}
		ls.Points = strings.Join(pts, " ")
		c.Series = append(c.Series, ls)
	}
	return c
}

// newBarChart draws passed[i] and failed[i] per day.
func newBarChart(days []time.Time, passed, failed []int64) *barChart {
	ax := newDayAxis(days)
	c := &barChart{W: chartW, H: chartH, XTicks: ax.ticks(),
		Left: chartLeft, Right: chartW - chartPadR, Top: chartTop, Bottom: chartH - chartBot}
	var most int64 = 1
	for i := range days {
		most = max(most, passed[i]+failed[i])
	}
	top := niceCeil(most)
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.YTicks = append(c.YTicks, tick{Pos: plotY(f), Label: groupDigits(int64(f * float64(top)))})
	}
	h := float64(chartH - chartTop - chartBot)
	w := max(ax.slot()*0.8, 1)
	for i, d := range days {
		ph := h * float64(passed[i]) / float64(top)
		fh := h * float64(failed[i]) / float64(top)
		base := float64(chartH - chartBot)
		c.Bars = append(c.Bars, bar{X: ax.x(i) - w/2, W: w, PassY: base - ph, PassH: ph, FailY: base - ph - fh, FailH: fh,
			Passed: passed[i], Failed: failed[i],
			Title: d.Format("2006-01-02") + ": " + groupDigits(passed[i]+failed[i]) + " evaluations, " + groupDigits(passed[i]) + " passed"})
	}
	return c
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten.
func niceCeil(n int64) int64 {
	p := int64(1)
	for {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
		p *= 10
	}
}

// gradeBar is one grade's share of a stacked bar 100 units wide.
type gradeBar struct {
	Grade string
	Count int64
	X, W  float64
	Share string
}

// newGradeBars splits a bar into the grades' shares.
func newGradeBars(grades [5]int64) []gradeBar {
	var total int64
	for _, n := range grades {
		total += n
	}
	var out []gradeBar
	x := 0.0
	for i, g := range []string{"A", "B", "C", "D", "F"} {
		w := 0.0
		if total > 0 {
			w = 1000 * float64(grades[i]) / float64(total)
		}
		share := "0%"
		if total > 0 {
			share = pct(float64(grades[i]) / float64(total))
		}
		out = append(out, gradeBar{Grade: g, Count: grades[i], X: x, W: w, Share: share})
		x += w
	}
	return out
}

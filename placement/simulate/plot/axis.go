package plot

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// scale maps an axis's values onto a span of SVG user units.
type scale struct {
	lo, hi   float64 // values
	from, to float64 // user units
	ticks    []Tick
}

func (s scale) at(v float64) float64 {
	return s.from + (v-s.lo)/(s.hi-s.lo)*(s.to-s.from)
}

// scales returns the chart's x and y scales.
func (c *Chart) scales() (x, y scale) {
	var xv, yv []float64
	for _, s := range c.Series {
		for _, p := range s.Points {
			xv, yv = append(xv, p.X), append(yv, p.Y)
		}
	}
	for _, r := range c.Refs {
		yv = append(yv, r.Y)
	}
	x = axisScale(c.X, xv, plotLeft, plotRight, false)
	y = axisScale(c.Y, yv, plotTop+plotHeight, plotTop, true)
	return x, y
}

// axisScale is the scale of axis a over values, drawn from user unit
// from to to; with widen, an axis bounded by its data ends on ticks
// (the y axis), else at the data (the x axis, where time or waits end).
func axisScale(a Axis, values []float64, from, to float64, widen bool) scale {
	s := scale{lo: a.Min, hi: a.Max, from: from, to: to}
	if len(a.Ticks) > 0 {
		s.ticks = a.Ticks
		if s.hi <= s.lo {
			s.lo, s.hi = a.Ticks[0].V, a.Ticks[0].V
			for _, t := range a.Ticks {
				s.lo, s.hi = min(s.lo, t.V), max(s.hi, t.V)
			}
			// Categories sit half a step in from the edges.
			pad := 0.5
			if len(a.Ticks) > 1 {
				pad = (s.hi - s.lo) / float64(len(a.Ticks)-1) / 2
			}
			s.lo, s.hi = s.lo-pad, s.hi+pad
		}
		return s
	}
	if s.hi <= s.lo {
		s.lo, s.hi = 0, 1
		if len(values) > 0 {
			lo, hi := values[0], values[0]
			for _, v := range values {
				lo, hi = min(lo, v), max(hi, v)
			}
			s.lo, s.hi = min(lo, 0), hi
			if s.hi <= s.lo {
				s.hi = s.lo + 1
			}
		}
		if widen {
			step := niceStep((s.hi - s.lo) / 6)
			s.lo, s.hi = math.Floor(s.lo/step)*step, math.Ceil(s.hi/step)*step
		}
	}
	step := niceStep((s.hi - s.lo) / 6)
	for k := math.Ceil(s.lo/step - 1e-9); k*step <= s.hi+step*1e-9; k++ {
		v := k * step
		s.ticks = append(s.ticks, Tick{V: v, Label: tickLabel(v, step)})
	}
	return s
}

// niceStep returns 1, 2 or 5 times a power of ten, at least raw.
func niceStep(raw float64) float64 {
	if raw <= 0 || !finite(raw) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// tickLabel prints v with as many decimals as step needs.
func tickLabel(v, step float64) string {
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Trim(s, "-0.") == "" {
		return "0"
	}
	return s
}

// writeAxes draws the plot frame, grid lines, ticks with their labels,
// and the axis labels.
func (c *Chart) writeAxes(b *strings.Builder, xs, ys scale) {
	fmt.Fprintf(b, `<defs><clipPath id="%s-clip"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>`+"\n",
		esc(c.ID), num(plotLeft-6), num(plotTop-6), num(plotRight-plotLeft+12), num(plotHeight+12))
	b.WriteString(`<g class="axis x-axis">` + "\n")
	for _, t := range xs.ticks {
		x := xs.at(t.V)
		if x < plotLeft-0.5 || x > plotRight+0.5 {
			continue
		}
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#dddddd"/>`, num(x), num(plotTop), num(x), num(plotTop+plotHeight))
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(x), num(plotTop+plotHeight+16), esc(t.Label))
	}
	fmt.Fprintf(b, `<text class="axis-label" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n",
		num((plotLeft+plotRight)/2), num(plotTop+plotHeight+36), esc(c.X.Label))
	b.WriteString("</g>\n")
	b.WriteString(`<g class="axis y-axis">` + "\n")
	for _, t := range ys.ticks {
		y := ys.at(t.V)
		if y < plotTop-0.5 || y > plotTop+plotHeight+0.5 {
			continue
		}
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#dddddd"/>`, num(plotLeft), num(y), num(plotRight), num(y))
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`+"\n", num(plotLeft-6), num(y+4), esc(t.Label))
	}
	cy := plotTop + plotHeight/2
	fmt.Fprintf(b, `<text class="axis-label" x="18" y="%s" text-anchor="middle" transform="rotate(-90 18 %s)">%s</text>`+"\n",
		num(cy), num(cy), esc(c.Y.Label))
	b.WriteString("</g>\n")
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#333333"/>`+"\n",
		num(plotLeft), num(plotTop), num(plotRight-plotLeft), num(plotHeight))
}

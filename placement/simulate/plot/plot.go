// Package plot draws line charts as self-contained SVG: labelled axes
// with tick labels, a legend, a text alternative (title, desc and ARIA
// attributes) and series told apart by a colour-blind-safe palette, a
// dash pattern and a marker each, so that no series is known by its
// colour alone. It fetches nothing and needs no script: the simulator's
// HTML report (toposcope simulate --html) embeds the charts as they are.
package plot

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// ErrChart is wrapped when a chart cannot be drawn: no ID, or a point
// that is not a finite number.
var ErrChart = errors.New("plot: invalid chart")

// Chart is one line chart on linear axes.
type Chart struct {
	// ID prefixes the chart's element IDs; it must be unique in a page.
	ID string
	// Figure names what the chart shows (data-figure), for readers and
	// tests that look for one kind of chart.
	Figure string
	// Title is the chart's heading and accessible name.
	Title string
	// Desc is the text alternative: what the chart shows, in words and
	// numbers, for readers that do not see it.
	Desc string
	// X and Y are the axes.
	X, Y Axis
	// Series are the lines, in legend order.
	Series []Series
	// Refs are horizontal reference lines, such as a target share.
	Refs []Ref
	// Step draws each series as steps (the value holds until the next
	// point), as a distribution function is drawn.
	Step bool
}

// Axis is one axis of a chart.
type Axis struct {
	// Label names the quantity and its unit, e.g. "wait (hours)".
	Label string
	// Min and Max bound the axis; when Max <= Min they come from the
	// data (from 0 when no value is negative), the y axis widened to the
	// nearest ticks.
	Min, Max float64
	// Ticks, when set, are the ticks to draw (for categories); else
	// about five evenly spaced round values.
	Ticks []Tick
}

// Tick is a labelled position on an axis.
type Tick struct {
	V     float64
	Label string
}

// Series is one named line.
type Series struct {
	Name   string
	Points []Point
}

// Point is one value of a series.
type Point struct{ X, Y float64 }

// Ref is a horizontal reference line at Y, named by Label.
type Ref struct {
	Y     float64
	Label string
}

// Layout of a chart, in SVG user units.
const (
	width      = 640.0
	plotLeft   = 72.0
	plotRight  = 620.0
	plotTop    = 40.0
	plotHeight = 230.0
	legendTop  = plotTop + plotHeight + 58
	legendRow  = 22.0
	legendCols = 3
	legendColW = (plotRight - plotLeft) / legendCols
)

// Style is how a series is drawn.
type Style struct {
	// Colour is from the Okabe-Ito palette, which reads for the common
	// kinds of colour blindness.
	Colour string
	// Dash is the stroke-dasharray ("" for a solid line).
	Dash string
	// Marker is the marker shape: circle, square, triangle, diamond,
	// cross or plus.
	Marker string
}

var (
	palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#B8A000"}
	dashes  = []string{"", "8 4", "2 3", "10 3 2 3"}
	markers = []string{"circle", "square", "triangle", "diamond", "cross", "plus"}
)

// StyleOf returns the style of the i-th series: colour, dash and marker
// each cycle at their own length, and past the palette the dash pattern
// shifts, so that the first 48 series differ in at least one of dash or
// marker from every other series of the same colour.
func StyleOf(i int) Style {
	round := i / len(palette)
	return Style{
		Colour: palette[i%len(palette)],
		Dash:   dashes[(i+round)%len(dashes)],
		Marker: markers[(i+2*round)%len(markers)],
	}
}

// WriteSVG writes the chart as one <svg> element.
func (c *Chart) WriteSVG(w io.Writer) error {
	if c.ID == "" {
		return fmt.Errorf("%w: no ID", ErrChart)
	}
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) {
				return fmt.Errorf("%w: %s: series %q has a point (%g, %g) that is not a finite number", ErrChart, c.ID, s.Name, p.X, p.Y)
			}
		}
	}
	xs, ys := c.scales()
	var b strings.Builder
	rows := (len(c.Series) + len(c.Refs) + legendCols - 1) / legendCols
	height := legendTop + float64(max(rows, 1))*legendRow
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="%s" data-figure="%s" role="img" aria-labelledby="%s-title %s-desc" viewBox="0 0 %s %s" width="%s" height="%s" font-family="sans-serif" font-size="12">`+"\n",
		esc(c.ID), esc(c.Figure), esc(c.ID), esc(c.ID), num(width), num(height), num(width), num(height))
	fmt.Fprintf(&b, `<title id="%s-title">%s</title>`+"\n", esc(c.ID), esc(c.Title))
	fmt.Fprintf(&b, `<desc id="%s-desc">%s</desc>`+"\n", esc(c.ID), esc(c.Desc))
	fmt.Fprintf(&b, `<text x="%s" y="22" font-size="15" font-weight="bold" aria-hidden="true">%s</text>`+"\n", num(plotLeft), esc(c.Title))
	c.writeAxes(&b, xs, ys)
	for _, r := range c.Refs {
		y := ys.at(r.Y)
		fmt.Fprintf(&b, `<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#555555" stroke-width="1" stroke-dasharray="1 3"><title>%s</title></line>`+"\n",
			num(plotLeft), num(y), num(plotRight), num(y), esc(r.Label))
	}
	fmt.Fprintf(&b, `<g clip-path="url(#%s-clip)">`+"\n", esc(c.ID))
	for i, s := range c.Series {
		c.writeSeries(&b, i, s, xs, ys)
	}
	b.WriteString("</g>\n")
	c.writeLegend(&b)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("plot: write %s: %w", c.ID, err)
	}
	return nil
}

// writeSeries draws one series: its line (steps with Step) and its
// markers, in a group named by the series.
func (c *Chart) writeSeries(b *strings.Builder, i int, s Series, xs, ys scale) {
	st := StyleOf(i)
	fmt.Fprintf(b, `<g class="series" data-series="%s">`+"\n", esc(s.Name))
	fmt.Fprintf(b, "<title>%s</title>\n", esc(s.Name))
	if len(s.Points) > 1 {
		var d strings.Builder
		for k, p := range s.Points {
			x, y := xs.at(p.X), ys.at(p.Y)
			switch {
			case k == 0:
				fmt.Fprintf(&d, "M%s %s", num(x), num(y))
			case c.Step:
				fmt.Fprintf(&d, "H%s V%s", num(x), num(y))
			default:
				fmt.Fprintf(&d, "L%s %s", num(x), num(y))
			}
			if k < len(s.Points)-1 {
				d.WriteByte(' ')
			}
		}
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", d.String(), st.Colour, dashAttr(st.Dash))
	}
	// Every point of a short series is marked; a long one gets about
	// eight markers, offset per series so that lines that run together
	// still show each marker.
	every := 1
	if n := len(s.Points); n > 12 {
		every = (n + 7) / 8
	}
	for k, p := range s.Points {
		if len(s.Points) > 12 && (k+i)%every != 0 {
			continue
		}
		b.WriteString(marker(st, xs.at(p.X), ys.at(p.Y)))
	}
	b.WriteString("</g>\n")
}

// writeLegend names every series and reference line beside a sample of
// its stroke and marker.
func (c *Chart) writeLegend(b *strings.Builder) {
	fmt.Fprintf(b, `<g class="legend" aria-label="legend">`+"\n")
	at := func(k int) (float64, float64) {
		return plotLeft + float64(k%legendCols)*legendColW, legendTop + float64(k/legendCols)*legendRow
	}
	for i, s := range c.Series {
		st := StyleOf(i)
		x, y := at(i)
		fmt.Fprintf(b, `<g class="legend-entry"><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"%s/>%s<text x="%s" y="%s">%s</text></g>`+"\n",
			num(x), num(y-4), num(x+28), num(y-4), st.Colour, dashAttr(st.Dash), strings.TrimSuffix(marker(st, x+14, y-4), "\n"),
			num(x+34), num(y), esc(s.Name))
	}
	for k, r := range c.Refs {
		x, y := at(len(c.Series) + k)
		fmt.Fprintf(b, `<g class="legend-entry"><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#555555" stroke-width="1" stroke-dasharray="1 3"/><text x="%s" y="%s">%s</text></g>`+"\n",
			num(x), num(y-4), num(x+28), num(y-4), num(x+34), num(y), esc(r.Label))
	}
	b.WriteString("</g>\n")
}

// marker returns the marker of style st at (x, y).
func marker(st Style, x, y float64) string {
	const r = 4.0
	fill := fmt.Sprintf(`fill="%s" stroke="%s"`, st.Colour, st.Colour)
	switch st.Marker {
	case "square":
		return fmt.Sprintf(`<rect x="%s" y="%s" width="%s" height="%s" %s/>`+"\n", num(x-r), num(y-r), num(2*r), num(2*r), fill)
	case "triangle":
		return fmt.Sprintf(`<path d="M%s %sL%s %sL%s %sZ" %s/>`+"\n", num(x), num(y-r-1), num(x+r+1), num(y+r), num(x-r-1), num(y+r), fill)
	case "diamond":
		return fmt.Sprintf(`<path d="M%s %sL%s %sL%s %sL%s %sZ" %s/>`+"\n", num(x), num(y-r-1), num(x+r+1), num(y), num(x), num(y+r+1), num(x-r-1), num(y), fill)
	case "cross":
		return fmt.Sprintf(`<path d="M%s %sL%s %sM%s %sL%s %s" fill="none" stroke="%s" stroke-width="2"/>`+"\n",
			num(x-r), num(y-r), num(x+r), num(y+r), num(x-r), num(y+r), num(x+r), num(y-r), st.Colour)
	case "plus":
		return fmt.Sprintf(`<path d="M%s %sL%s %sM%s %sL%s %s" fill="none" stroke="%s" stroke-width="2"/>`+"\n",
			num(x-r-1), num(y), num(x+r+1), num(y), num(x), num(y-r-1), num(x), num(y+r+1), st.Colour)
	}
	return fmt.Sprintf(`<circle cx="%s" cy="%s" r="%s" %s/>`+"\n", num(x), num(y), num(r), fill)
}

func dashAttr(d string) string {
	if d == "" {
		return ""
	}
	return ` stroke-dasharray="` + d + `"`
}

// esc escapes text for XML and HTML alike.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}

// num prints a coordinate with at most one decimal.
func num(v float64) string {
	v = math.Round(v*10) / 10
	if v == 0 {
		v = 0 // no "-0"
	}
	return fmt.Sprintf("%g", v)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

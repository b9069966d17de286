package plot_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement/simulate/plot"
	"github.com/toposcope/toposcope/testenv/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func sample() *plot.Chart {
	return &plot.Chart{
		ID: "waits", Figure: "wait-cdf", Title: "Waits <by policy>", Desc: "a's waits end at 3 h; b's at 2 h.",
		X: plot.Axis{Label: "wait (hours)"}, Y: plot.Axis{Label: "jobs (%)"},
		Series: []plot.Series{
			{Name: "a", Points: []plot.Point{{0, 0}, {1, 50}, {3, 100}}},
			{Name: "b & c", Points: []plot.Point{{0, 20}, {0.5, 60}, {2, 100}}},
		},
		Refs: []plot.Ref{{Y: 95, Label: "95%"}},
		Step: true,
	}
}

// TestChartGolden: a fixed two-series chart is drawn as the golden SVG.
func TestChartGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := sample().WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/chart.svg", b.Bytes(), *update)
}

// element is a parsed XML element with its children.
type element struct {
	name  string
	attrs map[string]string
	text  string
	kids  []*element
}

func parse(t *testing.T, data []byte) *element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	root := &element{}
	stack := []*element{root}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		top := stack[len(stack)-1]
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			top.kids = append(top.kids, e)
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.text += string(tok)
		}
	}
	return root
}

func (e *element) all(match func(*element) bool) []*element {
	var out []*element
	for _, k := range e.kids {
		if match(k) {
			out = append(out, k)
		}
		out = append(out, k.all(match)...)
	}
	return out
}

func (e *element) texts() string {
	s := e.text
	for _, k := range e.kids {
		s += k.texts()
	}
	return s
}

// TestChartStructure: the SVG is well-formed, named by its title and
// desc through aria-labelledby, has both axis labels, tick labels, one
// series group and one legend entry per series (each naming it), the
// reference line in the legend, and escapes text.
func TestChartStructure(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	c := sample()
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	root := parse(t, b.Bytes())
	if len(root.kids) != 1 || root.kids[0].name != "svg" {
		t.Fatalf("want one svg element, got %+v", root.kids)
	}
	svg := root.kids[0]
	if svg.attrs["role"] != "img" || svg.attrs["aria-labelledby"] != "waits-title waits-desc" || svg.attrs["data-figure"] != "wait-cdf" {
		t.Errorf("svg attributes %v", svg.attrs)
	}
	byID := func(id string) *element {
		m := svg.all(func(e *element) bool { return e.attrs["id"] == id })
		if len(m) != 1 {
			t.Fatalf("%d elements with id %s", len(m), id)
		}
		return m[0]
	}
	if got := byID("waits-title"); got.name != "title" || got.text != c.Title {
		t.Errorf("title %q, want %q", got.text, c.Title)
	}
	if got := byID("waits-desc"); got.name != "desc" || got.text != c.Desc {
		t.Errorf("desc %q, want %q", got.text, c.Desc)
	}
	var labels []string
	for _, e := range svg.all(func(e *element) bool { return e.attrs["class"] == "axis-label" }) {
		labels = append(labels, e.text)
	}
	if strings.Join(labels, "|") != "wait (hours)|jobs (%)" {
		t.Errorf("axis labels %q", labels)
	}
	ticks := svg.all(func(e *element) bool { return e.attrs["class"] == "tick" })
	if len(ticks) < 6 {
		t.Errorf("%d tick labels, want at least 6", len(ticks))
	}
	series := svg.all(func(e *element) bool { return e.attrs["class"] == "series" })
	legend := svg.all(func(e *element) bool { return e.attrs["class"] == "legend-entry" })
	if len(series) != 2 || len(legend) != 3 {
		t.Fatalf("%d series and %d legend entries, want 2 and 3", len(series), len(legend))
	}
	for i, want := range []string{"a", "b & c", "95%"} {
		if got := legend[i].texts(); got != want {
			t.Errorf("legend entry %d reads %q, want %q", i, got, want)
		}
		if i < 2 && series[i].attrs["data-series"] != want {
			t.Errorf("series %d is %q, want %q", i, series[i].attrs["data-series"], want)
		}
	}
	// The second series is dashed; the first is not: not by colour alone.
	if strings.Contains(b.String(), `stroke="#0072B2" stroke-width="2" stroke-dasharray`) ||
		!strings.Contains(b.String(), `stroke="#D55E00" stroke-width="2" stroke-dasharray="8 4"`) {
		t.Errorf("dash patterns not as StyleOf says:\n%s", b.String())
	}
}

// TestStyles: the first 48 series differ pairwise in colour, dash or
// marker, and two of one colour differ in dash or marker.
func TestStyles(t *testing.T) {
	t.Parallel()
	seen := map[plot.Style]int{}
	for i := range 48 {
		st := plot.StyleOf(i)
		if j, dup := seen[st]; dup {
			t.Errorf("series %d and %d share style %+v", j, i, st)
		}
		seen[st] = i
	}
}

// TestTicks: automatic axes start at 0 for non-negative data, end on a
// round tick past the largest value, and label ticks with the decimals
// their step needs.
func TestTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		ys    []float64
		ticks string
	}{
		{"percent", []float64{3, 97}, "0 20 40 60 80 100"},
		{"small", []float64{0.01, 0.33}, "0 0.1 0.2 0.3 0.4"},
		{"negative", []float64{-7, 12}, "-10 -5 0 5 10 15"},
		{"flat zero", []float64{0, 0}, "0 0.2 0.4 0.6 0.8 1.0"},
		{"large", []float64{0, 12345}, "0 5000 10000 15000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var pts []plot.Point
			for i, y := range tc.ys {
				pts = append(pts, plot.Point{X: float64(i), Y: y})
			}
			c := &plot.Chart{ID: "c", X: plot.Axis{Ticks: []plot.Tick{{0, "first"}, {1, "second"}}}, Series: []plot.Series{{Name: "s", Points: pts}}}
			var b bytes.Buffer
			if err := c.WriteSVG(&b); err != nil {
				t.Fatal(err)
			}
			root := parse(t, b.Bytes())
			var ys, xs []string
			for _, ax := range root.all(func(e *element) bool { return strings.HasPrefix(e.attrs["class"], "axis ") }) {
				for _, tk := range ax.all(func(e *element) bool { return e.attrs["class"] == "tick" }) {
					if strings.Contains(ax.attrs["class"], "y-axis") {
						ys = append(ys, tk.text)
					} else {
						xs = append(xs, tk.text)
					}
				}
			}
			if got := strings.Join(ys, " "); got != tc.ticks {
				t.Errorf("y ticks %q, want %q", got, tc.ticks)
			}
			if got := strings.Join(xs, " "); got != "first second" {
				t.Errorf("category ticks %q", got)
			}
		})
	}
}

// TestTimeAxisEndsAtData: an x axis from the data ends at the last
// value, not at the next round tick, so that a run of 10.6 days fills
// the plot; its ticks are the round values inside.
func TestTimeAxisEndsAtData(t *testing.T) {
	t.Parallel()
	c := &plot.Chart{ID: "c", Series: []plot.Series{{Name: "s", Points: []plot.Point{{0, 1}, {10.6, 2}}}}}
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	root := parse(t, b.Bytes())
	var xs []string
	for _, ax := range root.all(func(e *element) bool { return e.attrs["class"] == "axis x-axis" }) {
		for _, tk := range ax.all(func(e *element) bool { return e.attrs["class"] == "tick" }) {
			xs = append(xs, tk.text)
		}
	}
	if got := strings.Join(xs, " "); got != "0 2 4 6 8 10" {
		t.Errorf("x ticks %q", got)
	}
	// The last point is at the plot's right edge.
	if !strings.Contains(b.String(), "L620 ") {
		t.Errorf("the line does not reach the right edge:\n%s", b.String())
	}
}

// TestInvalidChart: a chart without an ID or with a point that is not a
// finite number is refused, naming the series.
func TestInvalidChart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		c    plot.Chart
		want string
	}{
		{"no id", plot.Chart{}, "no ID"},
		{"NaN", plot.Chart{ID: "c", Series: []plot.Series{{Name: "s1", Points: []plot.Point{{0, math.NaN()}}}}}, `series "s1"`},
		{"Inf", plot.Chart{ID: "c", Series: []plot.Series{{Name: "s2", Points: []plot.Point{{math.Inf(1), 0}}}}}, `series "s2"`},
	} {
		err := tc.c.WriteSVG(io.Discard)
		if !errors.Is(err, plot.ErrChart) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want ErrChart naming %q", tc.name, err, tc.want)
		}
	}
}

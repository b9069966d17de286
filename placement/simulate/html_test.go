package simulate_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement/simulate"
	"github.com/toposcope/toposcope/testenv/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// smallRun replays a fixed twelve-job trace of three accounts on
// small-tree (128 GPUs) under every policy, with eight samples.
func smallRun(t *testing.T) []*simulate.Report {
	t.Helper()
	g := model(t, "small-tree")
	jobs := trace(t, "0,a,128,3600,3600\n0,b,64,7200,600\n300,c,8,1800,0\n600,a,16,3600,900\n"+
		"900,b,32,5400,0\n1200,c,64,3600,3600\n1800,a,8,600,60\n2400,b,96,1800,1800\n3000,c,4,7200,0\n"+
		"3600,a,32,3600,3600\n4200,b,8,900,0\n4800,c,128,3600,3600\n")
	var reports []*simulate.Report
	for _, p := range simulate.Policies() {
		r, err := simulate.Run(g, jobs, p, simulate.Options{Samples: 8})
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, r)
	}
	return reports
}

// TestFiguresGolden: the charts of a small fixed run, each an SVG
// golden file under testdata/figures (go test -update rewrites them).
func TestFiguresGolden(t *testing.T) {
	t.Parallel()
	charts, err := simulate.Figures(smallRun(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 3+len(simulate.Policies()) {
		t.Fatalf("%d charts, want %d", len(charts), 3+len(simulate.Policies()))
	}
	for _, c := range charts {
		var b bytes.Buffer
		if err := c.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "figures", c.ID+".svg"), b.Bytes(), *update)
	}
}

// node is an element of the parsed page.
type node struct {
	name  string
	attrs map[string]string
	text  string
	kids  []*node
}

// parsePage reads the page as XML: it is written well-formed, so that
// the standard library's parser can check it.
func parsePage(t *testing.T, page []byte) *node {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	root := &node{}
	stack := []*node{root}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the page is not well-formed: %v", err)
		}
		top := stack[len(stack)-1]
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.text += string(tok)
		}
	}
	return root
}

func (n *node) find(match func(*node) bool) []*node {
	var out []*node
	for _, k := range n.kids {
		if match(k) {
			out = append(out, k)
		}
		out = append(out, k.find(match)...)
	}
	return out
}

func (n *node) allText() string {
	s := n.text
	for _, k := range n.kids {
		s += k.allText()
	}
	return s
}

func hasClass(class string) func(*node) bool {
	return func(n *node) bool { return n.attrs["class"] == class }
}

// TestHTMLPage: the page of the small run has one chart per figure
// (the three compared ones, one delivered ÷ owed per policy), each with
// both axis labels, tick labels, a legend naming every series, and a
// text alternative (title and desc named by aria-labelledby); the
// summary table has a row per policy and each policy an accounts table;
// nothing is loaded from elsewhere (no script, link, src or external
// href).
func TestHTMLPage(t *testing.T) {
	t.Parallel()
	reports := smallRun(t)
	var b bytes.Buffer
	if err := simulate.WriteHTML(&b, simulate.Page{Title: "small-tree <twelve jobs>", About: "a fixed trace", Reports: reports}); err != nil {
		t.Fatal(err)
	}
	root := parsePage(t, b.Bytes())
	svgs := root.find(func(n *node) bool { return n.name == "svg" })
	count := map[string]int{}
	for _, svg := range svgs {
		fig := svg.attrs["data-figure"]
		count[fig]++
		ids := strings.Fields(svg.attrs["aria-labelledby"])
		if svg.attrs["role"] != "img" || len(ids) != 2 {
			t.Errorf("%s: role %q, aria-labelledby %q", fig, svg.attrs["role"], svg.attrs["aria-labelledby"])
			continue
		}
		for i, want := range []string{"title", "desc"} {
			m := svg.find(func(n *node) bool { return n.attrs["id"] == ids[i] })
			if len(m) != 1 || m[0].name != want || len(m[0].text) < 10 {
				t.Errorf("%s: %s %q missing or empty", fig, want, ids[i])
			}
		}
		labels := svg.find(hasClass("axis-label"))
		if len(labels) != 2 || labels[0].text == "" || !strings.Contains(labels[1].text, "(") {
			t.Errorf("%s: axis labels %v (want two, with units)", fig, labels)
		}
		if ticks := svg.find(hasClass("tick")); len(ticks) < 4 {
			t.Errorf("%s: %d tick labels", fig, len(ticks))
		}
		series, legend := svg.find(hasClass("series")), svg.find(hasClass("legend-entry"))
		if len(series) == 0 || len(legend) < len(series) {
			t.Errorf("%s: %d series, %d legend entries", fig, len(series), len(legend))
		}
		for i, s := range series {
			if i < len(legend) && legend[i].allText() != s.attrs["data-series"] {
				t.Errorf("%s: legend entry %d reads %q for series %q", fig, i, legend[i].allText(), s.attrs["data-series"])
			}
		}
	}
	n := len(simulate.Policies())
	want := map[string]int{simulate.FigureWaitCDF: 1, simulate.FigureLargestWaits: 1, simulate.FigureOccupancy: 1, simulate.FigureDeliveredOwed: n}
	if len(count) != len(want) {
		t.Errorf("figures %v, want %v", count, want)
	}
	for fig, c := range want {
		if count[fig] != c {
			t.Errorf("%d charts of %s, want %d", count[fig], fig, c)
		}
	}
	rows := root.find(func(n *node) bool { return n.name == "tr" && n.attrs["class"] == "" })
	summary := root.find(func(n *node) bool { return n.attrs["id"] == "summary" })
	if len(summary) != 1 || len(summary[0].find(func(n *node) bool { return n.name == "tr" })) != n+1 {
		t.Errorf("summary table: want a header and %d rows (%d rows on the page)", n, len(rows))
	}
	if got := len(root.find(hasClass("accounts"))); got != n {
		t.Errorf("%d accounts tables, want %d", got, n)
	}
	for _, el := range root.find(func(*node) bool { return true }) {
		if el.name == "script" || el.name == "link" || el.name == "img" || el.name == "iframe" {
			t.Errorf("the page has a <%s>", el.name)
		}
		for k, v := range el.attrs {
			if k == "src" || (k == "href" && !strings.HasPrefix(v, "#")) {
				t.Errorf("<%s %s=%q> loads from elsewhere", el.name, k, v)
			}
		}
	}
	if strings.Contains(b.String(), "url(http") || strings.Contains(b.String(), "@import") {
		t.Errorf("the style loads from elsewhere")
	}
	if titles := root.find(func(n *node) bool { return n.name == "h1" }); len(titles) != 1 || titles[0].text != "small-tree <twelve jobs>" {
		t.Errorf("h1 %v", titles)
	}
}

// TestHTMLNeedsSeries: a report run without Samples cannot be plotted.
func TestHTMLNeedsSeries(t *testing.T) {
	t.Parallel()
	r, err := simulate.Run(model(t, "small-tree"), trace(t, "0,a,8,60,0\n"), simulate.PolicyFirstFit, simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = simulate.WriteHTML(io.Discard, simulate.Page{Reports: []*simulate.Report{r}})
	if !errors.Is(err, simulate.ErrNoSeries) || !strings.Contains(err.Error(), "firstfit") {
		t.Errorf("err %v, want ErrNoSeries naming the policy", err)
	}
}

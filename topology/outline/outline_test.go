package outline_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/topology"
	"github.com/toposcope/toposcope/topology/outline"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fabric builds a small fat tree: one core, two spines, three leaves
// each, four 8-GPU nodes per leaf, two-node NVLink domains (one of them
// across two leaves), one node under no switch and a switch name that
// needs quoting.
func fabric(t *testing.T) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	b.AddSwitch(topology.SwitchInfo{ID: "core", DisplayName: "Core \"A\""})
	for s := range 2 {
		spine := fmt.Sprintf("spine%d", s)
		b.AddSwitch(topology.SwitchInfo{ID: spine})
		b.Link("core", spine)
		for l := range 3 {
			leaf := fmt.Sprintf("leaf%d%d", s, l)
			b.AddSwitch(topology.SwitchInfo{ID: leaf})
			b.Link(spine, leaf)
			for n := range 4 {
				name := fmt.Sprintf("gpu%d%d%d", s, l, n)
				b.AddNode(topology.Node{Name: name, GPUs: 8, InstanceID: "i-" + name})
				b.AttachNode(leaf, name)
				b.AddToDomain(name, fmt.Sprintf("nvl%d%d%d", s, l, n/2), "")
			}
		}
	}
	b.AddNode(topology.Node{Name: "login1", GPUs: 0})
	b.AddNode(topology.Node{Name: "gpu999", GPUs: 4})
	b.AddToDomain("gpu999", "nvl-loose", "")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func check(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, *update)
}

func TestDOT(t *testing.T) {
	t.Parallel()
	g := fabric(t)
	got := outline.AppendDOT(nil, topology.Summarize(g))
	check(t, "fabric.dot", got)
	// Its size follows switches and domains: one line per switch, edge,
	// domain and domain edge, never one per node.
	if lines := bytes.Count(got, []byte("\n")); lines > 2*len(g.Switches())+2*len(g.Domains())+10 {
		t.Errorf("%d lines for %d switches and %d domains", lines, len(g.Switches()), len(g.Domains()))
	}
	if bytes.Contains(got, []byte(`"n:`)) {
		t.Error("the aggregated DOT names single nodes")
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	g := fabric(t)
	s := topology.Summarize(g)
	tests := []struct {
		name string
		opts outline.TextOptions
	}{
		{"all", outline.TextOptions{}},
		{"depth2", outline.TextOptions{Depth: 2}},
		{"capped", outline.TextOptions{MaxChildren: 2, Nodes: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := outline.WriteText(&b, s, tt.opts); err != nil {
				t.Fatal(err)
			}
			check(t, "fabric-"+tt.name+".txt", b.Bytes())
		})
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	s := topology.Summarize(fabric(t))
	for _, node := range []string{"gpu121", "gpu999"} {
		var b bytes.Buffer
		found, err := outline.WritePath(&b, s, node)
		if err != nil || !found {
			t.Fatalf("%s: found %v, %v", node, found, err)
		}
		check(t, "path-"+node+".txt", b.Bytes())
		if !strings.Contains(b.String(), node+" · ") {
			t.Errorf("%s: the path does not end at the node:\n%s", node, b.String())
		}
	}
	var b bytes.Buffer
	if found, err := outline.WritePath(&b, s, "nope"); found || err != nil || b.Len() != 0 {
		t.Errorf("unknown node: found %v, err %v, wrote %q", found, err, b.String())
	}
}

// TestDOTLaysOut has Graphviz's dot lay out the aggregated DOT: it must
// accept it and draw one shape per switch, domain and the box of nodes
// under no switch, and no node of its own.
func TestDOTLaysOut(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("dot")
	switch {
	case err != nil && os.Getenv("CI") == "true":
		t.Fatalf("CI=true and no Graphviz dot: %v (hack/install-browser.sh installs it)", err)
	case err != nil:
		t.Skipf("no Graphviz dot: %v (hack/install-browser.sh installs it)", err)
	}
	g := fabric(t)
	cmd := exec.Command(bin, "-Tsvg")
	cmd.Stdin = bytes.NewReader(outline.AppendDOT(nil, topology.Summarize(g)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	svg, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("dot -Tsvg: %v: %s", err, stderr.String())
	}
	shapes := regexp.MustCompile(`<g id="node\d+" class="node">`).FindAll(svg, -1)
	if want := len(g.Switches()) + len(g.Domains()) + 1; len(shapes) != want {
		t.Errorf("dot drew %d shapes, want %d (switches, domains and the unswitched box)", len(shapes), want)
	}
	size := regexp.MustCompile(`<svg width="(\d+)pt" height="(\d+)pt"`).FindSubmatch(svg)
	if size == nil {
		t.Fatalf("no size in the SVG: %.300s", svg)
	}
	t.Logf("laid out at %s × %s pt", size[1], size[2])
}

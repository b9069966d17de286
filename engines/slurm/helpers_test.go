package slurm

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/hostlist"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/sim"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// spec describes a small graph for tests.
type spec struct {
	// links are "parent>child" switch links.
	links []string
	// leaves maps a switch ID to the hostlist of its nodes ("" declares a
	// switch with no node).
	leaves map[string]string
	// domains maps a domain ID to the hostlist of its nodes.
	domains map[string]string
	// loose is a hostlist of nodes under no switch.
	loose string
	// speeds are link speeds by switch ID.
	speeds map[string]uint32
}

func expand(t testing.TB, expr string) []string {
	t.Helper()
	names, err := hostlist.Expand(expr)
	if err != nil {
		t.Fatalf("expand %q: %v", expr, err)
	}
	return names
}

// build turns a spec into a Graph.
func build(t testing.TB, s spec) *topology.Graph {
	t.Helper()
	b := topology.NewBuilder()
	declare := func(id string) { b.AddSwitch(topology.SwitchInfo{ID: id, LinkSpeedGbps: s.speeds[id]}) }
	for _, l := range s.links {
		parent, child, ok := strings.Cut(l, ">")
		if !ok {
			t.Fatalf("bad link %q", l)
		}
		declare(parent)
		declare(child)
		b.Link(parent, child)
	}
	for id, nodes := range s.leaves {
		declare(id)
		for _, n := range expand(t, nodes) {
			b.AddNode(topology.Node{Name: n})
			b.AttachNode(id, n)
		}
	}
	for _, n := range expand(t, s.loose) {
		b.AddNode(topology.Node{Name: n})
	}
	for id, nodes := range s.domains {
		for _, n := range expand(t, nodes) {
			b.AddNode(topology.Node{Name: n})
			b.AddToDomain(n, id, "")
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return g
}

// model loads a bundled simulation model's graph.
func model(t testing.TB, name string) *topology.Graph {
	t.Helper()
	m, err := sim.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Graph(providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// generated builds a graph from sim.Generate.
func generated(t testing.TB, o sim.GenerateOptions) *topology.Graph {
	t.Helper()
	data, err := sim.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := sim.Parse(data, "generated")
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Graph(providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// bundledModels returns the names sim.Load accepts.
func bundledModels() []string { return []string{"small-tree", "fat-tree-512", "nvl72", "mixed"} }

// randomOptions shape randomGraph.
type randomOptions struct {
	// domainSize > 0 groups each leaf's nodes into domains of about this
	// size (never across leaves, so every domain sits under one leaf).
	domainSize int
	// emptyLeaves allows leaves with no node.
	emptyLeaves bool
}

// randomGraph builds a random switch tree from seed: 1-2 roots of depth
// 1-4, random fan-outs and leaf sizes, some switch IDs with characters
// that force hashed names, some nodes under no switch.
func randomGraph(t testing.TB, seed uint64, o randomOptions) *topology.Graph {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1))
	b := topology.NewBuilder()
	nextNode, nextSw, nextDom := 0, 0, 0
	newID := func(kind string) string {
		nextSw++
		switch r.IntN(5) {
		case 0:
			return fmt.Sprintf("ib/0x2c5e:%s %d", kind, nextSw) // hashed
		case 1:
			return fmt.Sprintf("%s.%d.%d", kind, seed, nextSw) // '.' is unsafe: hashed
		default:
			return fmt.Sprintf("%s%03d", kind, nextSw)
		}
	}
	var grow func(parent string, depth int)
	grow = func(parent string, depth int) {
		id := newID(map[bool]string{true: "leaf", false: "sw"}[depth == 1])
		b.AddSwitch(topology.SwitchInfo{ID: id, LinkSpeedGbps: uint32(r.IntN(3)) * 400})
		if parent != "" {
			b.Link(parent, id)
		}
		if depth > 1 {
			grow(id, depth-1) // the first child makes the subtree this deep
			for range r.IntN(4) {
				grow(id, 1+r.IntN(depth-1))
			}
			return
		}
		n := 1 + r.IntN(6)
		if o.emptyLeaves && r.IntN(4) == 0 {
			n = 0
		}
		var names []string
		for range n {
			nextNode++
			name := fmt.Sprintf("n%04d", nextNode)
			names = append(names, name)
			b.AddNode(topology.Node{Name: name})
			b.AttachNode(id, name)
		}
		if o.domainSize > 0 {
			for len(names) > 0 {
				k := min(len(names), o.domainSize-r.IntN(2))
				nextDom++
				dom := fmt.Sprintf("nvl%03d", nextDom)
				if r.IntN(3) == 0 {
					dom = fmt.Sprintf("nvl/%d rack", nextDom)
				}
				for _, n := range names[:k] {
					b.AddToDomain(n, dom, "")
				}
				names = names[k:]
			}
		}
	}
	for range 1 + r.IntN(2) {
		grow("", 1+r.IntN(4))
	}
	for i := range r.IntN(4) {
		name := fmt.Sprintf("loose%02d", i+1)
		b.AddNode(topology.Node{Name: name})
	}
	g, err := b.Build()
	if err != nil {
		t.Fatalf("random graph %d: %v", seed, err)
	}
	return g
}

// newEngine builds an engine from a config derived from DefaultConfig.
func newEngine(t testing.TB, edit func(*Config)) *Engine {
	t.Helper()
	cfg := DefaultConfig()
	if edit != nil {
		edit(&cfg)
	}
	e, err := New(cfg, engines.Deps{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// render renders g with a config edit, failing the test on error.
func render(t testing.TB, g *topology.Graph, edit func(*Config)) string {
	t.Helper()
	out, err := newEngine(t, edit).Render(context.Background(), g)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return string(out)
}

// body drops comment lines.
func body(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "#") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update)
}

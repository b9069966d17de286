package topology_test

import (
	"testing"

	"github.com/toposcope/toposcope/topology"
)

func TestWithAttributes(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	b.AddNode(topology.Node{Name: "a", Attributes: map[string]string{"k": "1"}})
	b.AddNode(topology.Node{Name: "b"})
	b.AddPath("a", []topology.SwitchInfo{{ID: "leaf"}})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := g.WithAttributes(map[string]map[string]string{"a": {"k": "2", "p": "gpu"}, "b": {"p": "cpu"}, "zz": {"p": "x"}})
	a, _ := h.Node("a")
	bn, _ := h.Node("b")
	if a.Attributes["k"] != "2" || a.Attributes["p"] != "gpu" || bn.Attributes["p"] != "cpu" || len(h.Nodes()) != 2 {
		t.Errorf("new graph: a=%v b=%v", a.Attributes, bn.Attributes)
	}
	if a0, _ := g.Node("a"); a0.Attributes["k"] != "1" || len(a0.Attributes) != 1 {
		t.Errorf("the original graph changed: %v", a0.Attributes)
	}
	if b0, _ := g.Node("b"); b0.Attributes != nil {
		t.Errorf("the original graph changed: %v", b0.Attributes)
	}
	if h.Path("a")[0].ID != "leaf" || a.Leaf != "leaf" {
		t.Errorf("the new graph lost the tree: %v", h.Path("a"))
	}
}

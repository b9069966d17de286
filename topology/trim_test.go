package topology_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/topology"
)

func pathIDs(g *topology.Graph, node string) string {
	var ids []string
	for _, s := range g.Path(node) {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, " ")
}

// TestTrimTop: each node loses its own outermost switches (Topograph's
// trimTiers: instance A under leafA, spineA, coreX and B under leafB,
// coreX, trimmed by 1, leave spineA and leafB as roots); domains and
// facts stay.
func TestTrimTop(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	b.AddNode(topology.Node{Name: "A", InstanceID: "i-A", GPUs: 8})
	b.AddNode(topology.Node{Name: "B", GPUs: 8})
	b.AddNode(topology.Node{Name: "C", GPUs: 8})
	b.AddPath("A", []topology.SwitchInfo{{ID: "leafA"}, {ID: "spineA"}, {ID: "coreX", DisplayName: "core"}})
	b.AddPath("B", []topology.SwitchInfo{{ID: "leafB"}, {ID: "coreX", DisplayName: "core"}})
	b.AddToDomain("A", "nvl1", "rack1")
	b.AddToDomain("B", "nvl1", "")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		n       int
		a, b    string
		roots   []string
		unnamed []string // nodes under no switch
	}{
		{0, "leafA spineA coreX", "leafB coreX", []string{"coreX"}, []string{"C"}},
		{1, "leafA spineA", "leafB", []string{"leafB", "spineA"}, []string{"C"}},
		{2, "leafA", "", []string{"leafA"}, []string{"B", "C"}},
		{3, "", "", nil, []string{"A", "B", "C"}},
		{10, "", "", nil, []string{"A", "B", "C"}},
	}
	for _, tt := range tests {
		got, err := g.TrimTop(tt.n)
		if err != nil {
			t.Fatalf("TrimTop(%d): %v", tt.n, err)
		}
		if pathIDs(got, "A") != tt.a || pathIDs(got, "B") != tt.b {
			t.Errorf("TrimTop(%d): A under %q, B under %q; want %q, %q", tt.n, pathIDs(got, "A"), pathIDs(got, "B"), tt.a, tt.b)
		}
		var roots []string
		for _, r := range got.Roots() {
			roots = append(roots, r.ID)
		}
		slices.Sort(roots)
		if !slices.Equal(roots, tt.roots) {
			t.Errorf("TrimTop(%d): roots %v, want %v", tt.n, roots, tt.roots)
		}
		if w := got.NodesWithoutSwitch(); !slices.Equal(w, tt.unnamed) {
			t.Errorf("TrimTop(%d): nodes under no switch %v, want %v", tt.n, w, tt.unnamed)
		}
		a, _ := got.Node("A")
		if a.Domain != "nvl1" || a.SubDomain != "rack1" || a.InstanceID != "i-A" || len(got.Nodes()) != 3 {
			t.Errorf("TrimTop(%d): A = %+v, %d nodes", tt.n, a, len(got.Nodes()))
		}
	}
	if s, _ := g.Switch("coreX"); s == nil || s.DisplayName != "core" {
		t.Error("TrimTop changed the original graph")
	}
}

package topology_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/topology"
)

func sw(id string) topology.SwitchInfo { return topology.SwitchInfo{ID: id} }

func nodes(b *topology.Builder, names ...string) {
	for _, n := range names {
		b.AddNode(topology.Node{Name: n, GPUs: 8})
	}
}

func TestBuildFromPaths(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	nodes(b, "n10", "n2", "n1", "n3", "cpu1")
	b.AddPath("n1", []topology.SwitchInfo{sw("leaf1"), sw("spine1"), sw("core")})
	b.AddPath("n2", []topology.SwitchInfo{sw("leaf1"), sw("spine1"), sw("core")})
	b.AddPath("n3", []topology.SwitchInfo{sw("leaf2"), sw("spine1"), sw("core")})
	b.AddPath("n10", []topology.SwitchInfo{sw("leaf10"), sw("spine2"), sw("core")})
	b.AddToDomain("n1", "nvl1", "rack1")
	b.AddToDomain("n2", "nvl1", "rack2")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := names(g.Nodes()); !slices.Equal(got, []string{"cpu1", "n1", "n2", "n3", "n10"}) {
		t.Errorf("nodes = %v", got)
	}
	var order []string
	for _, s := range g.Switches() {
		order = append(order, s.ID)
	}
	if want := []string{"leaf1", "leaf2", "leaf10", "spine1", "spine2", "core"}; !slices.Equal(order, want) {
		t.Errorf("switch order = %v, want %v", order, want)
	}
	core, _ := g.Switch("core")
	if core.Level != 2 || !slices.Equal(core.Children, []string{"spine1", "spine2"}) {
		t.Errorf("core = %+v", core)
	}
	leaf1, _ := g.Switch("leaf1")
	if !slices.Equal(leaf1.Nodes, []string{"n1", "n2"}) || leaf1.Parent != "spine1" {
		t.Errorf("leaf1 = %+v", leaf1)
	}
	var path []string
	for _, s := range g.Path("n10") {
		path = append(path, s.ID)
	}
	if !slices.Equal(path, []string{"leaf10", "spine2", "core"}) {
		t.Errorf("path(n10) = %v", path)
	}
	if g.Depth() != 3 {
		t.Errorf("depth = %d", g.Depth())
	}
	if got := g.Unplaced(); !slices.Equal(got, []string{"cpu1"}) {
		t.Errorf("unplaced = %v", got)
	}
	if got := g.NodesWithoutDomain(); !slices.Equal(got, []string{"cpu1", "n3", "n10"}) {
		t.Errorf("without domain = %v", got)
	}
	d, ok := g.Domain("nvl1")
	if !ok || len(d.SubDomains) != 2 || d.SubDomains[0].ID != "rack1" {
		t.Errorf("domain = %+v", d)
	}
	if n, _ := g.Node("n2"); n.Leaf != "leaf1" || n.Domain != "nvl1" || n.SubDomain != "rack2" {
		t.Errorf("n2 = %+v", n)
	}
}

func names(ns []topology.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		build func(b *topology.Builder)
		want  error
		text  string
	}{
		{"node under two leaves", func(b *topology.Builder) {
			nodes(b, "n1")
			b.AddPath("n1", []topology.SwitchInfo{sw("leafA")})
			b.AddPath("n1", []topology.SwitchInfo{sw("leafB")})
		}, topology.ErrTwoLeaves, `"n1"`},
		{"switch under two parents", func(b *topology.Builder) {
			nodes(b, "n1", "n2")
			b.AddPath("n1", []topology.SwitchInfo{sw("leaf"), sw("spineA")})
			b.AddPath("n2", []topology.SwitchInfo{sw("leaf"), sw("spineB")})
		}, topology.ErrTwoParents, `"leaf"`},
		{"cycle", func(b *topology.Builder) {
			b.AddSwitch(sw("a"))
			b.AddSwitch(sw("b"))
			b.AddSwitch(sw("c"))
			b.Link("a", "b")
			b.Link("b", "c")
			b.Link("c", "a")
		}, topology.ErrCycle, `"a"`},
		{"self loop", func(b *topology.Builder) {
			b.AddSwitch(sw("a"))
			b.Link("a", "a")
		}, topology.ErrCycle, `"a"`},
		{"nodes and child switches", func(b *topology.Builder) {
			nodes(b, "n1", "n2")
			b.AddPath("n1", []topology.SwitchInfo{sw("leaf"), sw("spine")})
			b.AttachNode("spine", "n2")
		}, topology.ErrMixedSwitch, `"spine"`},
		{"duplicate node", func(b *topology.Builder) {
			b.AddNode(topology.Node{Name: "n1", GPUs: 8})
			b.AddNode(topology.Node{Name: "n1", GPUs: 4})
		}, topology.ErrDuplicateNode, `"n1"`},
		{"duplicate switch", func(b *topology.Builder) {
			b.AddSwitch(topology.SwitchInfo{ID: "s", DisplayName: "x"})
			b.AddSwitch(topology.SwitchInfo{ID: "s", DisplayName: "y"})
		}, topology.ErrDuplicateSwitch, `"s"`},
		{"unknown switch in link", func(b *topology.Builder) {
			b.AddSwitch(sw("a"))
			b.Link("a", "ghost")
		}, topology.ErrUnknownSwitch, `"ghost"`},
		{"unknown node", func(b *topology.Builder) {
			b.AddSwitch(sw("a"))
			b.AttachNode("a", "ghost")
		}, topology.ErrUnknownNode, `"ghost"`},
		{"bad node name", func(b *topology.Builder) {
			nodes(b, "n[1]")
		}, topology.ErrInvalidName, `"n[1]"`},
		{"empty switch id", func(b *topology.Builder) {
			b.AddSwitch(sw(""))
		}, topology.ErrEmptyName, "switch"},
		{"two domains", func(b *topology.Builder) {
			nodes(b, "n1")
			b.AddToDomain("n1", "d1", "")
			b.AddToDomain("n1", "d2", "")
		}, topology.ErrTwoDomains, `"n1"`},
		{"sub-domain in two domains", func(b *topology.Builder) {
			nodes(b, "n1", "n2")
			b.AddToDomain("n1", "d1", "rack")
			b.AddToDomain("n2", "d2", "rack")
		}, topology.ErrSubDomain, `"rack"`},
		{"name collision", func(b *topology.Builder) {
			long := strings.Repeat("x", 70)
			b.AddSwitch(sw(long))
			b.AddSwitch(sw(topology.SafeName(long)))
		}, topology.ErrNameCollision, "both map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := topology.NewBuilder()
			tt.build(b)
			_, err := b.Build()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q does not name %s", err, tt.text)
			}
		})
	}
}

func TestRepeatedDeclarationsAreIdempotent(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	for range 2 {
		nodes(b, "n1")
		b.AddPath("n1", []topology.SwitchInfo{sw("leaf"), sw("spine")})
		b.AddToDomain("n1", "d", "")
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes()) != 1 || len(g.Switches()) != 2 || len(g.Domains()) != 1 {
		t.Errorf("got %d nodes, %d switches, %d domains", len(g.Nodes()), len(g.Switches()), len(g.Domains()))
	}
}

func TestManyErrorsAreCapped(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	for range 50 {
		b.AddSwitch(sw(""))
	}
	_, err := b.Build()
	if err == nil || !strings.Contains(err.Error(), "and 30 more problems") {
		t.Fatalf("err = %v", err)
	}
}

func TestUnbalancedLevelsFollowSlurm(t *testing.T) {
	t.Parallel()
	// A root above one deep branch and one shallow leaf gets
	// 1 + the highest child level, as slurmctld computes it.
	b := topology.NewBuilder()
	nodes(b, "a1", "b1")
	b.AddPath("a1", []topology.SwitchInfo{sw("leafA"), sw("mid"), sw("root")})
	b.AddPath("b1", []topology.SwitchInfo{sw("leafB"), sw("root")})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	levels := map[string]int{}
	for _, s := range g.Switches() {
		levels[s.ID] = s.Level
	}
	want := map[string]int{"leafA": 0, "leafB": 0, "mid": 1, "root": 2}
	for id, l := range want {
		if levels[id] != l {
			t.Errorf("level(%s) = %d, want %d", id, levels[id], l)
		}
	}
}

func TestDomainsInFabricOrder(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	// Domain names sort d1 < d2 < d3 < d9, but the fabric puts d9 under
	// the first leaf.
	nodes(b, "n1", "n2", "n3", "n4", "x1")
	b.AddPath("n1", []topology.SwitchInfo{sw("leaf1"), sw("spine")})
	b.AddPath("n2", []topology.SwitchInfo{sw("leaf2"), sw("spine")})
	b.AddPath("n3", []topology.SwitchInfo{sw("leaf3"), sw("spine")})
	b.AddToDomain("n1", "d9", "")
	b.AddToDomain("n2", "d1", "")
	b.AddToDomain("n3", "d3", "")
	b.AddToDomain("x1", "d2", "") // under no switch: last
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range g.DomainsInFabricOrder() {
		got = append(got, d.ID)
	}
	if want := []string{"d9", "d1", "d3", "d2"}; !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	build := func() *topology.Graph {
		b := topology.NewBuilder()
		for i := range 200 {
			n := "n" + strings.Repeat("0", i%3) + string(rune('a'+i%26)) + itoa(i)
			nodes(b, n)
			b.AddPath(n, []topology.SwitchInfo{sw("leaf" + itoa(i%17)), sw("spine" + itoa(i%17%3))})
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, c := build(), build()
	if !slices.EqualFunc(a.Switches(), c.Switches(), func(x, y topology.Switch) bool {
		return x.ID == y.ID && slices.Equal(x.Nodes, y.Nodes) && slices.Equal(x.Children, y.Children)
	}) {
		t.Error("two builds of the same input differ")
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var s []byte
	for ; i > 0; i /= 10 {
		s = append([]byte{byte('0' + i%10)}, s...)
	}
	return string(s)
}

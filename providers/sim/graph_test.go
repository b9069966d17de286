package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

func switchIDs(g *topology.Graph) []string {
	var ids []string
	for _, s := range g.Switches() {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestGraphRequestedNodes(t *testing.T) {
	t.Parallel()
	type want struct {
		nodes, switches, unplaced, domains []string
	}
	tests := []struct {
		model string
		refs  []providers.NodeRef
		want  want
		check func(t *testing.T, g *topology.Graph)
	}{
		{
			model: "small-tree",
			refs:  []providers.NodeRef{{Name: "gpu003"}},
			want:  want{nodes: []string{"gpu003"}, switches: []string{"leaf1", "spine1"}},
		},
		{
			model: "small-tree",
			refs: []providers.NodeRef{
				{Name: "gpu009"}, {Name: "gpu001"}, {InstanceID: "i-0sim016"},
				{Name: "extra1", InstanceID: "i-extra", Region: "elsewhere"},
			},
			want: want{
				nodes:    []string{"extra1", "gpu001", "gpu009", "gpu016"},
				switches: []string{"leaf1", "leaf2", "spine1"},
				unplaced: []string{"extra1"},
			},
			check: func(t *testing.T, g *topology.Graph) {
				x, _ := g.Node("extra1")
				if x.InstanceID != "i-extra" || x.Region != "elsewhere" || x.GPUs != 0 || x.Leaf != "" {
					t.Errorf("unknown node = %+v, want its request facts and no topology", *x)
				}
				n, _ := g.Node("gpu016")
				if n.InstanceID != "i-0sim016" || n.Leaf != "leaf2" || n.GPUs != 8 || n.Region != "sim-east-1" {
					t.Errorf("node found by instance ID = %+v", *n)
				}
			},
		},
		{
			// A scheduler name the model does not know, with a known
			// instance ID, keeps the scheduler's name and the model's place.
			model: "small-tree",
			refs:  []providers.NodeRef{{Name: "k8s-node-a", InstanceID: "i-0sim005"}},
			want:  want{nodes: []string{"k8s-node-a"}, switches: []string{"leaf1", "spine1"}},
		},
		{
			model: "nvl72",
			refs:  []providers.NodeRef{{Name: "gb001"}, {Name: "gb002"}, {Name: "gb144"}, {Name: "gb001"}},
			want: want{
				nodes:    []string{"gb001", "gb002", "gb144"},
				switches: []string{"leaf1", "leaf4", "spine1", "spine2", "core"},
				domains:  []string{"nvl01", "nvl08"},
			},
		},
		{
			model: "mixed",
			refs:  []providers.NodeRef{{Name: "cpu01"}, {InstanceID: "i-cpu02"}, {Name: "gb12", Region: "ignored"}},
			want: want{
				nodes:    []string{"cpu01", "cpu02", "gb12"},
				switches: []string{"leaf3", "spine1"},
				unplaced: []string{"cpu01", "cpu02"},
				domains:  []string{"nvl36x2-1"},
			},
			check: func(t *testing.T, g *topology.Graph) {
				d, _ := g.Domain("nvl36x2-1")
				if len(d.SubDomains) != 1 || d.SubDomains[0].ID != "nvl36x2-1-rack-b" {
					t.Errorf("domain = %+v, want only sub-domain rack-b", *d)
				}
				n, _ := g.Node("gb12")
				if n.Region != "sim-central-1" {
					t.Errorf("gb12 region = %q, want the model's", n.Region)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.refs[0].Name+tt.refs[0].InstanceID, func(t *testing.T) {
			t.Parallel()
			m, err := Load(tt.model)
			if err != nil {
				t.Fatal(err)
			}
			g, err := m.Graph(providers.Request{Nodes: tt.refs})
			if err != nil {
				t.Fatalf("Graph: %v", err)
			}
			var nodes, domains []string
			for _, n := range g.Nodes() {
				nodes = append(nodes, n.Name)
			}
			for _, d := range g.Domains() {
				domains = append(domains, d.ID)
			}
			got := want{nodes: nodes, switches: switchIDs(g), unplaced: g.Unplaced(), domains: domains}
			if !slices.Equal(got.nodes, tt.want.nodes) || !slices.Equal(got.switches, tt.want.switches) ||
				!slices.Equal(got.unplaced, tt.want.unplaced) || !slices.Equal(got.domains, tt.want.domains) {
				t.Errorf("graph = %+v, want %+v", got, tt.want)
			}
			if tt.check != nil {
				tt.check(t, g)
			}
		})
	}
}

func TestGraphRequestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		refs []providers.NodeRef
		want string
	}{
		{"unknown instance ID only", []providers.NodeRef{{Name: "gpu001"}, {InstanceID: "i-nope"}},
			`requested node 1: no name, and instance ID "i-nope" is not in the model`},
		{"conflicting duplicates", []providers.NodeRef{{Name: "x", Region: "a"}, {Name: "x", Region: "b"}},
			"duplicate node"},
	}
	m, err := Load("small-tree")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := m.Graph(providers.Request{Nodes: tt.refs})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Graph error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestGraphIsRepeatable(t *testing.T) {
	t.Parallel()
	m, err := Load("mixed")
	if err != nil {
		t.Fatal(err)
	}
	g1, err1 := m.Graph(providers.Request{})
	g2, err2 := m.Graph(providers.Request{})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !slices.EqualFunc(g1.Nodes(), g2.Nodes(), func(a, b topology.Node) bool {
		return a.Name == b.Name && a.Leaf == b.Leaf && a.Domain == b.Domain
	}) || !slices.Equal(switchIDs(g1), switchIDs(g2)) {
		t.Error("two graphs of one model differ")
	}
}

package sim

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// counts are the documented figures of a model's full graph.
type counts struct {
	nodes, switches, levels, domains, subDomains, unplaced int
}

func countsOf(g *topology.Graph) counts {
	c := counts{
		nodes: len(g.Nodes()), switches: len(g.Switches()), levels: g.Depth(),
		domains: len(g.Domains()), unplaced: len(g.Unplaced()),
	}
	for _, d := range g.Domains() {
		c.subDomains += len(d.SubDomains)
	}
	return c
}

func TestBundledModels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want counts
	}{
		{"small-tree", counts{nodes: 16, switches: 3, levels: 2}},
		{"fat-tree-512", counts{nodes: 512, switches: 21, levels: 3}},
		{"venus-1080", counts{nodes: 135, switches: 13, levels: 3}},
		{"nvl72", counts{nodes: 144, switches: 7, levels: 3, domains: 8}},
		{"mixed", counts{nodes: 42, switches: 4, levels: 2, domains: 1, subDomains: 2, unplaced: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := Load(tt.name)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			info := m.Info()
			if info.Name != tt.name || info.Description == "" || info.Nodes != tt.want.nodes {
				t.Errorf("Info() = %+v, want name %q, a description and %d nodes", info, tt.name, tt.want.nodes)
			}
			if m.Source() != "bundled:"+tt.name {
				t.Errorf("Source() = %q", m.Source())
			}
			g, err := m.Graph(providers.Request{})
			if err != nil {
				t.Fatalf("Graph: %v", err)
			}
			if got := countsOf(g); got != tt.want {
				t.Errorf("counts = %+v, want %+v", got, tt.want)
			}
			for _, n := range g.Nodes() {
				if n.GPUs == 0 && !strings.HasPrefix(n.Name, "cpu") {
					t.Errorf("node %s has no GPUs", n.Name)
				}
			}
		})
	}
}

func TestBundledModelFacts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model, node          string
		gpus                 int
		leaf, domain, sub    string
		instanceID, attrType string
	}{
		{"small-tree", "gpu016", 8, "leaf2", "", "", "i-0sim016", "sim.h100x8"},
		{"fat-tree-512", "gpu512", 8, "leaf16", "", "", "", ""},
		{"nvl72", "gb019", 4, "leaf1", "nvl02", "", "", "sim.gb200"},
		{"nvl72", "gb144", 4, "leaf4", "nvl08", "", "", "sim.gb200"},
		{"mixed", "gb10", 4, "leaf3", "nvl36x2-1", "nvl36x2-1-rack-b", "", "sim.gb200"},
		{"mixed", "cpu03", 0, "", "", "", "i-cpu03", "sim.cpu"},
		{"mixed", "gpu001", 8, "leaf1", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.node, func(t *testing.T) {
			t.Parallel()
			m, err := Load(tt.model)
			if err != nil {
				t.Fatal(err)
			}
			g, err := m.Graph(providers.Request{})
			if err != nil {
				t.Fatal(err)
			}
			n, ok := g.Node(tt.node)
			if !ok {
				t.Fatalf("no node %s", tt.node)
			}
			got := [5]string{n.Leaf, n.Domain, n.SubDomain, n.InstanceID, n.Attributes["instanceType"]}
			want := [5]string{tt.leaf, tt.domain, tt.sub, tt.instanceID, tt.attrType}
			if got != want || n.GPUs != tt.gpus || n.Region == "" || n.Zone == "" {
				t.Errorf("node = %+v, want leaf/domain/sub/instance/type %v and %d GPUs, with region and zone", *n, want, tt.gpus)
			}
		})
	}
}

func TestBundledList(t *testing.T) {
	t.Parallel()
	got := Bundled()
	var names []string
	for _, info := range got {
		names = append(names, info.Name)
		if info.Description == "" || info.Nodes == 0 || strings.HasPrefix(info.Description, "invalid") {
			t.Errorf("bad info %+v", info)
		}
	}
	if want := []string{"small-tree", "fat-tree-512", "venus-1080", "nvl72", "mixed", "topograph-medium", "topograph-small-tree", "topograph-large"}; !slices.Equal(names, want) {
		t.Errorf("Bundled names = %v, want %v", names, want)
	}
	entries, err := fs.Glob(bundledFS, "models/*.yaml")
	if err != nil || len(entries) != len(got) {
		t.Errorf("embedded files %v (%v), want one per bundled model", entries, err)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("name: one\nswitches:\n  - id: s\n    nodes: n[1-3]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("name: one\nswitch: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		arg     string
		nodes   int
		wantErr []string
	}{
		{arg: "small-tree", nodes: 16},
		{arg: good, nodes: 3},
		{arg: bad, wantErr: []string{bad, "switch (line 2): unknown key"}},
		{arg: filepath.Join(dir, "nope.yaml"), wantErr: []string{"neither a bundled model", "small-tree, fat-tree-512, venus-1080, nvl72, mixed"}},
		{arg: "no-such-model", wantErr: []string{`"no-such-model"`, "small-tree, fat-tree-512, venus-1080, nvl72, mixed"}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.arg), func(t *testing.T) {
			t.Parallel()
			m, err := Load(tt.arg)
			if tt.wantErr == nil {
				if err != nil || m.Info().Nodes != tt.nodes {
					t.Fatalf("Load(%q) = %v, %v; want %d nodes", tt.arg, m, err, tt.nodes)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load(%q) succeeded", tt.arg)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(tt.arg, "nope") && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v is not fs.ErrNotExist", err)
			}
		})
	}
}

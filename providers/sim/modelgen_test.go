package sim

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
	goldenfile "github.com/toposcope/toposcope/testenv/golden"
	"github.com/toposcope/toposcope/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func generateGraph(t testing.TB, opts GenerateOptions) (*topology.Graph, []byte) {
	t.Helper()
	data, err := Generate(opts)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", opts, err)
	}
	m, err := Parse(data, "generated")
	if err != nil {
		t.Fatalf("Parse(Generate(%+v)): %v", opts, err)
	}
	g, err := m.Graph(providers.Request{})
	if err != nil {
		t.Fatalf("Graph(Generate(%+v)): %v", opts, err)
	}
	return g, data
}

func TestGenerateExactCounts(t *testing.T) {
	t.Parallel()
	sizes := []int{1, 31, 32, 33, 511, 512, 1000, 100000}
	shapes := []struct {
		shape                    Shape
		prefix                   string
		perLeaf, domainSize, gpu int
	}{
		{ShapeFatTree, "gpu", 32, 0, 8},
		{ShapeNVL72, "gb", 36, 18, 4},
	}
	for _, sh := range shapes {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s/%d", sh.shape, n), func(t *testing.T) {
				t.Parallel()
				g, data := generateGraph(t, GenerateOptions{Shape: sh.shape, Nodes: n})
				width := max(3, len(fmt.Sprint(n)))
				first := fmt.Sprintf("%s%0*d", sh.prefix, width, 1)
				last := fmt.Sprintf("%s%0*d", sh.prefix, width, n)
				nodes := g.Nodes()
				if len(nodes) != n || nodes[0].Name != first || nodes[n-1].Name != last {
					t.Fatalf("%d nodes %s..%s, want %d nodes %s..%s", len(nodes), nodes[0].Name, nodes[len(nodes)-1].Name, n, first, last)
				}
				leaves := (n + sh.perLeaf - 1) / sh.perLeaf
				spines := (leaves + 15) / 16
				if got := len(g.Switches()); got != leaves+spines+1 || g.Depth() != 3 {
					t.Errorf("%d switches in %d levels, want %d in 3", got, g.Depth(), leaves+spines+1)
				}
				wantDomains := 0
				if sh.domainSize > 0 {
					wantDomains = (n + sh.domainSize - 1) / sh.domainSize
				}
				if got := len(g.Domains()); got != wantDomains {
					t.Errorf("%d domains, want %d", got, wantDomains)
				}
				if len(g.NodesWithoutSwitch()) != 0 || (wantDomains > 0 && len(g.NodesWithoutDomain()) != 0) {
					t.Errorf("nodes left out: %d without switch, %d without domain", len(g.NodesWithoutSwitch()), len(g.NodesWithoutDomain()))
				}
				if nodes[0].GPUs != sh.gpu {
					t.Errorf("GPUs = %d, want %d", nodes[0].GPUs, sh.gpu)
				}
				if n == 100000 && len(data) > 1<<20 {
					t.Errorf("a %d-node model takes %d bytes", n, len(data))
				}
			})
		}
	}
}

func TestGenerateStableIDs(t *testing.T) {
	t.Parallel()
	tests := []GenerateOptions{
		{Shape: ShapeFatTree, NodesPerLeaf: 4, LeavesPerSpine: 2},
		{Shape: ShapeFatTree, DomainSize: 18},
		{Shape: ShapeFatTree, NodesPerLeaf: 8, LeavesPerSpine: 2, SpinesPerCore: 2},
		{Shape: ShapeNVL72},
	}
	for _, opts := range tests {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			t.Parallel()
			var prev *topology.Graph
			for _, n := range []int{5, 33, 100, 999, 5000} {
				opts.Nodes = n
				g, _ := generateGraph(t, opts)
				if prev != nil {
					for _, s := range prev.Switches() {
						now, ok := g.Switch(s.ID)
						if !ok || now.Parent != s.Parent || !isPrefix(s.Children, now.Children) {
							t.Fatalf("at %d nodes, switch %s (parent %q, children %v) became %+v", n, s.ID, s.Parent, s.Children, now)
						}
					}
					for _, d := range prev.Domains() {
						if _, ok := g.Domain(d.ID); !ok {
							t.Fatalf("at %d nodes, domain %s is gone", n, d.ID)
						}
					}
				}
				prev = g
			}
		})
	}
}

func isPrefix(short, long []string) bool {
	return len(short) <= len(long) && strings.Join(short, ",") == strings.Join(long[:len(short)], ",")
}

func TestGenerateIDs(t *testing.T) {
	t.Parallel()
	g, _ := generateGraph(t, GenerateOptions{Nodes: 100000, DomainSize: 18})
	for _, id := range []string{"core", "spine001", "spine196", "leaf0042", "leaf3125"} {
		if _, ok := g.Switch(id); !ok {
			t.Errorf("no switch %s", id)
		}
	}
	if d, ok := g.Domain("nvl5556"); !ok || len(d.Nodes) != 100000-5555*18 {
		t.Errorf("last domain = %+v, want nvl5556 with the remainder", d)
	}
	if leaf, _ := g.Switch("leaf0042"); leaf.Nodes[0] != "gpu001313" || leaf.Parent != "spine003" {
		t.Errorf("leaf0042 = %s.. under %s", leaf.Nodes[0], leaf.Parent)
	}
}

func TestGenerateGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		opts GenerateOptions
	}{
		{"fat-tree-70.yaml", GenerateOptions{Shape: ShapeFatTree, Nodes: 70, NodesPerLeaf: 8, LeavesPerSpine: 4, SpinesPerCore: 2, DomainSize: 18}},
		{"nvl72-100.yaml", GenerateOptions{Shape: ShapeNVL72, Nodes: 100, LeavesPerSpine: 2, Prefix: "tray"}},
		{"fat-tree-1.yaml", GenerateOptions{Nodes: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			got, err := Generate(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.file)
			goldenfile.Check(t, path, got, *update)
		})
	}
}

func TestGenerateOptionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opts GenerateOptions
		want string
	}{
		{GenerateOptions{Nodes: 0}, "option nodes: must be from 1 to 1000000, not 0"},
		{GenerateOptions{Nodes: 1_000_001}, "option nodes: must be from 1 to 1000000, not 1000001"},
		{GenerateOptions{Nodes: 8, Shape: "torus"}, `option shape: unknown shape "torus" (known: fat-tree, nvl72)`},
		{GenerateOptions{Nodes: 8, NodesPerLeaf: -1}, "option nodes-per-leaf: must be from 1"},
		{GenerateOptions{Nodes: 8, NodesPerLeaf: 70000}, "option nodes-per-leaf: must be from 1 to 65536, not 70000"},
		{GenerateOptions{Nodes: 8, Shape: ShapeNVL72, DomainSize: 70000}, "option domain-size: must be from 0 to 65536"},
		{GenerateOptions{Nodes: 8, LeavesPerSpine: -3}, "option leaves-per-spine: must be from 1"},
		{GenerateOptions{Nodes: 8, SpinesPerCore: -1}, "option spines-per-core: must be from 0"},
		{GenerateOptions{Nodes: 8, DomainSize: -18}, "option domain-size: must be from 0"},
		{GenerateOptions{Nodes: 8, Prefix: "1gpu"}, `option prefix: "1gpu" must start with a letter`},
		{GenerateOptions{Nodes: 8, Prefix: "gpu[1]"}, `option prefix: "gpu[1]": character '[' is not allowed`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			_, err := Generate(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Generate(%+v) error = %v, want %q", tt.opts, err, tt.want)
			}
		})
	}
}

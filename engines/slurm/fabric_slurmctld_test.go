package slurm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/providers/lldp"
	"github.com/toposcope/toposcope/testenv/slurmtest"
	"github.com/toposcope/toposcope/topology"
)

// fabricGraph builds the graph of an ibnetdiscover output that the real
// tool printed for a simulated fabric (saved by the infiniband provider's
// tests), so that names derived from switch GUIDs are checked by slurmctld.
func fabricGraph(t testing.TB, file string, nodes ...string) *topology.Graph {
	t.Helper()
	cfg := infiniband.DefaultConfig()
	cfg.Output = filepath.Join("..", "..", "providers", "infiniband", "testdata", file)
	p, err := infiniband.New(cfg, providers.Deps{}.WithDefaults(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var req providers.Request
	for _, n := range nodes {
		req.Nodes = append(req.Nodes, providers.NodeRef{Name: n})
	}
	g, err := p.Discover(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// lldpGraph builds the leaf groups of an Ethernet fabric from what the
// real lldpcli printed on five hosts on two rails (saved by the agents
// provider's tests): leaves with no switch above them.
func lldpGraph(t testing.TB) *topology.Graph {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "providers", "agents", "testdata", "lldp-2rail", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no lldp fixtures: %v", err)
	}
	cfg := agents.DefaultConfig()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ns, _, err := lldp.ParseNeighbors(data)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Reports = append(cfg.Reports, providers.NodeFacts{Node: strings.TrimSuffix(filepath.Base(f), ".json"), GPUs: 8, LLDP: ns})
	}
	p, err := agents.New(cfg, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSlurmctldFabricTree renders trees discovered from real ibnetdiscover
// output and checks that slurmctld 22.05 reads back exactly that tree.
func TestSlurmctldFabricTree(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2205)
	t.Parallel()
	cases := map[string]func(testing.TB) *topology.Graph{
		"ib-2tier":   func(t testing.TB) *topology.Graph { return fabricGraph(t, "ibsim-fat-tree-2tier.out") },
		"ib-3tier":   func(t testing.TB) *topology.Graph { return fabricGraph(t, "ibsim-fat-tree-3tier.out") },
		"lldp-2rail": lldpGraph,
		"ib-missing-cable": func(t testing.TB) *topology.Graph {
			return fabricGraph(t, "ibsim-missing-cable.out", "gpu001", "gpu002", "gpu003", "gpu004", "gpu005", "gpu006", "gpu007", "gpu008")
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), slurmctldTimeout)
			defer cancel()
			g := mk(t)
			if len(g.Switches()) < 2 {
				t.Fatalf("fixture gave %d switches", len(g.Switches()))
			}
			e := newEngine(t, version("22.05"))
			conf := render(t, g, version("22.05"))
			_, got, _ := startWith(ctx, t, slurmtest.V2205, slurmtest.PluginTree, g, conf)
			checkTree(t, g, e.Coverage(g), got)
		})
	}
}

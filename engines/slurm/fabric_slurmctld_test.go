package slurm

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/testenv/consumertest"
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
// real lldpcli printed on five hosts on two rails: leaves with no switch
// above them.
func lldpGraph(t testing.TB) *topology.Graph {
	t.Helper()
	g, err := consumertest.LLDPGraph(func(h string) string { return h })
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// fatTreeGraph builds the 3-tier Ethernet fat tree that the lldp
// provider discovers from the real lldpd's and snmpd's saved answers:
// leaf groups under spine groups under a core group.
func fatTreeGraph(t testing.TB) *topology.Graph {
	t.Helper()
	g, err := consumertest.FatTreeGraph(func(h string) string { return h })
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
		"lldp-3tier": fatTreeGraph,
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

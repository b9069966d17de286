package agents_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/testenv/ibsim"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/infiniband"
	"github.com/toposcope/toposcope/providers/infiniband/fabric"
)

// TestFabricFromReports: agents on a simulated fabric (two leaves of
// four hosts, two redundant spines) report their HCAs' node GUIDs, and
// two of them the output of the real ibnetdiscover: the provider builds
// the switch tree from the freshest output, places each node by its
// HCA's GUID — the nodes' names (k8s-node-N) are not the hosts' names in
// the HCA descriptions — and keeps the NVLink domains; an output that
// does not parse fails the discovery naming its sender.
func TestFabricFromReports(t *testing.T) {
	t.Parallel()
	ibsim.Require(t)
	model, err := ibsim.Model(ibsim.ModelSpec{Links: []string{"spine>leaf1", "spine>leaf2"},
		Leaves: map[string]string{"leaf1": "gpu[001-004]", "leaf2": "gpu[005-008]"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := ibsim.Expand(model, ibsim.Expansion{Redundancy: []int{0, 2}})
	if err != nil {
		t.Fatal(err)
	}
	sim := ibsim.Start(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := sim.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := infiniband.Parse(strings.NewReader(string(out)), "test")
	if err != nil {
		t.Fatal(err)
	}
	guids := map[string]string{} // host -> its HCA's node GUID
	for _, n := range topo.Nodes {
		if host, hca, ok := strings.Cut(n.Description, " "); ok && n.Type == infiniband.CA && hca == "mlx5_0" {
			guids[host] = infiniband.FormatGUID(n.GUID)
		}
	}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var src reports
	for i := 1; i <= 8; i++ {
		host := fmt.Sprintf("gpu%03d", i)
		r := providers.AgentReport{ReceivedAt: now.Add(-time.Minute), Facts: providers.NodeFacts{
			Node: fmt.Sprintf("k8s-node-%d", i), GPUs: 4, Clique: fmt.Sprintf("%s%d", clique[:len(clique)-5], (i-1)/4+1),
			HCAs: []providers.HCA{{Name: "mlx5_0", NodeGUID: guids[host]}}}}
		switch i {
		case 1:
			r.Facts.IBNetDiscover = string(out)
			r.ReceivedAt = now
		case 5: // older output of the same fabric: left aside
			r.Facts.IBNetDiscover = string(out)
		}
		src = append(src, r)
	}
	p, err := agents.New(agents.DefaultConfig(), deps(src, now))
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(ctx, providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := map[string]string{}
	for i := 1; i <= 8; i++ {
		name := fmt.Sprintf("k8s-node-%d", i)
		n, ok := g.Node(name)
		if !ok || n.Leaf == "" || n.Domain == "" {
			t.Fatalf("node %s: %+v; want it under a leaf and in a domain", name, n)
		}
		leaf[name] = n.Leaf
		if path := g.Path(name); len(path) != 2 {
			t.Errorf("node %s: path of %d switches, want leaf and spine", name, len(path))
		}
	}
	for i := 2; i <= 8; i++ {
		a, b := leaf["k8s-node-1"], leaf[fmt.Sprintf("k8s-node-%d", i)]
		if (i <= 4) != (a == b) {
			t.Errorf("k8s-node-1 under %s, k8s-node-%d under %s: want hosts 1-4 and 5-8 under two leaves", a, i, b)
		}
	}
	if len(g.Domains()) != 2 || len(g.Roots()) != 1 {
		t.Errorf("%d domains, %d roots; want 2 and 1", len(g.Domains()), len(g.Roots()))
	}

	src[0].Facts.IBNetDiscover = "Switch garbage"
	p, err = agents.New(agents.DefaultConfig(), deps(src, now))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Discover(ctx, providers.Request{}); !errors.Is(err, agents.ErrBadReport) || !strings.Contains(err.Error(), "k8s-node-1") {
		t.Errorf("Discover with a garbled output = %v, want ErrBadReport naming k8s-node-1", err)
	}
}

// TestFabricFreshestOutputWins: two outputs of one fabric (the same
// switches), the older taken before a cable was added that makes a loop:
// the freshest alone builds the tree, so discovery succeeds; when the
// looped output is the fresher, it is the one used and the discovery
// fails as the infiniband provider fails on a loop (ErrNotATree).
func TestFabricFreshestOutputWins(t *testing.T) {
	t.Parallel()
	ibsim.Require(t)
	spec := ibsim.ModelSpec{Links: []string{"a>l1", "a>l2", "b>l3"}, Leaves: map[string]string{"l1": "gpu001", "l2": "gpu002", "l3": "gpu003"}}
	model, err := ibsim.Model(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	discover := func(loop bool) string {
		f, err := ibsim.Expand(model, ibsim.Expansion{})
		if err != nil {
			t.Fatal(err)
		}
		if loop {
			if err := f.Connect("b", "l2", ibsim.SpeedDefault); err != nil {
				t.Fatal(err)
			}
		}
		out, err := ibsim.Start(t, f).Discover(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	tree, looped := discover(false), discover(true)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	run := func(fresh, older string) error {
		src := reports{
			{Facts: providers.NodeFacts{Node: "gpu001", IBNetDiscover: fresh}, ReceivedAt: now},
			{Facts: providers.NodeFacts{Node: "gpu002", IBNetDiscover: older}, ReceivedAt: now.Add(-10 * time.Minute)},
			{Facts: providers.NodeFacts{Node: "gpu003"}, ReceivedAt: now},
		}
		p, err := agents.New(agents.DefaultConfig(), deps(src, now))
		if err != nil {
			t.Fatal(err)
		}
		g, err := p.Discover(ctx, providers.Request{})
		if err != nil {
			return err
		}
		// ibnetdiscover from gpu001 sees the fabric of a; gpu003, under
		// b, is on another one until the loop joins them.
		for _, n := range []string{"gpu001", "gpu002"} {
			if node, _ := g.Node(n); node == nil || node.Leaf == "" {
				t.Errorf("%s under no switch", n)
			}
		}
		return nil
	}
	if err := run(tree, looped); err != nil {
		t.Errorf("fresh tree, older loop: %v; want the fresh output alone to build the tree", err)
	}
	if err := run(looped, tree); !errors.Is(err, fabric.ErrNotATree) {
		t.Errorf("fresh loop, older tree: %v; want ErrNotATree from the fresh output", err)
	}
}

package infiniband

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/infiniband/fabric"
	"github.com/toposcope/toposcope/testenv/ibsim"
	"github.com/toposcope/toposcope/topology"
)

// realScenario is a cluster model, how to expand it into a physical
// fabric, and the provider parameters to discover it with.
type realScenario struct {
	name      string
	model     ibsim.ModelSpec
	x         ibsim.Expansion
	params    map[string]any
	edit      func(f *ibsim.Fabric) error // hand-made changes to the fabric
	oneString bool                        // give the command as one string, split at spaces
	wantErr   error
	wantMsg   string
	// fixture names testdata/ibsim-<fixture>.out, rewritten with -update.
	fixture string
}

func twoTier(leaves int, hostsPerLeaf int) ibsim.ModelSpec {
	spec := ibsim.ModelSpec{Leaves: map[string]string{}, Speeds: map[string]uint32{}}
	n := 1
	for l := 1; l <= leaves; l++ {
		leaf := "leaf" + itoa(l)
		spec.Links = append(spec.Links, "spine>"+leaf)
		spec.Leaves[leaf] = hostRange(n, n+hostsPerLeaf-1)
		spec.Speeds[leaf] = 40
		n += hostsPerLeaf
	}
	return spec
}

func threeTier(pods, leavesPerPod, hostsPerLeaf int) ibsim.ModelSpec {
	spec := ibsim.ModelSpec{Leaves: map[string]string{}, Speeds: map[string]uint32{}}
	n, leaf := 1, 1
	for p := 1; p <= pods; p++ {
		pod := "pod" + itoa(p)
		spec.Links = append(spec.Links, "core>"+pod)
		spec.Speeds[pod] = 20
		for range leavesPerPod {
			id := "leaf" + itoa(leaf)
			spec.Links = append(spec.Links, pod+">"+id)
			spec.Leaves[id] = hostRange(n, n+hostsPerLeaf-1)
			spec.Speeds[id] = 40
			n += hostsPerLeaf
			leaf++
		}
	}
	return spec
}

func realScenarios() []realScenario {
	storage := twoTier(2, 4)
	missing := twoTier(2, 4)
	missing.Leaves["leaf2"] = "gpu[005,007-008]"
	missing.Unplaced = "gpu006"
	return []realScenario{
		{name: "two-tier fat tree, four redundant spines", model: twoTier(4, 4),
			x: ibsim.Expansion{Redundancy: []int{0, 4}}, fixture: "fat-tree-2tier"},
		{name: "two-tier fat tree, command as one string", model: twoTier(2, 2),
			x: ibsim.Expansion{Redundancy: []int{0, 2}}, oneString: true},
		{name: "three-tier fat tree, pods and planes", model: threeTier(2, 2, 4),
			x: ibsim.Expansion{Redundancy: []int{0, 2, 2}, Planes: true}, fixture: "fat-tree-3tier"},
		{name: "three-tier fat tree, 256 hosts", model: threeTier(4, 4, 16),
			x: ibsim.Expansion{Redundancy: []int{0, 4, 2}}},
		{name: "four HCAs per host on four rails", model: twoTier(2, 4),
			x: ibsim.Expansion{Redundancy: []int{0, 2}, Rails: 4}, fixture: "rails"},
		{name: "one rail selected by HCA name", model: twoTier(2, 4),
			x: ibsim.Expansion{Redundancy: []int{0, 2}, Rails: 4}, params: map[string]any{"hcas": []string{"mlx5_0"}}},
		{name: "one rail selected by GUID", model: twoTier(1, 2),
			x: ibsim.Expansion{Rails: 2}, params: map[string]any{"hcaGUIDs": []string{"0xe09d730300000010", "e09d730300000031"}}},
		{name: "storage rail left out by the HCA filter", model: storage,
			x:       ibsim.Expansion{Redundancy: []int{0, 2}, Rails: 2, StorageHCA: "mlx5_4", StorageServers: 2},
			params:  map[string]any{"hcas": []string{"mlx5_[0-3]"}, "nodes": "gpu[001-008]"},
			fixture: "storage-rail"},
		{name: "per-leaf storage leaves without a filter join their leaf groups", model: storage,
			x: ibsim.Expansion{Redundancy: []int{0, 2}, Rails: 2, StorageHCA: "mlx5_4"}},
		{name: "shared storage leaf left out by the HCA filter", model: storage,
			x:      ibsim.Expansion{Redundancy: []int{0, 2}, StorageHCA: "mlx5_4", StorageServers: 2, StorageShared: true},
			params: map[string]any{"hcas": []string{"mlx5_0"}, "nodes": "gpu[001-008]"}},
		{name: "shared storage leaf without a filter: each host under its own leaf", model: storage,
			x:       ibsim.Expansion{Redundancy: []int{0, 2}, StorageHCA: "mlx5_4", StorageShared: true},
			fixture: "storage-shared"},
		{name: "missing spine cable and missing host cable", model: missing,
			x:       ibsim.Expansion{Redundancy: []int{0, 2}, Omit: []string{"spine-2 leaf2", "gpu006/mlx5_0 leaf2"}},
			fixture: "missing-cable"},
		{name: "no HCA matches the filter", model: twoTier(1, 2),
			params:  map[string]any{"hcas": []string{"mlx5_9"}},
			wantErr: ErrNoHCAMatch, wantMsg: `host "gpu001" has HCAs mlx5_0 (e09d730300000010), none selected by hcas mlx5_9`},
		{name: "loop that cannot be reduced", model: ibsim.ModelSpec{
			Links:  []string{"a>l1", "a>l2", "b>l3"},
			Leaves: map[string]string{"l1": "gpu001", "l2": "gpu002", "l3": "gpu003"}},
			edit:    func(f *ibsim.Fabric) error { return f.Connect("b", "l2", ibsim.SpeedDefault) },
			wantErr: fabric.ErrNotATree, wantMsg: "have uplinks to", fixture: "loop"},
	}
}

// TestRealIbnetdiscover runs the real ibnetdiscover on simulated fabrics
// and checks that the provider recovers each cluster model.
func TestRealIbnetdiscover(t *testing.T) {
	t.Parallel()
	ibsim.Require(t)
	for _, sc := range realScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			model, err := ibsim.Model(sc.model)
			if err != nil {
				t.Fatal(err)
			}
			f, err := ibsim.Expand(model, sc.x)
			if err != nil {
				t.Fatal(err)
			}
			if sc.edit != nil {
				if err := sc.edit(f); err != nil {
					t.Fatal(err)
				}
			}
			sim := ibsim.Start(t, f)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if *update && sc.fixture != "" {
				saveFixture(ctx, t, sim, sc.fixture)
			}
			params := map[string]any{"command": sim.Command(), "timeout": "1m"}
			if sc.oneString {
				params["command"] = "env IBSIM_SOCKNAME=" + sim.SocketName() + " ibsim-run ibnetdiscover"
			}
			for k, v := range sc.params {
				params[k] = v
			}
			p := newFromParams(t, params)
			g, err := p.Discover(ctx, providers.Request{Nodes: refs(model)})
			if sc.wantErr != nil {
				if !errors.Is(err, sc.wantErr) || !strings.Contains(err.Error(), sc.wantMsg) {
					t.Fatalf("Discover() = %v, want %v with %q", err, sc.wantErr, sc.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ibsim.Compare(g, model, f); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestRealIbnetdiscoverUnreachable runs the real ibsim-run ibnetdiscover
// with no simulator listening: it blocks, and the provider's timeout turns
// that into an error naming the command.
func TestRealIbnetdiscoverUnreachable(t *testing.T) {
	t.Parallel()
	ibsim.Require(t)
	p := newFromParams(t, map[string]any{
		"command": []string{"env", "-u", "LD_PRELOAD", "IBSIM_SOCKNAME=toposcope-nobody-listens", "ibsim-run", "ibnetdiscover"},
		"timeout": "2s",
	})
	_, err := p.Discover(context.Background(), providers.Request{})
	if !errors.Is(err, providers.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "ibsim-run ibnetdiscover") {
		t.Fatalf("Discover() = %v", err)
	}
}

func saveFixture(ctx context.Context, t *testing.T, sim *ibsim.Sim, name string) {
	t.Helper()
	out, err := sim.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/ibsim-"+name+".out", out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func newFromParams(t *testing.T, params map[string]any) providers.Provider {
	t.Helper()
	doc, err := yaml.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		t.Fatal(err)
	}
	p, err := NewFactory().New(n.Content[0], "params", providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func refs(g *topology.Graph) []providers.NodeRef {
	out := make([]providers.NodeRef, 0, len(g.Nodes()))
	for _, n := range g.Nodes() {
		out = append(out, providers.NodeRef{Name: n.Name})
	}
	return out
}

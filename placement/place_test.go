package placement

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/topology"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func model(t testing.TB, name string) *topology.Graph {
	t.Helper()
	m, err := sim.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Graph(providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// nodes returns prefix-formatted names from..to.
func nodes(format string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}

// smallTreeLedger: leaf1 full of b's unallocated work; half of leaf2 held
// by c's allocated work protected for 7 more hours.
func smallTreeLedger() []Record {
	var recs []Record
	for i, n := range nodes("gpu%03d", 1, 8) {
		recs = append(recs, Record{Account: "b", Workload: fmt.Sprintf("b-%d", i), GPUs: 8, Nodes: []string{n},
			Start: t0.Add(-time.Duration(i+1) * time.Hour)})
	}
	recs = append(recs, Record{Account: "c", Workload: "c-big", GPUs: 32, Nodes: nodes("gpu%03d", 9, 12),
		Start: t0.Add(-time.Hour), MinRuntime: 8 * time.Hour, Allocated: true})
	return recs
}

func place(t *testing.T, g *topology.Graph, recs []Record, req Request, cfg Config) (*Result, error) {
	t.Helper()
	cl, err := NewCluster(g, recs, t0)
	if err != nil {
		t.Fatal(err)
	}
	names := append((&Ledger{Records: recs}).Accounts(), req.Account)
	st, err := Compute(EqualTree(names), recs, t0, cl.GPUs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return Place(cl, st, req, cfg)
}

func TestPlace(t *testing.T) {
	t.Parallel()
	nvl, small := model(t, "nvl72"), model(t, "small-tree")
	long := DefaultConfig()
	long.Horizon = 8 * time.Hour
	long.MaxLossRatio = 0 // the horizon class, not the loss, is under test
	noLossGuard := DefaultConfig()
	noLossGuard.MaxLossRatio = 0
	for _, tc := range []struct {
		name    string
		g       *topology.Graph
		recs    []Record
		req     Request
		cfg     Config
		err     error
		class   string
		group   string
		lca     int
		leaves  int
		doms    int
		victims int
	}{
		{name: "empty-nvl72-64-fits-one-domain", g: nvl, req: Request{Account: "a", GPUs: 64, MinRuntime: time.Hour},
			class: ClassFree, group: "domain nvl01", lca: 0, leaves: 1, doms: 1},
		{name: "nodes-x-gpus", g: nvl, req: Request{Account: "a", Nodes: 20, GPUsPerNode: 4},
			class: ClassFree, group: "switch leaf1", lca: 0, leaves: 1, doms: 2},
		{name: "required-domain-too-big", g: nvl, req: Request{Account: "a", GPUs: 80, Within: ScopeDomain, Required: true},
			err: ErrNoCandidate},
		// leaf1's eight jobs have run 36 node-hours: 288 GPU-hours lost,
		// at most once the 64-GPU request's own GPU-time (4.5 h and more).
		{name: "reclaim-unallocated", g: small, recs: smallTreeLedger(), req: Request{Account: "a", GPUs: 64, MinRuntime: time.Hour, Duration: 6 * time.Hour},
			class: ClassReclaim, group: "switch leaf1", lca: 0, leaves: 1, victims: 8},
		{name: "loss-out-of-proportion", g: small, recs: smallTreeLedger(), req: Request{Account: "a", GPUs: 64, MinRuntime: time.Hour, Duration: time.Hour},
			err: ErrNoCandidate},
		{name: "loss-guard-off", g: small, recs: smallTreeLedger(), cfg: noLossGuard,
			req:   Request{Account: "a", GPUs: 64, MinRuntime: time.Hour, Duration: time.Hour},
			class: ClassReclaim, group: "switch leaf1", lca: 0, leaves: 1, victims: 8},
		{name: "unallocated-request-cannot-preempt", g: small, recs: smallTreeLedger(), req: Request{Account: "a", GPUs: 64},
			err: ErrNoCandidate},
		{name: "protected-until-min-runtime", g: small, recs: smallTreeLedger(), req: Request{Account: "a", GPUs: 128, MinRuntime: time.Hour},
			err: ErrNoCandidate},
		{name: "horizon-covers-protection", g: small, recs: smallTreeLedger(), cfg: long,
			req:   Request{Account: "a", GPUs: 128, MinRuntime: time.Hour},
			class: ClassHorizon, group: "switch spine1", lca: 1, leaves: 2, victims: 9},
		{name: "free-preferred-over-reclaim", g: small, recs: smallTreeLedger(), req: Request{Account: "a", GPUs: 32, MinRuntime: time.Hour},
			class: ClassFree, group: "switch leaf2", lca: 0, leaves: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			if cfg.Mode == "" {
				cfg = DefaultConfig()
			}
			res, err := place(t, tc.g, tc.recs, tc.req, cfg)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := res.Candidates[0]
			sc := c.Scores
			if c.Class != tc.class || c.Group != tc.group || sc.LCALevel != tc.lca || sc.Leaves != tc.leaves ||
				sc.Domains != tc.doms || len(c.Victims) != tc.victims {
				t.Errorf("top = %s %s lca %d leaves %d domains %d victims %d; want %s %s %d %d %d %d",
					c.Class, c.Group, sc.LCALevel, sc.Leaves, sc.Domains, len(c.Victims),
					tc.class, tc.group, tc.lca, tc.leaves, tc.doms, tc.victims)
			}
			got := 0
			for _, n := range c.Nodes {
				got += n.GPUs
			}
			if got != tc.req.Total() {
				t.Errorf("candidate holds %d GPUs, want %d", got, tc.req.Total())
			}
		})
	}
}

// TestPlaceFewestLeavesAcrossSpines: when no spine holds the job, taking
// the fullest spine whole (the descent) costs four leaves where the
// fullest leaves of the tree take two; the leaf count decides.
func TestPlaceFewestLeavesAcrossSpines(t *testing.T) {
	t.Parallel()
	// Free nodes per leaf of fat-tree-512 (32 nodes each): spine1 has 27
	// over three leaves, spine2 25 in leaf05, spine3 15 in leaf09.
	free := map[int]int{1: 9, 2: 9, 3: 9, 5: 25, 9: 15}
	var recs []Record
	for leaf := 1; leaf <= 16; leaf++ {
		first := (leaf-1)*32 + 1
		busy := nodes("gpu%03d", first+free[leaf], first+31)
		recs = append(recs, Record{Account: "b", Workload: fmt.Sprintf("b-%d", leaf), GPUs: 8 * len(busy), Nodes: busy,
			Start: t0.Add(-time.Hour)})
	}
	res, err := place(t, model(t, "fat-tree-512"), recs, Request{Account: "a", Nodes: 40, GPUsPerNode: 8}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := res.Candidates[0]
	if c.Class != ClassFree || c.Scores.LCALevel != 2 || c.Scores.Leaves != 2 {
		t.Fatalf("top = %s, LCA level %d, %d leaves; want free, 2, 2 (leaf05 and leaf09)", c.Class, c.Scores.LCALevel, c.Scores.Leaves)
	}
	perLeaf := map[int]int{}
	for _, n := range c.Nodes {
		var i int
		if _, err := fmt.Sscanf(n.Node, "gpu%d", &i); err != nil {
			t.Fatal(err)
		}
		perLeaf[(i-1)/32+1]++
	}
	if perLeaf[5] != 25 || perLeaf[9] != 15 {
		t.Errorf("nodes per leaf %v, want 25 in leaf 5 and 15 in leaf 9", perLeaf)
	}
}

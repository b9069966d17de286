package simulate

import (
	"fmt"
	"slices"
	"testing"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/topology"
)

// fourLeaves is s4 over leaves s0..s3 of four 8-GPU nodes each, with
// the given nodes busy.
func fourLeaves(t *testing.T, busy ...string) *state {
	t.Helper()
	b := topology.NewBuilder()
	for l := range 4 {
		for k := range 4 {
			n := fmt.Sprintf("n%d%d", l, k)
			b.AddNode(topology.Node{Name: n, GPUs: 8})
			b.AddPath(n, []topology.SwitchInfo{{ID: fmt.Sprintf("s%d", l)}, {ID: "s4"}})
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	s, err := newState(g, placement.ScopeNone)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.nodes {
		if slices.Contains(busy, s.nodes[i].name) {
			s.nodes[i].free = 0
		}
	}
	return s
}

func names(s *state, takes []take) []string {
	var out []string
	for _, tk := range takes {
		out = append(out, fmt.Sprintf("%s:%d", s.nodes[tk.node].name, tk.pods))
	}
	slices.Sort(out)
	return out
}

// TestSlurmTreeWorkedExample is fairshare.md §6.1: free nodes (4, 2, 3,
// 4) under s0..s3, a 6-node job. No leaf fits, so the larger s0 (first
// on ties) is taken whole; of the leaves that fit the remaining 2 at
// equal distance, s1 fits best: {s0, s1}.
func TestSlurmTreeWorkedExample(t *testing.T) {
	t.Parallel()
	s := fourLeaves(t, "n10", "n11", "n20")
	sh := s.shapeOf(48)
	if !sh.wholeNodes || sh.pods != 6 || sh.constrained {
		t.Fatalf("shape of 48 GPUs = %+v", sh)
	}
	takes, err := slurmTree{}.choose(s, &Job{}, sh, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"n00:1", "n01:1", "n02:1", "n03:1", "n12:1", "n13:1"}
	if got := names(s, takes); !slices.Equal(got, want) {
		t.Fatalf("slurm-tree took %v, want %v", got, want)
	}
	if lvl, leaves := s.lca(takes); lvl != 1 || leaves != 2 {
		t.Errorf("lca level %d over %d leaves, want 1 over 2", lvl, leaves)
	}
}

// TestBestFitDescent: Kueue's BestFit over the same leaves takes the
// fullest leaf whole (s0, 4 free), then the remainder from the tightest
// leaf that holds it: s1 (2 free) for 2 or 1 more nodes, s2 (3 free) for
// a 3-node job; a 4-GPU pod goes to the leaf with the fewest such slots
// (s1) and its first node.
func TestBestFitDescent(t *testing.T) {
	t.Parallel()
	s := fourLeaves(t, "n10", "n11", "n20")
	for _, tc := range []struct {
		gpus int
		want []string
	}{
		{48, []string{"n00:1", "n01:1", "n02:1", "n03:1", "n12:1", "n13:1"}},
		{40, []string{"n00:1", "n01:1", "n02:1", "n03:1", "n12:1"}},
		{24, []string{"n21:1", "n22:1", "n23:1"}},
		{4, []string{"n12:1"}},
	} {
		takes, err := bestFit{}.choose(s, &Job{}, s.shapeOf(tc.gpus), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(s, takes); !slices.Equal(got, tc.want) {
			t.Errorf("bestfit %d GPUs took %v, want %v", tc.gpus, got, tc.want)
		}
	}
}

func TestShadow(t *testing.T) {
	t.Parallel()
	s := fourLeaves(t)
	// Three jobs hold 14 of 16 nodes until 10, 20 and 30.
	run := []running{
		{end: 30, takes: []take{{0, 1}, {1, 1}, {2, 1}, {3, 1}}, per: 8},
		{end: 10, takes: []take{{4, 1}, {5, 1}}, per: 8},
		{end: 20, takes: []take{{8, 1}, {9, 1}, {10, 1}, {11, 1}, {12, 1}, {13, 1}, {14, 1}, {15, 1}}, per: 8},
	}
	for _, r := range run {
		if err := s.apply(r.takes, r.per, 1); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		gpus int
		want float64
	}{{16, 0}, {32, 10}, {80, 20}, {128, 30}} {
		sh := s.shapeOf(tc.gpus)
		got := s.shadow(run, sh)
		if s.fits(sh) {
			got = 0
		}
		if got != tc.want {
			t.Errorf("shadow of %d GPUs = %g, want %g", tc.gpus, got, tc.want)
		}
	}
}

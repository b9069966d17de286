package placement

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNarrowPreemption(t *testing.T) {
	t.Parallel()
	small := model(t, "small-tree")
	// smallTreeLedger: b's unallocated work on gpu001-008 (b-i started
	// i+1 hours ago), c's protected 32-GPU job on gpu009-012; plus d's
	// allocated 24-GPU job past its hour of protection on gpu013-015 and
	// a's own job and GPUs held for e's gang on gpu016.
	recs := append(smallTreeLedger(),
		Record{Account: "d", Workload: "d-old", GPUs: 24, Nodes: nodes("gpu%03d", 13, 15), Start: t0.Add(-3 * time.Hour), MinRuntime: time.Hour, Allocated: true},
		Record{Account: "a", Workload: "a-own", GPUs: 4, Nodes: []string{"gpu016"}, Start: t0.Add(-time.Hour)},
		Record{Account: "e", Workload: "held-gang", GPUs: 4, Nodes: []string{"gpu016"}, Start: t0, Held: true})
	req := Request{Account: "a", GPUs: 8, MinRuntime: time.Hour, Duration: 4 * time.Hour}
	type want struct {
		allowed bool
		reason  string
	}
	for _, tc := range []struct {
		name        string
		noLossGuard bool // d's job loses more than the request's GPU-time: the standing, not the loss, is under test
		req         Request
		props       []Proposal
		want        []want
	}{
		{"protected-refused", false, req, []Proposal{{"gpu009", []string{"c-big"}}},
			[]want{{false, "protected until"}}},
		{"unallocated-allowed", false, req, []Proposal{{"gpu001", []string{"b-0"}}},
			[]want{{true, "every victim"}}},
		{"over-served-past-protection-allowed", true, req, []Proposal{{"gpu013", []string{"d-old"}}},
			[]want{{true, "every victim"}}},
		{"unallocated-first", true, req, []Proposal{{"gpu013", []string{"d-old"}}, {"gpu002", []string{"b-1"}}},
			[]want{{false, "another node is freed by preempting unallocated work alone"}, {true, "every victim"}}},
		{"own-account", false, req, []Proposal{{"gpu016", []string{"a-own"}}},
			[]want{{false, "own account"}}},
		{"one-bad-victim-refuses-the-node", false, req, []Proposal{{"gpu009", []string{"b-0", "c-big"}}},
			[]want{{false, "victim c-big refused"}}},
		{"held-never-a-victim", false, req, []Proposal{{"gpu016", []string{"held-gang"}}},
			[]want{{false, "held for a gang"}}},
		{"unknown-workload", false, req, []Proposal{{"gpu018", []string{"cpu-pod"}}},
			[]want{{true, "every victim"}}},
		// b-7 has run 8 h on 8 GPUs: 8 × the 1-hour request's GPU-time.
		{"loss-guard", false, Request{Account: "a", GPUs: 8, MinRuntime: time.Hour, Duration: time.Hour}, []Proposal{{"gpu008", []string{"b-7"}}},
			[]want{{false, "loss guard"}}},
		{"unallocated-request", false, Request{Account: "a", GPUs: 8}, []Proposal{{"gpu001", []string{"b-0"}}},
			[]want{{false, "takes free GPUs only"}}},
		{"out-of-proportion", false, Request{Account: "a", GPUs: 4, MinRuntime: time.Hour, Duration: 4 * time.Hour}, []Proposal{{"gpu009", []string{"c-big"}}},
			[]want{{false, "out of proportion"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl, err := NewCluster(small, recs, t0)
			if err != nil {
				t.Fatal(err)
			}
			names := append((&Ledger{Records: recs}).Accounts(), tc.req.Account)
			cfg := DefaultConfig()
			if tc.noLossGuard {
				cfg.MaxLossRatio = 0
			}
			st, err := Compute(EqualTree(names), recs, t0, cl.GPUs(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := NarrowPreemption(cl, st, tc.req, cfg, tc.props)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d verdicts, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				if got[i].Allowed != w.allowed || !strings.Contains(got[i].Reason, w.reason) {
					t.Errorf("node %s: allowed %v (%s), want %v (%q)", got[i].Node, got[i].Allowed, got[i].Reason, w.allowed, w.reason)
				}
				for _, v := range got[i].Victims {
					t.Logf("%s: %s allowed=%v known=%v lost=%.0f: %s", got[i].Node, v.Workload, v.Allowed, v.Known, v.LostGPUSeconds, v.Reason)
				}
			}
		})
	}
}

func TestNarrowPreemptionBadRequest(t *testing.T) {
	t.Parallel()
	small := model(t, "small-tree")
	cl, err := NewCluster(small, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Compute(EqualTree([]string{"a"}), nil, t0, cl.GPUs(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NarrowPreemption(cl, st, Request{Account: "a"}, DefaultConfig(), nil); err == nil {
		t.Error("a request of no GPUs was judged")
	}
	if _, err := NarrowPreemption(cl, st, Request{Account: "zz", GPUs: 8}, DefaultConfig(), nil); err == nil {
		t.Error("an account outside the tree was judged")
	}
}

// TestOnly: a cluster restricted to some nodes places on them alone,
// though others are free and more compact; with too few left, nothing.
func TestOnly(t *testing.T) {
	t.Parallel()
	cl, err := NewCluster(model(t, "small-tree"), nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Compute(EqualTree([]string{"a"}), nil, t0, cl.GPUs(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{"gpu003": true, "gpu010": true, "gpu011": true}
	only := cl.Only(slices.Collect(maps.Keys(keep)))
	res, err := Place(only, st, Request{Account: "a", Nodes: 3, GPUsPerNode: 8}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Candidates {
		for _, n := range c.Nodes {
			if !keep[n.Node] {
				t.Errorf("candidate %d takes %s, outside the nodes kept", c.Rank, n.Node)
			}
		}
	}
	if _, err := Place(only, st, Request{Account: "a", Nodes: 4, GPUsPerNode: 8}, DefaultConfig()); !errors.Is(err, ErrNoCandidate) {
		t.Errorf("4 nodes out of 3 kept: err %v, want ErrNoCandidate", err)
	}
	if res, err := Place(cl, st, Request{Account: "a", Nodes: 4, GPUsPerNode: 8}, DefaultConfig()); err != nil || len(res.Candidates) == 0 {
		t.Errorf("the unrestricted cluster must still place 4 nodes: %v", err)
	}
}

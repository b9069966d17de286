package placement

import (
	"errors"
	"testing"
	"time"
)

// TestOccupy checks that occupying an empty cluster gives what
// NewCluster gives for the same records, and leaves the original empty.
func TestOccupy(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	recs := []Record{
		{Account: "a", Workload: "w1", GPUs: 24, Nodes: []string{"gpu001", "gpu002", "gpu003"}, Start: now.Add(-time.Hour)},
		{Account: "b", Workload: "w2", GPUs: 8, Nodes: []string{"gpu009"}, Start: now.Add(-2 * time.Hour), End: now.Add(-time.Hour)},
	}
	empty, err := NewCluster(g, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := NewCluster(g, recs, now)
	if err != nil {
		t.Fatal(err)
	}
	occ, err := empty.Occupy(recs, now)
	if err != nil {
		t.Fatal(err)
	}
	if empty.FreeGPUs() != 128 || occ.FreeGPUs() != direct.FreeGPUs() || occ.FreeGPUs() != 104 {
		t.Fatalf("free GPUs: empty %d, occupied %d, direct %d; want 128, 104, 104", empty.FreeGPUs(), occ.FreeGPUs(), direct.FreeGPUs())
	}
	st, err := Compute(EqualTree([]string{"a", "b"}), recs, now, occ.GPUs(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Account: "b", Nodes: 8, GPUsPerNode: 8, Duration: time.Hour, Within: ScopeLeaf, Required: true}
	a, errA := Place(occ, st, req, DefaultConfig())
	b, errB := Place(direct, st, req, DefaultConfig())
	if errA != nil || errB != nil || a.Candidates[0].Group != b.Candidates[0].Group || a.Candidates[0].Group == "" {
		t.Fatalf("Place on occupied %v / direct %v differ: %+v vs %+v", errA, errB, a, b)
	}
	if _, err := empty.Occupy([]Record{{Account: "a", Workload: "x", GPUs: 8, Nodes: []string{"nope"}, Start: now}}, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Occupy with an unknown node = %v, want ErrInvalid", err)
	}
	if _, err := empty.Occupy([]Record{{Account: "a", Workload: "x", GPUs: 16, Nodes: []string{"gpu001"}, Start: now}}, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Occupy overfilling a node = %v, want ErrInvalid", err)
	}
}

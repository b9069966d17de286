package placement

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/topology"
)

func TestOccupancy(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	recs := []Record{
		// allocated, protected for 4 h from an hour ago
		{Account: "a", Workload: "w1", GPUs: 12, Nodes: []string{"gpu001", "gpu002"}, Start: now.Add(-time.Hour), MinRuntime: 4 * time.Hour, Allocated: true},
		// unallocated: reclaimable at once
		{Account: "b", Workload: "w2", GPUs: 2, Nodes: []string{"gpu001"}, Start: now.Add(-time.Hour)},
		// ended: holds nothing
		{Account: "b", Workload: "w3", GPUs: 8, Nodes: []string{"gpu003"}, Start: now.Add(-2 * time.Hour), End: now.Add(-time.Hour)},
	}
	cl, err := NewCluster(g, recs, now)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	until := now.Add(3 * time.Hour)
	tests := []struct {
		node string
		want Occupancy
	}{
		{"gpu001", Occupancy{GPUs: 8, Free: 0, Allocated: 6, Unallocated: 2, Reclaimable: 2, ProtectedUntil: until, Workloads: 2}},
		{"gpu002", Occupancy{GPUs: 8, Free: 2, Allocated: 6, ProtectedUntil: until, Workloads: 1}},
		{"gpu003", Occupancy{GPUs: 8, Free: 8}},
	}
	for _, tt := range tests {
		got, ok := cl.NodeOccupancy(tt.node, cfg)
		if !ok || got != tt.want {
			t.Errorf("%s = %+v, want %+v", tt.node, got, tt.want)
		}
	}
	if _, ok := cl.NodeOccupancy("nope", cfg); ok {
		t.Error("unknown node found")
	}
	leaf := g.Path("gpu001")
	sw := cl.SwitchOccupancy(cfg)
	for _, s := range leaf {
		o := sw[s.ID]
		if o.Allocated != 12 || o.Unallocated != 2 || o.Reclaimable != 2 || !o.ProtectedUntil.Equal(until) || o.Workloads != 3 {
			t.Errorf("switch %s = %+v", s.ID, o)
		}
	}
	root := leaf[len(leaf)-1]
	if o := sw[root.ID]; o.GPUs != cl.GPUs() || o.Free != cl.FreeGPUs() {
		t.Errorf("root %s = %+v; cluster has %d GPUs, %d free", root.ID, o, cl.GPUs(), cl.FreeGPUs())
	}
}

// TestNodeBestFitPerNodeShape: a request for whole nodes × GPUs per node
// goes to the nodes with the fewest free GPUs that hold it, not to the
// first free ones (node-level best fit; the node's real free GPUs rank,
// not its capacity capped at the request).
func TestNodeBestFitPerNodeShape(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	recs := []Record{ // gpu005 keeps exactly 2 free GPUs, gpu006 4
		{Account: "a", Workload: "w1", GPUs: 6, Nodes: []string{"gpu005"}, Start: now.Add(-time.Hour)},
		{Account: "a", Workload: "w2", GPUs: 4, Nodes: []string{"gpu006"}, Start: now.Add(-time.Hour)},
	}
	cl, st := occupied(t, g, recs, now)
	for _, tt := range []struct {
		req  Request
		want []NodeTake
	}{
		{Request{Account: "b", Nodes: 1, GPUsPerNode: 2, Duration: time.Hour}, []NodeTake{{Node: "gpu005", GPUs: 2}}},
		{Request{Account: "b", Nodes: 2, GPUsPerNode: 2, Duration: time.Hour}, []NodeTake{{Node: "gpu005", GPUs: 2}, {Node: "gpu006", GPUs: 2}}},
		{Request{Account: "b", Nodes: 1, GPUsPerNode: 4, Duration: time.Hour}, []NodeTake{{Node: "gpu006", GPUs: 4}}},
	} {
		res, err := Place(cl, st, tt.req, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Candidates[0].Nodes; !slices.Equal(got, tt.want) {
			t.Errorf("%d×%d: first candidate takes %v, want %v", tt.req.Nodes, tt.req.GPUsPerNode, got, tt.want)
		}
	}
}

// TestLeafExactFitBeforeWholeNode: leaf1 has one whole free node left,
// leaf2 two nodes with exactly 4 GPUs free (as many free GPUs, but more
// nodes that fit a 4-GPU pod). The pod goes onto one of leaf2's partly
// used nodes instead of breaking leaf1's whole free node; a whole-node
// request still takes leaf1's.
func TestLeafExactFitBeforeWholeNode(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree") // leaf1 gpu001-008, leaf2 gpu009-016, 8 GPUs each
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var recs []Record
	busy := func(node string, gpus int) {
		recs = append(recs, Record{Account: "a", Workload: "w-" + node, GPUs: gpus, Nodes: []string{node}, Start: now.Add(-time.Hour)})
	}
	for i := 1; i <= 7; i++ {
		busy(fmt.Sprintf("gpu%03d", i), 8)
	}
	busy("gpu009", 4)
	busy("gpu010", 4)
	for i := 11; i <= 16; i++ {
		busy(fmt.Sprintf("gpu%03d", i), 8)
	}
	cl, st := occupied(t, g, recs, now)
	for _, tt := range []struct {
		req  Request
		want string
	}{
		{Request{Account: "b", Nodes: 1, GPUsPerNode: 4, Duration: time.Hour}, "gpu009"},
		{Request{Account: "b", Nodes: 1, GPUsPerNode: 8, Duration: time.Hour}, "gpu008"},
	} {
		res, err := Place(cl, st, tt.req, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Candidates[0].Nodes; len(got) != 1 || got[0].Node != tt.want {
			t.Errorf("1×%d: first candidate takes %v, want %s", tt.req.GPUsPerNode, got, tt.want)
		}
	}
}

// TestDomainTightness: a small job goes into the accelerator domain with
// the fewest free GPUs that holds it (the candidate group's own
// residual), not into a roomier one under the same leaf.
func TestDomainTightness(t *testing.T) {
	t.Parallel()
	g := model(t, "nvl72") // 18-node domains of 4-GPU trays; nvl01 and nvl02 share leaf1
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	recs := []Record{
		{Account: "a", Workload: "w1", GPUs: 40, Nodes: hostnames("gb%03d", 1, 10), Start: now.Add(-time.Hour)},  // nvl01: 32 free
		{Account: "a", Workload: "w2", GPUs: 64, Nodes: hostnames("gb%03d", 19, 34), Start: now.Add(-time.Hour)}, // nvl02: 8 free
	}
	cl, st := occupied(t, g, recs, now)
	for _, within := range []Scope{ScopeDomain, ScopeNone} {
		res, err := Place(cl, st, Request{Account: "b", GPUs: 4, Duration: time.Hour, Within: within}, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Candidates[0]; c.Group != "domain nvl02" || c.Scores.Residual != 4 {
			t.Errorf("within %q: first candidate %s on %v with residual %d; want domain nvl02, residual 4", within, c.Group, c.Nodes, c.Scores.Residual)
		}
	}
}

func hostnames(format string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}

// TestKeepWholeFreeSwitches: on a fat tree without accelerator domains,
// a candidate that breaks a whole free leaf (and the whole free spine
// above it) keeps fewer whole free blocks than one inside a leaf already
// in use, and the score says so.
func TestKeepWholeFreeSwitches(t *testing.T) {
	t.Parallel()
	g := model(t, "fat-tree-512") // 16 leaves of 32 nodes, 4 per spine, no domains
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	recs := []Record{{Account: "a", Workload: "w1", GPUs: 8, Nodes: []string{"gpu001"}, Start: now.Add(-time.Hour)}}
	cl, st := occupied(t, g, recs, now)
	cfg := DefaultConfig()
	cfg.MaxCandidates = 20
	res, err := Place(cl, st, Request{Account: "b", GPUs: 8, Duration: time.Hour, Within: ScopeLeaf}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const before = 15 + 3 // every leaf but leaf01, and spines 2-4
	byGroup := map[string]Scores{}
	for _, c := range res.Candidates {
		byGroup[c.Group] = c.Scores
		if c.Scores.FreeSwBefore != before {
			t.Errorf("%s: %d whole free switches before, want %d", c.Group, c.Scores.FreeSwBefore, before)
		}
	}
	for _, tt := range []struct {
		group string
		after int
	}{
		{"switch leaf01", before},     // already in use: breaks nothing
		{"switch leaf02", before - 1}, // a free leaf under a spine in use
		{"switch leaf05", before - 2}, // a free leaf and its free spine
	} {
		sc, ok := byGroup[tt.group]
		if !ok {
			t.Errorf("no candidate in %s among %v", tt.group, res.Candidates)
			continue
		}
		if sc.FreeSwAfter != tt.after || sc.SKeep != float64(tt.after)/before {
			t.Errorf("%s: %d whole free switches after, sKeep %v; want %d, %v", tt.group, sc.FreeSwAfter, sc.SKeep, tt.after, float64(tt.after)/before)
		}
	}
	if res.Candidates[0].Group != "switch leaf01" {
		t.Errorf("first candidate in %s; want leaf01, which is in use already", res.Candidates[0].Group)
	}
}

// TestVictimProportionAndResumable: a request never preempts work more
// than MaxVictimRatio times its size, prefers resumable work as a
// victim, and counts a resumable victim's loss only back to its last
// checkpoint (at most CheckpointInterval).
func TestVictimProportionAndResumable(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree") // leaf1 gpu001-008, leaf2 gpu009-016, 8 GPUs each
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	// leaf1: one 64-GPU unallocated job, reported as a record per node
	// (as pods are): the guard weighs the whole workload, not 8 GPUs.
	var recs []Record
	for i := 1; i <= 8; i++ {
		recs = append(recs, Record{Account: "a", Workload: "big", GPUs: 8, Nodes: []string{fmt.Sprintf("gpu%03d", i)}, Start: now.Add(-time.Hour)})
	}
	recs = append(recs, []Record{
		// gpu009: two 4-GPU unallocated jobs; the resumable one started earlier
		{Account: "a", Workload: "resumable", GPUs: 4, Nodes: []string{"gpu009"}, Start: now.Add(-3 * time.Hour), Resumable: true},
		{Account: "a", Workload: "plain", GPUs: 4, Nodes: []string{"gpu009"}, Start: now.Add(-2 * time.Hour)},
	}...)
	for i := 10; i <= 16; i++ { // the rest of leaf2 full with 8-GPU jobs
		recs = append(recs, Record{Account: "a", Workload: fmt.Sprintf("w%d", i), GPUs: 8, Nodes: []string{fmt.Sprintf("gpu%03d", i)}, Start: now.Add(-time.Hour)})
	}
	cl, st := occupied(t, g, recs, now)
	cfg := DefaultConfig()
	res, err := Place(cl, st, Request{Account: "b", GPUs: 4, Duration: time.Hour, MinRuntime: time.Hour}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var first *Victim
	for _, c := range res.Candidates {
		for i, v := range c.Victims {
			if v.Workload == "big" {
				t.Errorf("candidate %d in %s preempts the 64-GPU job for a 4-GPU request", c.Rank, c.Group)
			}
			if first == nil {
				first = &c.Victims[i]
			}
		}
	}
	if first == nil {
		t.Fatalf("no candidate preempts anything: %+v", res.Candidates)
	}
	if first.Workload != "resumable" || first.LostGPUSeconds != 4*cfg.CheckpointInterval.Seconds() {
		t.Errorf("first victim %s losing %v GPU-s; want the resumable job, losing %v (4 GPUs × the checkpoint interval)",
			first.Workload, first.LostGPUSeconds, 4*cfg.CheckpointInterval.Seconds())
	}
	cfg.MaxVictimRatio = 0 // the guard off: the big job may go
	cfg.MaxLossRatio = 0   // (a restart would lose 64 GPU-hours for 4)
	res, err = Place(cl, st, Request{Account: "b", GPUs: 4, Duration: time.Hour, MinRuntime: time.Hour}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	big := false
	for _, c := range res.Candidates {
		for _, v := range c.Victims {
			big = big || v.Workload == "big"
		}
	}
	if !big {
		t.Error("with maxVictimRatio 0 no candidate preempts the big job")
	}
}

// TestHorizonVictimReason: a victim of the "reclaimable within the
// horizon" class is still protected; its explanation says until when and
// does not call it past its min runtime.
func TestHorizonVictimReason(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var recs []Record
	for i := 1; i <= 16; i++ { // every node held by allocated work of a, protected for one more hour
		recs = append(recs, Record{Account: "a", Workload: fmt.Sprintf("w%d", i), GPUs: 8, Nodes: []string{fmt.Sprintf("gpu%03d", i)},
			Start: now.Add(-time.Hour), MinRuntime: 2 * time.Hour, Allocated: true})
	}
	cl, st := occupied(t, g, recs, now)
	res, err := Place(cl, st, Request{Account: "b", GPUs: 8, Duration: time.Hour, MinRuntime: time.Hour}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Candidates) == 0 || len(res.Candidates[0].Victims) == 0 {
		t.Fatalf("no candidate with a victim: %+v", res.Candidates)
	}
	c := res.Candidates[0]
	reason := c.Victims[0].Reason
	if c.Class != "reclaimable-within-horizon" || !strings.Contains(reason, "protected until 2026-12-02T13:00:00Z") || strings.Contains(reason, "past min runtime") {
		t.Errorf("class %s, reason %q; want the horizon class, protected until 13:00 and not past its min runtime", c.Class, reason)
	}
}

// TestOwedDeliveredSameBasis: an account whose allocated work is served
// in full is owed what it got, however much free (unallocated) work it
// also runs; owed and delivered both count allocated work only.
func TestOwedDeliveredSameBasis(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	recs := []Record{
		{Account: "a", Workload: "alloc", GPUs: 8, Start: now.Add(-10 * time.Hour), Allocated: true, MinRuntime: time.Hour},
		{Account: "a", Workload: "free", GPUs: 16, Start: now.Add(-10 * time.Hour)},
	}
	tr := EqualTree([]string{"a", "b"})
	owed, delivered := OwedDelivered(tr, recs, now, 10*time.Hour, 64) // a is entitled to 32 GPUs
	i, _ := tr.Lookup("a")
	if math.Abs(owed[i]-80) > 1e-9 || math.Abs(delivered[i]-80) > 1e-9 {
		t.Errorf("a owed %v, delivered %v; want 80 and 80 (8 allocated GPUs for 10 h)", owed[i], delivered[i])
	}
}

// TestZeroShares: `shares: 0` is kept (Slurm allows it), absent shares
// are 1, and an account with no shares ranks below the accounts with
// shares in Fair Tree, whatever their usage (its LF is 0).
func TestZeroShares(t *testing.T) {
	t.Parallel()
	b, err := ParseBudgets([]byte("accounts:\n  - name: a\n  - name: z\n    shares: 0\n  - name: c\n    shares: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTree(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"a": 1, "z": 0, "c": 2} {
		i, _ := tr.Lookup(name)
		if got := tr.Accounts()[i].Shares; got != want {
			t.Errorf("%s shares = %v, want %v", name, got, want)
		}
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	recs := []Record{
		{Account: "a", Workload: "wa", GPUs: 8, Start: now.Add(-5 * time.Hour), Allocated: true, MinRuntime: time.Hour},
		{Account: "c", Workload: "wc", GPUs: 8, Start: now.Add(-5 * time.Hour), Allocated: true, MinRuntime: time.Hour},
	}
	st, err := Compute(tr, recs, now, 64, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	z, _ := st.Of("z")
	for _, other := range []string{"a", "c"} {
		o, _ := st.Of(other)
		if !(z.Key < o.Key) || z.LevelFS == nil || *z.LevelFS != 0 {
			t.Errorf("z (no shares, no usage): key %v, LF %v; %s: key %v; want z below", z.Key, z.LevelFS, other, o.Key)
		}
	}
	if i, _ := tr.Lookup("z"); tr.Budgets().Accounts[1].Shares == nil || *tr.Budgets().Accounts[1].Shares != 0 || i != 2 {
		t.Errorf("budgets read back lose z's 0 shares: %+v", tr.Budgets().Accounts[1])
	}
}

// occupied places recs on g at now and computes the standings of
// accounts a and b with equal shares.
func occupied(t *testing.T, g *topology.Graph, recs []Record, now time.Time) (*Cluster, *Standings) {
	t.Helper()
	cl, err := NewCluster(g, recs, now)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Compute(EqualTree([]string{"a", "b"}), recs, now, cl.GPUs(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cl, st
}

func TestRepeated(t *testing.T) {
	t.Parallel()
	cl, err := NewCluster(model(t, "small-tree"), nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		names []string
		want  string
	}{
		{"none", nil, ""},
		{"distinct", []string{"gpu003", "gpu001", "nowhere", "gpu002"}, ""},
		{"known twice", []string{"gpu001", "gpu002", "gpu001", "gpu002"}, "gpu001"},
		{"unknown twice", []string{"x", "gpu001", "y", "x"}, "x"},
		{"unknown once, known twice", []string{"x", "gpu004", "y", "gpu004", "x"}, "gpu004"},
	}
	if got, dup := (&Cluster{}).Repeated([]string{"a", "b", "a"}); got != "a" || !dup {
		t.Errorf("an empty cluster: Repeated = %q, %v; want \"a\", true", got, dup)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, dup := cl.Repeated(tt.names)
			if got != tt.want || dup != (tt.want != "") {
				t.Errorf("Repeated(%v) = %q, %v; want %q", tt.names, got, dup, tt.want)
			}
		})
	}
}

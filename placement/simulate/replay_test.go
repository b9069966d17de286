package simulate_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/simulate"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/topology"
)

func model(t testing.TB, name string) *topology.Graph {
	t.Helper()
	g, err := sim.LoadGraph(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func trace(t *testing.T, csv string) []simulate.Job {
	t.Helper()
	jobs, err := simulate.ParseTrace(strings.NewReader(simulate.HeaderV1 + "\n" + csv))
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// TestPackingKeepsRoom: on small-tree (two leaves of eight 8-GPU
// nodes), 4 nodes go to leaf1 and 6 to leaf2; the next 2-node job goes
// to leaf1 under first fit but to the tighter leaf2 under the others,
// which leaves leaf1 room for the last 4-node job at once.
func TestPackingKeepsRoom(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs := trace(t, "0,a,32,100,0\n0,b,48,100,0\n0,a,16,100,0\n1,b,32,10,0\n")
	for _, tc := range []struct {
		policy string
		starts []float64
	}{
		{simulate.PolicyFirstFit, []float64{0, 0, 0, 100}},
		{simulate.PolicyBestFit, []float64{0, 0, 0, 1}},
		{simulate.PolicySlurmTree, []float64{0, 0, 0, 1}},
		{simulate.PolicyToposcope, []float64{0, 0, 0, 1}},
	} {
		r, err := simulate.Run(g, jobs, tc.policy, simulate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Starts, tc.starts) {
			t.Errorf("%s: starts %v, want %v", tc.policy, r.Starts, tc.starts)
		}
		if r.MultiNodeJobs != 4 || r.MeanLeafSpan != 1 || r.MeanLCALevel != 0 {
			t.Errorf("%s: %d multi-node jobs, leaf span %.2f, LCA %.2f; want 4 in one leaf each", tc.policy, r.MultiNodeJobs, r.MeanLeafSpan, r.MeanLCALevel)
		}
	}
}

// TestBackfill: a 12-node job runs until 100; a whole-leaf job waits for
// it and is given a reservation at 100; a 1-node job that ends by then
// backfills, one that would run past it does not. FIFO starts nothing
// ahead of the waiting job.
func TestBackfill(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs := trace(t, "0,a,96,100,0\n1,b,64,10,0\n2,a,8,50,0\n3,a,8,200,0\n")
	for _, tc := range []struct {
		fifo   bool
		starts []float64
		wait   float64
	}{
		{false, []float64{0, 100, 2, 100}, (99 + 97) / 4.0},
		{true, []float64{0, 100, 100, 100}, (99 + 98 + 97) / 4.0},
	} {
		for _, p := range simulate.Policies() {
			r, err := simulate.Run(g, jobs, p, simulate.Options{FIFO: tc.fifo})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Starts, tc.starts) || r.WaitMean != tc.wait {
				t.Errorf("%s fifo=%v: starts %v (mean wait %g), want %v (%g)", p, tc.fifo, r.Starts, r.WaitMean, tc.starts, tc.wait)
			}
		}
	}
}

func TestReportMetrics(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	// 12 nodes span both leaves (LCA spine1, level 1); 2 nodes in one leaf.
	jobs := trace(t, "0,a,96,3600,3600\n0,b,16,3600,0\n7200,b,8,3600,0\n")
	r, err := simulate.Run(g, jobs, simulate.PolicyFirstFit, simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.MultiNodeJobs != 2 || r.MeanLeafSpan != 1.5 || r.MeanLCALevel != 0.5 {
		t.Errorf("multi-node %d, leaf span %g, LCA %g; want 2, 1.5, 0.5", r.MultiNodeJobs, r.MeanLeafSpan, r.MeanLCALevel)
	}
	if r.LargestJobGPUs != 96 || r.LargestJobWait != 0 || r.SpanSeconds != 10800 || r.Events != 6 {
		t.Errorf("largest %d wait %g span %g events %d", r.LargestJobGPUs, r.LargestJobWait, r.SpanSeconds, r.Events)
	}
	// While jobs arrive (0..7200 s): 112 of 128 GPUs for the first hour.
	if want := 112.0 * 3600 / (128 * 7200); r.Occupancy != want {
		t.Errorf("occupancy %g, want %g", r.Occupancy, want)
	}
	// Equal shares of 128 GPUs over 3 h: a is owed min(64, 96) for its
	// hour and delivered 96 (allocated); b's work is unallocated, owed to
	// nobody and not delivered (the same basis for both).
	want := []simulate.AccountReport{{Account: "a", Owed: 64, Delivered: 96, Ratio: 1.5}, {Account: "b", Owed: 0, Delivered: 0}}
	if !slices.Equal(r.Accounts, want) {
		t.Errorf("accounts %+v, want %+v", r.Accounts, want)
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs := trace(t, "0,a,8,60,0\n")
	tree, err := placement.NewTree(&placement.Budgets{Accounts: []placement.AccountSpec{{Name: "other", Shares: placement.Shares(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		jobs   []simulate.Job
		policy string
		o      simulate.Options
		want   string
	}{
		{"unknown policy", jobs, "random", simulate.Options{}, `policy "random"`},
		{"bad scope", jobs, simulate.PolicyFirstFit, simulate.Options{Within: "rack"}, `within "rack"`},
		{"too big", trace(t, "0,a,256,60,0\n"), simulate.PolicyFirstFit, simulate.Options{}, "job 0 asks for 256 GPUs; the cluster has 128"},
		{"no budget", jobs, simulate.PolicyFirstFit, simulate.Options{Tree: tree}, `account "a" of the trace has no budget`},
		{"no jobs", nil, simulate.PolicyToposcope, simulate.Options{}, "no jobs to replay"},
		{"submit past the range", []simulate.Job{{Submit: 1e15, Account: "a", GPUs: 8, Duration: 60}}, simulate.PolicyToposcope,
			simulate.Options{}, "job 0: submit 1e+15 s is not in [0, 315360000]"},
		{"duration past the range", []simulate.Job{{ID: 7, Account: "a", GPUs: 8, Duration: 1e11}}, simulate.PolicyToposcope,
			simulate.Options{}, "job 7: duration 1e+11 s is not in"},
		{"negative min runtime", []simulate.Job{{Account: "a", GPUs: 8, Duration: 60, MinRuntime: -1}}, simulate.PolicyFirstFit,
			simulate.Options{}, "job 0: min runtime -1 s"},
	} {
		_, err := simulate.Run(g, tc.jobs, tc.policy, tc.o)
		if !errors.Is(err, simulate.ErrScenario) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Run = %v, want ErrScenario with %q", tc.name, err, tc.want)
		}
	}
}

// TestPoliciesOnBundledModels replays synthetic traces on every bundled
// model under every policy and scope. The replay checks each placement
// (the pods add up, a constrained job stays in one group, no node is
// overfilled) and fails on any violation; here every job must also
// start no earlier than it was submitted.
func TestPoliciesOnBundledModels(t *testing.T) {
	t.Parallel()
	for _, info := range sim.Bundled() {
		g := model(t, info.Name)
		gpus := 0
		for _, n := range g.Nodes() {
			gpus += n.GPUs
		}
		// Jobs up to 64 GPUs, or the whole of a smaller model.
		jobs, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 400, Seed: 11, MaxGPUs: min(64, gpus), MeanInterarrival: 60})
		if err != nil {
			t.Fatal(err)
		}
		for _, within := range []placement.Scope{placement.ScopeLeaf, placement.ScopeDomain, simulate.ScopeNone} {
			for _, p := range simulate.Policies() {
				r, err := simulate.Run(g, jobs, p, simulate.Options{Within: within})
				if err != nil {
					t.Fatalf("%s within %s, %s: %v", info.Name, within, p, err)
				}
				for i, s := range r.Starts {
					if s < jobs[i].Submit {
						t.Fatalf("%s within %s, %s: job %d starts at %g before its submit %g", info.Name, within, p, i, s, jobs[i].Submit)
					}
				}
				if r.Jobs != len(jobs) || r.Occupancy <= 0 || r.Occupancy > 1 {
					t.Errorf("%s within %s, %s: %d jobs, occupancy %g", info.Name, within, p, r.Jobs, r.Occupancy)
				}
			}
		}
	}
}

// TestProgress checks that Options.Progress sees the started count grow
// to every job.
func TestProgress(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 300, Seed: 3, MaxGPUs: 64})
	if err != nil {
		t.Fatal(err)
	}
	last, calls, backwards := 0, 0, false
	_, err = simulate.Run(g, jobs, simulate.PolicyBestFit, simulate.Options{Progress: func(started, total int) {
		calls++
		backwards = backwards || started < last || total != len(jobs)
		last = started
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || backwards || last != len(jobs) {
		t.Errorf("progress: %d calls, last %d of %d, went back or had a wrong total: %v", calls, last, len(jobs), backwards)
	}
}

// TestIdleGPUMetrics: two 60-GPU jobs, one per leaf, leave 4 GPUs free on
// one node of each leaf; an 8-GPU job then fits by count (8 free) but no
// node holds it. Until the last submit (100 s) the report averages 8
// free GPUs on partly used nodes and 8 free while the head waits.
func TestIdleGPUMetrics(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs := trace(t, "0,a,60,3600,0\n0,a,60,3600,0\n0,b,8,3600,0\n100,b,1,60,0\n")
	for _, p := range []string{simulate.PolicyFirstFit, simulate.PolicyBestFit, simulate.PolicyToposcope} {
		r, err := simulate.Run(g, jobs, p, simulate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.PartNodeFreeGPUs != 8 || r.HeadBlockedFreeGPUs != 8 {
			t.Errorf("%s: part-node free %g, head-blocked free %g; want 8 and 8", p, r.PartNodeFreeGPUs, r.HeadBlockedFreeGPUs)
		}
		// Equal shares, all work unallocated: nobody is owed, so both
		// accounts count as served.
		if r.AccountsAtLeast95 != 2 {
			t.Errorf("%s: accounts at 95%%: %d, want 2", p, r.AccountsAtLeast95)
		}
	}
}

// TestFairShareOrder: a fills the cluster first; a and b then queue for
// all of it, a first. In submit order a's second job runs next; in
// fair-share order b's does (a has used its share, b nothing), for every
// policy, and the report says which order ran.
func TestFairShareOrder(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs := trace(t, "0,a,128,1000,10\n1,a,128,10,5\n2,b,128,10,5\n")
	for _, p := range simulate.Policies() {
		for _, tc := range []struct {
			order      string
			first, alt int
		}{{simulate.OrderSubmit, 1, 2}, {simulate.OrderFairShare, 2, 1}} {
			r, err := simulate.Run(g, jobs, p, simulate.Options{Order: tc.order})
			if err != nil {
				t.Fatal(err)
			}
			if r.Order != tc.order || r.Starts[tc.first] != 1000 || r.Starts[tc.alt] != 1010 {
				t.Errorf("%s, %s order: starts %v (order %q); want job %d at 1000 and job %d at 1010", p, tc.order, r.Starts, r.Order, tc.first, tc.alt)
			}
		}
	}
	if _, err := simulate.Run(g, jobs, simulate.PolicyFirstFit, simulate.Options{Order: "random"}); !errors.Is(err, simulate.ErrScenario) {
		t.Errorf("unknown order: %v", err)
	}
}

// TestFairShareOrderAllocatedFirst: a fills the cluster; then b queues
// unallocated work (min runtime 0) and a, which has used its share,
// allocated work. In fair-share order a's allocated job runs first
// although b stands better: unallocated work charges no budget and runs
// on what allocated work leaves.
func TestFairShareOrderAllocatedFirst(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs := trace(t, "0,a,128,1000,10\n1,b,128,10,0\n2,a,128,10,5\n")
	for _, p := range simulate.Policies() {
		r, err := simulate.Run(g, jobs, p, simulate.Options{Order: simulate.OrderFairShare})
		if err != nil {
			t.Fatal(err)
		}
		if r.Starts[2] != 1000 || r.Starts[1] != 1010 {
			t.Errorf("%s: starts %v; want the allocated job 2 at 1000 and the unallocated job 1 at 1010", p, r.Starts)
		}
	}
}

// TestConcreteReservation: on small-tree (leaves of 8 8-GPU nodes) job 0
// leaves leaf1 three free nodes until 1,000 s and job 1 leaves leaf2 two
// until 2,000 s; job 2 needs a whole leaf and waits for leaf1. Job 3 (two
// nodes, 5,000 s) fits leaf2 now but would run past job 2's start: with
// a GPU-count reservation it is held until 1,000 s; with the reservation
// on leaf1's nodes it starts at once on leaf2, and job 2 still starts at
// 1,000 s.
func TestConcreteReservation(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs := trace(t, "0,a,40,1000,0\n0,a,48,2000,0\n1,b,64,100,0\n2,c,16,5000,0\n")
	for _, p := range []string{simulate.PolicyToposcope, simulate.PolicyBestFit, simulate.PolicySlurmTree} {
		for _, tc := range []struct {
			reserve string
			start3  float64
		}{{simulate.ReserveCount, 1000}, {simulate.ReserveNodes, 2}} {
			r, err := simulate.Run(g, jobs, p, simulate.Options{Reserve: tc.reserve})
			if err != nil {
				t.Fatal(err)
			}
			if r.Starts[2] != 1000 || r.Starts[3] != tc.start3 {
				t.Errorf("%s, reserve %s: starts %v; want job 2 at 1000 and job 3 at %g", p, tc.reserve, r.Starts, tc.start3)
			}
		}
	}
	// Job 0 leaves leaf1 two free nodes until 1,000 s, job 1 leaf2 three
	// until 2,000 s; job 2 waits for leaf1. Job 3 (two nodes, 5,000 s)
	// fits leaf1's two nodes exactly, the tightest room, but they are
	// reserved: it starts at once on leaf2, for every policy.
	elsewhere := trace(t, "0,a,48,1000,0\n0,a,40,2000,0\n1,b,64,100,0\n2,c,16,5000,0\n")
	for _, p := range simulate.Policies() {
		r, err := simulate.Run(g, elsewhere, p, simulate.Options{Reserve: simulate.ReserveNodes})
		if err != nil {
			t.Fatal(err)
		}
		if r.Starts[2] != 1000 || r.Starts[3] != 2 {
			t.Errorf("%s, reserve nodes, tightest room reserved: starts %v; want job 2 at 1000 and job 3 at 2", p, r.Starts)
		}
	}
	if _, err := simulate.Run(g, jobs, simulate.PolicyBestFit, simulate.Options{Reserve: "leaves"}); !errors.Is(err, simulate.ErrScenario) {
		t.Errorf("unknown reserve: %v", err)
	}
}

// TestConcreteReservationLoaded: two days of the venus scenario with
// concrete reservations run to the end under every policy (a policy that
// took GPUs already taken would stop the replay with an error) and start
// every job, the held ones placed off the reserved nodes at many events,
// often right after other jobs started at the same time.
func TestConcreteReservationLoaded(t *testing.T) {
	t.Parallel()
	sc, err := simulate.LoadScenario("venus")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := placement.NewTree(sc.Budgets())
	if err != nil {
		t.Fatal(err)
	}
	o := sc.Synthetic(1, 1080)
	o.Horizon = 2 * 24 * 3600
	jobs, err := simulate.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	g := model(t, sc.Model)
	for _, p := range simulate.Policies() {
		r, err := simulate.Run(g, jobs, p, simulate.Options{Reserve: simulate.ReserveNodes, Order: sc.Order, Tree: tree})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for i, s := range r.Starts {
			if s < jobs[i].Submit {
				t.Fatalf("%s: job %d starts at %g, before its submit %g", p, i, s, jobs[i].Submit)
			}
		}
	}
}

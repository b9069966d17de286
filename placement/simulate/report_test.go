package simulate_test

import (
	"math"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/placement/simulate"
)

// TestUsefulWork: on small-tree (128 GPUs), job 0 of account a holds
// every GPU for 10,000 s and job 1 of b asks for a leaf at 5,400 s.
// When job 1 preempts job 0, what job 0 ran since its last checkpoint
// (all of it, when it restarts) is redone later: it counts in
// RedoneGPUHours, not in the useful GPU-hours, the occupancy (first to
// last submit, 0–5,400 s) or the GPU-hours delivered to a. Useful work
// is always the trace's, GPUs × duration once per job.
func TestUsefulWork(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	for _, tc := range []struct {
		name, csv      string
		useful, redone float64 // GPU-hours
		occupancy      float64
		deliveredA     float64 // GPU-hours
	}{
		// 5,400 s × 128 GPUs run, thrown away and run again: nothing of
		// the arrival window was useful (it counted as 100% before).
		{"restart", "0,a,128,10000,0,0\n5400,b,64,20000,50,0\n", 711.11, 192, 0, 0},
		// Resumable: the 1,800 s since the 3,600 s checkpoint are redone.
		{"resume from checkpoint", "0,a,128,10000,0,1\n5400,b,64,7200,50,0\n", 483.56, 64, 3600.0 / 5400, 0},
		// Allocated work: a is delivered its 10,000 s once (it counted
		// 11,800 s before).
		{"allocated victim", "0,a,128,10000,3600,1\n5400,b,64,7200,50,0\n", 483.56, 64, 3600.0 / 5400, 355.56},
		{"no preemption", "0,a,128,10000,3600,0\n5400,b,64,100,50,0\n", 357.33, 0, 1, 355.56},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jobs, err := simulate.ParseTrace(strings.NewReader(simulate.HeaderV2 + "\n" + tc.csv))
			if err != nil {
				t.Fatal(err)
			}
			r, err := simulate.Run(g, jobs, simulate.PolicyToposcope, simulate.Options{Preempt: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.UsefulGPUHours != tc.useful || r.RedoneGPUHours != tc.redone || r.RedoneGPUHours != r.LostGPUHours ||
				math.Abs(r.Occupancy-tc.occupancy) > 1e-9 || r.Accounts[0].Delivered != tc.deliveredA {
				t.Errorf("useful %g, redone %g (lost %g), occupancy %g, a delivered %g; want %g, %g, %g, %g",
					r.UsefulGPUHours, r.RedoneGPUHours, r.LostGPUHours, r.Occupancy, r.Accounts[0].Delivered,
					tc.useful, tc.redone, tc.occupancy, tc.deliveredA)
			}
		})
	}
}

// TestCappedDeliveredRatio: Σ min(delivered, owed) / Σ owed. On
// small-tree (two equal shares of 64 GPUs), a's 128-GPU job runs first
// for an hour while b's 64-GPU job waits, then b's runs: a is owed 64
// and delivered 128, b owed 128 (its hour of waiting, its hour of
// running) and delivered 64. The uncapped ratio is 192/192 = 100%; the
// capped one is (64 + 64)/192.
func TestCappedDeliveredRatio(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	nested, err := placement.NewTree(&placement.Budgets{Accounts: []placement.AccountSpec{
		{Name: "A", Children: []placement.AccountSpec{{Name: "a"}}}, {Name: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, csv string
		tree      *placement.Tree
		want      float64
	}{
		{"over-served does not make up for under-served", "0,a,128,3600,3600\n0,b,64,3600,60\n", nil, 0.6667},
		{"served", "0,a,64,3600,3600\n0,b,64,3600,60\n", nil, 1},
		{"over-served only", "0,a,96,3600,3600\n", nil, 1},
		{"nothing owed (unallocated work)", "0,a,8,60,0\n", nil, 0},
		// a's figures also count in its parent A's: once only.
		{"a child's work counts once", "0,a,128,3600,3600\n0,b,64,3600,60\n", nested, 0.6667},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := simulate.Run(g, trace(t, tc.csv), simulate.PolicyFirstFit, simulate.Options{Tree: tc.tree})
			if err != nil {
				t.Fatal(err)
			}
			if r.CappedDeliveredRatio != tc.want {
				t.Errorf("capped ratio %g, want %g (accounts %+v)", r.CappedDeliveredRatio, tc.want, r.Accounts)
			}
		})
	}
}

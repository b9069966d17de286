package simulate_test

import (
	"math"
	"slices"
	"testing"

	"github.com/toposcope/toposcope/placement/simulate"
)

// TestSeriesSmall: on small-tree (128 GPUs), a's 128-GPU job runs the
// first hour and b's 64-GPU job the second; four samples over the two
// hours show the cluster full, then half full, and a owed and delivered
// its hour by the middle.
func TestSeriesSmall(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs := trace(t, "0,a,128,3600,3600\n0,b,64,3600,60\n")
	r, err := simulate.Run(g, jobs, simulate.PolicyFirstFit, simulate.Options{Samples: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Series
	if s == nil {
		t.Fatal("no series with Samples 4")
	}
	if want := []float64{1800, 3600, 5400, 7200}; !slices.Equal(s.Times, want) {
		t.Errorf("times %v, want %v", s.Times, want)
	}
	if want := []float64{1, 1, 0.5, 0.5}; !slices.Equal(s.Occupancy, want) {
		t.Errorf("occupancy %v, want %v", s.Occupancy, want)
	}
	// Owed GPU-hours are counted per hour: two samples. a is owed its
	// equal share (64) for the hour it runs and delivered 128; b is owed
	// 64 for the hour it waits and 64 for the hour it runs.
	if want := []float64{3600, 7200}; !slices.Equal(s.AccountTimes, want) {
		t.Errorf("account times %v, want %v", s.AccountTimes, want)
	}
	want := []simulate.AccountSeries{
		{Account: "a", Owed: []float64{64, 64}, Delivered: []float64{128, 128}},
		{Account: "b", Owed: []float64{64, 128}, Delivered: []float64{0, 64}},
	}
	for i, w := range want {
		got := s.Accounts[i]
		if got.Account != w.Account || !slices.Equal(got.Owed, w.Owed) || !slices.Equal(got.Delivered, w.Delivered) {
			t.Errorf("account %+v, want %+v", got, w)
		}
	}
	if want := []float64{0, 0, 0, 3600, 3600}; !slices.Equal(s.WaitQuantiles, want) {
		t.Errorf("wait quantiles %v, want %v", s.WaitQuantiles, want)
	}
	if want := []simulate.SizeWait{{GPUs: 64, Jobs: 1, MeanWait: 3600, MaxWait: 3600}, {GPUs: 128, Jobs: 1}}; !slices.Equal(s.BySize, want) {
		t.Errorf("by size %+v, want %+v", s.BySize, want)
	}
	// Without Samples, no series.
	r, err = simulate.Run(g, jobs, simulate.PolicyFirstFit, simulate.Options{})
	if err != nil || r.Series != nil {
		t.Errorf("series %+v without Samples (err %v)", r.Series, err)
	}
}

// TestSeriesAgreesWithReport: on four synthetic days with the
// fair-share order and preemption, for every policy, the series end where the report ends:
// the last owed and delivered GPU-hours are the report's, the mean
// occupancy over the whole span is the useful GPU-hours over the
// cluster's, the 50% quantile is the p50 wait, and the largest size's
// mean wait is the largest-job wait. Their length is Samples whatever
// the number of jobs.
func TestSeriesAgreesWithReport(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	jobs, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 1500, Seed: 3, MaxGPUs: 64, MeanInterarrival: 240, Accounts: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range simulate.Policies() {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			r, err := simulate.Run(g, jobs, p, simulate.Options{Samples: 50, Preempt: true, Order: simulate.OrderFairShare})
			if err != nil {
				t.Fatal(err)
			}
			s := r.Series
			if len(s.Times) != 50 || len(s.Occupancy) != 50 || len(s.WaitQuantiles) != 51 || len(s.Accounts) != len(r.Accounts) ||
				len(s.AccountTimes) != 50 {
				t.Fatalf("lengths %d %d %d %d %d", len(s.Times), len(s.Occupancy), len(s.WaitQuantiles), len(s.Accounts), len(s.AccountTimes))
			}
			if s.Times[49] != r.SpanSeconds || s.AccountTimes[49] != r.SpanSeconds {
				t.Errorf("last times %g and %g, span %g", s.Times[49], s.AccountTimes[49], r.SpanSeconds)
			}
			for i, a := range r.Accounts {
				sa := s.Accounts[i]
				if sa.Account != a.Account || sa.Owed[49] != a.Owed || sa.Delivered[49] != a.Delivered {
					t.Errorf("account %s: series ends at owed %g delivered %g; report %g, %g", a.Account, sa.Owed[49], sa.Delivered[49], a.Owed, a.Delivered)
				}
				for k := 1; k < 50; k++ {
					if sa.Owed[k] < sa.Owed[k-1]-0.01 || sa.Delivered[k] < sa.Delivered[k-1]-0.01 {
						t.Errorf("account %s: owed or delivered falls at sample %d", a.Account, k)
					}
				}
			}
			var gpuHours float64
			for _, o := range s.Occupancy {
				if o < 0 || o > 1 {
					t.Errorf("occupancy %g out of [0, 1]", o)
				}
				gpuHours += o * 128 * r.SpanSeconds / 50 / 3600
			}
			// Each sample is rounded to 1e-4 of 128 GPUs.
			if tol := 50 * 0.5e-4 * 128 * r.SpanSeconds / 50 / 3600; math.Abs(gpuHours-r.UsefulGPUHours) > tol+0.01 {
				t.Errorf("occupancy integrates to %g GPU-h, useful %g", gpuHours, r.UsefulGPUHours)
			}
			if s.WaitQuantiles[25] != r.WaitP50 || s.WaitQuantiles[0] > s.WaitQuantiles[50] {
				t.Errorf("wait quantiles %v; p50 %g", s.WaitQuantiles, r.WaitP50)
			}
			last := s.BySize[len(s.BySize)-1]
			if last.GPUs != r.LargestJobGPUs || math.Abs(last.MeanWait-r.LargestJobWait) > 0.005 {
				t.Errorf("largest size %+v; report %d GPUs wait %g", last, r.LargestJobGPUs, r.LargestJobWait)
			}
		})
	}
}

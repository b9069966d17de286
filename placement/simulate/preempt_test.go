package simulate_test

import (
	"strings"
	"testing"

	"github.com/toposcope/toposcope/placement/simulate"
)

// TestPreemption: on small-tree (128 GPUs, two leaves of 64), job 0 of
// account a holds every GPU for 10,000 s; at 5,400 s account b asks for
// one leaf. With Preempt the toposcope policy stops job 0 when the
// planner allows it and queues it again: it restarts from scratch, or,
// resumable, from its last checkpoint (hourly: it loses 1,800 s); either
// way it waits for b's job to end. The planner allows it only when job 0
// loses no more GPU-time than b's job runs (at least an hour's worth):
// a restart (192 GPU-hours) for a job of 20,000 s, not of 100 s.
// (The span is the last end: job 0's, after b's.)
func TestPreemption(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	const head = simulate.Header + "\n"
	for _, tc := range []struct {
		name, csv string
		policy    string
		preempt   bool
		start1    float64 // job 1's start
		count     int
		lost      float64 // GPU-hours
		span      float64
	}{
		{"unallocated victim restarts", "0,a,128,10000,0,0\n5400,b,64,20000,50,0\n", simulate.PolicyToposcope, true, 5400, 1, 192, 35400},
		{"loss out of proportion (192 GPU-h for 64)", "0,a,128,10000,0,0\n5400,b,64,100,50,0\n", simulate.PolicyToposcope, true, 10000, 0, 0, 10100},
		// The planner counts a resumable victim's loss as a whole
		// checkpoint interval (128 GPU-hours): b's job of 2 h is worth it.
		{"resumable victim resumes from its checkpoint", "0,a,128,10000,0,1\n5400,b,64,7200,50,0\n", simulate.PolicyToposcope, true, 5400, 1, 64, 19000},
		// Resumable, so that b's job is worth the loss and b still stands
		// below a with it (a restart would cost exactly a's whole usage).
		{"allocated victim past min runtime, owner over-served", "0,a,128,10000,3600,1\n5400,b,64,7200,50,0\n", simulate.PolicyToposcope, true, 5400, 1, 64, 19000},
		{"victim within its min runtime", "0,a,128,10000,7200,0\n5400,b,64,100,50,0\n", simulate.PolicyToposcope, true, 10000, 0, 0, 10100},
		{"victim out of proportion (128 > 4 × 8 GPUs)", "0,a,128,10000,0,0\n5400,b,8,100,50,0\n", simulate.PolicyToposcope, true, 10000, 0, 0, 10100},
		{"unallocated work never preempts", "0,a,128,10000,0,0\n5400,b,64,100,0,0\n", simulate.PolicyToposcope, true, 10000, 0, 0, 10100},
		{"own account's work is no victim", "0,a,128,10000,0,0\n5400,a,64,100,50,0\n", simulate.PolicyToposcope, true, 10000, 0, 0, 10100},
		{"off by default", "0,a,128,10000,0,0\n5400,b,64,100,50,0\n", simulate.PolicyToposcope, false, 10000, 0, 0, 10100},
		{"baselines never preempt", "0,a,128,10000,0,0\n5400,b,64,100,50,0\n", simulate.PolicyBestFit, true, 10000, 0, 0, 10100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jobs, err := simulate.ParseTrace(strings.NewReader(head + tc.csv))
			if err != nil {
				t.Fatal(err)
			}
			r, err := simulate.Run(g, jobs, tc.policy, simulate.Options{Preempt: tc.preempt})
			if err != nil {
				t.Fatal(err)
			}
			if r.Starts[1] != tc.start1 || r.Preemptions != tc.count || r.LostGPUHours != tc.lost || r.SpanSeconds != tc.span {
				t.Errorf("job 1 starts at %g, %d preempted, %g GPU-h lost, span %g; want %g, %d, %g, %g",
					r.Starts[1], r.Preemptions, r.LostGPUHours, r.SpanSeconds, tc.start1, tc.count, tc.lost, tc.span)
			}
			if want := tc.preempt && tc.policy == simulate.PolicyToposcope; r.Preempt != want {
				t.Errorf("report says preempt %v, want %v", r.Preempt, want)
			}
		})
	}
}

// TestPreemptionKeepsAccounts: with preemption on a loaded synthetic
// trace, every job still completes once (the report covers every job and
// the delivered GPU-hours equal the trace's work), and preempted work is
// what the report counts.
func TestPreemptionKeepsAccounts(t *testing.T) {
	t.Parallel()
	g := model(t, "fat-tree-512")
	jobs, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 600, Seed: 5, MaxGPUs: 256, Load: 1.2, CapacityGPUs: 4096, Accounts: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range []string{simulate.OrderSubmit, simulate.OrderFairShare} {
		r, err := simulate.Run(g, jobs, simulate.PolicyToposcope, simulate.Options{Preempt: true, Order: order})
		if err != nil {
			t.Fatal(err)
		}
		if r.Preemptions == 0 || r.LostGPUHours <= 0 {
			t.Errorf("%s: %d preemptions, %g GPU-h lost; the loaded trace should preempt", order, r.Preemptions, r.LostGPUHours)
		}
		var work, delivered float64
		for _, j := range jobs {
			if j.MinRuntime > 0 {
				work += float64(j.GPUs) * j.Duration / 3600
			}
		}
		for _, a := range r.Accounts {
			delivered += a.Delivered
		}
		// Delivered counts allocated runs, including the part a
		// preemption lost, so it is at least the allocated work.
		if delivered < work*0.999 {
			t.Errorf("%s: delivered %.1f GPU-h of %.1f allocated", order, delivered, work)
		}
	}
}

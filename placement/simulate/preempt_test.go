package simulate_test

import (
	"math"
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
	const head = simulate.HeaderV2 + "\n"
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
		// No submit or finish comes at 7,200 s, when job 0's protection
		// ends: that is an event of its own, and b's job preempts then
		// (job 0 resumes from its 7,200 s checkpoint, losing nothing).
		{"protection ends between events", "0,a,128,10000,7200,1\n5400,b,64,7200,50,0\n", simulate.PolicyToposcope, true, 7200, 1, 0, 17200},
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
// trace, every job still completes once (the report covers every job,
// the useful GPU-hours are the trace's work and the delivered ones its
// allocated work), and preempted work is what the report counts as
// redone.
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
		var all, work, delivered float64
		for _, j := range jobs {
			all += float64(j.GPUs) * j.Duration / 3600
			if j.MinRuntime > 0 {
				work += float64(j.GPUs) * j.Duration / 3600
			}
		}
		for _, a := range r.Accounts {
			delivered += a.Delivered
		}
		// Delivered counts the useful part of allocated runs: the
		// allocated work once, whatever a preemption threw away.
		if math.Abs(delivered-work) > 0.01*float64(len(r.Accounts)) || math.Abs(r.UsefulGPUHours-all) > 0.01 {
			t.Errorf("%s: delivered %.2f GPU-h of %.2f allocated, useful %.2f of %.2f", order, delivered, work, r.UsefulGPUHours, all)
		}
		if r.RedoneGPUHours != r.LostGPUHours {
			t.Errorf("%s: redone %g GPU-h, lost %g", order, r.RedoneGPUHours, r.LostGPUHours)
		}
	}
}

// TestDefragment: sixteen 8-GPU jobs fill small-tree's two leaves; a
// 64-GPU job (a whole leaf) arrives at 10 s and a 1-GPU job at 4,000 s
// (an event past the bound). With DefragAfter 3,600 s the toposcope
// policy frees one leaf at 4,000 s by preempting its eight resumable
// jobs, which lose the 400 s since their last hourly checkpoint (25,600
// GPU-seconds), and the big job starts then. Work that would restart, or
// a bound not reached, or a baseline policy, leaves it waiting for the
// leaf to end at 100,000 s. So does a leaf that frees soon anyway: at
// most a quarter of what the big job gains (64 GPUs for as long as it
// would wait) may be lost, 32,000 GPU-seconds when the leaf frees at
// 6,000 s, 8,000 when it frees at 4,500 s.
func TestDefragment(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	fill := func(resumable string, end ...string) string {
		d := "100000"
		if len(end) > 0 {
			d = end[0]
		}
		var b strings.Builder
		b.WriteString(simulate.HeaderV2 + "\n")
		for i := 0; i < 16; i++ {
			b.WriteString("0,a,8," + d + ",0," + resumable + "\n")
		}
		b.WriteString("10,b,64,1000,500,0\n4000,b,1,10,0,0\n")
		return b.String()
	}
	for _, tc := range []struct {
		name, csv string
		policy    string
		after     float64
		fifo      bool
		start     float64
		count     int
		lost      float64
	}{
		{"resumable work makes way", fill("1"), simulate.PolicyToposcope, 3600, false, 4000, 8, 7.11},
		{"without backfill too", fill("1"), simulate.PolicyToposcope, 3600, true, 4000, 8, 7.11},
		{"work that would restart stays", fill("0"), simulate.PolicyToposcope, 3600, false, 100000, 0, 0},
		{"bound not reached", fill("1"), simulate.PolicyToposcope, 5000, false, 100000, 0, 0},
		{"baselines never defragment", fill("1"), simulate.PolicyBestFit, 3600, false, 100000, 0, 0},
		{"worth a quarter of the wait", fill("1", "6000"), simulate.PolicyToposcope, 3600, false, 4000, 8, 7.11},
		{"the leaf frees soon anyway", fill("1", "4500"), simulate.PolicyToposcope, 3600, false, 4500, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jobs, err := simulate.ParseTrace(strings.NewReader(tc.csv))
			if err != nil {
				t.Fatal(err)
			}
			r, err := simulate.Run(g, jobs, tc.policy, simulate.Options{DefragAfter: tc.after, FIFO: tc.fifo})
			if err != nil {
				t.Fatal(err)
			}
			defrags := 0
			if tc.count > 0 {
				defrags = 1
			}
			if r.Starts[16] != tc.start || r.Preemptions != tc.count || r.LostGPUHours != tc.lost || r.Defragmentations != defrags {
				t.Errorf("big job starts at %g, %d preempted, %g GPU-h lost, %d defragmentations; want %g, %d, %g, %d",
					r.Starts[16], r.Preemptions, r.LostGPUHours, r.Defragmentations, tc.start, tc.count, tc.lost, defrags)
			}
		})
	}
}

// TestProtectionEndFractional: the protection-end event comes at the
// instant the planner stops protecting the work, also when start and
// min runtime are fractions of a second (rounded to nanoseconds there).
func TestProtectionEndFractional(t *testing.T) {
	t.Parallel()
	g := model(t, "small-tree")
	for _, tc := range []struct{ submit, minRuntime string }{{"0.9", "7200.2"}, {"0.9", "7200.7"}, {"0.3", "7199.9"}} {
		jobs, err := simulate.ParseTrace(strings.NewReader(simulate.HeaderV2 + "\n" + tc.submit + ",a,128,10000," + tc.minRuntime + ",1\n5400,b,64,7200,50,0\n"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := simulate.Run(g, jobs, simulate.PolicyToposcope, simulate.Options{Preempt: true})
		if err != nil {
			t.Fatal(err)
		}
		want := jobs[0].Submit + jobs[0].MinRuntime
		if math.Abs(r.Starts[1]-want) > 1e-6 || r.Preemptions != 1 {
			t.Errorf("start %s, min runtime %s: job 1 starts at %.9f after %d preemptions; want %.9f after 1",
				tc.submit, tc.minRuntime, r.Starts[1], r.Preemptions, want)
		}
	}
}

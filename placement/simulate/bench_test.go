package simulate_test

import (
	"testing"

	"github.com/toposcope/toposcope/placement/simulate"
	"github.com/toposcope/toposcope/providers/sim"
)

// BenchmarkMonth2048GPUs replays a month of a 2,048-GPU fat tree (256
// 8-GPU nodes, leaves of 32) at about 85% offered load: ~72,000 jobs up
// to 256 GPUs. Run with -benchtime=1x; it reports events/s per policy,
// and toposcope's with the fair-share order and preemption.
func BenchmarkMonth2048GPUs(b *testing.B) {
	g, err := sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: 256})
	if err != nil {
		b.Fatal(err)
	}
	jobs, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: 72000, Seed: 1, MeanInterarrival: 36})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d jobs over %.1f days on %d nodes", len(jobs), jobs[len(jobs)-1].Submit/86400, len(g.Nodes()))
	type run struct {
		name, policy string
		o            simulate.Options
	}
	var runs []run
	for _, p := range simulate.Policies() {
		runs = append(runs, run{p, p, simulate.Options{}})
	}
	runs = append(runs, run{"toposcope-fairshare-preempt", simulate.PolicyToposcope,
		simulate.Options{Order: simulate.OrderFairShare, Preempt: true}})
	for _, rn := range runs {
		b.Run(rn.name, func(b *testing.B) {
			events, preempted := 0, 0
			for b.Loop() {
				r, err := simulate.Run(g, jobs, rn.policy, rn.o)
				if err != nil {
					b.Fatal(err)
				}
				events += r.Events
				preempted += r.Preemptions
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(preempted)/float64(b.N), "preemptions/op")
		})
	}
}

package simulate_test

import (
	"testing"

	"github.com/toposcope/toposcope/placement/simulate"
	"github.com/toposcope/toposcope/providers/sim"
)

// BenchmarkMonth2048GPUs replays a month of a 2,048-GPU fat tree (256
// 8-GPU nodes, leaves of 32) at about 85% offered load: ~72,000 jobs up
// to 256 GPUs. Run with -benchtime=1x; it reports events/s per policy.
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
	for _, p := range simulate.Policies() {
		b.Run(p, func(b *testing.B) {
			events := 0
			for b.Loop() {
				r, err := simulate.Run(g, jobs, p, simulate.Options{})
				if err != nil {
					b.Fatal(err)
				}
				events += r.Events
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

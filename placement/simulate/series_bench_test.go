package simulate_test

import (
	"encoding/json"
	"testing"

	"github.com/toposcope/toposcope/placement/simulate"
	"github.com/toposcope/toposcope/providers/sim"
)

// BenchmarkSeries replays a week and a month of the 2,048-GPU fat tree
// of BenchmarkMonth2048GPUs under firstfit without series and with the
// 100 samples of --html: the difference is what recording costs. It
// reports the series' size as JSON, which does not grow with the trace.
// Run with -benchtime=1x -benchmem.
func BenchmarkSeries(b *testing.B) {
	g, err := sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: 256})
	if err != nil {
		b.Fatal(err)
	}
	for _, span := range []struct {
		name string
		jobs int
	}{{"week", 72000 / 4}, {"month", 72000}} {
		jobs, err := simulate.Synthetic(simulate.SyntheticOptions{Jobs: span.jobs, Seed: 1, MeanInterarrival: 36})
		if err != nil {
			b.Fatal(err)
		}
		for _, samples := range []int{0, 100} {
			name := span.name + "/no-series"
			if samples > 0 {
				name = span.name + "/series"
			}
			b.Run(name, func(b *testing.B) {
				var size int
				for b.Loop() {
					r, err := simulate.Run(g, jobs, simulate.PolicyFirstFit, simulate.Options{Samples: samples})
					if err != nil {
						b.Fatal(err)
					}
					if r.Series != nil {
						data, err := json.Marshal(r.Series)
						if err != nil {
							b.Fatal(err)
						}
						size = len(data)
					}
				}
				b.ReportMetric(float64(size), "series-bytes")
			})
		}
	}
}

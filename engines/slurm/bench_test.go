package slurm

import (
	"context"
	"fmt"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/topology"
)

// benchSizes are the cluster sizes of the benchmarks.
func benchSizes() []int { return []int{1_000, 10_000, 100_000, 300_000} }

// fatTree is a generated 3-tier fat tree: 32 nodes per leaf, 16 leaves per
// spine, 18-node accelerator domains.
func fatTree(b *testing.B, nodes int) *topology.Graph {
	b.Helper()
	return generated(b, sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: nodes, DomainSize: 18})
}

func benchRender(b *testing.B, edit func(*Config)) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			g := fatTree(b, n)
			e := newEngine(b, edit)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.Render(ctx, g); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

func BenchmarkRenderTree(b *testing.B) {
	benchRender(b, nil)
}

func BenchmarkRenderBlock(b *testing.B) {
	benchRender(b, func(c *Config) { c.Plugin = PluginBlock })
}

func BenchmarkRenderBlockPadded(b *testing.B) {
	benchRender(b, func(c *Config) { c.Plugin, c.SlurmVersion = PluginBlock, "25.05" })
}

// BenchmarkPipeline100k times the whole path for 100k nodes: parse the
// model, build the graph, render topology.conf (tree and block).
func BenchmarkPipeline100k(b *testing.B) {
	data, err := sim.Generate(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: 100_000, DomainSize: 18})
	if err != nil {
		b.Fatal(err)
	}
	tree, block := newEngine(b, nil), newEngine(b, func(c *Config) { c.Plugin = PluginBlock })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		m, err := sim.Parse(data, "bench")
		if err != nil {
			b.Fatal(err)
		}
		g, err := m.Graph(providers.Request{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tree.Render(ctx, g); err != nil {
			b.Fatal(err)
		}
		if _, err := block.Render(ctx, g); err != nil {
			b.Fatal(err)
		}
	}
}

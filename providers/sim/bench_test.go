package sim

import (
	"fmt"
	"testing"

	"github.com/toposcope/toposcope/providers"
)

// benchSizes are the model sizes of the benchmarks: cost per node should
// stay flat across them.
var benchSizes = []int{1_000, 10_000, 100_000, 300_000}

// benchModel generates the benchmark fabric: a 3-tier fat tree with 32
// nodes per leaf, 16 leaves per spine and 18-node NVLink domains.
func benchModel(b *testing.B, nodes int) []byte {
	b.Helper()
	data, err := Generate(GenerateOptions{
		Shape: ShapeFatTree, Nodes: nodes, NodesPerLeaf: 32, LeavesPerSpine: 16, DomainSize: 18,
	})
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkModelLoad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			data := benchModel(b, n)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse(data, "bench"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

func BenchmarkGraphBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			m, err := Parse(benchModel(b, n), "bench")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Graph(providers.Request{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

package server

import (
	"encoding/json"
	"testing"

	"github.com/toposcope/toposcope/providers/sim"
)

// BenchmarkFabricEncode measures making GET /v1/fabric's document of a
// 100k-node fat tree, which is done once per topology and then kept.
func BenchmarkFabricEncode(b *testing.B) {
	g, err := sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: 100000, DomainSize: 18})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		doc, err := json.Marshal(buildFabric(g, 1))
		if err != nil {
			b.Fatal(err)
		}
		n = len(doc)
	}
	b.ReportMetric(float64(n), "doc-bytes")
}

package agents_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
)

// BenchmarkLLDPLeaves100k discovers 100,000 nodes from agent reports
// that carry LLDP neighbors: two rails, 32 hosts to a leaf pair, one host
// in 50 with its second link down.
func BenchmarkLLDPLeaves100k(b *testing.B) {
	const n = 100000
	cfg := agents.DefaultConfig()
	cfg.Reports = make([]providers.NodeFacts, n)
	for i := range n {
		pair := i / 32
		f := providers.NodeFacts{Node: fmt.Sprintf("gpu%06d", i), GPUs: 8, LLDP: []providers.LLDPNeighbor{
			{Interface: "eth0", ChassisID: fmt.Sprintf("r0-%05d", pair), SysName: fmt.Sprintf("leaf-r0-%05d", pair), PortID: fmt.Sprintf("swp%d", i%32)},
			{Interface: "eth1", ChassisID: fmt.Sprintf("r1-%05d", pair), SysName: fmt.Sprintf("leaf-r1-%05d", pair), PortID: fmt.Sprintf("swp%d", i%32)},
		}}
		if i%50 == 7 {
			f.LLDP = f.LLDP[:1]
		}
		cfg.Reports[i] = f
	}
	p, err := agents.New(cfg, providers.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		g, err := p.Discover(context.Background(), providers.Request{})
		if err != nil || len(g.Switches()) != n/32 {
			b.Fatalf("%d switches, %v", len(g.Switches()), err)
		}
	}
}

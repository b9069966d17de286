package aws_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/toposcope/toposcope/internal/testenv/cloudsim"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/aws"
	"github.com/toposcope/toposcope/providers/sim"
)

// BenchmarkDiscover10k pages 10,000 instances (100 per call) through the
// EC2 emulator with the real SDK client.
func BenchmarkDiscover10k(b *testing.B) {
	data, err := sim.Generate(sim.GenerateOptions{Shape: sim.ShapeNVL72, Nodes: 10_000})
	if err != nil {
		b.Fatal(err)
	}
	m, err := sim.Parse(data, "bench")
	if err != nil {
		b.Fatal(err)
	}
	want, err := m.Graph(providers.Request{})
	if err != nil {
		b.Fatal(err)
	}
	emu := cloudsim.NewAWS(cloudsim.FromGraph(want), cloudsim.Faults{})
	srv := httptest.NewServer(emu)
	defer srv.Close()
	p := newProvider(b, srv.URL, slog.New(slog.DiscardHandler), nil, func(c *aws.Config) { c.PageSize = 100 })
	b.ResetTimer()
	for b.Loop() {
		g, err := p.Discover(context.Background(), providers.Request{Credentials: creds()})
		if err != nil || len(g.Nodes()) != 10_000 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(emu.Calls())/float64(b.N), "calls/op")
}

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

// BenchmarkDiscover pages 10,000 and 100,000 instances (100 per call)
// through the EC2 emulator with the real SDK client, and 100,000 again
// with the first three calls throttled (RequestLimitExceeded, retried
// with the SDK's backoff). calls/op counts the emulator's answers.
func BenchmarkDiscover(b *testing.B) {
	for _, bc := range []struct {
		name   string
		nodes  int
		faults cloudsim.Faults
	}{
		{"10k", 10_000, cloudsim.Faults{}},
		{"100k", 100_000, cloudsim.Faults{}},
		{"100k-throttled", 100_000, cloudsim.Faults{Throttle: 3}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data, err := sim.Generate(sim.GenerateOptions{Shape: sim.ShapeNVL72, Nodes: bc.nodes})
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
			calls := 0
			for b.Loop() {
				b.StopTimer()
				emu := cloudsim.NewAWS(cloudsim.FromGraph(want), bc.faults) // fresh faults each round
				srv := httptest.NewServer(emu)
				p := newProvider(b, srv.URL, slog.New(slog.DiscardHandler), nil, func(c *aws.Config) { c.PageSize = 100 })
				b.StartTimer()
				g, err := p.Discover(context.Background(), providers.Request{Credentials: creds()})
				if err != nil || len(g.Nodes()) != bc.nodes {
					b.Fatal(err)
				}
				b.StopTimer()
				calls += emu.Calls()
				srv.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
		})
	}
}

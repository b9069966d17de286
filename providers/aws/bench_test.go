package aws_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/aws"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/cloudsim"
	"github.com/toposcope/toposcope/topology"
)

// BenchmarkDiscover pages 10,000 and 100,000 instances (100 per call)
// through the EC2 emulator with the real SDK client, and 100,000 again
// with the first three calls throttled (RequestLimitExceeded, retried
// with the SDK's backoff); see cloudsim.BenchDiscover.
func BenchmarkDiscover(b *testing.B) {
	graph := func(n int) (*topology.Graph, error) {
		return sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeNVL72, Nodes: n})
	}
	serve := func(in []cloudsim.Instance, f cloudsim.Faults) cloudsim.Emulator { return cloudsim.NewAWS(in, f) }
	cloudsim.BenchDiscover(b, graph, serve, func(ctx context.Context, url string) (*topology.Graph, error) {
		p := newProvider(b, url, slog.New(slog.DiscardHandler), nil, func(c *aws.Config) { c.PageSize = 100 })
		return p.Discover(ctx, providers.Request{Credentials: creds()})
	})
}

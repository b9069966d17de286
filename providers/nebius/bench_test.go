package nebius_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/nebius"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/cloudsim"
	"github.com/toposcope/toposcope/topology"
)

// BenchmarkDiscover pages 10,000 and 100,000 instances (1,000 per call)
// from the gRPC emulator through grpc-go and the hand-written protobuf
// client, and 100,000 again with the first three calls answered
// RESOURCE_EXHAUSTED (retried after the RetryInfo delay); see
// cloudsim.BenchDiscover.
func BenchmarkDiscover(b *testing.B) {
	graph := func(n int) (*topology.Graph, error) {
		return sim.GenerateGraph(sim.GenerateOptions{Shape: sim.ShapeNVL72, Nodes: n})
	}
	start := func(in []cloudsim.Instance, f cloudsim.Faults) (string, func() int, func()) {
		emu := cloudsim.NewNebius(in, f, cloudsim.Token, project)
		emu.RetryDelay = time.Millisecond
		addr, err := emu.Start()
		if err != nil {
			b.Fatal(err)
		}
		return "http://" + addr, emu.Calls, emu.Stop
	}
	cloudsim.BenchDiscoverServer(b, graph, start, func(ctx context.Context, url string) (*topology.Graph, error) {
		cfg := nebius.DefaultConfig()
		cfg.URL, cfg.AllowHTTP, cfg.Project, cfg.Token, cfg.PageSize, cfg.Retry, cfg.MetadataURL = url, true, project, cloudsim.Token, 1000, fast, "-"
		p, err := nebius.New(cfg, providers.Deps{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return nil, err
		}
		return p.Discover(ctx, providers.Request{})
	})
}

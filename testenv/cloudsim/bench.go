package cloudsim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toposcope/toposcope/topology"
)

// Emulator is what every cloud emulator here is: an HTTP handler that
// counts the calls it answered.
type Emulator interface {
	http.Handler
	Calls() int
}

// BenchDiscover is the discovery benchmark every cloud provider runs:
// 10,000 and 100,000 instances, and 100,000 again with the first three
// calls throttled. For each round, serve builds a fresh emulator of the
// instances of graph(nodes) (so that its faults start over) and discover
// runs one discovery against its URL; only the discovery is timed.
// calls/op counts the emulator's answers.
func BenchDiscover(b *testing.B, graph func(nodes int) (*topology.Graph, error),
	serve func([]Instance, Faults) Emulator, discover func(ctx context.Context, url string) (*topology.Graph, error)) {
	BenchDiscoverServer(b, graph, func(in []Instance, f Faults) (string, func() int, func()) {
		emu := serve(in, f)
		srv := httptest.NewServer(emu)
		return srv.URL, emu.Calls, srv.Close
	}, discover)
}

// BenchDiscoverServer is BenchDiscover for an emulator that is not an
// HTTP handler (the Nebius gRPC server): start serves the instances and
// returns the URL, the call counter and the stop.
func BenchDiscoverServer(b *testing.B, graph func(nodes int) (*topology.Graph, error),
	start func([]Instance, Faults) (string, func() int, func()), discover func(ctx context.Context, url string) (*topology.Graph, error)) {
	for _, bc := range []struct {
		name   string
		nodes  int
		faults Faults
	}{
		{"10k", 10_000, Faults{}},
		{"100k", 100_000, Faults{}},
		{"100k-throttled", 100_000, Faults{Throttle: 3}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			want, err := graph(bc.nodes)
			if err != nil {
				b.Fatal(err)
			}
			instances := FromGraph(want)
			calls := 0
			for b.Loop() {
				b.StopTimer()
				url, count, stop := start(instances, bc.faults)
				b.StartTimer()
				g, err := discover(context.Background(), url)
				if err != nil || len(g.Nodes()) != bc.nodes {
					b.Fatalf("discovered %v, %v; want %d nodes", g, err, bc.nodes)
				}
				b.StopTimer()
				calls += count()
				stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
		})
	}
}

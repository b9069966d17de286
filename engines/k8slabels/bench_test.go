package k8slabels_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/toposcope/toposcope/engines/k8slabels"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

// BenchmarkPublish10k labels 10,000 nodes on the real apiserver at the
// default client limits (QPS 200, burst 400, 16 patches in flight).
//
//	first:  every op relabels all 10,000 nodes (it alternates between a
//	        3-tier and a 2-tier graph), which costs what a first publish
//	        costs; with -benchtime=1x it is the first publish.
//	rerun:  nothing changed: one paged LIST, no write.
//
// Run: CI=true go test ./engines/k8slabels -run '^$' -bench Publish10k -benchtime 1x
// Add -args -bench.qps=1000 -bench.concurrency=32 to see what the
// apiserver itself sustains.
func BenchmarkPublish10k(b *testing.B) {
	s := newSetup(b, kubetest.Fabric{Nodes: 10000, NodesPerLeaf: 32, LeavesPerSpine: 16, DomainSize: 18, SubDomainSize: 9}, nil, func(c *k8slabels.Config) {
		if *benchQPS > 0 {
			c.QPS, c.Burst = float32(*benchQPS), 2*int(*benchQPS)
		}
		if *benchConcurrency > 0 {
			c.Concurrency = *benchConcurrency
		}
	})
	b.Logf("client limits: qps %v, burst %d, concurrency %d", s.engine.Config().QPS, s.engine.Config().Burst, s.engine.Config().Concurrency)
	full := s.graph(b)
	f2 := s.fabric
	f2.Tiers = 2
	short, err := f2.Graph()
	if err != nil {
		b.Fatal(err)
	}
	graphs := []*topology.Graph{full, short}
	next := 0
	run := func(b *testing.B, g *topology.Graph) (*kube.Result, kubetest.Stats, time.Duration) {
		b.Helper()
		s.counter.Reset()
		start := time.Now()
		res, err := s.engine.Apply(context.Background(), g, kube.ApplyOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return res, s.counter.Stats(), time.Since(start)
	}
	report := func(b *testing.B, total kubetest.Stats, n int) {
		b.ReportMetric(float64(total.Requests)/float64(n), "requests/op")
		b.ReportMetric(float64(total.Writes)/float64(n), "writes/op")
		b.ReportMetric(float64(total.BytesSent)/float64(n), "bytes-sent/op")
		b.ReportMetric(float64(total.BytesReceived)/float64(n), "bytes-received/op")
	}
	b.Run("first", func(b *testing.B) {
		var total kubetest.Stats
		b.ResetTimer()
		for range b.N {
			res, st, d := run(b, graphs[next%2])
			next++
			if res.Changed != 10000 || st.Writes != 10000 {
				b.Fatalf("%s; %d writes", res.Summary(), st.Writes)
			}
			b.Logf("first publish: %v, %s, %d requests, %d writes, %d bytes sent, %d received", d, res.Summary(), st.Requests, st.Writes, st.BytesSent, st.BytesReceived)
			total = add(total, st)
		}
		report(b, total, b.N)
	})
	b.Run("rerun", func(b *testing.B) {
		g := graphs[(next+1)%2] // the graph published last
		var total kubetest.Stats
		b.ResetTimer()
		for range b.N {
			res, st, d := run(b, g)
			if st.Writes != 0 || res.Unchanged != 10000 {
				b.Fatalf("rerun wrote: %s; %+v", res.Summary(), st)
			}
			b.Logf("no-change rerun: %v, %d requests, %d writes, %d bytes sent, %d received", d, st.Requests, st.Writes, st.BytesSent, st.BytesReceived)
			total = add(total, st)
		}
		report(b, total, b.N)
	})
}

var (
	benchQPS         = flag.Float64("bench.qps", 0, "BenchmarkPublish10k: client QPS (0: the default)")
	benchConcurrency = flag.Int("bench.concurrency", 0, "BenchmarkPublish10k: patches in flight (0: the default)")
)

func add(a, b kubetest.Stats) kubetest.Stats {
	a.Requests += b.Requests
	a.Writes += b.Writes
	a.BytesSent += b.BytesSent
	a.BytesReceived += b.BytesReceived
	return a
}

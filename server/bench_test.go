package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/topology"
)

// benchNodes is the size of the generated model of the benchmarks.
const benchNodes = 100000

func benchStack(b *testing.B) *stack {
	b.Helper()
	data, err := sim.Generate(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: benchNodes, DomainSize: 18})
	if err != nil {
		b.Fatal(err)
	}
	s := newStack(b, stackOpts{model: data, quiet: true})
	s.discover()
	return s
}

// discardRecorder is a ResponseWriter that keeps nothing, so that the
// benchmark measures the handler, not the recorder's buffer.
type discardRecorder struct {
	h    http.Header
	code int
	n    int64
}

func (d *discardRecorder) Header() http.Header  { return d.h }
func (d *discardRecorder) WriteHeader(code int) { d.code = code }
func (d *discardRecorder) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	return len(p), nil
}

// BenchmarkNode measures GET /v1/nodes/{name} in-process on the 100k-node
// model (router, middleware and handler; no network).
func BenchmarkNode(b *testing.B) {
	s := benchStack(b)
	reqs := make([]*http.Request, 1024)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, fmt.Sprintf("/v1/nodes/gpu%06d", 1+(i*97)%benchNodes), nil)
	}
	w := &discardRecorder{h: http.Header{}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		clear(w.h)
		s.handler.ServeHTTP(w, reqs[i%len(reqs)])
		if w.code != http.StatusOK {
			b.Fatalf("status %d", w.code)
		}
		i++
	}
}

// BenchmarkGraph measures GET /v1/graph of the 100k-node model once its
// encoding is kept: each request copies the bytes, nothing is encoded.
func BenchmarkGraph(b *testing.B) {
	s := benchStack(b)
	req := httptest.NewRequest(http.MethodGet, "/v1/graph", nil)
	w := &discardRecorder{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		w.n = 0
		s.handler.ServeHTTP(w, req)
	}
	b.ReportMetric(float64(w.n), "response-bytes")
}

// BenchmarkGraphHeap reports the heap the 100k-node graph itself holds,
// the yardstick of the serving-memory target.
func BenchmarkGraphHeap(b *testing.B) {
	data, err := sim.Generate(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: benchNodes, DomainSize: 18})
	if err != nil {
		b.Fatal(err)
	}
	m, err := sim.Parse(data, "bench")
	if err != nil {
		b.Fatal(err)
	}
	var g *topology.Graph
	var before, after runtime.MemStats
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		keep := m // the model stays live on both sides of the measurement
		if g, err = keep.Graph(providers.Request{}); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	runtime.KeepAlive(m)
	runtime.KeepAlive(g)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "graph-MiB")
}

// BenchmarkView measures the web view's queries in-process on the
// 100k-node model: the top of the tree, one leaf with its nodes, the
// heatmap of every leaf, a search that scans every node, and the
// aggregated DOT.
func BenchmarkView(b *testing.B) {
	benchGets(b, benchStack(b), "/v1/tree", "/v1/tree?switch=leaf1698", "/v1/heatmap", "/v1/find?q=gpu054321", "/v1/find?q=99999", "/v1/graph?format=dot")
}

// benchGets measures each GET target of s as a sub-benchmark named after
// it, with the answer's size.
func benchGets(b *testing.B, s *stack, targets ...string) {
	for _, target := range targets {
		b.Run(target, func(b *testing.B) {
			w := &discardRecorder{h: http.Header{}}
			req := httptest.NewRequest(http.MethodGet, target, nil)
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				w.n = 0
				s.handler.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					b.Fatalf("status %d", w.code)
				}
			}
			b.ReportMetric(float64(w.n), "resp-bytes")
		})
	}
}

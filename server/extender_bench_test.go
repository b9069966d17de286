package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/service/extender"
)

// extenderBench is a stack on a fat tree of n nodes, a tenth of them
// busy in the ledger, with the extender on; names are all its nodes, as
// a scheduler with percentageOfNodesToScore: 100 passes them.
func extenderBench(b *testing.B, n int) (*stack, []string) {
	b.Helper()
	data, err := sim.Generate(sim.GenerateOptions{Shape: sim.ShapeFatTree, Nodes: n, DomainSize: 18})
	if err != nil {
		b.Fatal(err)
	}
	s := newStack(b, stackOpts{model: data, quiet: true, extender: true, maxBody: 8 << 20})
	s.discover()
	names := allNodes(s)
	var recs []string
	start := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for i := 0; i < len(names); i += 10 {
		recs = append(recs, fmt.Sprintf(`{"account":"busy","workload":"ns/busy-%d@u%d","gpus":8,"nodes":[%q],"start":%q}`, i, i, names[i], start))
	}
	for len(recs) > 0 { // in bodies below the stack's 64 KiB limit
		k := min(len(recs), 400)
		if w := s.do("POST", "/v1/ledger", `{"records":[`+strings.Join(recs[:k], ",")+`]}`); w.Code != 200 {
			b.Fatalf("ledger: %d %s", w.Code, w.Body)
		}
		recs = recs[k:]
	}
	return s, names
}

// BenchmarkExtender measures the extender routes in-process (router,
// strict decoding, planner, encoding; no network) at 10,000 and 100,000
// nodes: filter of a new gang's first pod (the whole 8 × 8-GPU gang is
// placed and held), filter of a held gang's later pod, and prioritize of
// a lone 1-GPU pod (node fit from the occupancy). Beside the wall time
// per call it reports the process's CPU time per call (cpu-ms/op, the
// collector's included), which another load on the machine moves less.
func BenchmarkExtender(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			s, names := extenderBench(b, n)
			namesJSON, err := json.Marshal(names)
			if err != nil {
				b.Fatal(err)
			}
			body := func(p *extender.Pod) string {
				raw, err := json.Marshal(p)
				if err != nil {
					b.Fatal(err)
				}
				return `{"Pod":` + string(raw) + `,"NodeNames":` + string(namesJSON) + `}`
			}
			held := body(extPod("held-1", "held", 8, 8, nil))
			call := func(b *testing.B, route, payload string) {
				req := httptest.NewRequest(http.MethodPost, "/v1/extender/"+route, strings.NewReader(payload))
				req.Host = "127.0.0.1:49021"
				req.Header.Set("Content-Type", "application/json")
				w := &discardRecorder{h: http.Header{}}
				s.handler.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					b.Fatalf("%s: status %d", route, w.code)
				}
			}
			call(b, "filter", held) // places and holds gang "held"
			b.Run("filter-new-gang", func(b *testing.B) {
				b.ReportAllocs()
				cpu := cpuTime(b)
				i := 0
				for b.Loop() {
					i++ // a new gang each time: the first pod places it
					call(b, "filter", body(extPod(fmt.Sprintf("g%d-0", i), fmt.Sprintf("g%d", i), 8, 8, nil)))
				}
				cpu.report(b)
			})
			b.Run("filter-held-gang", func(b *testing.B) {
				b.ReportAllocs()
				cpu := cpuTime(b)
				for b.Loop() {
					call(b, "filter", held)
				}
				cpu.report(b)
			})
			b.Run("prioritize-lone-pod", func(b *testing.B) {
				lone := body(extPod("lone", "", 1, 1, nil))
				b.ReportAllocs()
				cpu := cpuTime(b)
				for b.Loop() {
					call(b, "prioritize", lone)
				}
				cpu.report(b)
			})
		})
	}
}

// cpuClock is the process's CPU time (user and system) at a start.
type cpuClock time.Duration

// cpuTime reads the process's CPU time.
func cpuTime(b *testing.B) cpuClock {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return cpuClock(time.Duration(ru.Utime.Nano() + ru.Stime.Nano()))
}

// report reports the CPU time since c per iteration, in milliseconds.
func (c cpuClock) report(b *testing.B) {
	d := time.Duration(cpuTime(b) - c)
	b.ReportMetric(float64(d.Nanoseconds())/1e6/float64(b.N), "cpu-ms/op")
}

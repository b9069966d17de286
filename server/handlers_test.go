package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/topology"
)

func TestQueries(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	if w := s.do(http.MethodGet, "/readyz", ""); w.Code != http.StatusServiceUnavailable {
		t.Errorf("readyz before discovery = %d", w.Code)
	}
	if w := s.do(http.MethodGet, "/v1/nodes/gpu001", ""); w.Code != http.StatusServiceUnavailable || errorOf(t, w).Code != "no_topology" {
		t.Errorf("node before discovery = %d %s", w.Code, w.Body)
	}
	s.discover()
	tests := []struct {
		name, target string
		status       int
		contains     []string
		field        string
	}{
		{"healthz", "/healthz", 200, []string{"OK"}, ""},
		{"readyz", "/readyz", 200, []string{"OK"}, ""},
		{"node", "/v1/nodes/gpu001", 200, []string{`"name":"gpu001"`, `"path":[{"id":"leaf0001"`, `"neighbourCount":31`, `"domain":{"id":"nvl0001"`}, ""},
		{"unknown node", "/v1/nodes/nope", 404, []string{`"code":"not_found"`}, "name"},
		{"switch", "/v1/switches/leaf0001", 200, []string{`"nodesBelow":32`, `"path":[{"id":"spine001"`}, ""},
		{"unknown switch", "/v1/switches/a/b", 404, []string{`switch \"a/b\"`}, "id"},
		{"domains", "/v1/domains", 200, []string{`"nodes":"gpu[001-018]"`, `"nodeCount":18`}, ""},
		{"dot", "/v1/graph?format=dot", 200, []string{"digraph topology", `"s:leaf0001" [label="leaf0001\n32 nodes, 256 GPUs"]`, `"s:leaf0001" -> "d:nvl0001" [style=dashed,label="18"]`}, ""},
		{"dot of nodes", "/v1/graph?format=dot&detail=nodes", 200, []string{"digraph topology", `"s:leaf0001" -> "n:gpu001"`}, ""},
		{"bad detail", "/v1/graph?format=dot&detail=all", 400, []string{"switches"}, "detail"},
		{"pretty json", "/v1/graph?pretty=1", 200, []string{"{\n  \"nodes\": [\n    {\n      \"name\": \"gpu001\","}, ""},
		{"bad pretty", "/v1/graph?pretty=yes", 400, nil, "pretty"},
		{"tree top", "/v1/tree", 200, []string{`"total":{"nodes":100,"gpus":800,"domains":6,"switches":6}`, `"switch":null`, `"children":[{"id":"core","name":"core","level":2,"children":1,"nodes":100`}, ""},
		{"tree leaf", "/v1/tree?switch=leaf0001", 200, []string{`"path":[{"id":"core","name":"core","level":2},{"id":"spine001","name":"spine001","level":1},{"id":"leaf0001"`, `"nodeCount":32`, `{"name":"gpu001","gpus":8,"domain":"nvl0001","occupancy":{"gpus":8,"free":8,`}, ""},
		{"tree unknown switch", "/v1/tree?switch=nope", 400, []string{"no switch"}, "switch"},
		{"heatmap", "/v1/heatmap", 200, []string{`"leaves":[{"id":"leaf0001","name":"leaf0001","nodes":32,"occupancy":{"gpus":256,"free":256`, `"free":800`}, ""},
		{"find node", "/v1/find?q=gpu042", 200, []string{`"hits":[{"kind":"node","id":"gpu042","name":"gpu042","match":"name","path":[{"id":"core","name":"core","level":2},{"id":"spine001","name":"spine001","level":1},{"id":"leaf0002"`}, ""},
		{"find substring", "/v1/find?q=LEAF000&limit=2", 200, []string{`"kind":"switch","id":"leaf0001"`, `"truncated":true`}, ""},
		{"find nothing", "/v1/find?q=zzz", 200, []string{`"hits":[]`}, ""},
		{"find without q", "/v1/find", 400, nil, "q"},
		{"find bad limit", "/v1/find?q=a&limit=500", 400, nil, "limit"},
		{"web page", "/", 200, []string{"<title>toposcope</title>", `src="/ui/app.js"`}, ""},
		{"web script", "/ui/app.js", 200, []string{`from "./fabric.js"`}, ""},
		{"web module", "/ui/api.js", 200, []string{"export async function api("}, ""},
		{"web no file", "/ui/nope.js", 404, nil, ""},
		{"web no index via ui", "/ui/index.html", 404, nil, ""},
		{"bad format", "/v1/graph?format=xml", 400, []string{"json or dot"}, "format"},
		{"render", "/v1/render/slurm?plugin=topology/block&slurmVersion=24.11", 200, []string{"BlockName="}, ""},
		{"render bad param", "/v1/render/slurm?plugn=x", 400, []string{"unknown key"}, "params.plugn"},
		{"render bad version", "/v1/render/slurm?slurmVersion=abc", 400, []string{"slurmVersion"}, "params.slurmVersion"},
		{"render unknown engine", "/v1/render/nope", 400, []string{"unknown_plugin"}, "engine"},
		{"snapshots", "/v1/snapshots", 200, []string{`"current":1`, `"pending":0`}, ""},
		{"snapshot", "/v1/snapshots/1", 200, []string{`"status":"accepted"`}, ""},
		{"bad snapshot id", "/v1/snapshots/x", 400, nil, "id"},
		{"unknown snapshot", "/v1/snapshots/99", 404, nil, ""},
		{"diff without parent", "/v1/diff", 400, []string{"no parent"}, "from"},
		{"runs", "/v1/runs?limit=5", 200, []string{`"outcome":"published"`}, ""},
		{"bad limit", "/v1/runs?limit=0", 400, nil, "limit"},
		{"status", "/v1/status", 200, []string{`"provider":"sim"`, `"ready":true`, `"pending":null`}, ""},
		{"openapi", "/openapi.json", 200, []string{`"openapi": "3.0.3"`}, ""},
		{"metrics", "/metrics", 200, []string{"toposcope_graph_nodes 100", "toposcope_discoveries_total"}, ""},
		{"no route", "/v2/x", 404, []string{`"code":"no_route"`}, ""},
		{"topology without uid", "/v1/topology", 400, nil, "uid"},
		{"unknown uid", "/v1/topology?uid=0123", 404, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := s.do(http.MethodGet, tt.target, "")
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			for _, c := range tt.contains {
				if !strings.Contains(w.Body.String(), c) {
					t.Errorf("body lacks %q: %.400s", c, w.Body)
				}
			}
			if tt.status >= 400 {
				if e := errorOf(t, w); e.Field != tt.field {
					t.Errorf("field = %q, want %q", e.Field, tt.field)
				}
			}
		})
	}
}

func TestGraphRoundTripsAndCaches(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	s.discover()
	w := s.do(http.MethodGet, "/v1/graph", "")
	if w.Code != http.StatusOK {
		t.Fatalf("graph = %d", w.Code)
	}
	var g topology.Graph
	if err := json.Unmarshal(w.Body.Bytes(), &g); err != nil {
		t.Fatalf("graph does not decode into topology.Graph: %v", err)
	}
	if len(g.Nodes()) != 100 || len(g.Domains()) != 6 {
		t.Errorf("graph has %d nodes, %d domains", len(g.Nodes()), len(g.Domains()))
	}
	want, _ := json.Marshal(s.loop.State().Graph)
	var a, b any
	_ = json.Unmarshal(want, &a)
	_ = json.Unmarshal(w.Body.Bytes(), &b)
	if ja, jb := mustJSON(t, a), mustJSON(t, b); ja != jb {
		t.Error("streamed graph differs from the graph's own JSON")
	}
	etag := w.Header().Get("ETag")
	if w2 := s.do(http.MethodGet, "/v1/graph", "", "If-None-Match", etag); w2.Code != http.StatusNotModified {
		t.Errorf("If-None-Match = %d", w2.Code)
	}
	if w3 := s.do(http.MethodGet, "/v1/graph?snapshot=1", ""); w3.Code != http.StatusOK || w3.Body.Len() != w.Body.Len() {
		t.Errorf("graph of snapshot 1 = %d (%d bytes)", w3.Code, w3.Body.Len())
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	w := s.do(http.MethodGet, "/v1/generate", "")
	if w.Code != http.StatusMethodNotAllowed || errorOf(t, w).Code != "method_not_allowed" {
		t.Errorf("GET /v1/generate = %d %s", w.Code, w.Body)
	}
}

func TestShrinkGuardAndAccept(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	s.discover()
	before := map[string]string{}
	for _, v := range []string{"/v1/graph", "/v1/graph?pretty=1", "/v1/graph?format=dot", "/v1/graph?format=dot&detail=nodes"} {
		before[v] = s.do(http.MethodGet, v, "").Body.String() // encoded and kept for snapshot 1
	}
	writeModel(t, s.modelPath, 80) // 20% fewer nodes than the accepted 100
	run := s.discover()
	if run.Outcome != "refused" || !strings.Contains(run.Error, "nodes fell from 100 to 80") {
		t.Fatalf("run = %+v", run)
	}
	if w := s.do(http.MethodGet, "/v1/status", ""); !strings.Contains(w.Body.String(), `"status":"refused"`) {
		t.Errorf("status does not show the refusal: %s", w.Body)
	}
	if w := s.do(http.MethodGet, "/v1/nodes/gpu100", ""); w.Code != http.StatusOK {
		t.Errorf("the old topology must stay current: %d", w.Code)
	}
	if w := s.do(http.MethodGet, "/metrics", ""); !strings.Contains(w.Body.String(), "toposcope_shrink_guard_refusals_total 1") ||
		!strings.Contains(w.Body.String(), "toposcope_shrink_guard_refusing 1") {
		t.Errorf("refusal metrics missing")
	}
	if !strings.Contains(s.logs.String(), "shrink guard refused") {
		t.Errorf("refusal not logged")
	}
	if w := s.do(http.MethodPost, "/v1/snapshots/1/accept", ""); w.Code != http.StatusConflict {
		t.Errorf("accept of a non-pending snapshot = %d", w.Code)
	}
	w := s.do(http.MethodPost, "/v1/snapshots/2/accept", "")
	if w.Code != http.StatusOK {
		t.Fatalf("accept = %d %s", w.Code, w.Body)
	}
	if w := s.do(http.MethodGet, "/v1/nodes/gpu100", ""); w.Code != http.StatusNotFound {
		t.Errorf("after accept gpu100 must be gone: %d", w.Code)
	}
	for v, was := range before {
		now := s.do(http.MethodGet, v, "").Body.String()
		if now == was {
			t.Errorf("%s after the accept still serves the old graph's document", v)
		}
		if lists := !strings.Contains(v, "format=dot") || strings.Contains(v, "detail=nodes"); lists &&
			(!strings.Contains(was, "gpu100") || strings.Contains(now, "gpu100")) {
			t.Errorf("%s: gpu100 must be listed before the accept and gone after", v)
		}
		sep := "?"
		if strings.Contains(v, "?") {
			sep = "&"
		}
		if old := s.do(http.MethodGet, v+sep+"snapshot=1", "").Body.String(); old != was {
			t.Errorf("%s of snapshot 1 differs from what was served while it was current", v)
		}
	}
	w = s.do(http.MethodGet, "/v1/diff?from=1&to=2", "")
	var d struct {
		NodesRemoved []string `json:"nodesRemoved"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil || len(d.NodesRemoved) != 20 {
		t.Errorf("diff = %s", w.Body)
	}
	w = s.do(http.MethodGet, "/v1/diff?from=1&to=2&limit=5", "")
	var capped struct {
		NodesRemoved []string       `json:"nodesRemoved"`
		Summary      map[string]int `json:"summary"`
		Truncated    bool           `json:"truncated"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &capped); err != nil || len(capped.NodesRemoved) != 5 ||
		capped.Summary["nodesRemoved"] != 20 || !capped.Truncated {
		t.Errorf("diff capped at 5 = %s", w.Body)
	}
	if run := s.discover(); run.Outcome != "unchanged" {
		t.Errorf("rediscovery after accept = %+v", run)
	}
}

func TestShrinkGuardRecovers(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{})
	s.discover()
	orig, err := os.ReadFile(s.modelPath)
	if err != nil {
		t.Fatal(err)
	}
	writeModel(t, s.modelPath, 50)
	if run := s.discover(); run.Outcome != "refused" {
		t.Fatalf("run = %+v", run)
	}
	if run := s.discover(); run.Outcome != "refused" || run.Snapshot != 2 {
		t.Fatalf("a repeated refusal must reuse the pending snapshot: %+v", run)
	}
	if err := os.WriteFile(s.modelPath, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if run := s.discover(); run.Outcome != "unchanged" {
		t.Fatalf("recovery run = %+v", run)
	}
	if st := s.loop.State(); st.Pending != nil {
		t.Errorf("pending after recovery = %+v", st.Pending)
	}
	if w := s.do(http.MethodGet, "/v1/snapshots", ""); !strings.Contains(w.Body.String(), `"pending":0`) {
		t.Errorf("snapshots = %s", w.Body)
	}
	writeModel(t, s.modelPath, 97) // within 10%, same switches: accepted
	if run := s.discover(); run.Outcome != "published" {
		t.Errorf("small shrink = %+v", run)
	}
}

package server_test

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/testenv/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fabricDoc is GET /v1/fabric as a client reads it.
type fabricDoc struct {
	Snapshot uint64 `json:"snapshot"`
	Counts   struct {
		Nodes, GPUs, Switches, Domains int
	} `json:"counts"`
	Domains    []struct{ ID, Name string } `json:"domains"`
	SubDomains []struct {
		ID     string `json:"id"`
		Domain int    `json:"domain"`
	} `json:"subDomains"`
	Switches []struct {
		ID     string `json:"id"`
		Level  int    `json:"level"`
		Parent int    `json:"parent"`
		fabricNodesDoc
	} `json:"switches"`
	Unplaced fabricNodesDoc `json:"unplaced"`
}

type fabricNodesDoc struct {
	Nodes     []string        `json:"nodes"`
	GPUs      json.RawMessage `json:"gpus"`
	Domain    []int           `json:"domain"`
	SubDomain []int           `json:"subDomain"`
}

// order returns every node in fabric order.
func (f *fabricDoc) order() []string {
	var out []string
	for _, s := range f.Switches {
		out = append(out, s.Nodes...)
	}
	return append(out, f.Unplaced.Nodes...)
}

func bundledModel(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "providers", "sim", "models", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// interleaved is a leaf whose nodes alternate between two NVLink
// domains, with one node in none, and a node under no switch.
const interleaved = `name: interleaved
defaults: {gpus: 4}
switches:
  - id: top
    children:
      - id: leafA
        nodes: n[1-5]
      - id: leafB
        nodes: m[1-2]
domains:
  - id: d1
    nodes: n[1,3]
  - id: d2
    nodes: n[2,4],m[1-2]
nodes:
  - names: n[1-5]
  - names: m[1-2]
    gpus: 8
  - names: cpu1
    gpus: 0
`

// TestFabric: GET /v1/fabric lists every switch depth first with its
// parent's index and every node once, grouped by domain within its leaf,
// nodes under no switch last; the document of the bundled mixed model is
// kept as a golden file.
func TestFabric(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		model     []byte
		switches  []string
		parents   []int
		order     []string
		golden    string
		unplacedN int
	}{
		{name: "mixed", model: bundledModel(t, "mixed"), switches: []string{"spine1", "leaf1", "leaf2", "leaf3"}, parents: []int{-1, 0, 0, 0},
			golden: "fabric-mixed.json", unplacedN: 8},
		{name: "interleaved domains", model: []byte(interleaved), switches: []string{"top", "leafA", "leafB"}, parents: []int{-1, 0, 0},
			order: []string{"n1", "n3", "n2", "n4", "n5", "m1", "m2", "cpu1"}, golden: "fabric-interleaved.json", unplacedN: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, stackOpts{model: tc.model})
			s.discover()
			w := s.do("GET", "/v1/fabric", "")
			if w.Code != http.StatusOK {
				t.Fatalf("GET /v1/fabric = %d %s", w.Code, w.Body)
			}
			golden.Check(t, filepath.Join("testdata", tc.golden), w.Body.Bytes(), *update)
			var f fabricDoc
			if err := json.Unmarshal(w.Body.Bytes(), &f); err != nil {
				t.Fatal(err)
			}
			g := s.loop.State().Graph
			if f.Counts.Nodes != len(g.Nodes()) || f.Counts.Switches != len(g.Switches()) || f.Counts.Domains != len(g.Domains()) {
				t.Errorf("counts %+v; the graph has %d nodes, %d switches, %d domains", f.Counts, len(g.Nodes()), len(g.Switches()), len(g.Domains()))
			}
			var ids []string
			var parents []int
			for _, sw := range f.Switches {
				ids, parents = append(ids, sw.ID), append(parents, sw.Parent)
			}
			if !slices.Equal(ids, tc.switches) || !slices.Equal(parents, tc.parents) {
				t.Errorf("switches %v parents %v; want %v %v", ids, parents, tc.switches, tc.parents)
			}
			order := f.order()
			sorted := slices.Clone(order)
			slices.Sort(sorted)
			if len(sorted) != len(g.Nodes()) || len(slices.Compact(sorted)) != len(g.Nodes()) {
				t.Errorf("%d nodes listed (%d distinct); the graph has %d", len(order), len(slices.Compact(sorted)), len(g.Nodes()))
			}
			if tc.order != nil && !slices.Equal(order, tc.order) {
				t.Errorf("fabric order %v; want %v", order, tc.order)
			}
			if len(f.Unplaced.Nodes) != tc.unplacedN {
				t.Errorf("unplaced %v; want %d nodes", f.Unplaced.Nodes, tc.unplacedN)
			}
			// Every node's domain and sub-domain, by index, are the graph's.
			for _, sw := range f.Switches {
				for i, name := range sw.Nodes {
					n, _ := g.Node(name)
					dom, sub := "", ""
					if sw.Domain != nil && sw.Domain[i] >= 0 {
						dom = f.Domains[sw.Domain[i]].ID
					}
					if sw.SubDomain != nil && sw.SubDomain[i] >= 0 {
						sub = f.SubDomains[sw.SubDomain[i]].ID
					}
					if n.Leaf != sw.ID || n.Domain != dom || n.SubDomain != sub {
						t.Errorf("%s listed under %s in %q/%q; the graph has %s in %q/%q", name, sw.ID, dom, sub, n.Leaf, n.Domain, n.SubDomain)
					}
				}
			}
		})
	}
}

// TestFabricRequests: the ETag gives 304, a bad or unknown snapshot is
// refused naming the parameter, and an older snapshot is served.
func TestFabricRequests(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{model: []byte(interleaved)})
	s.discover()
	first := s.do("GET", "/v1/fabric", "")
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	grown := strings.Replace(interleaved, "nodes: m[1-2]\n", "nodes: m[1-3]\n", 1)
	grown = strings.Replace(grown, "  - names: m[1-2]\n", "  - names: m[1-3]\n", 1)
	if err := os.WriteFile(s.modelPath, []byte(grown), 0o644); err != nil {
		t.Fatal(err)
	}
	s.discover()
	steps := []struct {
		name, target, etag string
		code               int
		want               string
	}{
		{"unchanged is 304", "/v1/fabric?snapshot=1", etag, http.StatusNotModified, ""},
		{"the current one has the new node", "/v1/fabric", etag, http.StatusOK, `"m3"`},
		{"the older one is served", "/v1/fabric?snapshot=1", "", http.StatusOK, `"snapshot":1,`},
		{"not an ID", "/v1/fabric?snapshot=one", "", http.StatusBadRequest, `"field":"snapshot"`},
		{"unknown snapshot", "/v1/fabric?snapshot=99", "", http.StatusNotFound, "99"},
	}
	for _, st := range steps {
		w := s.do("GET", st.target, "", "If-None-Match", st.etag)
		if w.Code != st.code || !strings.Contains(w.Body.String(), st.want) {
			t.Errorf("%s: %d %s; want %d with %q", st.name, w.Code, w.Body, st.code, st.want)
		}
	}
}

// TestFabricOccupancy: the nodes that hold work are listed by their
// index in the fabric order with their allocated and unallocated GPUs,
// the account holding most of them and whether the work is protected.
func TestFabricOccupancy(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{model: []byte(interleaved)})
	s.discover()
	body := `{"records":[` +
		`{"account":"a","workload":"w1","gpus":8,"nodes":["n[3-4]"],"start":"2000-01-01T00:00:00Z","allocated":true},` +
		`{"account":"b","workload":"w2","gpus":6,"nodes":["m1"],"start":"2000-01-01T00:00:00Z"},` +
		`{"account":"c","workload":"w3","gpus":2,"nodes":["m1"],"start":"` + time.Now().UTC().Add(-time.Hour).Format(time.RFC3339) + `","allocated":true,"minRuntime":"4h"}` +
		`]}`
	if w := s.do("POST", "/v1/ledger", body); w.Code != http.StatusOK {
		t.Fatalf("ledger: %d %s", w.Code, w.Body)
	}
	var f fabricDoc
	if err := json.Unmarshal(s.do("GET", "/v1/fabric", "").Body.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	w := s.do("GET", "/v1/fabric/occupancy", "")
	var occ struct {
		Snapshot uint64   `json:"snapshot"`
		Accounts []string `json:"accounts"`
		Held     [][5]int `json:"held"`
		Free     int      `json:"free"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &occ); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	order := f.order()
	got := map[string][5]int{}
	for _, h := range occ.Held {
		got[order[h[0]]] = h
	}
	want := map[string][4]int{ // allocated, unallocated, account, protected
		"n3": {4, 0, 0, 0}, "n4": {4, 0, 0, 0}, "m1": {2, 6, 1, 1},
	}
	if len(got) != len(want) || occ.Snapshot != f.Snapshot || !slices.Equal(occ.Accounts, []string{"a", "b", "c"}) {
		t.Errorf("occupancy %s; want %v on snapshot %d", w.Body, want, f.Snapshot)
	}
	for name, wv := range want {
		h := got[name]
		if [4]int{h[1], h[2], h[3], h[4]} != wv {
			t.Errorf("%s: %v; want allocated, unallocated, account, protected %v", name, h[1:], wv)
		}
	}
}

// BenchmarkFabric measures the drawn fabric's two requests in-process on
// the 100k-node model: the kept whole-fabric document (and, once, its
// encoding) and the occupancy of every node in fabric order.
func BenchmarkFabric(b *testing.B) {
	benchGets(b, benchStack(b), "/v1/fabric", "/v1/fabric/occupancy")
}

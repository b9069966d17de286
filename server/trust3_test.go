package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/service"
	"github.com/toposcope/toposcope/service/store"
	"github.com/toposcope/toposcope/topology"
)

// putFacts PUTs each node's report through the API, failing on any
// answer but 200.
func putFacts(t *testing.T, s *stack, facts ...providers.NodeFacts) {
	t.Helper()
	for _, f := range facts {
		w := s.do(http.MethodPut, "/v1/agents/"+f.Node, mustJSON(t, f))
		if w.Code != http.StatusOK {
			t.Fatalf("PUT report of %s = %d %s", f.Node, w.Code, w.Body)
		}
	}
}

// twoLeaves are eight nodes in leaf1 and leaf2 under spine1.
func twoLeaves() []providers.NodeFacts {
	var out []providers.NodeFacts
	for i := 1; i <= 8; i++ {
		out = append(out, providers.NodeFacts{Node: fmt.Sprintf("gpu%03d", i), GPUs: 8,
			Fabric: []string{fmt.Sprintf("leaf%d", (i-1)/4+1), "spine1"}, FabricDomain: "dom/1",
			HCAs: []providers.HCA{{Name: "mlx5_0", NodeGUID: fmt.Sprintf("%016x", 0xa000+i)}}})
	}
	return out
}

// TestOneNodeCannotStopDiscovery: one node's report whose domain or
// switch sanitizes to another's name (before: every discovery failed
// with "name collision" and /readyz turned 503 after three), whose switch
// is named like a node (before: SwitchName=gpu001 Nodes=gpu009 was
// published), or whose HCA GUID is another node's (before: published on
// both) loses that fact, with a warning naming both sides and a metric;
// the rest of the graph is published and the service stays ready.
func TestOneNodeCannotStopDiscovery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		liar   providers.NodeFacts
		reason string
		check  func(t *testing.T, g *topology.Graph)
		log    string
	}{
		{"domain named like another", providers.NodeFacts{Node: "gpu009", FabricDomain: topology.SafeName("dom/1")}, "name_collision",
			func(t *testing.T, g *topology.Graph) {
				if n, _ := g.Node("gpu009"); n.Domain != "" {
					t.Errorf("gpu009 is in domain %q", n.Domain)
				}
			}, `domains \"dom/1\" and \"` + topology.SafeName("dom/1") + `\" both map to name`},
		{"switch path named like another", providers.NodeFacts{Node: "gpu009", Fabric: []string{"leaf/9", topology.SafeName("spine/1")}}, "",
			nil, ""},
		{"switch named like a node", providers.NodeFacts{Node: "gpu009", Fabric: []string{"gpu001", "spine1"}}, "name_collision",
			func(t *testing.T, g *topology.Graph) {
				if _, ok := g.Switch("gpu001"); ok {
					t.Error("a switch named gpu001 was published")
				}
			}, `switch \"gpu001\" would be named \"gpu001\", like node \"gpu001\"`},
		{"another node's HCA", providers.NodeFacts{Node: "gpu009", HCAs: []providers.HCA{{Name: "mlx5_0", NodeGUID: fmt.Sprintf("%016x", 0xa001)}}}, "hca_conflict",
			func(t *testing.T, g *topology.Graph) {
				for _, name := range []string{"gpu001", "gpu009"} {
					if n, _ := g.Node(name); strings.Contains(n.Attributes["hcas"], "a001") {
						t.Errorf("%s published with the shared GUID: %v", name, n.Attributes)
					}
				}
			}, "HCA node GUID 000000000000a001 is reported by 2 nodes: gpu[001,009]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, stackOpts{provider: "agents"})
			honest := twoLeaves()
			if tc.name == "switch path named like another" { // the honest spine's ID needs sanitizing
				for i := range honest {
					honest[i].Fabric[1] = "spine/1"
				}
				tc.reason = "name_collision"
			}
			putFacts(t, s, append(honest, tc.liar)...)
			for range 4 {
				if run := s.discover(); run.Outcome == store.OutcomeFailed {
					t.Fatalf("discovery failed: %s", run.Error)
				}
			}
			if w := s.do(http.MethodGet, "/readyz", ""); w.Code != http.StatusOK {
				t.Fatalf("readyz = %d %s", w.Code, w.Body)
			}
			g := s.loop.State().Graph
			for _, f := range honest[1:] {
				n, _ := g.Node(f.Node)
				if n.Leaf == "" || n.Domain == "" {
					t.Errorf("honest node %s lost its place: %+v", f.Node, n)
				}
			}
			if tc.check != nil {
				tc.check(t, g)
			}
			if got, _ := s.metric("toposcope_provider_dropped_facts_total", map[string]string{"provider": "agents", "reason": tc.reason}); got == 0 {
				t.Errorf("toposcope_provider_dropped_facts_total{reason=%q} = 0", tc.reason)
			}
			if !strings.Contains(s.logs.String(), tc.log) {
				t.Errorf("log lacks %s:\n%s", tc.log, s.logs)
			}
		})
	}
}

// TestAcceptedTopologyIsTheBaseline: a node reports a made-up leaf
// (accepted: the fabric grew); its next, true report shrinks the switch
// count and is held back; the operator accepts it. A later change that
// shrinks nothing against what the operator accepted is published; before,
// it was refused against the phantom's topology, still within
// discovery.shrinkWindow.
func TestAcceptedTopologyIsTheBaseline(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOpts{provider: "agents"})
	honest := twoLeaves()
	putFacts(t, s, honest...)
	s.discover()
	phantom := honest[0]
	phantom.Fabric = []string{"leaf-phantom", "spine1"}
	putFacts(t, s, phantom)
	if run := s.discover(); run.Outcome != store.OutcomePublished || run.Counts.Switches != 4 {
		t.Fatalf("the phantom leaf: %s with %+v, want published with 4 switches", run.Outcome, run.Counts)
	}
	putFacts(t, s, honest[0])
	run := s.discover()
	if run.Outcome != store.OutcomeRefused {
		t.Fatalf("the true report after the phantom: %s, want refused (4 → 3 switches)", run.Outcome)
	}
	w := s.do(http.MethodPost, "/v1/snapshots/"+strconv.FormatUint(run.Snapshot, 10)+"/accept", "")
	if w.Code != http.StatusOK {
		t.Fatalf("accept = %d %s", w.Code, w.Body)
	}
	putFacts(t, s, providers.NodeFacts{Node: "gpu009", GPUs: 8, Fabric: []string{"leaf2", "spine1"}, FabricDomain: "dom/1"})
	run, err := s.loop.RunOnce(context.Background(), service.TriggerAPI)
	if err != nil || run.Outcome != store.OutcomePublished {
		t.Fatalf("a node joining after the accept: %v %+v, want published", err, run)
	}
	var snaps struct {
		Snapshots []store.Snapshot `json:"snapshots"`
	}
	if w := s.do(http.MethodGet, "/v1/snapshots", ""); json.Unmarshal(w.Body.Bytes(), &snaps) != nil || len(snaps.Snapshots) == 0 ||
		snaps.Snapshots[0].Counts.Nodes != 9 {
		t.Errorf("snapshots after the join: %s", w.Body)
	}
}

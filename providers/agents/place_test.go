package agents_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/topology"
)

// honest are eight nodes in two leaves under one spine, in one NVLink
// domain of two racks, each with its own HCA.
func honest() []providers.NodeFacts {
	var out []providers.NodeFacts
	for i := 1; i <= 8; i++ {
		out = append(out, providers.NodeFacts{
			Node: fmt.Sprintf("gpu%03d", i), GPUs: 8,
			Fabric: []string{fmt.Sprintf("leaf/%d", (i-1)/4+1), "spine1"},
			Clique: clique, Rack: fmt.Sprintf("rack%d", (i-1)/4+1),
			HCAs: []providers.HCA{{Name: "mlx5_0", NodeGUID: fmt.Sprintf("%016x", 0x1000+i)}},
		})
	}
	return out
}

func discoverFacts(t *testing.T, facts []providers.NodeFacts) (*topology.Graph, map[string]int, string, error) {
	t.Helper()
	now := time.Now()
	var rs reports
	for _, f := range facts {
		rs = append(rs, providers.AgentReport{Facts: f, ReceivedAt: now})
	}
	d := deps(rs, now)
	obs := &drops{n: map[string]int{}}
	var logs bytes.Buffer
	d.Observer, d.Logger = obs, slog.New(slog.NewTextHandler(&logs, nil))
	p, err := agents.New(agents.DefaultConfig(), d)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	return g, obs.n, logs.String(), err
}

// TestOneReportCannotBreakTheGraph: one node reports a fact that, added
// as it stands, would make the graph unbuildable or would be published
// wrongly. Its fact is dropped (counted, with a warning naming both
// sides); every other node keeps its own.
func TestOneReportCannotBreakTheGraph(t *testing.T) {
	t.Parallel()
	leaf1 := topology.SafeName("leaf/1")
	c, err := nvlink.ParseCliqueLabel(clique)
	if err != nil {
		t.Fatal(err)
	}
	dom := c.String()
	tests := []struct {
		name   string
		liar   providers.NodeFacts
		reason string
		logs   []string
	}{
		{"a switch named like another after sanitizing", providers.NodeFacts{Node: "gpu009", Fabric: []string{leaf1, "spine1"}},
			"name_collision", []string{`switches \"leaf/1\" and \"` + leaf1 + `\" both map to name`}},
		{"a switch named like a node", providers.NodeFacts{Node: "gpu009", Fabric: []string{"gpu001", "spine1"}},
			"name_collision", []string{`switch \"gpu001\" would be named \"gpu001\", like node \"gpu001\"`}},
		{"a domain named like another after sanitizing", providers.NodeFacts{Node: "gpu009", FabricDomain: topology.SafeName(dom)},
			"name_collision", []string{`domains \"` + dom + `\" and \"` + topology.SafeName(dom) + `\" both map to name`}},
		{"a rack of another domain", providers.NodeFacts{Node: "gpu009", Clique: "0C1C6F5C-1A2B-4C3D-8E9F-0123456789AB.1", Rack: "rack1"},
			"rack_conflict", nil},
		{"a leaf under a second spine", providers.NodeFacts{Node: "gpu009", Fabric: []string{"leaf/1", "spine2"}},
			"fabric_conflict", nil},
		{"another node's HCA", providers.NodeFacts{Node: "gpu009", HCAs: []providers.HCA{{Name: "mlx5_0", NodeGUID: fmt.Sprintf("%016x", 0x1001)}}},
			"hca_conflict", []string{"HCA node GUID 0000000000001001 is reported by 2 nodes: gpu[001,009]; dropped from each"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, dropped, logs, err := discoverFacts(t, append(honest(), tc.liar))
			if err != nil {
				t.Fatalf("Discover = %v, want the lying report's fact dropped", err)
			}
			for i := 1; i <= 8; i++ {
				n, _ := g.Node(fmt.Sprintf("gpu%03d", i))
				if n.Leaf == "" || n.Domain == "" || n.SubDomain == "" || (tc.reason != "hca_conflict" && n.Attributes[agents.HCAsAttribute] == "") {
					t.Errorf("honest node %s lost a fact: %+v", n.Name, n)
				}
			}
			if tc.reason != "" && dropped["agents/"+tc.reason] == 0 {
				t.Errorf("dropped = %v, want %s", dropped, tc.reason)
			}
			for _, want := range tc.logs {
				if !strings.Contains(logs, want) {
					t.Errorf("log lacks %s:\n%s", want, logs)
				}
			}
		})
	}
}

// TestNoReportsFailDiscovery: reports drawn at random from a small set of
// switch, domain and rack IDs chosen to collide (IDs that sanitize alike,
// IDs named like nodes, reversed paths) never make a discovery fail.
func TestNoReportsFailDiscovery(t *testing.T) {
	t.Parallel()
	ids := []string{"s/1", topology.SafeName("s/1"), "s1", "s#1", "n01", "n02", "core", "spine", "leaf"}
	doms := []string{"d/1", topology.SafeName("d/1"), "d1", "n03"}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		var facts []providers.NodeFacts
		for i := range 2 + r.IntN(10) {
			f := providers.NodeFacts{Node: fmt.Sprintf("n%02d", i+1)}
			for range r.IntN(4) {
				if id := ids[r.IntN(len(ids))]; !slices.Contains(f.Fabric, id) {
					f.Fabric = append(f.Fabric, id)
				}
			}
			if r.IntN(2) == 0 {
				f.FabricDomain = doms[r.IntN(len(doms))]
			}
			facts = append(facts, f)
		}
		if _, _, _, err := discoverFacts(t, facts); err != nil {
			t.Fatalf("seed %d: %+v: Discover = %v", seed, facts, err)
		}
	}
}

package merge_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/agents"
	"github.com/toposcope/toposcope/providers/k8slabels"
	"github.com/toposcope/toposcope/providers/merge"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/testenv/proctest"
	"github.com/toposcope/toposcope/topology"
)

// dropCounts records providers.DropObserver calls.
type dropCounts struct {
	providers.Observer
	n map[string]int
}

func (d *dropCounts) Dropped(provider, reason string, n int) { d.n[provider+"/"+reason] += n }

// lookupAgents is lookup with the agents provider too.
func lookupAgents(name string) (providers.Factory, error) {
	if name == agents.Name {
		return agents.NewFactory(), nil
	}
	return lookup(name)
}

// discoverWithAgents runs the merge of doc once with the agent reports
// src, returning the graph, the log and the drops counted.
func discoverWithAgents(t *testing.T, doc string, src agentReports) (*topology.Graph, *proctest.Output, *dropCounts, error) {
	t.Helper()
	logs := &proctest.Output{}
	obs := &dropCounts{n: map[string]int{}}
	p, err := merge.NewFactory(lookupAgents).New(node(t, doc), "params",
		providers.Deps{Logger: slog.New(slog.NewTextHandler(logs, nil)), Agents: src, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Discover(context.Background(), providers.Request{})
	return g, logs, obs, err
}

// TestAgentsYieldOnConflict: an agent report whose leaf, GPU count or
// NVLink domain disagrees with another source loses its facts of that
// node, and a node only agents report is left out, each listed and
// counted, instead of failing the discovery.
func TestAgentsYieldOnConflict(t *testing.T) {
	t.Parallel()
	l1, l2 := k8slabels.AWSLayerPrefix+"1", k8slabels.AWSLayerPrefix+"2"
	doc := "sources:\n  - provider: k8s-labels\n    params:\n      nodes:\n" +
		"        - {name: a, gpus: 8, labels: {" + l1 + ": t, " + l2 + ": l1, " + nvlink.CliqueLabel + ": " + d1 + "}}\n" +
		"        - {name: b, gpus: 8, labels: {" + l1 + ": t, " + l2 + ": l2}}\n" +
		"  - provider: agents\n"
	now := time.Now()
	src := agentReports{
		{Facts: providers.NodeFacts{Node: "a", GPUs: 4, Clique: d2, Fabric: []string{"l2", "t"}}, ReceivedAt: now},
		{Facts: providers.NodeFacts{Node: "b", GPUs: 8, Clique: d1, Fabric: []string{"l2", "t"}}, ReceivedAt: now},
		{Facts: providers.NodeFacts{Node: "ghost01", GPUs: 8, Clique: d1, Fabric: []string{"l1", "t"}}, ReceivedAt: now},
	}
	g, logs, obs, err := discoverWithAgents(t, doc, src)
	if err != nil {
		t.Fatalf("Discover = %v, want the agents' conflicting facts dropped", err)
	}
	if n, ok := g.Node("a"); !ok || n.GPUs != 8 || n.Leaf != "l1" || n.Domain != d1 {
		t.Errorf("a = %+v, want the labels' 8 GPUs, leaf l1 and domain %s", n, d1)
	}
	if n, ok := g.Node("b"); !ok || n.GPUs != 8 || n.Leaf != "l2" || n.Domain != d1 {
		t.Errorf("b = %+v, want its agent's domain %s beside the labels' leaf", n, d1)
	}
	if _, ok := g.Node("ghost01"); ok {
		t.Error("ghost01, known to no source but the agents, is in the graph")
	}
	if obs.n["merge/conflict"] != 1 || obs.n["merge/unknown_node"] != 1 {
		t.Errorf("dropped = %v, want one conflict and one unknown node", obs.n)
	}
	for _, want := range []string{"reason=conflict count=1 nodes=a", "reason=unknown_node count=1 nodes=ghost01"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}

	// With onConflict: policy the agents are a source like any other.
	if _, _, _, err := discoverWithAgents(t, doc+"    onConflict: policy\n", src); err == nil || !strings.Contains(err.Error(), "conflicts") {
		t.Errorf("Discover with onConflict: policy = %v, want the conflicts", err)
	}
}

// TestAgentReportCannotBreakTheMerge: a node known to the labels source,
// whose agent reports a domain or a switch named, once names are made
// safe, like one of the labels source's, or a switch named like a node,
// loses that placement (counted as a conflict, with a warning naming
// both sides); before, the merged graph could not be built and the
// discovery failed.
func TestAgentReportCannotBreakTheMerge(t *testing.T) {
	t.Parallel()
	l1, l2 := k8slabels.AWSLayerPrefix+"1", k8slabels.AWSLayerPrefix+"2"
	doc := "sources:\n  - provider: k8s-labels\n    params:\n      nodes:\n" +
		"        - {name: a, gpus: 8, labels: {" + l1 + ": t, " + l2 + ": \"l/1\"}}\n" +
		"        - {name: b, gpus: 8}\n" +
		"        - {name: c, gpus: 8}\n" +
		"  - provider: agents\n"
	for _, tc := range []struct {
		name string
		fact providers.NodeFacts
		log  string
	}{
		{"switch named like the labels' leaf", providers.NodeFacts{Node: "b", Fabric: []string{topology.SafeName("l/1"), "t2"}}, "both map to name"},
		{"switch named like a node", providers.NodeFacts{Node: "b", Fabric: []string{"c", "t2"}}, `like node \"c\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, logs, obs, err := discoverWithAgents(t, doc, agentReports{{Facts: tc.fact, ReceivedAt: time.Now()}})
			if err != nil {
				t.Fatalf("Discover = %v, want the agent's placement dropped", err)
			}
			if n, _ := g.Node("a"); n.Leaf != "l/1" {
				t.Errorf("a = %+v, want it under the labels' leaf", n)
			}
			if n, ok := g.Node("b"); !ok || n.Leaf != "" {
				t.Errorf("b = %+v, %v: want it kept without the agent's path", n, ok)
			}
			if obs.n["merge/conflict"] != 1 || !strings.Contains(logs.String(), tc.log) {
				t.Errorf("dropped = %v, logs:\n%s\nwant one conflict and %q", obs.n, logs, tc.log)
			}
		})
	}
}

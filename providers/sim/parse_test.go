package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/providers"
)

// tree is a valid model that the bad models below are variations of.
const tree = `name: t
defaults:
  gpus: 8
switches:
  - id: spine
    children:
      - id: leaf1
        nodes: gpu[01-04]
      - id: leaf2
        nodes: gpu[05-08]
`

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		model string
		want  []string // each must appear in the error
	}{
		{"empty", ``, []string{"(document)", "empty model"}},
		{"not yaml", "name: t\nswitches:\n  - id: [\n", []string{"(document) (line 3): invalid YAML"}},
		{"two documents", "name: a\nswitches: []\n---\nname: b\n", []string{"more than one YAML document"}},
		{"root not mapping", "- a\n", []string{"(document) (line 1): must be a mapping"}},
		{"no name", "switches: []\n", []string{"name (line 1): is required"}},
		{"unknown top key", "name: t\nswitchez: []\n", []string{"switchez (line 2): unknown key (known: defaults, description,"}},
		{"duplicate key", "name: t\nname: u\n", []string{"name (line 2): duplicate key (first at line 1)"}},
		{"unknown default key", "name: t\ndefaults:\n  gpu: 8\n", []string{"defaults.gpu (line 3): unknown key (known: gpus, region, zone)"}},
		{"gpus not integer", "name: t\ndefaults:\n  gpus: eight\n", []string{"defaults.gpus (line 3): must be an integer"}},
		{"gpus negative", "name: t\ndefaults:\n  gpus: -1\n", []string{"defaults.gpus (line 3): must be an integer from 0"}},
		{"unknown switch key", tree + "        speed: 4\n", []string{"switches[0].children[1].speed (line 11): unknown key"}},
		{"switches not list", "name: t\nswitches: {id: a}\n", []string{"switches (line 2): must be a list"}},
		{"switch without id", "name: t\nswitches:\n  - nodes: a[1-2]\n", []string{"switches[0].id (line 3): is required"}},
		{"switch with both", "name: t\nswitches:\n  - id: s\n    nodes: a1\n    children:\n      - id: l\n        nodes: a2\n",
			[]string{"switches[0] (line 3): has both children and nodes"}},
		{"switch with neither", "name: t\nswitches:\n  - id: s\n", []string{"switches[0] (line 3): needs either children or nodes"}},
		{"empty children", "name: t\nswitches:\n  - id: s\n    children: []\n", []string{"switches[0].children (line 4): is empty"}},
		{"duplicate switch id", strings.Replace(tree, "id: leaf2", "id: leaf1", 1),
			[]string{"switches[0].children[1].id (line 9): duplicate switch ID \"leaf1\" (first at switches[0].children[0], line 7)"}},
		{"node under two leaves", strings.Replace(tree, "gpu[05-08]", "gpu[04-08]", 1),
			[]string{"switches[0].children[1].nodes (line 10): node gpu04 is already under switch \"leaf1\" (switches[0].children[0].nodes, line 8)"}},
		{"many nodes under two leaves", strings.Replace(tree, "gpu[05-08]", "gpu[01-08]", 1),
			[]string{"node gpu01 is already under switch \"leaf1\"", "(and 3 more nodes)"}},
		{"node twice in one leaf", strings.Replace(tree, "gpu[05-08]", "gpu[05-08],gpu05", 1),
			[]string{"switches[0].children[1].nodes (line 10): node gpu05 is listed twice"}},
		{"bad hostlist", strings.Replace(tree, "gpu[05-08]", "gpu[05-08", 1),
			[]string{"switches[0].children[1].nodes (line 10): bad hostlist \"gpu[05-08\""}},
		{"hostlist not string", strings.Replace(tree, "gpu[05-08]", "{a: b}", 1),
			[]string{"switches[0].children[1].nodes (line 10): must be a hostlist expression"}},
		{"bad node name", strings.Replace(tree, "gpu[05-08]", "'gpu=5'", 1),
			[]string{"switches[0].children[1].nodes (line 10): node \"gpu=5\""}},
		{"instance id count", tree + "nodes:\n  - names: gpu[01-04]\n    instanceIDs: i-[1-3]\n",
			[]string{"nodes[0].instanceIDs (line 13): has 3 instance IDs for the 4 names of nodes[0].names"}},
		{"duplicate instance id", tree + "nodes:\n  - names: gpu[01-02]\n    instanceIDs: i-1,i-1\n",
			[]string{"nodes[0].instanceIDs (line 13): instance ID \"i-1\" of node gpu02 is also node gpu01's"}},
		{"node in two groups", tree + "nodes:\n  - names: gpu[01-04]\n  - names: gpu04\n",
			[]string{"nodes[1].names (line 13): node gpu04 is already in node group nodes[0] (line 12)"}},
		{"group without names", tree + "nodes:\n  - gpus: 4\n", []string{"nodes[0].names (line 12): is required"}},
		{"unknown group key", tree + "nodes:\n  - names: x1\n    gpu: 4\n", []string{"nodes[0].gpu (line 13): unknown key (known: attributes, gpus,"}},
		{"attributes not mapping", tree + "nodes:\n  - names: x1\n    attributes: [a]\n", []string{"nodes[0].attributes (line 13): must be a mapping"}},
		{"attribute value not scalar", tree + "nodes:\n  - names: x1\n    attributes:\n      a: [b]\n", []string{"nodes[0].attributes.a (line 14): must be a string"}},
		{"domain without id", tree + "domains:\n  - nodes: gpu[01-04]\n", []string{"domains[0].id (line 12): is required"}},
		{"domain without nodes", tree + "domains:\n  - id: d\n", []string{"domains[0] (line 12): needs nodes or subDomains"}},
		{"duplicate domain id", tree + "domains:\n  - id: d\n    nodes: gpu[01-04]\n  - id: d\n    nodes: gpu[05-08]\n",
			[]string{"domains[1].id (line 14): duplicate domain ID \"d\" (first at domains[0], line 12)"}},
		{"node in two domains", tree + "domains:\n  - id: d1\n    nodes: gpu[01-04]\n  - id: d2\n    nodes: gpu[04-08]\n",
			[]string{"domains[1].nodes (line 15): node gpu04 is already in domain \"d1\" (domains[0].nodes, line 13)"}},
		{"sub-domain outside domain", tree + "domains:\n  - id: d\n    nodes: gpu[01-04]\n    subDomains:\n      - id: r\n        nodes: gpu[04-05]\n",
			[]string{"domains[0].subDomains[0].nodes (line 16): node gpu05 is not among the nodes of domain \"d\""}},
		{"node in two sub-domains", tree + "domains:\n  - id: d\n    subDomains:\n      - id: r1\n        nodes: gpu[01-04]\n      - id: r2\n        nodes: gpu04\n",
			[]string{"domains[0].subDomains[1].nodes (line 17): node gpu04 is already in sub-domain \"r1\""}},
		{"duplicate sub-domain id", tree + "domains:\n  - id: d1\n    subDomains:\n      - id: r\n        nodes: gpu01\n  - id: d2\n    subDomains:\n      - id: r\n        nodes: gpu02\n",
			[]string{"domains[1].subDomains[0].id (line 18): duplicate sub-domain ID \"r\" (first at domains[0].subDomains[0], line 14)"}},
		{"sub-domain without nodes", tree + "domains:\n  - id: d\n    subDomains:\n      - id: r\n",
			[]string{"domains[0].subDomains[0].nodes (line 14): is required"}},
		{"link speed too big", strings.Replace(tree, "id: spine", "id: spine\n    linkSpeedGbps: 99999999999", 1),
			[]string{"switches[0].linkSpeedGbps (line 6): must be an integer from 0 to 4294967295"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.model), "test.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded, want error mentioning %q", tt.want)
			}
			if !strings.HasPrefix(err.Error(), "model test.yaml: ") {
				t.Errorf("error %q does not name the source", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n  %s\ndoes not mention\n  %s", err, w)
				}
			}
			var fe *config.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, config.ErrInvalid) {
				t.Errorf("error %v is not a config.FieldError", err)
			}
		})
	}
}

func TestParseErrorLimit(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("name: t\nswitches:\n")
	for range 30 {
		b.WriteString("  - id: s\n")
	}
	_, err := Parse([]byte(b.String()), "x")
	if err == nil || !strings.Contains(err.Error(), "more problems") {
		t.Fatalf("error = %v, want a capped list", err)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != maxErrors+1 {
		t.Errorf("error has %d lines, want %d", n, maxErrors+1)
	}
}

func TestParseFeatures(t *testing.T) {
	t.Parallel()
	const model = `name: features
description: |
  Aliases, hostlist lists, domains made of their sub-domains, defaults.
defaults: {gpus: 2, region: r1, zone: z1}
switches:
  - id: "top switch"
    children:
      - id: leaf.a
        displayName: Leaf A
        linkSpeedGbps: 1_000
        nodes: [a1, "a[2-3]"]
domains:
  - id: d1
    subDomains:
      - {id: d1-x, nodes: a1}
      - {id: d1-y, nodes: "a[2-3]"}
nodes:
  - names: a1
    gpus: 0
    attributes: &attrs {k: v}
  - names: lone
    region: r2
    attributes: *attrs
`
	m, err := Parse([]byte(model), "f")
	if err != nil {
		t.Fatal(err)
	}
	if m.Info().Description != "Aliases, hostlist lists, domains made of their sub-domains, defaults." {
		t.Errorf("description = %q", m.Info().Description)
	}
	g, err := m.Graph(providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if got := countsOf(g); got != (counts{nodes: 4, switches: 2, levels: 2, domains: 1, subDomains: 2, unplaced: 1}) {
		t.Errorf("counts = %+v", got)
	}
	a1, _ := g.Node("a1")
	a2, _ := g.Node("a2")
	lone, _ := g.Node("lone")
	if a1.GPUs != 0 || a1.Attributes["k"] != "v" || a1.Region != "r1" || a1.SubDomain != "d1-x" {
		t.Errorf("a1 = %+v", *a1)
	}
	if a2.GPUs != 2 || a2.Zone != "z1" || a2.Domain != "d1" || a2.SubDomain != "d1-y" {
		t.Errorf("a2 = %+v", *a2)
	}
	if lone.Region != "r2" || lone.Zone != "z1" || lone.GPUs != 2 || lone.Attributes["k"] != "v" {
		t.Errorf("lone = %+v", *lone)
	}
	leaf, ok := g.Switch("leaf.a")
	if !ok || leaf.DisplayName != "Leaf A" || leaf.LinkSpeedGbps != 1000 || leaf.Parent != "top switch" {
		t.Errorf("leaf = %+v", leaf)
	}
}

// TestAliasBomb: a model whose aliases nest ten-fold seven times (10^7
// switches once expanded) is refused after a bounded amount of work,
// naming the line.
func TestAliasBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("name: bomb\nswitches:\n  - &s0 {id: s0, nodes: 'gpu[1-2]'}\n")
	for i := 1; i < 8; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*s%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "  - &s%d {id: s%d, children: [%s]}\n", i, i, refs)
	}
	_, err := Parse([]byte(b.String()), "bomb")
	if err == nil || !strings.Contains(err.Error(), "YAML aliases expand to more than") {
		t.Fatalf("Parse(alias bomb) = %v, want the alias budget error", err)
	}
}

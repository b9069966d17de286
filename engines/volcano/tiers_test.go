package volcano_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

// memberList returns a HyperNode's members as "Type:name".
func memberList(o *unstructured.Unstructured) []string {
	var out []string
	ms, _, _ := unstructured.NestedSlice(o.Object, "spec", "members")
	for _, m := range ms {
		mm := m.(map[string]any)
		out = append(out, mm["type"].(string)+":"+mm["selector"].(map[string]any)["exactMatch"].(map[string]any)["name"].(string))
	}
	return out
}

// tierOf returns a HyperNode's spec.tier and spec.tierName as "2 tier-0".
func tierOf(o *unstructured.Unstructured) string {
	tier, _, _ := unstructured.NestedInt64(o.Object, "spec", "tier")
	name, _, _ := unstructured.NestedString(o.Object, "spec", "tierName")
	return fmt.Sprintf("%d %s", tier, name)
}

// TestNVLinkTier: on the real apiserver with Volcano's CRD (which keeps
// spec.tierName), each NVLink domain under a leaf switch is a tier-1
// HyperNode ("accelerator-domain") listing its nodes; leaf switches are
// then tier 2 ("tier-0") and list their domains and the nodes in no
// domain; the spine is tier 3 ("tier-1"). A domain under two leaf
// switches becomes one HyperNode per leaf, with a warning naming it.
func TestNVLinkTier(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		fabric   kubetest.Fabric
		want     func(f kubetest.Fabric, hn func(string) string) map[string][]string // name -> tier, then members
		warnings []string
	}{
		{
			name:   "domains inside leaves",
			fabric: kubetest.Fabric{Nodes: 16, NodesPerLeaf: 8, LeavesPerSpine: 2, Tiers: 2, DomainSize: 4, DomainNodes: 12},
			want: func(f kubetest.Fabric, hn func(string) string) map[string][]string {
				return map[string][]string{
					hn("domain-" + f.Domain(0)): {"1 accelerator-domain", "Node:" + f.NodeName(0), "Node:" + f.NodeName(1), "Node:" + f.NodeName(2), "Node:" + f.NodeName(3)},
					hn("domain-" + f.Domain(4)): {"1 accelerator-domain", "Node:" + f.NodeName(4), "Node:" + f.NodeName(5), "Node:" + f.NodeName(6), "Node:" + f.NodeName(7)},
					hn("domain-" + f.Domain(8)): {"1 accelerator-domain", "Node:" + f.NodeName(8), "Node:" + f.NodeName(9), "Node:" + f.NodeName(10), "Node:" + f.NodeName(11)},
					hn(f.Leaf(0)):               {"2 tier-0", "HyperNode:" + hn("domain-"+f.Domain(0)), "HyperNode:" + hn("domain-"+f.Domain(4))},
					hn(f.Leaf(8)): {"2 tier-0", "HyperNode:" + hn("domain-"+f.Domain(8)),
						"Node:" + f.NodeName(12), "Node:" + f.NodeName(13), "Node:" + f.NodeName(14), "Node:" + f.NodeName(15)},
					hn(f.Spine(0)): {"3 tier-1", "HyperNode:" + hn(f.Leaf(0)), "HyperNode:" + hn(f.Leaf(8))},
				}
			},
		},
		{
			name:   "a domain across two leaves",
			fabric: kubetest.Fabric{Nodes: 16, NodesPerLeaf: 8, LeavesPerSpine: 2, Tiers: 2, DomainSize: 6},
			want: func(f kubetest.Fabric, hn func(string) string) map[string][]string {
				return map[string][]string{
					hn("domain-" + f.Domain(0)):  {"1 accelerator-domain", "Node:" + f.NodeName(0), "Node:" + f.NodeName(1), "Node:" + f.NodeName(2), "Node:" + f.NodeName(3), "Node:" + f.NodeName(4), "Node:" + f.NodeName(5)},
					hn("domain-" + f.Domain(12)): {"1 accelerator-domain", "Node:" + f.NodeName(12), "Node:" + f.NodeName(13), "Node:" + f.NodeName(14), "Node:" + f.NodeName(15)},
					hn(f.Spine(0)):               {"3 tier-1", "HyperNode:" + hn(f.Leaf(0)), "HyperNode:" + hn(f.Leaf(8))},
				}
			},
			warnings: []string{"accelerator domain %s is under 2 leaf switches"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSetup(t, tc.fabric)
			e := s.engine(t, s.c.AdminConfig())
			res, err := e.Apply(context.Background(), s.fabric.MustGraph(t), kube.ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Refused) != 0 {
				t.Errorf("refused %v", res.Refused)
			}
			f := s.fabric
			hn := func(part string) string { return f.Prefix + "-hn-" + part }
			got := s.hyperNodes(t)
			for name, want := range tc.want(f, hn) {
				o := got[name]
				if o == nil {
					t.Errorf("no HyperNode %s among %v", name, keysOf(got))
					continue
				}
				if g := append([]string{tierOf(o)}, memberList(o)...); !slices.Equal(g, want) {
					t.Errorf("%s:\n got %v\nwant %v", name, g, want)
				}
				ann := o.GetAnnotations()
				if strings.Contains(name, "-domain-") {
					if ann[keys.DomainID] == "" {
						t.Errorf("%s has no %s", name, keys.DomainID)
					}
				} else if ann[keys.SwitchID] == "" {
					t.Errorf("%s has no %s", name, keys.SwitchID)
				}
			}
			for _, w := range tc.warnings {
				w = fmt.Sprintf(w, f.Domain(6))
				if !slices.ContainsFunc(res.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("warnings %q lack %q", res.Warnings, w)
				}
			}
			if len(tc.warnings) == 0 && len(res.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", res.Warnings)
			}
			if tc.warnings != nil {
				checkSplit(t, got, f, hn)
			}
		})
	}
}

// checkSplit: the domain of nodes 6..11 is two tier-1 HyperNodes, one in
// each leaf's members, together holding its six nodes.
func checkSplit(t *testing.T, got map[string]*unstructured.Unstructured, f kubetest.Fabric, hn func(string) string) {
	t.Helper()
	var nodes []string
	for _, leaf := range []string{f.Leaf(0), f.Leaf(8)} {
		o := got[hn(leaf)]
		if o == nil {
			t.Fatalf("no HyperNode for %s", leaf)
		}
		if tierOf(o) != "2 tier-0" {
			t.Errorf("%s: %s, want 2 tier-0", leaf, tierOf(o))
		}
		var pieces []string
		for _, m := range memberList(o) {
			if name, ok := strings.CutPrefix(m, "HyperNode:"+hn("domain-"+f.Domain(6))+"-"); ok {
				pieces = append(pieces, name)
				p := got[hn("domain-"+f.Domain(6))+"-"+name]
				if p == nil || tierOf(p) != "1 accelerator-domain" {
					t.Errorf("piece %s of %s: %v", name, leaf, p)
					continue
				}
				nodes = append(nodes, memberList(p)...)
			}
		}
		if len(pieces) != 1 {
			t.Errorf("%s lists %d pieces of %s: %v", leaf, len(pieces), f.Domain(6), memberList(o))
		}
	}
	want := []string{}
	for i := 6; i < 12; i++ {
		want = append(want, "Node:"+f.NodeName(i))
	}
	if !slices.Equal(nodes, want) {
		t.Errorf("pieces of %s hold %v, want %v", f.Domain(6), nodes, want)
	}
}

func keysOf(m map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestDomainsWithoutSwitches: a graph of NVLink domains and no switch
// (an agent-only cluster) gives one tier-1 HyperNode per domain, a root.
func TestDomainsWithoutSwitches(t *testing.T) {
	t.Parallel()
	b := topology.NewBuilder()
	for i, d := range []string{"a", "a", "b"} {
		n := fmt.Sprintf("n%d", i+1)
		b.AddNode(topology.Node{Name: n})
		b.AddToDomain(n, "clique-"+d, "")
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, g)
	for _, want := range []string{"name: toposcope-domain-clique-a\n", "name: toposcope-domain-clique-b\n", "tierName: accelerator-domain\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tier: 2") || strings.Count(out, "kind: HyperNode") != 2 {
		t.Errorf("want two tier-1 HyperNodes:\n%s", out)
	}
}

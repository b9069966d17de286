package k8slabels_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/k8slabels"
	"github.com/toposcope/toposcope/providers/nvlink"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

// crusoe returns Crusoe's InfiniBand labels; an empty value is left out.
func crusoe(partition, pod string) map[string]string {
	l := map[string]string{}
	if partition != "" {
		l[k8slabels.CrusoePartitionLabel] = partition
	}
	if pod != "" {
		l[k8slabels.CrusoePodLabel] = pod
	}
	return l
}

// TestClusterCrusoe reads Crusoe's labels from Nodes on the real
// kube-apiserver with tiers: crusoe: the partition above the pod, the
// NVLink clique as domain, and a Node with no InfiniBand pod label under
// the placeholder switch, so that it stays schedulable.
func TestClusterCrusoe(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	prefix := c.Prefix(t)
	n := func(s string) string { return prefix + "-" + s }
	const clique2 = "7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.7"
	nodes := map[string]map[string]string{
		n("gb1"):  with(crusoe(n("part1"), n("podA")), nvlink.CliqueLabel, clique),
		n("gb2"):  with(crusoe(n("part1"), n("podA")), nvlink.CliqueLabel, clique),
		n("gb3"):  with(crusoe(n("part1"), n("podB")), nvlink.CliqueLabel, clique2),
		n("h1"):   crusoe(n("part2"), n("podC")),
		n("cpu1"): {"node.kubernetes.io/instance-type": "c1a.16x"},
		n("half"): crusoe(n("part2"), ""),
	}
	var objs []*corev1.Node
	for name, labels := range nodes {
		objs = append(objs, kubetest.NodeObjects([]string{name}, with(labels, kubetest.PrefixLabel, prefix))[0])
	}
	if err := c.CreateNodes(context.Background(), objs, 4); err != nil {
		t.Fatal(err)
	}
	discover := func(edit func(*k8slabels.Config)) (*topology.Graph, error) {
		cfg := k8slabels.DefaultConfig()
		cfg.Tiers = k8slabels.TiersCrusoe
		cfg.NodeSelector = kubetest.Selector(prefix)
		cfg.PageSize = 2
		if edit != nil {
			edit(&cfg)
		}
		clients, err := kubeclient.NewClients(cfg.Tune(c.AdminConfig()))
		if err != nil {
			t.Fatal(err)
		}
		p, err := k8slabels.New(cfg, clients.Core, providers.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		g, err := p.Discover(context.Background(), providers.Request{})
		return g, err
	}
	g, err := discover(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes()) != len(nodes) {
		t.Fatalf("nodes = %d, want %d", len(g.Nodes()), len(nodes))
	}
	for node, want := range map[string][]string{
		n("gb1"):  {n("podA"), n("part1")},
		n("gb3"):  {n("podB"), n("part1")},
		n("h1"):   {n("podC"), n("part2")},
		n("half"): {k8slabels.DefaultPlaceholderSwitch},
		n("cpu1"): {k8slabels.DefaultPlaceholderSwitch},
	} {
		if got := path(g, node); !slices.Equal(got, want) {
			t.Errorf("%s: path %v, want %v", node, got, want)
		}
	}
	if d, ok := g.Domain(clique); !ok || !slices.Equal(d.Nodes, []string{n("gb1"), n("gb2")}) {
		t.Errorf("domain %s = %+v", clique, d)
	}
	if d, ok := g.Domain(clique2); !ok || !slices.Equal(d.Nodes, []string{n("gb3")}) {
		t.Errorf("domain %s = %+v", clique2, d)
	}
	if un := g.NodesWithoutSwitch(); len(un) != 0 {
		t.Errorf("nodes under no switch: %v", un)
	}

	// A placeholder of the operator's name, or none.
	if g, err = discover(func(c *k8slabels.Config) { c.PlaceholderSwitch = "cpu-pool" }); err != nil {
		t.Fatal(err)
	}
	if got := path(g, n("cpu1")); !slices.Equal(got, []string{"cpu-pool"}) {
		t.Errorf("cpu1 under %v, want [cpu-pool]", got)
	}
	if g, err = discover(func(c *k8slabels.Config) { c.PlaceholderSwitch = k8slabels.NoLabel }); err != nil {
		t.Fatal(err)
	}
	if un := g.NodesWithoutSwitch(); !slices.Equal(un, []string{n("cpu1"), n("half")}) {
		t.Errorf("with placeholderSwitch: -, nodes under no switch = %v, want cpu1 and half", un)
	}

	// A pod without its partition is a bad label, not a placeholder.
	bad := kubetest.NodeObjects([]string{n("lost")}, with(crusoe("", n("podA")), kubetest.PrefixLabel, prefix))
	if err := c.CreateNodes(context.Background(), bad, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := discover(nil); !errors.Is(err, k8slabels.ErrBadLabel) {
		t.Errorf("pod label without partition: Discover = %v, want ErrBadLabel", err)
	}
}

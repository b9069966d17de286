// Package kai_test checks toposcope's objects against the real KAI
// scheduler (hack/install-kai.sh): the k8s-labels engine labels the Nodes
// and the kai engine writes the kai.scheduler Topology, both from a model
// fabric, and KAI must then place a GPU gang in one domain of the graph.
package kai_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/k8slabels"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/schedtopo"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/testenv/kaitest"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

// env is the package's apiserver, with KAI's CRDs when KAI is installed
// (kaitest.Require skips or fails the tests when it is not).
var env = kubetest.NewEnv(func(ctx context.Context, c *kubetest.Cluster) error {
	in, err := kaitest.Find()
	if err != nil {
		return nil
	}
	return kaitest.InstallCRDs(ctx, c, in)
})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

// placeTimeout bounds the wait for KAI's BindRequests (2 busy cores).
const placeTimeout = 3 * time.Minute

// The gang: gangPods pods of gpusPerPod GPUs (half a node) each.
const (
	gangPods   = 4
	gpusPerPod = 4
)

// used is the GPUs already taken on each node before the gang arrives
// (8 per node): leaf 1 can take one more pod, leaf 2 two, leaf 3 eight,
// so only the last leaf by name can hold the whole gang.
var used = []int{8, 8, 8, 4, 8, 8, 4, 4, 0, 0, 0, 0}

// fabric is 12 nodes, 4 per leaf, 2 leaves per spine: levels spine,
// leaf, hostname.
func fabric(prefix string) kubetest.Fabric {
	return kubetest.Fabric{Prefix: prefix, Nodes: len(used), NodesPerLeaf: 4, LeavesPerSpine: 2, Tiers: 2}
}

// unknownLevel is what KAI logs when a PodGroup asks for a level that its
// Topology does not have (the PodGroup only reads "Unable to schedule").
const unknownLevel = "does not contain a level with this name"

// What a case expects of KAI.
const (
	oneLeaf = "the gang in the one leaf with room"
	spread  = "the gang over several leaves"
	pending = "no placement at all"
)

// TestKAIPlacesGangInOneLeaf: with our labels and our Topology, and a
// PodGroup whose topologyConstraint asks for the leaf level (required or
// preferred), the real KAI scheduler binds the whole gang to nodes of one
// leaf of our graph, the only one with room for it; in the control run
// (no labels, no Topology, no constraint) the same gang spreads over
// leaves; a gang that fits in no single leaf is not placed at all when
// the leaf is required.
func TestKAIPlacesGangInOneLeaf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		topology   bool   // labels, Topology and a constraint
		preferred  bool   // preferredTopologyLevel instead of requiredTopologyLevel
		level      string // the level asked for instead of the Topology's leaf level
		pods, gpus int
		want       string
	}{
		{name: "required", topology: true, pods: gangPods, gpus: gpusPerPod, want: oneLeaf},
		{name: "preferred", topology: true, preferred: true, pods: gangPods, gpus: gpusPerPod, want: oneLeaf},
		{name: "control", pods: gangPods, gpus: gpusPerPod, want: spread},
		// 9 half-node pods: the cluster has room for 11, no leaf for more than 8.
		{name: "no-leaf-fits", topology: true, pods: 9, gpus: gpusPerPod, want: pending},
		// A short level name, as an alias would give: KAI v0.12.0 knows
		// levels by their node label only.
		{name: "short-level-name", topology: true, level: "leaf", pods: gangPods, gpus: gpusPerPod, want: pending},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := env.Require(t)
			in := kaitest.Require(t)
			ctx := context.Background()
			f := fabric(c.Prefix(t))
			g := f.MustGraph(t)
			nodes := kubetest.NodeObjects(f.NodeNames(), map[string]string{kubetest.PrefixLabel: f.Prefix, kaitest.NodePoolLabel: f.Prefix})
			if err := kaitest.ReadyNodes(ctx, c, nodes, kaitest.DefaultNodeResources); err != nil {
				t.Fatal(err)
			}
			// KAI keys PodGroups by name alone: keep names unique in the cluster.
			gang := kaitest.Gang{Name: f.Prefix + "-gang", Pool: f.Prefix, Pods: tt.pods, GPUsPerPod: tt.gpus}
			if tt.topology {
				var level string
				gang.Topology, level = publish(t, c, f, g)
				if tt.level != "" {
					level = tt.level
				}
				if tt.preferred {
					gang.PreferredLevel = level
				} else {
					gang.RequiredLevel = level
				}
			}
			gang.Namespace = kaitest.Namespace(t, c)
			queue, err := kaitest.CreateQueues(ctx, c, f.Prefix+"-queue", f.Prefix)
			if err != nil {
				t.Fatal(err)
			}
			gang.Queue = queue
			for i, gpus := range used {
				if gpus > 0 {
					if err := kaitest.BoundPod(ctx, c, gang.Namespace, "before-"+strconv.Itoa(i), f.NodeName(i), gpus); err != nil {
						t.Fatal(err)
					}
				}
			}
			fits, total := leavesThatFit(f, g, gang)
			if tt.want == pending && tt.level == "" {
				if len(fits) != 0 || total < gang.Pods {
					t.Fatalf("the fill leaves room for the gang in leaves %v, for %d pods in the cluster; want no leaf, but room in the cluster", fits, total)
				}
			} else if len(fits) != 1 || fits[0] == f.Leaf(0) {
				t.Fatalf("the fill leaves room for the gang in %v; want one leaf, not the first", fits)
			}

			s := kaitest.Start(t, in, c, f.Prefix)
			if err := gang.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			if tt.want == pending {
				why, err := gang.WaitUnschedulable(ctx, c, s, placeTimeout)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tt.level == "" && !strings.Contains(why, gang.RequiredLevel):
					t.Errorf("KAI's reason does not name the required level %q: %s", gang.RequiredLevel, why)
				case tt.level != "" && !s.Logged(unknownLevel):
					t.Errorf("KAI did not log %q for the level %q", unknownLevel, tt.level)
				}
				t.Logf("%s: not placed, as wanted: %s", tt.name, why)
				return
			}
			placed, err := gang.WaitPlaced(ctx, c, s, placeTimeout)
			if err != nil {
				t.Fatal(err)
			}
			byLeaf := map[string][]string{}
			for _, node := range placed {
				n, ok := g.Node(node)
				if !ok {
					t.Fatalf("KAI selected %q, not a node of the graph", node)
				}
				byLeaf[n.Leaf] = append(byLeaf[n.Leaf], node)
			}
			for _, ns := range byLeaf {
				sort.Strings(ns)
			}
			t.Logf("%s: level %q; KAI bound %v; by leaf of the graph: %v", tt.name, gang.RequiredLevel+gang.PreferredLevel, sorted(placed), byLeaf)
			leaves := slices.Sorted(maps.Keys(byLeaf))
			switch {
			case tt.want == oneLeaf && (len(leaves) != 1 || leaves[0] != fits[0]):
				t.Errorf("gang placed in leaves %v, want all in %s (the only leaf with room)", leaves, fits[0])
			case tt.want == oneLeaf:
				t.Logf("domain chosen: %s (nodes %v)", leaves[0], byLeaf[leaves[0]])
			case len(leaves) < 2:
				t.Errorf("control: gang placed in %v without topology; want it spread over leaves, or the test proves nothing", leaves)
			}
		})
	}
}

// publish writes the node labels with the k8s-labels engine and the KAI
// Topology with the kai engine, from g, and returns the Topology's name
// and its leaf level (the level above kubernetes.io/hostname).
func publish(t *testing.T, c *kubetest.Cluster, f kubetest.Fabric, g *topology.Graph) (name, leafLevel string) {
	t.Helper()
	ctx := context.Background()
	lcfg := k8slabels.DefaultConfig()
	lcfg.NodeSelector = kubetest.Selector(f.Prefix)
	clients, err := kubeclient.NewClients(lcfg.Tune(c.AdminConfig()))
	if err != nil {
		t.Fatal(err)
	}
	labels, err := k8slabels.New(lcfg, clients.Core, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := labels.Apply(ctx, g, kube.ApplyOptions{}); err != nil || res.Changed != f.Nodes {
		t.Fatalf("k8s-labels: %v (%+v)", err, res)
	}
	kcfg := schedtopo.DefaultConfig(schedtopo.KAI)
	kcfg.Name = f.Prefix + "-fabric"
	kai, err := schedtopo.New(kcfg, clients.Dynamic, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kai.Apply(ctx, g, kube.ApplyOptions{}); err != nil {
		t.Fatalf("kai: %v", err)
	}
	topo, err := c.Dynamic().Resource(kaitest.TopologyGVR).Get(ctx, kcfg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	levels, _, err := kai.Levels(g)
	if err != nil || len(levels) < 2 {
		t.Fatalf("levels %v: %v", levels, err)
	}
	t.Logf("Topology %s: %v", topo.GetName(), topo.Object["spec"])
	return kcfg.Name, levels[len(levels)-2]
}

// leavesThatFit returns the leaves of g whose free GPUs (after used) hold
// the whole gang, pods whole on nodes, and how many of its pods the whole
// cluster holds.
func leavesThatFit(f kubetest.Fabric, g *topology.Graph, gang kaitest.Gang) (leaves []string, total int) {
	room := map[string]int{}
	for i, u := range used {
		n, _ := g.Node(f.NodeName(i))
		room[n.Leaf] += (kaitest.DefaultNodeResources.GPUs - u) / gang.GPUsPerPod
		total += (kaitest.DefaultNodeResources.GPUs - u) / gang.GPUsPerPod
	}
	for _, leaf := range slices.Sorted(maps.Keys(room)) {
		if room[leaf] >= gang.Pods {
			leaves = append(leaves, leaf)
		}
	}
	return leaves, total
}

func sorted(placed map[string]string) []string {
	out := make([]string, 0, len(placed))
	for pod, node := range placed {
		out = append(out, fmt.Sprintf("%s->%s", pod, node))
	}
	sort.Strings(out)
	return out
}

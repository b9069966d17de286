// Package consumertest builds what the real-scheduler tests (Kueue,
// kube-scheduler) place gangs on: a fabric from a simulation model
// (providers/sim), its Nodes made Ready on a kubetest cluster, and the
// node labels and Topology objects written by toposcope's own engines
// (k8s-labels, kueue), never by hand.
package consumertest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/k8slabels"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/schedtopo"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/providers/sim"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/topology"
)

// GPUsPerNode is what every fabric node offers (the sim model's 8 GPUs).
const GPUsPerNode = 8

// Shape is the size of a fat-tree fabric: Nodes nodes, NodesPerLeaf under
// each leaf ("rack"), LeavesPerSpine leaves under each spine ("block"),
// every spine under one core switch.
type Shape struct {
	Nodes, NodesPerLeaf, LeavesPerSpine int
}

// Fabric is a simulated fabric whose node names start with the test's
// prefix, so that parallel tests on one apiserver do not share nodes.
type Fabric struct {
	// Prefix is the test's kubetest prefix; every Node carries it as the
	// kubetest.PrefixLabel label.
	Prefix string
	// Graph is the topology the sim provider discovered from the model.
	Graph *topology.Graph
	// Nodes are the node names, in order.
	Nodes []string
	// Model is the sim model the graph was discovered from (for a
	// toposcope service that discovers the same fabric).
	Model []byte
}

// NewFabric generates a fat-tree model of the given shape with the sim
// provider and discovers its graph.
func NewFabric(prefix string, s Shape) (*Fabric, error) {
	doc, err := sim.Generate(sim.GenerateOptions{
		Shape: sim.ShapeFatTree, Nodes: s.Nodes, NodesPerLeaf: s.NodesPerLeaf,
		LeavesPerSpine: s.LeavesPerSpine, Prefix: prefix + "-gpu",
	})
	if err != nil {
		return nil, fmt.Errorf("consumertest: %w", err)
	}
	return fromModel(prefix, doc)
}

// NewFabricModel reads the sim model at path, with every "PREFIX" in it
// replaced by prefix (so that node names are the test's own), and
// discovers its graph.
func NewFabricModel(prefix, path string) (*Fabric, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("consumertest: %w", err)
	}
	return fromModel(prefix, bytes.ReplaceAll(data, []byte("PREFIX"), []byte(prefix)))
}

// fromModel parses a sim model and discovers its graph.
func fromModel(prefix string, doc []byte) (*Fabric, error) {
	m, err := sim.Parse(doc, prefix+".yaml")
	if err != nil {
		return nil, fmt.Errorf("consumertest: %w", err)
	}
	g, err := m.Graph(providers.Request{})
	if err != nil {
		return nil, fmt.Errorf("consumertest: %w", err)
	}
	f := &Fabric{Prefix: prefix, Graph: g, Model: doc}
	for _, n := range g.Nodes() {
		f.Nodes = append(f.Nodes, n.Name)
	}
	slices.Sort(f.Nodes)
	return f, nil
}

// Selector is the node selector of the fabric's nodes.
func (f *Fabric) Selector() map[string]string {
	return map[string]string{kubetest.PrefixLabel: f.Prefix}
}

// Create creates the fabric's Nodes, Ready, with GPUsPerNode GPUs each,
// labelled with the prefix and their hostname only.
func (f *Fabric) Create(ctx context.Context, c *kubetest.Cluster) error {
	nodes := kubetest.NodeObjects(f.Nodes, f.Selector())
	return c.CreateReadyNodes(ctx, nodes, kubetest.Capacity{GPUs: GPUsPerNode})
}

// Switch returns the ID of node's switch at tier (0 is its leaf), or "".
func (f *Fabric) Switch(node string, tier int) string {
	path := f.Graph.Path(node)
	if tier >= len(path) {
		return ""
	}
	return path[tier].ID
}

// Members returns the switches of a tier with the nodes under each, in
// natural order of switch ID.
func (f *Fabric) Members(tier int) map[string][]string {
	out := map[string][]string{}
	for _, n := range f.Nodes {
		if s := f.Switch(n, tier); s != "" {
			out[s] = append(out[s], n)
		}
	}
	return out
}

// SwitchIDs returns the switch IDs of a tier, sorted.
func (f *Fabric) SwitchIDs(tier int) []string {
	return slices.Sorted(maps.Keys(f.Members(tier)))
}

// Publish runs toposcope's k8s-labels engine on the fabric's nodes (and
// only them) and returns the label keys it wrote.
func (f *Fabric) Publish(ctx context.Context, c *kubetest.Cluster) (kube.LabelKeys, error) {
	cfg := k8slabels.DefaultConfig()
	cfg.NodeSelector = kubetest.Selector(f.Prefix)
	clients, err := kubeclient.NewClients(c.AdminConfig())
	if err != nil {
		return kube.LabelKeys{}, fmt.Errorf("consumertest: %w", err)
	}
	e, err := k8slabels.New(cfg, clients.Core, engines.Deps{})
	if err != nil {
		return kube.LabelKeys{}, fmt.Errorf("consumertest: %w", err)
	}
	res, err := e.Apply(ctx, f.Graph, kube.ApplyOptions{})
	if err != nil {
		return kube.LabelKeys{}, fmt.Errorf("consumertest: k8s-labels: %w", err)
	}
	if res.Changed != len(f.Nodes) {
		return kube.LabelKeys{}, fmt.Errorf("consumertest: k8s-labels labelled %d nodes, want %d (%s)", res.Changed, len(f.Nodes), res.Summary())
	}
	return cfg.Keys(), nil
}

// PublishKueueTopology runs toposcope's kueue engine for the fabric and
// returns the Topology's name and levels (coarse to fine, hostname last).
func (f *Fabric) PublishKueueTopology(ctx context.Context, c *kubetest.Cluster, name string) ([]string, *kube.Result, error) {
	cfg := schedtopo.DefaultConfig(schedtopo.Kueue)
	cfg.Name = name
	clients, err := kubeclient.NewClients(c.AdminConfig())
	if err != nil {
		return nil, nil, fmt.Errorf("consumertest: %w", err)
	}
	e, err := schedtopo.New(cfg, clients.Dynamic, engines.Deps{})
	if err != nil {
		return nil, nil, fmt.Errorf("consumertest: %w", err)
	}
	res, err := e.Apply(ctx, f.Graph, kube.ApplyOptions{})
	if err != nil {
		return nil, res, fmt.Errorf("consumertest: kueue engine: %w", err)
	}
	levels, _, err := e.Levels(f.Graph)
	if err != nil {
		return nil, res, fmt.Errorf("consumertest: %w", err)
	}
	return levels, res, nil
}

package kubetest

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/topology"
)

// Fabric describes a regular test fabric: Nodes nodes, NodesPerLeaf under
// each leaf switch, LeavesPerSpine leaves under each spine and every spine
// under one core switch (Tiers 3), or fewer tiers; optional accelerator
// domains of DomainSize consecutive nodes, split into sub-domains of
// SubDomainSize. Every name starts with Prefix.
type Fabric struct {
	Prefix         string
	Nodes          int
	NodesPerLeaf   int // default 16
	LeavesPerSpine int // default 4
	Tiers          int // 1 (leaves), 2 (+ spines) or 3 (+ core, default)
	DomainSize     int // 0: no domains
	SubDomainSize  int // 0: no sub-domains
	// DomainNodes limits the domains to the first DomainNodes nodes
	// (0: all nodes).
	DomainNodes int
}

func (f Fabric) withDefaults() Fabric {
	if f.NodesPerLeaf == 0 {
		f.NodesPerLeaf = 16
	}
	if f.LeavesPerSpine == 0 {
		f.LeavesPerSpine = 4
	}
	if f.Tiers == 0 {
		f.Tiers = 3
	}
	if f.DomainNodes == 0 {
		f.DomainNodes = f.Nodes
	}
	return f
}

// NodeName is the name of node i (0-based).
func (f Fabric) NodeName(i int) string { return fmt.Sprintf("%s-n%05d", f.Prefix, i+1) }

// NodeNames returns every node name, in order.
func (f Fabric) NodeNames() []string {
	out := make([]string, f.Nodes)
	for i := range out {
		out[i] = f.NodeName(i)
	}
	return out
}

// Leaf is the ID of the leaf switch above node i.
func (f Fabric) Leaf(i int) string {
	return fmt.Sprintf("%s-leaf%03d", f.Prefix, i/f.withDefaults().NodesPerLeaf+1)
}

// Spine is the ID of the spine above node i.
func (f Fabric) Spine(i int) string {
	d := f.withDefaults()
	return fmt.Sprintf("%s-spine%02d", f.Prefix, i/d.NodesPerLeaf/d.LeavesPerSpine+1)
}

// Core is the ID of the core switch.
func (f Fabric) Core() string { return f.Prefix + "-core" }

// Domain is the ID of node i's domain ("" when none); SubDomain that of
// its sub-domain.
func (f Fabric) Domain(i int) string {
	d := f.withDefaults()
	if d.DomainSize == 0 || i >= d.DomainNodes {
		return ""
	}
	return fmt.Sprintf("%s-nvl%03d", f.Prefix, i/d.DomainSize+1)
}

// SubDomain is the ID of node i's sub-domain ("" when none).
func (f Fabric) SubDomain(i int) string {
	d := f.withDefaults()
	if d.SubDomainSize == 0 || f.Domain(i) == "" {
		return ""
	}
	return fmt.Sprintf("%s-rack%03d", f.Prefix, i/d.SubDomainSize+1)
}

// Graph builds the fabric's topology graph.
func (f Fabric) Graph() (*topology.Graph, error) {
	d := f.withDefaults()
	b := topology.NewBuilder()
	for i := range d.Nodes {
		name := d.NodeName(i)
		b.AddNode(topology.Node{Name: name, GPUs: 8})
		path := []topology.SwitchInfo{{ID: d.Leaf(i)}}
		if d.Tiers >= 2 {
			path = append(path, topology.SwitchInfo{ID: d.Spine(i)})
		}
		if d.Tiers >= 3 {
			path = append(path, topology.SwitchInfo{ID: d.Core()})
		}
		b.AddPath(name, path)
		if dom := d.Domain(i); dom != "" {
			b.AddToDomain(name, dom, d.SubDomain(i))
		}
	}
	return b.Build()
}

// NodeObjects returns Node objects with the given names, each labelled
// with labels (and its kubernetes.io/hostname).
func NodeObjects(names []string, labels map[string]string) []*corev1.Node {
	out := make([]*corev1.Node, len(names))
	for i, name := range names {
		l := make(map[string]string, len(labels)+1)
		for k, v := range labels {
			l[k] = v
		}
		l["kubernetes.io/hostname"] = name
		out[i] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
	}
	return out
}

// MustGraph is Graph for a test: a fabric that does not build fails t.
func (f Fabric) MustGraph(t testing.TB) *topology.Graph {
	t.Helper()
	g, err := f.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// CreateFabric gives f the test's prefix, creates its Nodes labelled
// with it, and returns f.
func (c *Cluster) CreateFabric(t testing.TB, f Fabric) Fabric {
	t.Helper()
	f.Prefix = c.Prefix(t)
	if err := c.CreateNodes(context.Background(), NodeObjects(f.NodeNames(), map[string]string{PrefixLabel: f.Prefix}), 16); err != nil {
		t.Fatal(err)
	}
	return f
}

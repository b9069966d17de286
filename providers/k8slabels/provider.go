// Package k8slabels is the provider that builds the topology from labels
// that clouds and tools already put on Kubernetes Nodes: the NVLink clique
// of GPU Feature Discovery (nvidia.com/gpu.clique), GKE's
// cloud.google.com/gce-topology-block / -subblock / -host, EKS's
// topology.k8s.aws/network-node-layer-1..4 (layer 1 is the top), Crusoe
// Cloud's crusoe.ai/ib.partition.id and crusoe.ai/pod.id, and
// configurable custom keys. It reads Nodes from a cluster, or a static
// list given in its parameters.
package k8slabels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/providers"
	"github.com/toposcope/toposcope/topology"
)

// Name is the provider's registered name.
const Name = "k8s-labels"

// maxReported caps how many node errors one discovery lists.
const maxReported = 20

// Provider reads the topology from Node labels.
type Provider struct {
	cfg    Config
	core   *kubeclient.Core
	log    *slog.Logger
	static []corev1.Node
}

// New validates cfg and returns the provider. core lists the Nodes; it may
// be nil when cfg.Nodes are given.
func New(cfg Config, core *kubeclient.Core, deps providers.Deps) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if core == nil && len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("k8s-labels: %w", ErrNoCluster)
	}
	deps = deps.WithDefaults()
	p := &Provider{cfg: cfg, core: core, log: deps.Logger}
	for _, s := range cfg.Nodes {
		p.static = append(p.static, s.object())
	}
	return p, nil
}

// object turns a static node into a Node.
func (s StaticNode) object() corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: s.Labels, Annotations: s.Annotations}}
	n.Spec.ProviderID = s.ProviderID
	if s.GPUs > 0 {
		n.Status.Capacity = corev1.ResourceList{GPUResource: *resource.NewQuantity(int64(s.GPUs), resource.DecimalSI)}
	}
	return n
}

// Discover lists the Nodes and places each requested one (every listed
// Node, with no request) by its labels. A requested node that no Node
// matches (by name, kubernetes.io/hostname, or instance ID) is kept,
// unplaced. A label that does not parse or contradicts another is an
// error naming the node and the key.
func (p *Provider) Discover(ctx context.Context, req providers.Request) (*topology.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("k8s-labels: %w", err)
	}
	nodes, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	b := topology.NewBuilder()
	b.Grow(len(nodes))
	k := newConsistency()
	var errs []error
	for _, sel := range selectNodes(nodes, req) {
		if sel.node == nil {
			b.AddNode(topology.Node{Name: sel.name, InstanceID: sel.ref.InstanceID, Region: sel.ref.Region})
			continue
		}
		in := kubeclient.InstanceOf(sel.node)
		b.AddNode(topology.Node{Name: sel.name, InstanceID: in.InstanceID, Region: in.Region, Zone: in.Zone, GPUs: gpus(sel.node)})
		pl, err := p.cfg.place(sel.node)
		if err == nil {
			err = k.check(sel.name, pl)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(pl.path) > 0 {
			path := make([]topology.SwitchInfo, len(pl.path))
			for i, t := range pl.path {
				path[i] = t.info
			}
			b.AddPath(sel.name, path)
		}
		if pl.domain != "" {
			b.AddToDomain(sel.name, pl.domain, pl.sub)
		}
	}
	if len(errs) > 0 {
		if len(errs) > maxReported {
			errs = append(errs[:maxReported], fmt.Errorf("and %d more nodes", len(errs)-maxReported))
		}
		return nil, fmt.Errorf("k8s-labels: %w", errors.Join(errs...))
	}
	g, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("k8s-labels: build graph: %w", err)
	}
	return g, nil
}

func gpus(n *corev1.Node) int {
	if q, ok := n.Status.Capacity[GPUResource]; ok {
		return int(q.Value())
	}
	return 0
}

// list returns the static nodes, or every Node matching the selector,
// page by page.
func (p *Provider) list(ctx context.Context) ([]corev1.Node, error) {
	if len(p.static) > 0 {
		return p.static, nil
	}
	opts := metav1.ListOptions{LabelSelector: p.cfg.NodeSelector, Limit: p.cfg.PageSize}
	var out []corev1.Node
	for {
		list, err := p.core.Nodes().List(ctx, opts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("k8s-labels: list nodes: %w", ctx.Err())
			}
			return nil, fmt.Errorf("k8s-labels: list nodes: %w", providers.ClassifyKube(err))
		}
		out = append(out, list.Items...)
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// selected is a node of the graph and the Node it was matched to (nil
// when none).
type selected struct {
	name string
	ref  providers.NodeRef
	node *corev1.Node
}

// selectNodes matches the request to the Nodes: by name, then by the
// kubernetes.io/hostname label, then by instance ID. With no request,
// every Node is selected under its own name.
func selectNodes(nodes []corev1.Node, req providers.Request) []selected {
	if len(req.Nodes) == 0 {
		out := make([]selected, len(nodes))
		for i := range nodes {
			out[i] = selected{name: nodes[i].Name, node: &nodes[i]}
		}
		return out
	}
	byName := make(map[string]*corev1.Node, len(nodes))
	byHost := map[string]*corev1.Node{}
	byInstance := map[string]*corev1.Node{}
	dup := map[string]bool{}
	for i := range nodes {
		n := &nodes[i]
		byName[n.Name] = n
		if h := n.Labels[keys.Hostname]; h != "" {
			byHost[h] = n
		}
		if id := kubeclient.InstanceOf(n).InstanceID; id != "" {
			if _, ok := byInstance[id]; ok {
				dup[id] = true
			}
			byInstance[id] = n
		}
	}
	for id := range dup {
		delete(byInstance, id) // ambiguous: match by name only
	}
	out := make([]selected, 0, len(req.Nodes))
	for _, ref := range req.Nodes {
		s := selected{name: ref.Name, ref: ref}
		if n, ok := byName[ref.Name]; ok {
			s.node = n
		} else if n, ok := byHost[ref.Name]; ok {
			s.node = n
		} else if n, ok := byInstance[ref.InstanceID]; ok && ref.InstanceID != "" {
			if in := kubeclient.InstanceOf(n); ref.Region == "" || in.Region == "" || ref.Region == in.Region {
				s.node = n
			}
		}
		out = append(out, s)
	}
	return out
}

// NewFactory describes the k8s-labels provider to the registry, with
// the Node keys it reads (WatchKeys).
func NewFactory() providers.Factory {
	f := providers.NewFactory(Name, "switch tree and NVLink domains from Kubernetes Node labels (nvidia.com/gpu.clique, GKE, EKS and Crusoe topology labels, custom keys)",
		exampleParams, DefaultConfig(), func(c Config, d providers.Deps) (*Provider, error) {
			var core *kubeclient.Core
			if len(c.Nodes) == 0 {
				clients, err := c.Clients()
				if err != nil {
					return nil, fmt.Errorf("k8s-labels: %w", err)
				}
				core = clients.Core
			}
			return New(c, core, d)
		})
	f.WatchKeys = WatchKeys()
	return f
}

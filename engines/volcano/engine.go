// Package volcano is the engine that feeds the Volcano scheduler's
// network-topology-aware scheduling: one HyperNode
// (topology.volcano.sh/v1alpha1, cluster-scoped) per switch of the graph
// that has a node below it, and one per accelerator (NVLink) domain under
// each leaf switch. When the graph has accelerator domains they are tier
// 1 (tierName "accelerator-domain") and list their nodes; leaf switches
// are then tier 2 and list their domains' HyperNodes and the nodes in no
// domain. Without domains leaf switches are tier 1. A higher switch is one
// tier above its highest child and lists the child HyperNodes. A switch's
// tierName is "tier-N", N counting switch levels from 0 at the leaves, as
// the toposcope tier-N node labels do. Objects carry the managed-by label
// and the switch's (or domain's) provider ID; only differing ones are
// written, and the engine's own HyperNodes gone from the graph are
// deleted.
package volcano

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

// Name is the engine's name in configuration files and on the CLI.
const Name = "volcano"

// Resource is the HyperNode resource.
var Resource = schema.GroupVersionResource{Group: "topology.volcano.sh", Version: "v1alpha1", Resource: "hypernodes"}

// Compile-time checks that Engine implements the engine interfaces.
var (
	_ engines.Engine   = (*Engine)(nil)
	_ engines.Renderer = (*Engine)(nil)
	_ kube.Applier     = (*Engine)(nil)
)

// Engine writes HyperNode objects: Publish (kube.Publishing) applies them,
// prints the changes it would make (dry-run) or prints the objects without
// contacting a cluster (print). It is safe for concurrent use.
type Engine struct {
	kube.Publishing
	cfg  Config
	core *kubeclient.Core
	dyn  dynamic.Interface
	deps engines.Deps
}

// New validates cfg and returns an Engine writing through the clients,
// which may be nil only in kube.ModePrint.
func New(cfg Config, clients kubeclient.Clients, deps engines.Deps) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := kube.RequireClients(Name, cfg.Mode, clients.Core, clients.Dynamic); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, core: clients.Core, dyn: clients.Dynamic, deps: deps.WithDefaults()}
	e.Publishing = kube.NewPublishing(Name, cfg.Mode, e, deps)
	return e, nil
}

// NewFactory returns the registry entry of the engine.
func NewFactory() engines.Factory {
	return kube.NewFactory(Name, "Volcano: a HyperNode per switch and per NVLink domain under a leaf, tiers from the tree (domains tier 1, else leaf switches)", DefaultConfig,
		func(cfg Config, clients kubeclient.Clients, deps engines.Deps) (engines.Engine, error) {
			return New(cfg, clients, deps)
		})
}

// Apply lists the nodes once, then converges the HyperNodes: members are
// the Kubernetes nodes the graph places under a switch or in an
// accelerator domain; nodes it does neither for are refused (and are in
// no HyperNode). With opts.DryRun nothing
// is written; opts.Guard sees the plan first.
func (e *Engine) Apply(ctx context.Context, g *topology.Graph, opts kube.ApplyOptions) (*kube.Result, error) {
	if e.core == nil {
		return nil, fmt.Errorf("%s: no Kubernetes client (mode print)", Name)
	}
	res := &kube.Result{Engine: Name, DryRun: opts.DryRun}
	names := map[string]string{} // graph node -> Kubernetes node
	_, err := kube.PlacedNodes(ctx, e.core, e.cfg.NodeSelector, e.cfg.PageSize, g, res, func(k *corev1.Node, n *topology.Node) bool {
		if n.Leaf == "" && n.Domain == "" {
			return false
		}
		names[n.Name] = k.Name
		return true
	})
	if err != nil {
		return res, fmt.Errorf("%s: %w", Name, err)
	}
	want, warnings := e.hyperNodes(g, func(n *topology.Node) string { return names[n.Name] })
	res.Warnings = append(res.Warnings, warnings...)
	objs := kube.Objects{Dyn: e.dyn, Resource: Resource, Kind: "HyperNode", Prune: true, PageSize: e.cfg.PageSize,
		Owns: func(name string) bool { return strings.HasPrefix(name, e.cfg.Prefix) }}
	if err := objs.Converge(ctx, g, want, res, opts); err != nil {
		return res, fmt.Errorf("%s: %w", Name, err)
	}
	return res, nil
}

// Render returns a List of the HyperNodes, their members named as in the
// graph. It contacts no cluster.
func (e *Engine) Render(ctx context.Context, g *topology.Graph) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	objs, _ := e.hyperNodes(g, func(n *topology.Node) string { return n.Name })
	out, err := kube.RenderList(fmt.Sprintf("HyperNode objects written by toposcope %s: %d HyperNodes, %d nodes.", Name, len(objs), len(g.Nodes())), objs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return out, nil
}

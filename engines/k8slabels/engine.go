// Package k8slabels is the engine that labels every Kubernetes node with
// its fabric path and accelerator domain:
//
//	topology.toposcope.io/tier-0                  the switch closest to the node
//	topology.toposcope.io/tier-1 … tier-N         the switches above it
//	topology.toposcope.io/accelerator-domain      its NVLink domain
//	topology.toposcope.io/accelerator-subdomain   its sub-domain (rack)
//
// or, with preset topograph-v1, Topograph v1.0's keys, or custom keys.
//
// Writes are minimal: one paged LIST of the nodes, then one JSON merge
// patch per node whose managed labels differ; stale managed labels are
// removed, labels the engine does not manage are never touched, and a
// second run with nothing changed sends no write at all. Only nodes the
// graph places are written, so a partial discovery strips nothing; a
// kube.Guard passed to Apply can refuse a plan before anything is sent.
// See docs/kubernetes.md.
package k8slabels

import (
	"context"
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"strings"

	sigyaml "sigs.k8s.io/yaml"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

// Name is the engine's name in configuration files and on the CLI.
const Name = "k8s-labels"

// Compile-time checks that Engine implements the engine interfaces.
var (
	_ engines.Engine           = (*Engine)(nil)
	_ engines.Renderer         = (*Engine)(nil)
	_ engines.CoverageReporter = (*Engine)(nil)
	_ kube.Applier             = (*Engine)(nil)
)

// Engine writes node labels: Publish (kube.Publishing) applies them, prints
// the changes it would make (dry-run) or prints the labels of every graph
// node without contacting a cluster (print). It is safe for concurrent use.
type Engine struct {
	kube.Publishing
	cfg  Config
	keys kube.LabelKeys
	core *kubeclient.Core
	deps engines.Deps
}

// New validates cfg and returns an Engine that writes through core, which
// may be nil only in kube.ModePrint.
func New(cfg Config, core *kubeclient.Core, deps engines.Deps) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := kube.RequireClients(Name, cfg.Mode, core); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, keys: cfg.Keys(), core: core, deps: deps.WithDefaults()}
	e.Publishing = kube.NewPublishing(Name, cfg.Mode, e, deps)
	return e, nil
}

// NewFactory returns the registry entry of the engine. The client is
// built from the params' kubeconfig (or $KUBECONFIG, or the in-cluster
// service account) unless mode is print.
func NewFactory() engines.Factory {
	return kube.NewFactory(Name, "Kubernetes node labels: fabric tiers and accelerator domain (toposcope or Topograph v1 keys), minimal patches", DefaultConfig,
		func(cfg Config, clients kubeclient.Clients, deps engines.Deps) (engines.Engine, error) {
			return New(cfg, clients.Core, deps)
		})
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// desired returns the labels and annotations of a graph node, and false
// for a node the engine must leave alone.
func (e *Engine) desired(g *topology.Graph) func(n *topology.Node) (map[string]string, map[string]string, bool) {
	return func(n *topology.Node) (map[string]string, map[string]string, bool) {
		if n.Leaf == "" && n.Domain == "" && !e.cfg.StripUnplaced {
			return nil, nil, false
		}
		l, a := e.keys.NodeLabels(g, n)
		return l, a, true
	}
}

// Apply lists the nodes once and patches those whose managed labels or
// annotations differ from what g implies. With opts.DryRun nothing is
// written; opts.Guard sees the plan first and may refuse it (then nothing
// is written either).
func (e *Engine) Apply(ctx context.Context, g *topology.Graph, opts kube.ApplyOptions) (*kube.Result, error) {
	if e.core == nil {
		return nil, fmt.Errorf("%s: no Kubernetes client (mode print)", Name)
	}
	res := &kube.Result{Engine: Name}
	w := kube.NodeWriter{Core: e.core, Selector: e.cfg.NodeSelector, PageSize: e.cfg.PageSize, Concurrency: e.cfg.Concurrency, Logger: e.deps.Logger}
	spec := kube.NodeSpec{Desired: e.desired(g), ManagedLabel: e.keys.Managed, ManagedAnnotation: e.keys.Managed}
	if src := e.cfg.DomainSourceLabel; src != "" {
		spec.OmitLabel = func(k *corev1.Node, key string) bool {
			return (key == e.keys.Domain || key == e.keys.SubDomain) && strings.TrimSpace(k.Labels[src]) != ""
		}
	}
	if err := w.Sync(ctx, g, spec, opts, res); err != nil {
		return res, err
	}
	return res, nil
}

// Render returns, as a Kubernetes List of partial Node objects, the
// managed labels and annotations of every node the graph places, named as
// in the graph. It contacts no cluster.
func (e *Engine) Render(ctx context.Context, g *topology.Graph) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	want := e.desired(g)
	items := make([]any, 0, len(g.Nodes()))
	for i := range g.Nodes() {
		n := &g.Nodes()[i]
		l, a, ok := want(n)
		if !ok {
			continue
		}
		meta := map[string]any{"name": n.Name, "labels": l}
		if len(a) > 0 {
			meta["annotations"] = a
		}
		items = append(items, map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": meta})
	}
	doc, err := sigyaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	head := fmt.Sprintf("# Node labels written by toposcope %s (preset %s): %d of %d nodes.\n", Name, e.cfg.Preset, len(items), len(g.Nodes()))
	return append([]byte(head), doc...), nil
}

// Coverage reports the nodes that get no tier labels (under no switch) and
// those left alone (placed nowhere). Kueue and KAI leave a node without
// every level's label out of topology-aware scheduling.
func (e *Engine) Coverage(g *topology.Graph) engines.Coverage {
	if e.keys.Tiers(g.Depth()) == 0 {
		return engines.Coverage{}
	}
	un := g.NodesWithoutSwitch()
	if len(un) == 0 {
		return engines.Coverage{}
	}
	return engines.Coverage{Uncovered: un, Reason: "under no switch: no tier labels (unplaced nodes keep the labels they have)"}
}

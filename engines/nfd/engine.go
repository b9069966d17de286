// Package nfd is the engine that feeds Node Feature Discovery: one
// NodeFeature object (nfd.k8s-sigs.io/v1alpha1) per placed node, in NFD's
// namespace, holding the node's switch path and NVLink domain as the
// attribute feature set "toposcope.network" (elements tier-0 ... tier-N,
// accelerator-domain, accelerator-subdomain), so that NodeFeatureRules
// can select on them, and a NodeFeatureGroup per switch and domain that
// selects its nodes; with labels on, spec.labels also asks nfd-master
// for the topology labels. Each NodeFeature is owned by its Node
// (garbage-collected with it), labelled nfd.node.kubernetes.io/node-name,
// and written only where it differs; nodes the graph holds but does not
// place keep their object; with cleanup, the objects of nodes that left
// the graph, and of switches and domains that are gone, are deleted.
package nfd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

// Name is the engine's name in configuration files and on the CLI.
const Name = "nfd"

// FeatureSet is the name of the attribute feature set written.
const FeatureSet = "toposcope.network"

// NodeNameLabel is the label by which nfd-master finds a NodeFeature's
// node.
const NodeNameLabel = "nfd.node.kubernetes.io/node-name"

// Resource is the NodeFeature resource.
var Resource = schema.GroupVersionResource{Group: "nfd.k8s-sigs.io", Version: "v1alpha1", Resource: "nodefeatures"}

// Compile-time checks that Engine implements the engine interfaces.
var (
	_ engines.Engine   = (*Engine)(nil)
	_ engines.Renderer = (*Engine)(nil)
	_ kube.Applier     = (*Engine)(nil)
)

// Engine writes NodeFeature objects: Publish (kube.Publishing) applies
// them, prints the changes it would make (dry-run) or prints the objects
// without contacting a cluster (print). It is safe for concurrent use.
type Engine struct {
	kube.Publishing
	cfg  Config
	keys kube.LabelKeys
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
	e := &Engine{cfg: cfg, keys: cfg.Keys(), core: clients.Core, dyn: clients.Dynamic, deps: deps.WithDefaults()}
	e.Publishing = kube.NewPublishing(Name, cfg.Mode, e, deps)
	return e, nil
}

// NewFactory returns the registry entry of the engine.
func NewFactory() engines.Factory {
	return kube.NewFactory(Name, "Node Feature Discovery: a NodeFeature per node with its switch path and NVLink domain (and, optionally, labels)", DefaultConfig,
		func(cfg Config, clients kubeclient.Clients, deps engines.Deps) (engines.Engine, error) {
			return New(cfg, clients, deps)
		})
}

// elements are the feature elements of graph node n: its switches
// closest first and its domain; nil when the graph places it nowhere.
func elements(g *topology.Graph, n *topology.Node) map[string]any {
	out := map[string]any{}
	for i, s := range g.Path(n.Name) {
		out["tier-"+strconv.Itoa(i)] = s.ID
	}
	if n.Domain != "" {
		out["accelerator-domain"] = n.Domain
	}
	if n.SubDomain != "" {
		out["accelerator-subdomain"] = n.SubDomain
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sourced is n with, when domainSourceLabel is set and Kubernetes node k
// carries it, that label's value as its domain and no sub-domain
// (Topograph's acceleratorDomainSourceLabel on its nfd engine).
func (e *Engine) sourced(k *corev1.Node, n *topology.Node) *topology.Node {
	if e.cfg.DomainSourceLabel == "" {
		return n
	}
	v := strings.TrimSpace(k.Labels[e.cfg.DomainSourceLabel])
	if v == "" {
		return n
	}
	m := *n
	m.Domain, m.SubDomain = v, ""
	return &m
}

// object is the NodeFeature of graph node n, owned by the Kubernetes
// node of that uid when uid is set; nil when the graph places n nowhere.
func (e *Engine) object(g *topology.Graph, n *topology.Node, k string, uid types.UID) *unstructured.Unstructured {
	el := elements(g, n)
	if el == nil {
		return nil
	}
	spec := map[string]any{"features": map[string]any{"attributes": map[string]any{FeatureSet: map[string]any{"elements": el}}}}
	if e.cfg.Labels {
		labels, _ := e.keys.NodeLabels(g, n)
		ls := make(map[string]any, len(labels))
		for lk, lv := range labels {
			ls[lk] = lv
		}
		spec["labels"] = ls
	}
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Resource.Group + "/" + Resource.Version, "kind": "NodeFeature", "spec": spec,
	}}
	o.SetName(objectPrefix + k)
	o.SetNamespace(e.cfg.Namespace)
	o.SetLabels(map[string]string{NodeNameLabel: k, keys.ManagedBy: kubeclient.FieldManager})
	if uid != "" {
		o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: k, UID: uid}})
	}
	return o
}

// Apply lists the nodes once, then creates or updates the NodeFeature of
// each node the graph places, where it differs, and (with Groups) a
// NodeFeatureGroup per switch and domain of those nodes. Nodes the graph
// does not place are refused and keep their object; with Cleanup, the
// objects of nodes the graph no longer holds, and groups no longer
// wanted, are deleted. A graph that places none of the selected nodes
// changes nothing (ErrRefused). With opts.DryRun nothing is written;
// opts.Guard sees the whole plan first.
func (e *Engine) Apply(ctx context.Context, g *topology.Graph, opts kube.ApplyOptions) (*kube.Result, error) {
	if e.core == nil {
		return nil, fmt.Errorf("%s: no Kubernetes client (mode print)", Name)
	}
	res := &kube.Result{Engine: Name, DryRun: opts.DryRun}
	var want []*unstructured.Unstructured
	known := map[string]bool{}            // Kubernetes nodes the graph holds
	placed := map[string]*topology.Node{} // graph nodes written, as written
	_, err := kube.PlacedNodes(ctx, e.core, e.cfg.NodeSelector, e.cfg.PageSize, g, res, func(k *corev1.Node, n *topology.Node) bool {
		known[k.Name] = true
		n = e.sourced(k, n)
		o := e.object(g, n, k.Name, k.UID)
		if o == nil {
			return false
		}
		want = append(want, o)
		placed[n.Name] = n
		return true
	})
	if err != nil {
		return res, fmt.Errorf("%s: %w", Name, err)
	}
	if len(want) == 0 && e.cfg.Cleanup {
		return res, fmt.Errorf("%s: %w: the graph places none of the selected nodes; the existing objects are kept", Name, kube.ErrRefused)
	}
	features := kube.Objects{Dyn: e.dyn, Resource: Resource, Kind: "NodeFeature", Namespace: e.cfg.Namespace, PageSize: e.cfg.PageSize,
		Prune: e.cfg.Cleanup, Owns: func(name string) bool { // the object of a node the graph no longer holds
			node, ok := strings.CutPrefix(name, objectPrefix)
			return ok && !known[node]
		}}
	plans := make([]*kube.ObjectPlan, 0, 2)
	fp, err := features.Plan(ctx, want, res)
	if err != nil {
		return res, fmt.Errorf("%s: %w", Name, err)
	}
	plans = append(plans, fp)
	if e.cfg.Groups {
		groups := kube.Objects{Dyn: e.dyn, Resource: GroupResource, Kind: "NodeFeatureGroup", Namespace: e.cfg.Namespace, PageSize: e.cfg.PageSize,
			Prune: e.cfg.Cleanup, Owns: func(name string) bool { return strings.HasPrefix(name, objectPrefix) }}
		gp, err := groups.Plan(ctx, e.groups(g, placed), res)
		if err != nil {
			return res, fmt.Errorf("%s: %w", Name, err)
		}
		plans = append(plans, gp)
	}
	if err := kube.CheckGuard(ctx, g, res, opts); err != nil {
		return res, err
	}
	if opts.DryRun {
		return res, nil
	}
	for _, p := range plans {
		if err := p.Write(ctx, res); err != nil {
			return res, fmt.Errorf("%s: %w", Name, err)
		}
	}
	return res, nil
}

// Render returns a List of the NodeFeature of every node the graph
// places, named after the graph's nodes, without owners. It contacts no
// cluster.
func (e *Engine) Render(ctx context.Context, g *topology.Graph) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	placed := map[string]*topology.Node{}
	for i := range g.Nodes() {
		n := &g.Nodes()[i]
		if o := e.object(g, n, n.Name, ""); o != nil {
			objs = append(objs, o)
			placed[n.Name] = n
		}
	}
	nodes := len(objs)
	if e.cfg.Groups {
		objs = append(objs, e.groups(g, placed)...)
	}
	out, err := kube.RenderList(fmt.Sprintf("NodeFeature objects written by toposcope %s: %d of %d nodes; %d NodeFeatureGroups.", Name, nodes, len(g.Nodes()), len(objs)-nodes), objs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return out, nil
}

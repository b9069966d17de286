// Package volcano is the engine that feeds the Volcano scheduler's
// network-topology-aware scheduling: one HyperNode
// (topology.volcano.sh/v1alpha1, cluster-scoped) per switch of the graph
// that has a node below it. A leaf switch's HyperNode is tier 1 and
// lists its nodes (members of type Node); a higher switch's is one tier
// above its highest child and lists the child HyperNodes (type
// HyperNode). Objects carry the managed-by label and the switch's
// provider ID; only differing ones are written, and the engine's own
// HyperNodes of switches gone from the graph are deleted.
package volcano

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
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
	core kubernetes.Interface
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
	return kube.NewFactory(Name, "Volcano: a HyperNode per switch, tiers from the switch tree (leaf switches are tier 1)", DefaultConfig,
		func(cfg Config, clients kubeclient.Clients, deps engines.Deps) (engines.Engine, error) {
			return New(cfg, clients, deps)
		})
}

// objectName is the HyperNode name of a switch: the prefix and the
// switch's safe name, lowercased, with a hash of the ID when that changed
// it (at most MaxNameLen + 9 characters after the prefix).
func (e *Engine) objectName(s *topology.Switch) string {
	n := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, s.Name)
	n = strings.Trim(n, "-.")
	if n != s.Name || n == "" {
		sum := sha256.Sum256([]byte(s.ID))
		n = strings.Trim(n+"-"+hex.EncodeToString(sum[:4]), "-")
	}
	return e.cfg.Prefix + n
}

// hyperNodes returns the HyperNodes of g, leaves first; member maps a
// graph node to its Kubernetes node name ("" leaves it out).
func (e *Engine) hyperNodes(g *topology.Graph, member func(n *topology.Node) string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	var visit func(s *topology.Switch) (string, int)
	visit = func(s *topology.Switch) (string, int) {
		var members []any
		tier := 1
		for _, id := range s.Children {
			c, ok := g.Switch(id)
			if !ok {
				continue
			}
			if name, t := visit(c); t > 0 {
				members = append(members, map[string]any{"type": "HyperNode", "selector": map[string]any{"exactMatch": map[string]any{"name": name}}})
				tier = max(tier, t+1)
			}
		}
		for _, nn := range s.Nodes {
			n, ok := g.Node(nn)
			if !ok {
				continue
			}
			if k := member(n); k != "" {
				members = append(members, map[string]any{"type": "Node", "selector": map[string]any{"exactMatch": map[string]any{"name": k}}})
			}
		}
		if len(members) == 0 {
			return "", 0
		}
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": Resource.Group + "/" + Resource.Version, "kind": "HyperNode",
			"spec": map[string]any{"tier": int64(tier), "members": members},
		}}
		name := e.objectName(s)
		o.SetName(name)
		o.SetLabels(map[string]string{keys.ManagedBy: kubeclient.FieldManager})
		o.SetAnnotations(map[string]string{keys.SwitchID: s.ID})
		out = append(out, o)
		return name, tier
	}
	for _, r := range g.Roots() {
		visit(r)
	}
	return out
}

// Apply lists the nodes once, then converges the HyperNodes: members are
// the Kubernetes nodes the graph places under a switch; nodes it does not
// place are refused (and are in no HyperNode). With opts.DryRun nothing
// is written; opts.Guard sees the plan first.
func (e *Engine) Apply(ctx context.Context, g *topology.Graph, opts kube.ApplyOptions) (*kube.Result, error) {
	if e.core == nil {
		return nil, fmt.Errorf("%s: no Kubernetes client (mode print)", Name)
	}
	res := &kube.Result{Engine: Name, DryRun: opts.DryRun}
	names := map[string]string{} // graph node -> Kubernetes node
	_, err := kube.PlacedNodes(ctx, e.core, e.cfg.NodeSelector, e.cfg.PageSize, g, res, func(k *corev1.Node, n *topology.Node) bool {
		if n.Leaf == "" {
			return false
		}
		names[n.Name] = k.Name
		return true
	})
	if err != nil {
		return res, fmt.Errorf("%s: %w", Name, err)
	}
	want := e.hyperNodes(g, func(n *topology.Node) string { return names[n.Name] })
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
	objs := e.hyperNodes(g, func(n *topology.Node) string { return n.Name })
	out, err := kube.RenderList(fmt.Sprintf("HyperNode objects written by toposcope %s: %d switches, %d nodes.", Name, len(objs), len(g.Nodes())), objs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return out, nil
}

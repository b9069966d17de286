// Package slinky is the engine that feeds SchedMD's slurm-operator
// (Slinky): it writes the Slurm topology file (topology.yaml, or
// topology.conf for topology/tree or topology/block; rendered by the slurm
// engine) into a dedicated ConfigMap, annotated with its generation,
// content hash and source snapshot, and sets the node annotation
// topology.slinky.slurm.net/spec to each node's Slurm dynamic topology
// string (e.g. "default:core:spine1:leaf02,block:nvl02") where it
// differs. In the file each node is named by the Slurm names of the
// slurmd pods on it (podSelector), as slurmctld knows them; a node with no
// slurmd pod is left out and reported. It refuses the operator-owned
// <controller>-config ConfigMap.
// See docs/kubernetes.md.
package slinky

import (
	"bytes"
	"context"
	"fmt"

	sigyaml "sigs.k8s.io/yaml"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/slurm"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

// Name is the engine's name in configuration files and on the CLI.
const Name = "slinky"

// Compile-time checks that Engine implements the engine interfaces.
var (
	_ engines.Engine           = (*Engine)(nil)
	_ engines.Renderer         = (*Engine)(nil)
	_ engines.CoverageReporter = (*Engine)(nil)
	_ kube.Applier             = (*Engine)(nil)
)

// Engine writes the Slinky ConfigMap and node annotations: Publish
// (kube.Publishing) applies them, prints the changes it would make
// (dry-run) or prints the ConfigMap and annotations without contacting a
// cluster (print). It is safe for concurrent use.
type Engine struct {
	kube.Publishing
	cfg   Config
	slurm *slurm.Engine
	core  *kubeclient.Core
	deps  engines.Deps
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
	deps = deps.WithDefaults()
	se, err := slurm.New(cfg.Slurm, engines.Deps{Logger: deps.Logger, Now: deps.Now})
	if err != nil {
		return nil, kube.PrefixFields("slurm", err)
	}
	e := &Engine{cfg: cfg, slurm: se, core: core, deps: deps}
	e.Publishing = kube.NewPublishing(Name, cfg.Mode, e, deps)
	return e, nil
}

// NewFactory returns the registry entry of the engine.
func NewFactory() engines.Factory {
	return kube.NewFactory(Name, "Slinky slurm-operator: Slurm topology file in a dedicated ConfigMap, topology.slinky.slurm.net/spec node annotations", DefaultConfig,
		func(cfg Config, clients kubeclient.Clients, deps engines.Deps) (engines.Engine, error) {
			return New(cfg, clients.Core, deps)
		})
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Apply renders the topology file (its nodes named by the slurmd pods
// on them, see slurmGraph), then creates or updates the ConfigMap
// when its content differs, then patches the annotation of each node
// whose topology string differs; with opts.DryRun nothing is written. The
// ConfigMap goes first: a node's units must exist in slurmctld before the
// node names them. opts.Guard sees the whole plan before any write.
func (e *Engine) Apply(ctx context.Context, g *topology.Graph, opts kube.ApplyOptions) (*kube.Result, error) {
	if e.core == nil {
		return nil, fmt.Errorf("%s: no Kubernetes client (mode print)", Name)
	}
	res := &kube.Result{Engine: Name, DryRun: opts.DryRun}
	fg := g
	if e.cfg.ConfigUpdateMode == UpdateFull {
		var err error
		if fg, err = e.slurmGraph(ctx, g, res); err != nil {
			return res, fmt.Errorf("%s: %w", Name, err)
		}
	}
	data, err := e.fileData(ctx, fg)
	if err != nil {
		return res, err
	}
	snapshot := opts.Snapshot
	if snapshot == "" {
		snapshot = graphSnapshot(g)
	}
	var cm cmPlan
	if data != nil {
		if cm, err = e.planConfigMap(ctx, data, snapshot, res); err != nil {
			return res, err
		}
	}
	var nodes *kube.NodePlan
	if e.cfg.NodeAnnotations {
		specs, err := e.nodeSpecs(ctx, g)
		if err != nil {
			return res, fmt.Errorf("%s: %w", Name, err)
		}
		w := kube.NodeWriter{Core: e.core, Selector: e.cfg.NodeSelector, PageSize: e.cfg.PageSize, Concurrency: e.cfg.Concurrency, Logger: e.deps.Logger}
		if nodes, err = w.Plan(ctx, g, nodeSpec(specs), res); err != nil {
			return res, err
		}
	}
	if err := kube.CheckGuard(ctx, g, res, opts); err != nil {
		return res, err
	}
	if opts.DryRun {
		return res, nil
	}
	if data != nil {
		if err := cm.write(ctx, e); err != nil {
			res.Changed = 0
			return res, err
		}
	}
	if nodes != nil {
		if err := nodes.Write(ctx, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// nodeSpec manages the one annotation. A node without a topology string
// is left alone: its annotation, if any, stays.
func nodeSpec(specs map[string]string) kube.NodeSpec {
	return kube.NodeSpec{
		Desired: func(n *topology.Node) (map[string]string, map[string]string, bool) {
			s, ok := specs[n.Name]
			if !ok {
				return nil, nil, false
			}
			return nil, map[string]string{AnnotationSpec: s}, true
		},
	}
}

// Render returns the ConfigMap (generation 1) and, when node annotations
// are on, a List of partial Nodes with their annotation, as a two-document
// YAML stream. It contacts no cluster, so the file names the nodes as the
// graph does, not by their slurmd pods.
func (e *Engine) Render(ctx context.Context, g *topology.Graph) ([]byte, error) {
	data, err := e.fileData(ctx, g)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if data != nil {
		cm, err := sigyaml.Marshal(e.desiredConfigMap(data, 1, graphSnapshot(g)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		buf.WriteString("# Written by toposcope slinky: list this ConfigMap in the Controller's spec.configFileRefs.\n")
		buf.Write(cm)
	}
	if !e.cfg.NodeAnnotations {
		return buf.Bytes(), nil
	}
	specs, err := e.nodeSpecs(ctx, g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	items := make([]any, 0, len(specs))
	for _, n := range g.Nodes() {
		if s, ok := specs[n.Name]; ok {
			items = append(items, map[string]any{"apiVersion": "v1", "kind": "Node",
				"metadata": map[string]any{"name": n.Name, "annotations": map[string]string{AnnotationSpec: s}}})
		}
	}
	nodes, err := sigyaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if data != nil {
		buf.WriteString("---\n")
	}
	buf.Write(nodes)
	return buf.Bytes(), nil
}

// fileData is the content of the ConfigMap's topology file after
// configUpdateMode: the slurm engine's document, its skeleton, or nil
// for none.
func (e *Engine) fileData(ctx context.Context, g *topology.Graph) ([]byte, error) {
	if e.cfg.ConfigUpdateMode == UpdateNone {
		return nil, nil
	}
	data, err := e.slurm.Render(ctx, g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if e.cfg.ConfigUpdateMode == UpdateSkeleton {
		if data, err = skeleton(data, e.cfg.Slurm.Plugin); err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
	}
	return data, nil
}

// Coverage is the slurm engine's: the nodes the topology file leaves out.
func (e *Engine) Coverage(g *topology.Graph) engines.Coverage { return e.slurm.Coverage(g) }

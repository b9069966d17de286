// Package kueuebudgets is the kueue-budgets engine: it makes the
// placement budgets tree Kueue's own fair sharing. Every account with
// children becomes a Cohort (kueue.x-k8s.io/v1beta2, hierarchical:
// spec.parentName is its parent's Cohort, the top-level accounts' parent
// is the root Cohort), every leaf account a ClusterQueue in its parent's
// Cohort; both carry spec.fairSharing.weight = the account's shares. A
// ClusterQueue's nominal quota of the resource (nvidia.com/gpu) is its
// normalized share of the graph's GPUs, rounded by largest remainder;
// it may borrow the rest of the cluster when idle, and reclaims its
// nominal quota by preemption (reclaimWithinCohort: Any). Objects carry
// the managed-by label; those of accounts gone from the tree are
// deleted, and a plan that deletes more than the service's shrinkGuard
// of them is refused until accepted. See docs/kubernetes.md.
package kueuebudgets

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/topology"
)

// Name is the engine's name in configuration files and on the CLI.
const Name = "kueue-budgets"

// The API the engine writes: Kueue v1beta2 (v0.15 and later).
const (
	Group   = "kueue.x-k8s.io"
	Version = "v1beta2"
)

// The resources written, and the ResourceFlavor read.
var (
	CohortResource       = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "cohorts"}
	ClusterQueueResource = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "clusterqueues"}
	FlavorResource       = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "resourceflavors"}
)

// Compile-time checks that Engine implements the engine interfaces.
var (
	_ engines.BudgetsPublisher     = (*Engine)(nil)
	_ kube.GuardedBudgetsPublisher = (*Engine)(nil)
)

// Engine writes the Cohorts and ClusterQueues of a budgets tree. It is
// safe for concurrent use.
type Engine struct {
	cfg  Config
	dyn  dynamic.Interface
	deps engines.Deps
}

// New validates cfg and returns an Engine writing through dyn, which may
// be nil only in kube.ModePrint.
func New(cfg Config, dyn dynamic.Interface, deps engines.Deps) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := kube.RequireClients(Name, cfg.Mode, dyn); err != nil {
		return nil, err
	}
	return &Engine{cfg: cfg, dyn: dyn, deps: deps.WithDefaults()}, nil
}

// NewFactory returns the registry entry of the engine.
func NewFactory() engines.Factory {
	return kube.NewFactory(Name, "Kueue fair sharing from the budgets tree: a Cohort per parent account, a ClusterQueue per leaf, weights = shares, GPU quota = share of the cluster", DefaultConfig,
		func(cfg Config, clients kubeclient.Clients, deps engines.Deps) (engines.Engine, error) {
			return New(cfg, clients.Dynamic, deps)
		})
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Publish fails with engines.ErrNoBudgets: the engine publishes the
// budgets tree, which only PublishBudgets gives.
func (e *Engine) Publish(context.Context, *topology.Graph) error {
	return fmt.Errorf("%s: %w (publish it with the budgets: toposcope generate --budgets FILE, or the service's PUT /v1/budgets)", Name, engines.ErrNoBudgets)
}

// PublishBudgets publishes b in the engine's mode, unguarded.
func (e *Engine) PublishBudgets(ctx context.Context, g *topology.Graph, b *engines.Budgets) error {
	return e.PublishBudgetsWith(ctx, g, b, kube.ApplyOptions{})
}

// PublishBudgetsWith implements kube.GuardedBudgetsPublisher.
func (e *Engine) PublishBudgetsWith(ctx context.Context, g *topology.Graph, b *engines.Budgets, opts kube.ApplyOptions) error {
	return kube.Publish(ctx, Name, e.cfg.Mode, bound{e, b}, g, e.deps, opts)
}

// bound is the engine with one budgets tree: the kube.Engine that
// kube.Publish drives.
type bound struct {
	e *Engine
	b *engines.Budgets
}

func (x bound) Render(ctx context.Context, g *topology.Graph) ([]byte, error) {
	return x.e.RenderBudgets(ctx, g, x.b)
}

func (bound) ContentType() string { return "application/yaml" }

func (x bound) Apply(ctx context.Context, g *topology.Graph, opts kube.ApplyOptions) (*kube.Result, error) {
	return x.e.ApplyBudgets(ctx, g, x.b, opts)
}

// RenderBudgets returns a List of the Cohorts and ClusterQueues for b. It
// contacts no cluster.
func (e *Engine) RenderBudgets(ctx context.Context, g *topology.Graph, b *engines.Budgets) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	objs, err := e.build(g, b)
	if err != nil {
		return nil, err
	}
	all := append(append([]*unstructured.Unstructured{}, objs.cohorts...), objs.queues...)
	out, err := kube.RenderList(fmt.Sprintf("Kueue objects written by toposcope %s: %d Cohorts, %d ClusterQueues, %d %s in flavor %s.",
		Name, len(objs.cohorts), len(objs.queues), objs.gpus, e.cfg.Resource, e.cfg.Flavor), all)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return out, nil
}

// ApplyBudgets converges the managed Cohorts and ClusterQueues onto those
// of b: it plans both kinds, lets opts.Guard see the whole plan (with
// Result.Shrink: the managed objects found and those deleted), then
// writes Cohorts before ClusterQueues. With opts.DryRun nothing is
// written.
func (e *Engine) ApplyBudgets(ctx context.Context, g *topology.Graph, b *engines.Budgets, opts kube.ApplyOptions) (*kube.Result, error) {
	if e.dyn == nil {
		return nil, fmt.Errorf("%s: no Kubernetes client (mode print)", Name)
	}
	objs, err := e.build(g, b)
	if err != nil {
		return nil, err
	}
	res := &kube.Result{Engine: Name, DryRun: opts.DryRun}
	if _, err := e.dyn.Resource(FlavorResource).Get(ctx, e.cfg.Flavor, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("ResourceFlavor %s does not exist: Kueue keeps the ClusterQueues inactive (FlavorNotFound) until it is created", e.cfg.Flavor))
	} else if err != nil {
		return res, fmt.Errorf("%s: get ResourceFlavor %s: %w", Name, e.cfg.Flavor, err)
	}
	cohorts := kube.Objects{Dyn: e.dyn, Resource: CohortResource, Kind: "Cohort", Prune: true}
	queues := kube.Objects{Dyn: e.dyn, Resource: ClusterQueueResource, Kind: "ClusterQueue", Prune: true}
	cp, err := cohorts.Plan(ctx, objs.cohorts, res)
	if err != nil {
		return res, fmt.Errorf("%s: %w", Name, err)
	}
	qp, err := queues.Plan(ctx, objs.queues, res)
	if err != nil {
		return res, fmt.Errorf("%s: %w", Name, err)
	}
	res.Shrink = shrinkOf(res)
	if err := kube.CheckGuard(ctx, g, res, opts); err != nil {
		return res, err
	}
	if opts.DryRun {
		return res, nil
	}
	if err := cp.Write(ctx, res); err != nil {
		return res, fmt.Errorf("%s: %w", Name, err)
	}
	if err := qp.Write(ctx, res); err != nil {
		return res, fmt.Errorf("%s: %w", Name, err)
	}
	return res, nil
}

// shrinkOf counts the managed objects the plan found (kept as they are,
// updated or deleted) and those it deletes.
func shrinkOf(res *kube.Result) *kube.Shrink {
	s := &kube.Shrink{Had: res.Unchanged, Kind: "Cohorts and ClusterQueues",
		Accept: "to accept it, PUT the budgets again with ?accept=shrink (or publish them once with toposcope generate --engine " + Name + " --budgets FILE)"}
	for _, c := range res.Changes {
		switch c.Op {
		case "update":
			s.Had++
		case "delete":
			s.Had++
			s.Removed++
		}
	}
	return s
}

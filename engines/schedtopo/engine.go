// Package schedtopo holds the engines that publish scheduler Topology
// objects whose levels name the node labels of the k8s-labels engine,
// coarsest first and ending with kubernetes.io/hostname: `kueue`
// (kueue.x-k8s.io Topology, v1beta2 or v1beta1) and `kai`
// (kai.scheduler/v1alpha1 Topology).
//
// Both schedulers treat levels as immutable. When the fabric's depth (and
// so the levels) changes, the engine does not try to update the object: it
// reports the change as a warning and creates a new object named
// <name>-<hash of the levels>, which workloads (KAI) must then be pointed
// at, or which a new ResourceFlavor must name in place of the old one in
// the ClusterQueues (Kueue refuses to change a flavor's topologyName).
// With ManageFlavors the kueue engine recreates those flavors itself once
// no admitted Workload uses them (flavors.go). See docs/kubernetes.md.
package schedtopo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

// Compile-time checks that Engine implements the engine interfaces.
var (
	_ engines.Engine   = (*Engine)(nil)
	_ engines.Renderer = (*Engine)(nil)
	_ kube.Applier     = (*Engine)(nil)
	_ engines.Settler  = (*Engine)(nil)
)

// labelManagedBy marks the objects toposcope writes.
const labelManagedBy = "app.kubernetes.io/managed-by"

// Engine writes one scheduler's Topology object: Publish (kube.Publishing)
// applies it, prints what it would create (dry-run) or prints the object
// without contacting a cluster (print). It is safe for concurrent use.
type Engine struct {
	kube.Publishing
	cfg   Config
	sched Scheduler
	keys  kube.LabelKeys
	dyn   dynamic.Interface
	deps  engines.Deps
	// waiting is set by a publish that left ResourceFlavors to move.
	waiting atomic.Bool
}

// New validates cfg (which must come from DefaultConfig) and returns an
// Engine that writes through dyn, which may be nil only in kube.ModePrint.
func New(cfg Config, dyn dynamic.Interface, deps engines.Deps) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := kube.RequireClients(cfg.sched.Engine, cfg.Mode, dyn); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, sched: cfg.sched, keys: cfg.Keys(), dyn: dyn, deps: deps.WithDefaults()}
	e.Publishing = kube.NewPublishing(cfg.sched.Engine, cfg.Mode, e, deps)
	return e, nil
}

// NewKueueFactory returns the registry entry of the kueue engine.
func NewKueueFactory() engines.Factory {
	return factory(Kueue, "Kueue Topology (kueue.x-k8s.io v1beta2/v1beta1): levels = the k8s-labels keys, coarse to fine, then kubernetes.io/hostname")
}

// NewKAIFactory returns the registry entry of the kai engine.
func NewKAIFactory() engines.Factory {
	return factory(KAI, "KAI Scheduler Topology (kai.scheduler/v1alpha1): levels = the k8s-labels keys, coarse to fine, then kubernetes.io/hostname")
}

func factory(s Scheduler, summary string) engines.Factory {
	return kube.NewFactory(s.Engine, summary, func() Config { return DefaultConfig(s) },
		func(cfg Config, clients kubeclient.Clients, deps engines.Deps) (engines.Engine, error) {
			return New(cfg, clients.Dynamic, deps)
		})
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Levels returns the node label keys of the Topology for g, coarsest
// first, ending with kubernetes.io/hostname, and warnings about levels
// that do not nest. It fails, wrapping engines.ErrInexpressible, when g
// gives nothing to publish or more than 16 levels.
func (e *Engine) Levels(g *topology.Graph) ([]string, []string, error) {
	var levels, warnings []string
	if e.cfg.FabricLevels {
		for i := e.keys.Tiers(g.Depth()) - 1; i >= 0; i-- {
			k, _ := e.keys.Tier(i)
			levels = append(levels, k)
		}
	}
	if e.cfg.AcceleratorLevels && len(g.Domains()) > 0 {
		levels = append(levels, e.keys.Domain)
		if e.keys.SubDomain != "" && slices.ContainsFunc(g.Domains(), func(d topology.Domain) bool { return len(d.SubDomains) > 0 }) {
			levels = append(levels, e.keys.SubDomain)
		}
		if e.cfg.FabricLevels && len(levels) > 1 {
			if d := domainAcrossLeaves(g); d != "" {
				warnings = append(warnings, fmt.Sprintf("accelerator domain %q spans several leaf switches, so the domain level does not nest under tier-0; publish domains in their own Topology (fabricLevels: false)", d))
			}
		}
	}
	if len(levels) == 0 {
		return nil, nil, fmt.Errorf("%s: the graph has no fabric tier or accelerator domain to publish: %w", e.sched.Engine, engines.ErrInexpressible)
	}
	levels = append(levels, keys.Hostname)
	if len(levels) > maxLevels {
		return nil, nil, fmt.Errorf("%s: %d levels, %s allows at most %d (limit the tiers with tierLabels): %w", e.sched.Engine, len(levels), e.sched, maxLevels, engines.ErrInexpressible)
	}
	return levels, warnings, nil
}

// domainAcrossLeaves returns the first domain whose nodes sit under more
// than one leaf switch.
func domainAcrossLeaves(g *topology.Graph) string {
	for _, d := range g.Domains() {
		leaf := ""
		for _, name := range d.Nodes {
			n, _ := g.Node(name)
			if n.Leaf == "" {
				continue
			}
			if leaf != "" && n.Leaf != leaf {
				return d.ID
			}
			leaf = n.Leaf
		}
	}
	return ""
}

// object is the Topology object with the given name and levels.
func (e *Engine) object(name string, levels []string) *unstructured.Unstructured {
	ls := make([]any, len(levels))
	for i, l := range levels {
		ls[i] = map[string]any{"nodeLabel": l}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": e.sched.Group + "/" + e.cfg.APIVersion,
		"kind":       "Topology",
		"metadata": map[string]any{
			"name":   name,
			"labels": map[string]any{labelManagedBy: kubeclient.FieldManager},
		},
		"spec": map[string]any{"levels": ls},
	}}
}

// levelsOf reads spec.levels[].nodeLabel.
func levelsOf(o *unstructured.Unstructured) []string {
	raw, _, _ := unstructured.NestedSlice(o.Object, "spec", "levels")
	out := make([]string, 0, len(raw))
	for _, l := range raw {
		m, _ := l.(map[string]any)
		s, _ := m["nodeLabel"].(string)
		out = append(out, s)
	}
	return out
}

// altName is the object name used when the configured one holds other
// (immutable) levels: <name>-<16 hex digits of the levels' hash>.
func altName(name string, levels []string) string {
	sum := sha256.Sum256([]byte(strings.Join(levels, "\n")))
	return name + "-" + hex.EncodeToString(sum[:8])
}

// Apply creates the Topology object when it is missing and leaves it when
// its levels are already right. When an object of that name holds other
// levels (which are immutable), it warns and creates <name>-<hash> with
// the new levels instead, so nothing fails silently. With ManageFlavors
// it then moves Kueue's ResourceFlavors onto the current object (see
// moveFlavors).
func (e *Engine) Apply(ctx context.Context, g *topology.Graph, opts kube.ApplyOptions) (*kube.Result, error) {
	if e.dyn == nil {
		return nil, fmt.Errorf("%s: no Kubernetes client (mode print)", e.sched.Engine)
	}
	levels, warnings, err := e.Levels(g)
	if err != nil {
		return nil, err
	}
	res := &kube.Result{Engine: e.sched.Engine, DryRun: opts.DryRun, Warnings: warnings}
	ri := e.dyn.Resource(e.sched.resource(e.cfg.APIVersion))
	name, create, err := e.current(ctx, ri, levels, res)
	if err != nil {
		return res, err
	}
	if create {
		res.Changes = append(res.Changes, kube.Change{Kind: "Topology", Name: name, Op: "create",
			Set: map[string]string{"levels": strings.Join(levels, ",")}, Note: e.sched.Group + "/" + e.cfg.APIVersion})
		res.Changed++
	} else {
		res.Unchanged++
	}
	var plan *flavorPlan
	if e.cfg.ManageFlavors {
		if plan, err = e.planFlavors(ctx, name, levels, res); err != nil {
			return res, err
		}
		if !opts.DryRun {
			e.waiting.Store(plan != nil && plan.waiting)
		}
	}
	if res.Changed == 0 {
		return res, nil
	}
	if err := kube.CheckGuard(ctx, g, res, opts); err != nil {
		return res, err
	}
	if opts.DryRun {
		return res, nil
	}
	if create {
		if _, err := ri.Create(ctx, e.object(name, levels), metav1.CreateOptions{FieldManager: kubeclient.FieldManager}); err != nil {
			res.Changed--
			return res, fmt.Errorf("%s: create Topology %s: %w: %w", e.sched.Engine, name, kube.ErrWrite, err)
		}
	}
	if plan != nil {
		return res, e.moveFlavors(ctx, plan, res)
	}
	return res, nil
}

// current finds the Topology that holds levels: the configured name, or
// <name>-<hash> when the configured object holds other levels (warned
// about in res) or is gone while <name>-<hash> is there (after an
// operator, or ManageFlavors, deleted the old object). create is true
// when that object does not exist yet.
func (e *Engine) current(ctx context.Context, ri dynamic.ResourceInterface, levels []string, res *kube.Result) (name string, create bool, err error) {
	alt := altName(e.cfg.Name, levels)
	cur, err := ri.Get(ctx, e.cfg.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		o, err := ri.Get(ctx, alt, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return e.cfg.Name, true, nil
		case err != nil:
			return "", false, fmt.Errorf("%s: get Topology %s: %w", e.sched.Engine, alt, err)
		case slices.Equal(levelsOf(o), levels):
			return alt, false, nil
		}
		return e.cfg.Name, true, nil
	case err != nil:
		return "", false, fmt.Errorf("%s: get Topology %s: %w", e.sched.Engine, e.cfg.Name, err)
	}
	have := levelsOf(cur)
	if slices.Equal(have, levels) {
		return e.cfg.Name, false, nil
	}
	res.Warnings = append(res.Warnings, fmt.Sprintf("Topology %s has levels %v but the fabric now needs %v; levels are immutable, so toposcope uses Topology %s instead",
		e.cfg.Name, have, levels, alt))
	if !e.cfg.ManageFlavors {
		res.Warnings = append(res.Warnings, e.staleWarning(alt, levels))
	}
	o, err := ri.Get(ctx, alt, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return alt, true, nil
	case err != nil:
		return "", false, fmt.Errorf("%s: get Topology %s: %w", e.sched.Engine, alt, err)
	case !slices.Equal(levelsOf(o), levels):
		return "", false, fmt.Errorf("%s: Topology %s has levels %v, want %v: %w", e.sched.Engine, alt, levelsOf(o), levels, kube.ErrWrite)
	}
	return alt, false, nil
}

// Settled implements engines.Settler: false while the last publish left
// a ResourceFlavor on an older Topology (manageFlavors).
func (e *Engine) Settled() bool { return !e.waiting.Load() }

// staleWarning tells the operator how to move the scheduler onto the new
// Topology. Kueue refuses to change a ResourceFlavor's topologyName (its
// spec is immutable once topologyName is set), so the flavor must be
// replaced, not edited.
func (e *Engine) staleWarning(name string, levels []string) string {
	if e.sched.Engine == KAI.Engine {
		return fmt.Sprintf("Topology %s (levels %v) replaces %s: point the PodGroups' spec.topologyConstraint.topology "+
			"(or the workloads' kai.scheduler/topology annotation) at %s, then delete %s",
			name, levels, e.cfg.Name, name, e.cfg.Name)
	}
	return fmt.Sprintf("Topology %s (levels %v) replaces %s. Kueue refuses to change a ResourceFlavor's spec.topologyName, so: "+
		"create a new ResourceFlavor with spec.topologyName: %s and the old flavor's nodeLabels, "+
		"put it in place of the old flavor in every ClusterQueue's spec.resourceGroups, "+
		"then delete the old ResourceFlavor and Topology %s (Kueue removes each once no ClusterQueue uses it; admitted workloads keep their admission)",
		name, levels, e.cfg.Name, name, e.cfg.Name)
}

// Render returns the Topology object for g, named Config.Name.
func (e *Engine) Render(ctx context.Context, g *topology.Graph) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	levels, _, err := e.Levels(g)
	if err != nil {
		return nil, err
	}
	doc, err := sigyaml.Marshal(e.object(e.cfg.Name, levels).Object)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.sched.Engine, err)
	}
	return doc, nil
}

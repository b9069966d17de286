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
// the ClusterQueues (Kueue refuses to change a flavor's topologyName). See
// docs/kubernetes.md.
package schedtopo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

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
// the new levels instead, so nothing fails silently.
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
	name := e.cfg.Name
	for attempt := 0; ; attempt++ {
		cur, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if err != nil {
			return res, fmt.Errorf("%s: get Topology %s: %w", e.sched.Engine, name, err)
		}
		have := levelsOf(cur)
		if slices.Equal(have, levels) {
			if name != e.cfg.Name {
				res.Warnings = append(res.Warnings, e.staleWarning(name, levels))
			}
			res.Unchanged++
			return res, nil
		}
		if attempt > 0 {
			return res, fmt.Errorf("%s: Topology %s has levels %v, want %v: %w", e.sched.Engine, name, have, levels, kube.ErrWrite)
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("Topology %s has levels %v but the fabric now needs %v; levels are immutable, so toposcope uses Topology %s instead",
			name, have, levels, altName(e.cfg.Name, levels)))
		name = altName(e.cfg.Name, levels)
	}
	if name != e.cfg.Name {
		res.Warnings = append(res.Warnings, e.staleWarning(name, levels))
	}
	res.Changes = append(res.Changes, kube.Change{Kind: "Topology", Name: name, Op: "create",
		Set: map[string]string{"levels": strings.Join(levels, ",")}, Note: e.sched.Group + "/" + e.cfg.APIVersion})
	res.Changed++
	if err := kube.CheckGuard(ctx, g, res, opts); err != nil {
		return res, err
	}
	if opts.DryRun {
		return res, nil
	}
	if _, err := ri.Create(ctx, e.object(name, levels), metav1.CreateOptions{FieldManager: kubeclient.FieldManager}); err != nil {
		res.Changed--
		return res, fmt.Errorf("%s: create Topology %s: %w: %w", e.sched.Engine, name, kube.ErrWrite, err)
	}
	return res, nil
}

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

package schedtopo

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
)

// kueueInUse is the finalizer Kueue puts on a ResourceFlavor and keeps
// while any ClusterQueue lists the flavor.
const kueueInUse = "kueue.x-k8s.io/resource-in-use"

// hashSuffix matches the "-<16 hex digits>" altName appends.
var hashSuffix = regexp.MustCompile(`^-[0-9a-f]{16}$`)

// flavorPlan is what moveFlavors writes: the ResourceFlavors to recreate
// (as read) and the older Topologies to delete; waiting is set when a
// flavor stays on an older Topology (admitted Workloads use it, another
// finalizer holds it, or it is being deleted), so that the next discovery
// publishes again.
type flavorPlan struct {
	current    string
	recreate   []*unstructured.Unstructured
	topologies []string
	waiting    bool
}

// kueueResource is the GroupVersionResource of a kueue.x-k8s.io kind at
// the configured version.
func (e *Engine) kueueResource(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Kueue.Group, Version: e.cfg.APIVersion, Resource: resource}
}

// ours reports whether a Topology of this name was written by this
// engine's configuration: the configured name or <name>-<hash>.
func (e *Engine) ours(o *unstructured.Unstructured) bool {
	name := o.GetName()
	rest, ok := strings.CutPrefix(name, e.cfg.Name)
	return ok && (rest == "" || hashSuffix.MatchString(rest)) && o.GetLabels()[labelManagedBy] == kubeclient.FieldManager
}

// planFlavors finds the ResourceFlavors whose spec.topologyName names an
// older Topology of this engine (other levels than current's) and plans,
// in res: each one no admitted Workload uses is recreated under its own
// name with spec.topologyName: current (so that no ClusterQueue changes);
// each one in use is left, with a warning naming the Workloads (the next
// publish tries again); each older Topology no flavor names any more is
// deleted. It returns nil when there is nothing to do.
func (e *Engine) planFlavors(ctx context.Context, current string, levels []string, res *kube.Result) (*flavorPlan, error) {
	stale := map[string]*unstructured.Unstructured{}
	err := e.listEach(ctx, "topologies", func(t *unstructured.Unstructured) {
		if t.GetName() != current && e.ours(t) && !slices.Equal(levelsOf(t), levels) {
			stale[t.GetName()] = t
		}
	})
	if err != nil || len(stale) == 0 {
		return nil, err
	}
	var flavors []*unstructured.Unstructured
	err = e.listEach(ctx, "resourceflavors", func(f *unstructured.Unstructured) {
		if old, _, _ := unstructured.NestedString(f.Object, "spec", "topologyName"); stale[old] != nil {
			flavors = append(flavors, f)
		}
	})
	if err != nil {
		return nil, err
	}
	plan := &flavorPlan{current: current}
	named := map[string]bool{} // older Topologies a flavor still names
	var moving []*unstructured.Unstructured
	for _, f := range flavors {
		old, _, _ := unstructured.NestedString(f.Object, "spec", "topologyName")
		switch other := slices.DeleteFunc(slices.Clone(f.GetFinalizers()), func(s string) bool { return s == kueueInUse }); {
		case f.GetDeletionTimestamp() != nil:
			named[old], plan.waiting = true, true
			res.Warnings = append(res.Warnings, fmt.Sprintf("ResourceFlavor %s (spec.topologyName: %s) is being deleted; toposcope leaves it", f.GetName(), old))
		case len(other) > 0:
			named[old], plan.waiting = true, true
			res.Warnings = append(res.Warnings, fmt.Sprintf("ResourceFlavor %s names Topology %s but has finalizers %v besides Kueue's; toposcope does not recreate it: replace it by hand with spec.topologyName: %s", f.GetName(), old, other, current))
		default:
			moving = append(moving, f)
		}
	}
	var users map[string][]string
	if len(moving) > 0 {
		if users, err = e.admitted(ctx); err != nil {
			return nil, err
		}
	}
	for _, f := range moving {
		old, _, _ := unstructured.NestedString(f.Object, "spec", "topologyName")
		if u := users[f.GetName()]; len(u) > 0 {
			named[old], plan.waiting = true, true
			res.Warnings = append(res.Warnings, fmt.Sprintf("ResourceFlavor %s names Topology %s (levels %v), not %s (levels %v), and admitted Workloads still use it (%d: %s); toposcope recreates it once none does",
				f.GetName(), old, levelsOf(stale[old]), current, levels, len(u), listSome(u, 5)))
			continue
		}
		plan.recreate = append(plan.recreate, f)
		res.Changes = append(res.Changes, kube.Change{Kind: "ResourceFlavor", Name: f.GetName(), Op: "recreate",
			Set: map[string]string{"spec.topologyName": current}, Note: "was " + old + "; no admitted Workload uses it"})
		res.Changed++
	}
	for _, name := range slices.Sorted(maps.Keys(stale)) {
		if named[name] || stale[name].GetDeletionTimestamp() != nil {
			continue
		}
		plan.topologies = append(plan.topologies, name)
		res.Changes = append(res.Changes, kube.Change{Kind: "Topology", Name: name, Op: "delete",
			Note: fmt.Sprintf("levels %v, replaced by %s", levelsOf(stale[name]), current)})
		res.Changed++
	}
	return plan, nil
}

// admitted maps each ResourceFlavor to the Workloads ("namespace/name")
// that hold quota in it: status.admission is set and the Workload has not
// finished.
func (e *Engine) admitted(ctx context.Context) (map[string][]string, error) {
	users := map[string][]string{}
	err := e.listEach(ctx, "workloads", func(wl *unstructured.Unstructured) {
		if conditionTrue(wl, "Finished") {
			return
		}
		psas, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
		seen := map[string]bool{}
		for _, p := range psas {
			m, _ := p.(map[string]any)
			fl, _ := m["flavors"].(map[string]any)
			for _, v := range fl {
				if s, ok := v.(string); ok && !seen[s] {
					seen[s] = true
					users[s] = append(users[s], wl.GetNamespace()+"/"+wl.GetName())
				}
			}
		}
	})
	return users, err
}

// listEach lists every object of a kueue.x-k8s.io resource, a page of
// the configured pageSize at a time.
func (e *Engine) listEach(ctx context.Context, resource string, fn func(*unstructured.Unstructured)) error {
	if err := kube.ListEach(ctx, e.dyn.Resource(e.kueueResource(resource)), e.cfg.PageSize, fn); err != nil {
		return fmt.Errorf("%s: list %s: %w", e.sched.Engine, resource, err)
	}
	return nil
}

// conditionTrue reports whether o has status condition typ with status
// True.
func conditionTrue(o *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

// listSome joins the first n of names, saying how many more there are.
func listSome(names []string, n int) string {
	slices.Sort(names)
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// moveFlavors carries out plan: it recreates each flavor, then deletes
// the older Topologies (Kueue's finalizer keeps each until no flavor
// names it).
func (e *Engine) moveFlavors(ctx context.Context, plan *flavorPlan, res *kube.Result) error {
	ri := e.dyn.Resource(e.kueueResource("resourceflavors"))
	for _, f := range plan.recreate {
		if err := e.recreate(ctx, ri, f, plan.current); err != nil {
			res.Changed--
			return fmt.Errorf("%s: recreate ResourceFlavor %s: %w: %w", e.sched.Engine, f.GetName(), kube.ErrWrite, err)
		}
		e.deps.Logger.Info("recreated ResourceFlavor on the new Topology", "engine", e.sched.Engine, "resourceFlavor", f.GetName(), "topology", plan.current)
	}
	topos := e.dyn.Resource(e.kueueResource("topologies"))
	for _, name := range plan.topologies {
		if err := topos.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			res.Changed--
			return fmt.Errorf("%s: delete Topology %s: %w: %w", e.sched.Engine, name, kube.ErrWrite, err)
		}
	}
	return nil
}

// recreate deletes flavor f (only if it is unchanged since it was read),
// lifts Kueue's resource-in-use finalizer, which would keep it while the
// ClusterQueues list it, and creates it again with the same name, labels,
// annotations and spec but spec.topologyName: topo. The ClusterQueues
// naming it find it again; while it is gone Kueue admits nothing through
// it. Should the create fail after the delete, the error carries the
// object to apply by hand.
func (e *Engine) recreate(ctx context.Context, ri dynamic.ResourceInterface, f *unstructured.Unstructured, topo string) error {
	want := replacement(f, topo)
	uid, rv := f.GetUID(), f.GetResourceVersion()
	err := ri.Delete(ctx, f.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	switch {
	case apierrors.IsConflict(err):
		return fmt.Errorf("it changed since it was read; the next publish tries again: %w", err)
	case err != nil && !apierrors.IsNotFound(err):
		return err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := ri.Get(ctx, f.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if o.GetUID() != uid {
			return fmt.Errorf("another ResourceFlavor %s (uid %s) was created meanwhile", o.GetName(), o.GetUID())
		}
		keep := slices.DeleteFunc(slices.Clone(o.GetFinalizers()), func(s string) bool { return s == kueueInUse })
		if len(keep) > 0 {
			return fmt.Errorf("deleted, but finalizers %v keep it; once it is gone, apply:\n%s", keep, yamlOf(want))
		}
		o.SetFinalizers(nil)
		_, err = ri.Update(ctx, o, metav1.UpdateOptions{FieldManager: kubeclient.FieldManager})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	err = retry.OnError(retry.DefaultBackoff, func(err error) bool {
		return !apierrors.IsAlreadyExists(err) && !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && ctx.Err() == nil
	}, func() error {
		_, err := ri.Create(ctx, want, metav1.CreateOptions{FieldManager: kubeclient.FieldManager})
		return err
	})
	if err != nil {
		return fmt.Errorf("deleted but not created again (%w); apply it by hand:\n%s", err, yamlOf(want))
	}
	return nil
}

// replacement is flavor f as it is to be created again: its name, labels,
// annotations and spec, with spec.topologyName set to topo.
func replacement(f *unstructured.Unstructured, topo string) *unstructured.Unstructured {
	spec, _, _ := unstructured.NestedMap(f.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	spec["topologyName"] = topo
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": f.GetAPIVersion(), "kind": f.GetKind(),
		"metadata": map[string]any{"name": f.GetName()},
		"spec":     spec,
	}}
	o.SetLabels(f.GetLabels())
	o.SetAnnotations(f.GetAnnotations())
	return o
}

// yamlOf renders o for a message.
func yamlOf(o *unstructured.Unstructured) string {
	b, err := sigyaml.Marshal(o.Object)
	if err != nil {
		return fmt.Sprint(o.Object)
	}
	return string(b)
}

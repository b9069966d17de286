package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

// Objects converges the custom objects of one resource that carry
// toposcope's managed-by label onto a desired set: it creates the
// missing ones, updates those whose spec, labels, annotations or owners
// differ, and, with Prune, deletes the managed ones no longer desired.
// Objects without the label are never touched; a desired object whose
// name an unmanaged object holds is an error.
type Objects struct {
	Dyn      dynamic.Interface
	Resource schema.GroupVersionResource
	Kind     string
	// Namespace is where the objects live; empty for cluster-scoped.
	Namespace string
	// Prune deletes managed objects that are not desired and that Owns
	// (when set) claims, so that two writers with different name
	// prefixes never delete each other's objects.
	Prune bool
	Owns  func(name string) bool
	// PageSize is the objects listed per request (0: all at once).
	PageSize int64
}

// ListEach lists every object of ri, pageSize at a time (0: all at
// once), and hands each to fn.
func ListEach(ctx context.Context, ri dynamic.ResourceInterface, pageSize int64, fn func(*unstructured.Unstructured)) error {
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		list, err := ri.List(ctx, opts)
		if err != nil {
			return err
		}
		for i := range list.Items {
			fn(&list.Items[i])
		}
		if list.GetContinue() == "" {
			return nil
		}
		opts.Continue = list.GetContinue()
	}
}

// update is one planned update: want written onto the object as read.
type update struct {
	next, want *unstructured.Unstructured
}

// onto is cur with w's spec, labels, annotations and (when w names any)
// owners: what an update writes.
func onto(cur, w *unstructured.Unstructured) *unstructured.Unstructured {
	next := cur.DeepCopy()
	next.Object["spec"] = w.Object["spec"]
	next.SetLabels(merged(cur.GetLabels(), w.GetLabels()))
	next.SetAnnotations(merged(cur.GetAnnotations(), w.GetAnnotations()))
	if refs := w.GetOwnerReferences(); refs != nil {
		next.SetOwnerReferences(refs)
	}
	return next
}

// ObjectPlan is what Objects.Plan found to write.
type ObjectPlan struct {
	o      Objects
	create []*unstructured.Unstructured
	update []update
	remove []string
}

func (o Objects) client() dynamic.ResourceInterface {
	if o.Namespace == "" {
		return o.Dyn.Resource(o.Resource)
	}
	return o.Dyn.Resource(o.Resource).Namespace(o.Namespace)
}

// Plan lists the existing objects and records in res what converging onto
// want takes. want's objects need a name, spec and the managed label.
func (o Objects) Plan(ctx context.Context, want []*unstructured.Unstructured, res *Result) (*ObjectPlan, error) {
	p := &ObjectPlan{o: o}
	have := map[string]*unstructured.Unstructured{}
	err := ListEach(ctx, o.client(), o.PageSize, func(u *unstructured.Unstructured) { have[u.GetName()] = u })
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", o.Resource.Resource, err)
	}
	desired := make(map[string]bool, len(want))
	for _, w := range want {
		name := w.GetName()
		desired[name] = true
		cur, ok := have[name]
		switch {
		case !ok:
			p.create = append(p.create, w)
			res.Changes = append(res.Changes, Change{Kind: o.Kind, Namespace: o.Namespace, Name: name, Op: "create"})
			res.Changed++
		case cur.GetLabels()[keys.ManagedBy] != kubeclient.FieldManager:
			return nil, fmt.Errorf("%s %s exists and is not managed by toposcope (no %s=%s label): %w",
				o.Kind, name, keys.ManagedBy, kubeclient.FieldManager, ErrWrite)
		case same(cur, w):
			res.Unchanged++
		default:
			p.update = append(p.update, update{next: onto(cur, w), want: w})
			res.Changes = append(res.Changes, Change{Kind: o.Kind, Namespace: o.Namespace, Name: name, Op: "update"})
			res.Changed++
		}
	}
	if o.Prune {
		for _, name := range slices.Sorted(maps.Keys(have)) {
			if !desired[name] && have[name].GetLabels()[keys.ManagedBy] == kubeclient.FieldManager && (o.Owns == nil || o.Owns(name)) {
				p.remove = append(p.remove, name)
				res.Changes = append(res.Changes, Change{Kind: o.Kind, Namespace: o.Namespace, Name: name, Op: "delete"})
				res.Changed++
			}
		}
	}
	return p, nil
}

// same reports whether cur already is w: the same spec, w's labels and
// annotations present with their values, and the same owners when w
// names any.
func same(cur, w *unstructured.Unstructured) bool {
	if !equality.Semantic.DeepEqual(cur.Object["spec"], w.Object["spec"]) {
		return false
	}
	for k, v := range w.GetLabels() {
		if cur.GetLabels()[k] != v {
			return false
		}
	}
	for k, v := range w.GetAnnotations() {
		if cur.GetAnnotations()[k] != v {
			return false
		}
	}
	if refs := w.GetOwnerReferences(); refs != nil {
		return equality.Semantic.DeepEqual(cur.GetOwnerReferences(), refs)
	}
	return true
}

func merged(base, over map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

// Write makes the planned writes: creates first, then updates, then
// deletions. A failed write stops it; res.Changed then counts only what
// was written.
func (p *ObjectPlan) Write(ctx context.Context, res *Result) error {
	c := p.o.client()
	planned := len(p.create) + len(p.update) + len(p.remove)
	done := 0
	fail := func(op, name string, err error) error {
		res.Changed -= planned - done
		return fmt.Errorf("%s %s %s: %w: %w", op, p.o.Kind, name, ErrWrite, err)
	}
	opts := metav1.CreateOptions{FieldManager: kubeclient.FieldManager}
	for _, w := range p.create {
		if _, err := c.Create(ctx, w, opts); err != nil {
			return fail("create", w.GetName(), err)
		}
		done++
	}
	for _, u := range p.update {
		if err := p.writeUpdate(ctx, c, u); err != nil {
			return fail("update", u.want.GetName(), err)
		}
		done++
	}
	for _, name := range p.remove {
		if err := c.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fail("delete", name, err)
		}
		done++
	}
	return nil
}

// writeUpdate writes u. When the object changed since it was read (a
// controller wrote its status, another writer a label), it is read again
// (a LIST by name: the engines' rules grant no GET) and want is written
// onto it, as long as it is still toposcope's.
func (p *ObjectPlan) writeUpdate(ctx context.Context, c dynamic.ResourceInterface, u update) error {
	next := u.next
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		_, err := c.Update(ctx, next, metav1.UpdateOptions{FieldManager: kubeclient.FieldManager})
		if !apierrors.IsConflict(err) {
			return err
		}
		list, lerr := c.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + u.want.GetName()})
		switch {
		case lerr != nil:
			return lerr
		case len(list.Items) != 1:
			return errors.New("it is gone since it was read")
		case list.Items[0].GetLabels()[keys.ManagedBy] != kubeclient.FieldManager:
			return fmt.Errorf("it is no longer labelled %s=%s", keys.ManagedBy, kubeclient.FieldManager)
		}
		next = onto(&list.Items[0], u.want)
		return err // a conflict: RetryOnConflict writes next
	})
}

// Converge plans want, lets opts.Guard see the plan, and writes it unless
// opts.DryRun: the apply of an engine whose output is custom objects.
func (o Objects) Converge(ctx context.Context, g *topology.Graph, want []*unstructured.Unstructured, res *Result, opts ApplyOptions) error {
	plan, err := o.Plan(ctx, want, res)
	if err != nil {
		return err
	}
	if err := CheckGuard(ctx, g, res, opts); err != nil {
		return err
	}
	if opts.DryRun {
		return nil
	}
	return plan.Write(ctx, res)
}

// RenderList renders objects as a YAML List under a comment line.
func RenderList(comment string, objs []*unstructured.Unstructured) ([]byte, error) {
	items := make([]any, 0, len(objs))
	for _, o := range objs {
		items = append(items, o.Object)
	}
	out, err := sigyaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return nil, err
	}
	return append([]byte("# "+comment+"\n"), out...), nil
}

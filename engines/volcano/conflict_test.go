package volcano_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/volcano"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
)

// TestUpdateAfterConflict: objects that another writer changed between
// the plan and the write (as a controller writing a status would) are
// read again and updated, keeping what the other writer set; one that
// lost toposcope's label meanwhile is refused, not overwritten. Checked
// on the real apiserver with the kube.Objects every custom-object engine
// writes through (kueue-budgets' ClusterQueues met this with Kueue).
func TestUpdateAfterConflict(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	ctx := context.Background()
	p := c.Prefix(t)
	ri := c.Dynamic().Resource(volcano.Resource)
	hn := func(name string, tier int64) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": volcano.Resource.Group + "/" + volcano.Resource.Version, "kind": "HyperNode",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{"tier": tier, "members": []any{
				map[string]any{"type": "Node", "selector": map[string]any{"exactMatch": map[string]any{"name": p + "-n1"}}},
			}},
		}}
		o.SetLabels(map[string]string{keys.ManagedBy: kubeclient.FieldManager})
		return o
	}
	a, b := p+"-a", p+"-b"
	for _, name := range []string{a, b} {
		if _, err := ri.Create(ctx, hn(name, 1), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	objs := kube.Objects{Dyn: c.Dynamic(), Resource: volcano.Resource, Kind: "HyperNode",
		Owns: func(name string) bool { return strings.HasPrefix(name, p+"-") }}
	res := &kube.Result{}
	plan, err := objs.Plan(ctx, []*unstructured.Unstructured{hn(a, 2), hn(b, 2)}, res)
	if err != nil || res.Changed != 2 {
		t.Fatalf("plan: %v, %s", err, res.Summary())
	}
	// Another writer, after the plan: a label on a; b loses toposcope's.
	for name, edit := range map[string]func(*unstructured.Unstructured){
		a: func(o *unstructured.Unstructured) {
			o.SetLabels(map[string]string{keys.ManagedBy: kubeclient.FieldManager, "example.com/other": "x"})
		},
		b: func(o *unstructured.Unstructured) { o.SetLabels(map[string]string{"example.com/other": "y"}) },
	} {
		o, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		edit(o)
		if _, err := ri.Update(ctx, o, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err = plan.Write(ctx, res)
	if err == nil || !strings.Contains(err.Error(), b) || !strings.Contains(err.Error(), "no longer labelled") {
		t.Errorf("write = %v, want a refusal of %s, no longer toposcope's", err, b)
	}
	for name, want := range map[string]struct {
		tier  int64
		other string
	}{a: {2, "x"}, b: {1, "y"}} {
		o, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tier, _, _ := unstructured.NestedInt64(o.Object, "spec", "tier")
		if tier != want.tier || o.GetLabels()["example.com/other"] != want.other {
			t.Errorf("%s: tier %d, label %q; want tier %d and the other writer's label %q", name, tier, o.GetLabels()["example.com/other"], want.tier, want.other)
		}
	}
}

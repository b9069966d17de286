package kueue_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

func twoTier(prefix string) (*consumertest.Fabric, error) {
	return consumertest.NewFabricModel(prefix, "testdata/two-tier.yaml")
}

// TestLevelChange: the fabric grows a core switch while a gang is
// admitted. Our kueue engine publishes a new Topology and warns; the edit
// the warning once advised (pointing the ResourceFlavor at it) is refused
// by Kueue, and the steps the warning now gives work on the real Kueue: a
// new ResourceFlavor, the ClusterQueue switched to it, the old flavor and
// Topology deleted once unused, the admitted gang kept, and a new gang
// admitted by the new levels.
func TestLevelChange(t *testing.T) {
	t.Parallel()
	s := newSetup(t, twoTier, busyOf())
	ctx := t.Context()
	dyn := s.c.Dynamic()
	rack := s.levels[len(s.levels)-2]
	s.submit(t, "before", 2, consumertest.TopologyRequest{Required: rack}, true)

	grown := grow(t, s)
	levels, res, err := grown.PublishKueueTopology(ctx, s.c, s.topo)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || len(levels) != len(s.levels)+1 {
		t.Fatalf("grown fabric: changes %+v, levels %v (were %v)", res.Changes, levels, s.levels)
	}
	newTopo := res.Changes[0].Name
	warning := strings.Join(res.Warnings, "\n")
	t.Logf("engine warning: %s", warning)
	for _, want := range []string{"new ResourceFlavor", "spec.topologyName: " + newTopo, "ClusterQueue", "delete", s.topo} {
		if !strings.Contains(warning, want) {
			t.Errorf("warning does not say %q: %s", want, warning)
		}
	}
	if strings.Contains(warning, "point ResourceFlavor.spec.topologyName") {
		t.Errorf("warning advises the edit Kueue refuses: %s", warning)
	}

	// The edit Kueue refuses.
	flavors := dyn.Resource(consumertest.KueueResource("resourceflavors"))
	rf, err := flavors.Get(ctx, s.q.Flavor, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(rf.Object, newTopo, "spec", "topologyName")
	_, err = flavors.Update(ctx, rf, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "immutable") {
		t.Fatalf("changing ResourceFlavor.spec.topologyName = %v, want Invalid (immutable)", err)
	}
	t.Logf("Kueue refuses the in-place edit: %v", err)

	// The steps the warning gives.
	newFlavor := s.q.Flavor + "-v2"
	spec, _, _ := unstructured.NestedMap(rf.Object, "spec")
	spec["topologyName"] = newTopo
	nrf := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": rf.GetAPIVersion(), "kind": "ResourceFlavor",
		"metadata": map[string]any{"name": newFlavor}, "spec": spec,
	}}
	if _, err := flavors.Create(ctx, nrf, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the new ResourceFlavor: %v", err)
	}
	cqs := dyn.Resource(consumertest.KueueResource("clusterqueues"))
	err = retry(ctx, func() error {
		cq, err := cqs.Get(ctx, s.q.ClusterQueue, metav1.GetOptions{})
		if err != nil {
			return err
		}
		groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
		fl := groups[0].(map[string]any)["flavors"].([]any)
		fl[0].(map[string]any)["name"] = newFlavor
		_ = unstructured.SetNestedSlice(cq.Object, groups, "spec", "resourceGroups")
		_, err = cqs.Update(ctx, cq, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("switch the ClusterQueue to the new ResourceFlavor: %v", err)
	}
	topologies := dyn.Resource(consumertest.KueueResource("topologies"))
	for _, del := range []struct {
		kind, name string
		ri         interface {
			Delete(context.Context, string, metav1.DeleteOptions, ...string) error
			Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error)
		}
	}{{"ResourceFlavor", s.q.Flavor, flavors}, {"Topology", s.topo, topologies}} {
		if err := del.ri.Delete(ctx, del.name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete %s %s: %v", del.kind, del.name, err)
		}
		err := kubetest.Poll(ctx, admitTimeout, del.kind+" "+del.name+" to go (Kueue's finalizer)", func(ctx context.Context) (bool, error) {
			_, err := del.ri.Get(ctx, del.name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatalf("%v\n%s", err, kueueLog(s.c))
		}
	}

	before, err := dyn.Resource(consumertest.KueueResource("workloads")).Namespace(s.q.Namespace).Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, _, _, _ := consumertest.Condition(before, "Admitted"); st != "True" {
		t.Errorf("the gang admitted before the change lost its admission: %v", before.Object["status"])
	}
	core := levels[0]
	after, _ := s.submit(t, "after", 6, consumertest.TopologyRequest{Required: core}, true)
	// The gang is admitted through the new flavor, whose Topology has the
	// new levels: check its nodes against the grown graph.
	s.f, s.levels, s.topo = grown, levels, newTopo
	nodes := s.placement(t, after)
	if cores := s.under(nodes, 2); len(cores) != 1 || cores[grown.Switch(grown.Nodes[0], 2)] != 6 {
		t.Errorf("new gang by %s placed %v, want all 6 pods under %s", core, cores, grown.Switch(grown.Nodes[0], 2))
	}
	psa, _, _ := unstructured.NestedSlice(after.Object, "status", "admission", "podSetAssignments")
	if fl, _, _ := unstructured.NestedString(psa[0].(map[string]any), "flavors", "nvidia.com/gpu"); fl != newFlavor {
		t.Errorf("new gang admitted with flavor %q, want %s", fl, newFlavor)
	}
	t.Logf("after the change, a gang by %s was admitted with flavor %s on %v", core, newFlavor, slices.Sorted(maps.Keys(nodes)))
}

// retry runs f until it returns something other than a conflict.
func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if !apierrors.IsConflict(err) || ctx.Err() != nil {
			return err
		}
	}
}

package kai_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/toposcope/toposcope/testenv/kaitest"
)

// TestKAITopologyLevelsHaveNoAlias pins why the kai engine writes only
// nodeLabel on its levels: KAI v0.12.0's own Topology CRD has no other
// level field, so an `alias` is refused by a strict client and dropped
// (pruned) otherwise, and its scheduler matches a PodGroup's
// requiredTopologyLevel / preferredTopologyLevel against nodeLabel only.
// When a KAI release adds level aliases, this test fails: then the engine
// should set them and the KAI placement test should use them.
func TestKAITopologyLevelsHaveNoAlias(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	kaitest.Require(t)
	ctx := context.Background()
	name := c.Prefix(t) + "-alias"
	obj := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{"levels": []any{
				map[string]any{"nodeLabel": "topology.toposcope.io/tier-0", "alias": "leaf"},
				map[string]any{"nodeLabel": "kubernetes.io/hostname", "alias": "hostname"},
			}},
		}}
	}
	ri := c.Dynamic().Resource(kaitest.TopologyGVR)
	_, err := ri.Create(ctx, obj(), metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `unknown field "spec.levels[0].alias"`) {
		t.Fatalf("strict create with alias = %v; want BadRequest: unknown field spec.levels[0].alias (has KAI's Topology gained level aliases?)", err)
	}
	if _, err := ri.Create(ctx, obj(), metav1.CreateOptions{FieldValidation: metav1.FieldValidationIgnore}); err != nil {
		t.Fatal(err)
	}
	got, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	levels, _, _ := unstructured.NestedSlice(got.Object, "spec", "levels")
	for i, l := range levels {
		if a, ok := l.(map[string]any)["alias"]; ok {
			t.Errorf("level %d kept alias %v; KAI's Topology stores aliases now", i, a)
		}
	}
}

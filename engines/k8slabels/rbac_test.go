package k8slabels_test

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// TestRBAC runs the engine with a ServiceAccount token bound to exactly
// the rules of charts/toposcope/rbac/k8s-labels.yaml: a missing permission fails the
// publish, and every granted verb must have been used (an excess one
// shows as unused).
func TestRBAC(t *testing.T) {
	t.Parallel()
	rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/k8s-labels.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := newSetup(t, kubetest.Fabric{Nodes: 10}, nil, nil)
	ctx := context.Background()
	ns := s.c.Namespace(t)
	rc, err := s.c.ServiceAccountConfig(ctx, ns, "toposcope", rules.Cluster, rules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	s.engine = s.newEngine(t, rc, nil)
	g := s.graph(t)
	var accesses []kubetest.Access
	for range 2 { // first publish, then a no-change rerun
		if _, _, err := s.apply(t, g, kube.ApplyOptions{}); err != nil {
			t.Fatalf("publish as the ServiceAccount: %v", err)
		}
		accesses = append(accesses, s.counter.Accesses()...)
	}
	if unused := rules.Unused(accesses); len(unused) > 0 {
		t.Errorf("charts/toposcope/rbac/k8s-labels.yaml grants permissions the engine never used: %v", unused)
	}

	// Without patch, the publish is refused by the apiserver.
	readOnly := rules.Cluster[0]
	readOnly.Verbs = []string{"list"}
	rc2, err := s.c.ServiceAccountConfig(ctx, ns, "readonly", []rbacv1.PolicyRule{readOnly}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.engine = s.newEngine(t, rc2, nil)
	f2 := s.fabric
	f2.Tiers = 2 // a change, so that a patch is needed
	g2, err := f2.Graph()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := s.engine.Apply(ctx, g2, kube.ApplyOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("publish without patch = %v, want Forbidden", err)
	}
}

package kueue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/kueuebudgets"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/placement"
	"github.com/toposcope/toposcope/plugins"
	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// budgetsTree is the sample tree with names made unique by p: research
// (3 shares: nlp nlpShares, vision 1), production (1.5), interns (0).
func budgetsTree(p string, nlpShares float64) *placement.Budgets {
	return &placement.Budgets{Accounts: []placement.AccountSpec{
		{Name: p + "-research", Shares: placement.Shares(3), Children: []placement.AccountSpec{
			{Name: p + "-nlp", Shares: placement.Shares(nlpShares)},
			{Name: p + "-vision", Shares: placement.Shares(1)},
		}},
		{Name: p + "-production", Shares: placement.Shares(1.5)},
		{Name: p + "-interns", Shares: placement.Shares(0)},
	}}
}

// TestBudgetsFairSharing applies the kueue-budgets engine's Cohort tree
// and ClusterQueues to the real Kueue (fair sharing on), and checks that
// Kueue takes them (every ClusterQueue Active, the Cohorts' fair-sharing
// status), that a second apply changes nothing, that a changed share
// updates the weight and quotas (and Kueue observes the new generation),
// that a removed account is pruned, and that a tree losing most accounts
// is refused by the shrink guard until accepted. The engine runs as a
// ServiceAccount with only charts/toposcope/rbac/kueue-budgets.yaml.
func TestBudgetsFairSharing(t *testing.T) {
	t.Parallel()
	c, _ := kueue.require(t)
	ctx := t.Context()
	p := c.Prefix(t)
	f, err := fatTree(p) // 16 nodes of 8 GPUs: 128 GPUs to divide
	if err != nil {
		t.Fatal(err)
	}
	dyn := c.Dynamic()
	flavor := p + "-budget-gpu"
	rf := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
		"metadata": map[string]any{"name": flavor}, "spec": map[string]any{},
	}}
	if _, err := dyn.Resource(kueuebudgets.FlavorResource).Create(ctx, rf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The engine runs as a ServiceAccount bound to only the chart's rules
	// for it; every rule must be used by the end.
	rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/kueue-budgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.ServiceAccountConfig(ctx, c.Namespace(t), "toposcope", rules.Cluster, rules.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	counter := kubetest.NewCounter()
	cfg := kueuebudgets.DefaultConfig()
	cfg.Flavor, cfg.Root = flavor, p+"-root"
	clients, err := kubeclient.NewClients(counter.Instrument(cfg.Tune(rc)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := kueuebudgets.New(cfg, clients.Dynamic, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	guard := kube.NewShrinkGuard(0.5)
	apply := func(b *placement.Budgets, g kube.Guard) *kube.Result {
		t.Helper()
		res, err := e.ApplyBudgets(ctx, f.Graph, eb(t, b), kube.ApplyOptions{Guard: g})
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		t.Logf("%s; changes %v", res.Summary(), res.Changes)
		return res
	}
	cqs := dyn.Resource(kueuebudgets.ClusterQueueResource)
	cohorts := dyn.Resource(kueuebudgets.CohortResource)

	if res := apply(budgetsTree(p, 2), guard.Check); res.Changed != 6 || len(res.Warnings) > 0 {
		t.Fatalf("first apply: %d changed, warnings %v; want 6 objects created", res.Changed, res.Warnings)
	}
	leaves := []string{p + "-nlp", p + "-vision", p + "-production", p + "-interns"}
	for _, q := range leaves {
		if err := consumertest.WaitActive(ctx, dyn, q, admitTimeout); err != nil {
			t.Fatalf("%v\n%s", err, kueueLog(c))
		}
	}
	want := map[string][2]string{ // cohort, nominal GPUs
		p + "-nlp": {p + "-research", "57"}, p + "-vision": {p + "-research", "28"},
		p + "-production": {p + "-root", "43"}, p + "-interns": {p + "-root", "0"},
	}
	for q, w := range want {
		o, err := cqs.Get(ctx, q, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := str(o, "spec", "cohortName"); got != w[0] {
			t.Errorf("ClusterQueue %s in Cohort %q, want %q", q, got, w[0])
		}
		if got := quota(o); got != w[1] {
			t.Errorf("ClusterQueue %s quota %s, want %s", q, got, w[1])
		}
	}
	// The Cohort tree as Kueue sees it: research under the root, and
	// fair-sharing status recorded on the Cohorts (only with fair sharing on).
	err = kubetest.Poll(ctx, admitTimeout, "Kueue to record the Cohorts' fair-sharing status", func(ctx context.Context) (bool, error) {
		for _, name := range []string{p + "-root", p + "-research"} {
			o, err := cohorts.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if _, ok, _ := unstructured.NestedMap(o.Object, "status", "fairSharing"); !ok {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, kueueLog(c))
	}
	research, err := cohorts.Get(ctx, p+"-research", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := str(research, "spec", "parentName"); got != p+"-root" {
		t.Errorf("Cohort research parent %q, want %s", got, p+"-root")
	}
	t.Logf("Cohort %s: spec %v, status %v", research.GetName(), research.Object["spec"], research.Object["status"])

	admitBorrowing(t, c, p+"-nlp", 8)

	if res := apply(budgetsTree(p, 2), guard.Check); res.Changed != 0 || res.Unchanged != 6 {
		t.Errorf("second apply: %d changed, %d unchanged; want 0 and 6", res.Changed, res.Unchanged)
	}

	// nlp 2 → 4 shares: its weight and both research quotas change.
	if res := apply(budgetsTree(p, 4), guard.Check); res.Changed != 2 {
		t.Errorf("changed share: %d changed, want 2 (nlp, vision)", res.Changed)
	}
	nlp, err := cqs.Get(ctx, p+"-nlp", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w, q := str(nlp, "spec", "fairSharing", "weight"), quota(nlp); w != "4" || q != "68" {
		t.Errorf("nlp after the change: weight %q quota %s, want 4 and 68", w, q)
	}
	gen := nlp.GetGeneration()
	err = kubetest.Poll(ctx, admitTimeout, "Kueue to observe the new nlp ClusterQueue", func(ctx context.Context) (bool, error) {
		o, err := cqs.Get(ctx, p+"-nlp", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return activeAt(o) >= gen, nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, kueueLog(c))
	}

	// research 3 → 4 shares: its Cohort's weight, and every quota.
	bigger := budgetsTree(p, 4)
	bigger.Accounts[0].Shares = placement.Shares(4)
	if res := apply(bigger, guard.Check); res.Changed != 4 {
		t.Errorf("changed Cohort share: %d changed, want 4 (research, nlp, vision, production)", res.Changed)
	}
	if research, err = cohorts.Get(ctx, p+"-research", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := str(research, "spec", "fairSharing", "weight"); w != "4" {
		t.Errorf("Cohort research weight %q, want 4", w)
	}

	// interns leaves: 1 of 6 objects deleted, under the guard's 50%.
	smaller := &placement.Budgets{Accounts: bigger.Accounts[:2]}
	if res := apply(smaller, guard.Check); res.Changed != 1 {
		t.Errorf("removed account: %d changed, want 1 deletion", res.Changed)
	}
	err = kubetest.Poll(ctx, admitTimeout, "ClusterQueue interns to be gone", func(ctx context.Context) (bool, error) {
		_, err := cqs.Get(ctx, p+"-interns", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, kueueLog(c))
	}

	// Only production is left: 3 of the 5 objects would go (60% > 50%).
	tiny := &placement.Budgets{Accounts: smaller.Accounts[1:]}
	_, err = e.ApplyBudgets(ctx, f.Graph, eb(t, tiny), kube.ApplyOptions{Guard: guard.Check})
	if !errors.Is(err, kube.ErrRefused) {
		t.Fatalf("tree losing most accounts: err %v, want kube.ErrRefused", err)
	}
	t.Logf("held: %v", err)
	if _, err := cqs.Get(ctx, p+"-nlp", metav1.GetOptions{}); err != nil {
		t.Fatalf("refused plan wrote anyway: %v", err)
	}
	apply(tiny, guard.Record) // the operator accepts it
	for _, gone := range []string{p + "-nlp", p + "-vision"} {
		err = kubetest.Poll(ctx, admitTimeout, "ClusterQueue "+gone+" to be gone", func(ctx context.Context) (bool, error) {
			_, err := cqs.Get(ctx, gone, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := consumertest.WaitActive(ctx, dyn, p+"-production", admitTimeout); err != nil {
		t.Fatal(err)
	}
	if unused := rules.Unused(counter.Accesses()); len(unused) > 0 {
		t.Errorf("charts/toposcope/rbac/kueue-budgets.yaml grants permissions the engine never used: %v", unused)
	}
}

// admitBorrowing submits to ClusterQueue cq a Workload of pods whole-node
// pods that asks for GPUs only (the resource the budgets divide), more
// than cq's nominal quota, and checks that Kueue admits it there by
// borrowing from the Cohort tree; it then deletes the Workload.
func admitBorrowing(t *testing.T, c *kubetest.Cluster, cq string, pods int) {
	t.Helper()
	ctx := t.Context()
	dyn := c.Dynamic()
	ns := c.Namespace(t)
	lq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
		"metadata": map[string]any{"name": "lq", "namespace": ns}, "spec": map[string]any{"clusterQueue": cq},
	}}
	if _, err := dyn.Resource(consumertest.KueueResource("localqueues")).Namespace(ns).Create(ctx, lq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gpus := fmt.Sprint(consumertest.GPUsPerNode)
	wl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{"name": "big", "namespace": ns},
		"spec": map[string]any{"queueName": "lq", "podSets": []any{map[string]any{
			"name": "main", "count": int64(pods), "template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers": []any{map[string]any{"name": "main", "image": "registry.k8s.io/pause:3.10",
					"resources": map[string]any{"requests": map[string]any{"nvidia.com/gpu": gpus}}}},
			}},
		}}},
	}}
	ri := dyn.Resource(consumertest.KueueResource("workloads")).Namespace(ns)
	if _, err := ri.Create(ctx, wl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *unstructured.Unstructured
	err := kubetest.Poll(ctx, admitTimeout, "Kueue to admit Workload big in "+cq, func(ctx context.Context) (bool, error) {
		var err error
		if got, err = ri.Get(ctx, "big", metav1.GetOptions{}); err != nil {
			return false, err
		}
		st, _, _, _ := consumertest.Condition(got, "Admitted")
		return st == "True", nil
	})
	if err != nil {
		t.Fatalf("%v; status %v\n%s", err, got.Object["status"], kueueLog(c))
	}
	if at := str(got, "status", "admission", "clusterQueue"); at != cq {
		t.Errorf("admitted in ClusterQueue %q, want %s", at, cq)
	}
	// Borrowing above the nominal quota gives the queue a fair-sharing
	// share (usage above nominal / weight), which Kueue records.
	var o *unstructured.Unstructured
	err = kubetest.Poll(ctx, admitTimeout, "Kueue to record "+cq+"'s weighted share", func(ctx context.Context) (bool, error) {
		var err error
		if o, err = dyn.Resource(kueuebudgets.ClusterQueueResource).Get(ctx, cq, metav1.GetOptions{}); err != nil {
			return false, err
		}
		share, _, _ := unstructured.NestedInt64(o.Object, "status", "fairSharing", "weightedShare")
		return share > 0, nil
	})
	if err != nil {
		t.Fatalf("%v; status %v\n%s", err, o.Object["status"], kueueLog(c))
	}
	t.Logf("Workload big (%d x %s GPUs) admitted in %s (nominal %s): flavors %v; ClusterQueue status fairSharing %v",
		pods, gpus, cq, quota(o), got.Object["status"].(map[string]any)["admission"], o.Object["status"].(map[string]any)["fairSharing"])
	if err := ri.Delete(ctx, "big", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = kubetest.Poll(ctx, admitTimeout, "Workload big to be gone", func(ctx context.Context) (bool, error) {
		_, err := ri.Get(ctx, "big", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, kueueLog(c))
	}
}

// str reads a string field.
func str(o *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	return fmt.Sprint(s)
}

// quota is the nominal quota of the ClusterQueue's only resource.
func quota(o *unstructured.Unstructured) string {
	rgs, _, _ := unstructured.NestedSlice(o.Object, "spec", "resourceGroups")
	if len(rgs) != 1 {
		return fmt.Sprintf("%d resource groups", len(rgs))
	}
	fl, _, _ := unstructured.NestedSlice(rgs[0].(map[string]any), "flavors")
	if len(fl) != 1 {
		return fmt.Sprintf("%d flavors", len(fl))
	}
	rs, _, _ := unstructured.NestedSlice(fl[0].(map[string]any), "resources")
	if len(rs) != 1 {
		return fmt.Sprintf("%d resources", len(rs))
	}
	return fmt.Sprint(rs[0].(map[string]any)["nominalQuota"])
}

// activeAt is the generation at which Kueue last set Active=True, or -1.
func activeAt(o *unstructured.Unstructured) int64 {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Active" && m["status"] == "True" {
			g, _ := m["observedGeneration"].(int64)
			return g
		}
	}
	return -1
}

// eb flattens placement budgets for the engine (plugins.EngineBudgets).
func eb(t testing.TB, b *placement.Budgets) *engines.Budgets {
	t.Helper()
	out, err := plugins.EngineBudgets(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

package kueue_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/schedtopo"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/testenv/consumertest"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// TestManagedFlavors: with manageFlavors, a level change is carried out
// on the real Kueue by the kueue engine itself, running as a
// ServiceAccount bound to only the chart's kueue.yaml and
// kueue-flavors.yaml rules (each of which it must use). While a gang
// admitted through the flavor runs, the flavor is left and a warning
// names the gang; once the gang has finished, the flavor is recreated
// under its own name on the new Topology (the ClusterQueue untouched),
// the old Topology goes, and a new gang is admitted by the new levels.
func TestManagedFlavors(t *testing.T) {
	t.Parallel()
	s := newSetup(t, twoTier, busyOf())
	ctx := t.Context()
	dyn := s.c.Dynamic()
	rack := s.levels[len(s.levels)-2]
	s.submit(t, "running", 2, consumertest.TopologyRequest{Required: rack}, true)

	var rules kubetest.Rules
	for _, f := range []string{"kueue", "kueue-flavors"} {
		r, err := kubetest.LoadRules("../../charts/toposcope/rbac/" + f + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		rules.Cluster = append(rules.Cluster, r.Cluster...)
	}
	rc, err := s.c.ServiceAccountConfig(ctx, s.c.Namespace(t), "toposcope", rules.Cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	counter := kubetest.NewCounter()
	e := managedEngine(t, s, counter.Instrument(rc))
	grown := grow(t, s)
	flavors := dyn.Resource(consumertest.KueueResource("resourceflavors"))
	before, err := flavors.Get(ctx, s.q.Flavor, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The gang runs: the new Topology is created, the flavor is left.
	res, err := e.Apply(ctx, grown.Graph, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].Kind != "Topology" || res.Changes[0].Op != "create" {
		t.Fatalf("level change while a gang runs: changes %+v, want the new Topology only", res.Changes)
	}
	newTopo := res.Changes[0].Name
	warning := strings.Join(res.Warnings, "\n")
	t.Logf("while the gang runs: %s", warning)
	for _, want := range []string{s.q.Flavor, s.q.Namespace + "/running", "once none does"} {
		if !strings.Contains(warning, want) {
			t.Errorf("warning does not say %q: %s", want, warning)
		}
	}
	if f := flavorState(t, flavors, s.q.Flavor); f.uid != string(before.GetUID()) || f.topology != s.topo {
		t.Errorf("flavor touched while in use: %+v", f)
	}
	if e.Settled() {
		t.Error("the engine says it is settled while a flavor waits: the service would not publish again")
	}

	// The gang finishes, as its job's integration would mark it.
	finish(t, s, "running")
	plan, err := e.Apply(ctx, grown.Graph, kube.ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"recreate ResourceFlavor " + s.q.Flavor, "delete Topology " + s.topo}
	if got := changes(plan); !slices.Equal(got, want) {
		t.Errorf("dry run after the gang finished: %v, want %v (warnings %v)", got, want, plan.Warnings)
	}
	if f := flavorState(t, flavors, s.q.Flavor); f.uid != string(before.GetUID()) {
		t.Errorf("the dry run recreated the flavor")
	}
	res, err = e.Apply(ctx, grown.Graph, kube.ApplyOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, kueueLog(s.c))
	}
	if got := changes(res); !slices.Equal(got, want) || len(res.Warnings) != 1 {
		t.Errorf("after the gang finished: %v, warnings %v; want %v and the one level warning", got, res.Warnings, want)
	}
	if !e.Settled() {
		t.Error("the engine is not settled once the flavor moved")
	}
	after := flavorState(t, flavors, s.q.Flavor)
	if after.uid == string(before.GetUID()) || after.topology != newTopo || !maps.Equal(after.nodeLabels, s.f.Selector()) {
		t.Errorf("recreated flavor %+v, want a new object naming %s with nodeLabels %v", after, newTopo, s.f.Selector())
	}
	topologies := dyn.Resource(consumertest.KueueResource("topologies"))
	err = kubetest.Poll(ctx, admitTimeout, "the old Topology "+s.topo+" to go", func(ctx context.Context) (bool, error) {
		_, err := topologies.Get(ctx, s.topo, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, kueueLog(s.c))
	}
	if err := consumertest.WaitActive(ctx, dyn, s.q.ClusterQueue, admitTimeout); err != nil {
		t.Fatalf("%v\n%s", err, kueueLog(s.c))
	}

	// Settled: a rerun reads and writes nothing new.
	used := counter.Accesses()
	counter.Reset()
	res, err = e.Apply(ctx, grown.Graph, kube.ApplyOptions{})
	if err != nil || res.Changed != 0 || len(res.Warnings) != 0 || counter.Stats().Writes != 0 {
		t.Errorf("rerun: %v, %s, warnings %v, %+v", err, res.Summary(), res.Warnings, counter.Stats())
	}
	t.Logf("a settled publish with manageFlavors: %+v", counter.Stats())

	// A new gang is admitted through the same flavor name by the new levels.
	levels, _, err := e.Levels(grown.Graph)
	if err != nil {
		t.Fatal(err)
	}
	core := levels[0]
	wl, _ := s.submit(t, "after", 6, consumertest.TopologyRequest{Required: core}, true)
	s.f, s.levels, s.topo = grown, levels, newTopo
	nodes := s.placement(t, wl)
	if cores := s.under(nodes, 2); len(cores) != 1 {
		t.Errorf("new gang by %s spans %v, want one core switch", core, cores)
	}
	psa, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
	if fl, _, _ := unstructured.NestedString(psa[0].(map[string]any), "flavors", "nvidia.com/gpu"); fl != s.q.Flavor {
		t.Errorf("new gang admitted with flavor %q, want %s", fl, s.q.Flavor)
	}
	t.Logf("after the change, a gang by %s was admitted through the recreated flavor %s on %v", core, s.q.Flavor, slices.Sorted(maps.Keys(nodes)))

	if unused := rules.Unused(append(used, counter.Accesses()...)); len(unused) > 0 {
		t.Errorf("kueue.yaml + kueue-flavors.yaml grant permissions the engine never used: %v", unused)
	}
}

// grow publishes the labels of s's fabric grown by a core tier
// (testdata/three-tier.yaml) and returns it.
func grow(t *testing.T, s setup) *consumertest.Fabric {
	t.Helper()
	grown, err := consumertest.NewFabricModel(s.f.Prefix, "testdata/three-tier.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := grown.Publish(t.Context(), s.c); err != nil {
		t.Fatal(err)
	}
	return grown
}

// managedEngine is the kueue engine for s's Topology with manageFlavors
// on, talking through rc, listing 2 objects a page (the package's tests
// share the apiserver, so every list takes several pages).
func managedEngine(t *testing.T, s setup, rc *rest.Config) *schedtopo.Engine {
	t.Helper()
	cfg := schedtopo.DefaultConfig(schedtopo.Kueue)
	cfg.Name, cfg.ManageFlavors, cfg.PageSize = s.topo, true, 2
	clients, err := kubeclient.NewClients(cfg.Tune(rc))
	if err != nil {
		t.Fatal(err)
	}
	e, err := schedtopo.New(cfg, clients.Dynamic, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// changes lists a publish's changes as "op kind name".
func changes(r *kube.Result) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, c.Op+" "+c.Kind+" "+c.Name)
	}
	return out
}

// flavor is what the test checks of a ResourceFlavor.
type flavor struct {
	uid        string
	topology   string
	nodeLabels map[string]string
}

func flavorState(t *testing.T, ri interface {
	Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error)
}, name string) flavor {
	t.Helper()
	o, err := ri.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	topo, _, _ := unstructured.NestedString(o.Object, "spec", "topologyName")
	labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "nodeLabels")
	return flavor{uid: string(o.GetUID()), topology: topo, nodeLabels: labels}
}

// finish sets the Workload's Finished condition, as a job integration
// does when the job ends.
func finish(t *testing.T, s setup, name string) {
	t.Helper()
	ctx := t.Context()
	ri := s.c.Dynamic().Resource(consumertest.KueueResource("workloads")).Namespace(s.q.Namespace)
	err := retry(ctx, func() error {
		wl, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		conds = append(conds, map[string]any{
			"type": "Finished", "status": "True", "reason": "Succeeded", "message": "the job ended",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		})
		_ = unstructured.SetNestedSlice(wl.Object, conds, "status", "conditions")
		_, err = ri.UpdateStatus(ctx, wl, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("finish Workload %s: %v", name, err)
	}
}

// TestManagedFlavorsLeave: manageFlavors leaves what is not plainly
// its own to move: a flavor that also carries another finalizer (warned
// about, and its old Topology kept because the flavor still names it) and
// a flavor naming a Topology toposcope did not write, even one whose name
// looks like toposcope's.
func TestManagedFlavorsLeave(t *testing.T) {
	t.Parallel()
	s := newSetup(t, twoTier, busyOf())
	ctx := t.Context()
	dyn := s.c.Dynamic()
	flavors := dyn.Resource(consumertest.KueueResource("resourceflavors"))
	topologies := dyn.Resource(consumertest.KueueResource("topologies"))
	foreignTopo := s.topo + "-0123456789abcdef" // looks like ours, not labelled ours
	if _, err := topologies.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": map[string]any{"name": foreignTopo},
		"spec": map[string]any{"levels": []any{map[string]any{"nodeLabel": "kubernetes.io/hostname"}}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const keep = "example.com/keep"
	mk := func(name, topo string, finalizers ...string) string {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"topologyName": topo, "nodeLabels": map[string]any{"example.com/pool": name}},
		}}
		o.SetFinalizers(finalizers)
		got, err := flavors.Create(ctx, o, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(got.GetUID())
	}
	held := mk(s.f.Prefix+"-held", s.topo, keep)
	t.Cleanup(func() {
		o, err := flavors.Get(context.Background(), s.f.Prefix+"-held", metav1.GetOptions{})
		if err == nil {
			o.SetFinalizers(nil)
			_, _ = flavors.Update(context.Background(), o, metav1.UpdateOptions{})
		}
	})
	foreign := mk(s.f.Prefix+"-foreign", foreignTopo)

	grown := grow(t, s)
	res, err := managedEngine(t, s, s.c.AdminConfig()).Apply(ctx, grown.Graph, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newTopo := res.Changes[0].Name
	ops := changes(res)
	want := []string{"create Topology " + newTopo, "recreate ResourceFlavor " + s.q.Flavor}
	if !slices.Equal(ops, want) {
		t.Errorf("changes %v, want %v (the old Topology kept: the held flavor names it)", ops, want)
	}
	warning := strings.Join(res.Warnings, "\n")
	if !strings.Contains(warning, s.f.Prefix+"-held") || !strings.Contains(warning, keep) {
		t.Errorf("warnings do not name the held flavor and its finalizer: %v", res.Warnings)
	}
	if f := flavorState(t, flavors, s.f.Prefix+"-held"); f.uid != held || f.topology != s.topo {
		t.Errorf("held flavor touched: %+v", f)
	}
	if f := flavorState(t, flavors, s.f.Prefix+"-foreign"); f.uid != foreign || f.topology != foreignTopo {
		t.Errorf("foreign flavor touched: %+v", f)
	}
	if f := flavorState(t, flavors, s.q.Flavor); f.topology != newTopo {
		t.Errorf("the test's own flavor names %s, want %s", f.topology, newTopo)
	}
	for _, name := range []string{s.topo, foreignTopo} {
		if o, err := topologies.Get(ctx, name, metav1.GetOptions{}); err != nil || o.GetDeletionTimestamp() != nil {
			t.Errorf("Topology %s: %v, deleting %v; want it kept", name, err, o.GetDeletionTimestamp())
		}
	}
}

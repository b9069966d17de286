package schedtopo_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/engines/schedtopo"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/testenv/kubetest"
)

// env is the package's apiserver, owned by TestMain, with the test CRDs.
var env = kubetest.NewEnv(func(ctx context.Context, c *kubetest.Cluster) error {
	return c.InstallCRDs(ctx, "testdata/crds/kueue-topologies.yaml", "testdata/crds/kai-topologies.yaml")
})

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

func newEngine(t *testing.T, s schedtopo.Scheduler, rc *rest.Config, counter *kubetest.Counter, edit func(*schedtopo.Config)) *schedtopo.Engine {
	t.Helper()
	cfg := schedtopo.DefaultConfig(s)
	if edit != nil {
		edit(&cfg)
	}
	clients, err := kubeclient.NewClients(counter.Instrument(cfg.Tune(rc)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := schedtopo.New(cfg, clients.Dynamic, engines.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func levels(t *testing.T, c *kubetest.Cluster, gvr schema.GroupVersionResource, name string) []string {
	t.Helper()
	o, err := c.Dynamic().Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _, _ := unstructured.NestedSlice(o.Object, "spec", "levels")
	var out []string
	for _, l := range raw {
		out = append(out, l.(map[string]any)["nodeLabel"].(string))
	}
	return out
}

// TestTopologyObjects: for Kueue v1beta2 and v1beta1 and for KAI, the
// object is created with the levels of the labels, coarse to fine, then
// hostname; a rerun writes nothing; the apiserver refuses to change the
// levels in place; a depth change is reported and creates a new object.
func TestTopologyObjects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s       schedtopo.Scheduler
		version string
	}{
		{schedtopo.Kueue, "v1beta2"},
		{schedtopo.Kueue, "v1beta1"},
		{schedtopo.KAI, "v1alpha1"},
	}
	for _, tt := range tests {
		t.Run(tt.s.Engine+"-"+tt.version, func(t *testing.T) {
			t.Parallel()
			c := env.Require(t)
			name := c.Prefix(t) + "-fabric"
			counter := kubetest.NewCounter()
			e := newEngine(t, tt.s, c.AdminConfig(), counter, func(cfg *schedtopo.Config) { cfg.Name, cfg.APIVersion = name, tt.version })
			gvr := schema.GroupVersionResource{Group: tt.s.Group, Version: tt.version, Resource: "topologies"}
			ctx := context.Background()
			g3 := (kubetest.Fabric{Prefix: name, Nodes: 64}).MustGraph(t)

			res, err := e.Apply(ctx, g3, kube.ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"topology.toposcope.io/tier-2", "topology.toposcope.io/tier-1", "topology.toposcope.io/tier-0", keys.Hostname}
			if got := levels(t, c, gvr, name); !slices.Equal(got, want) || res.Changed != 1 {
				t.Errorf("levels = %v, want %v (%s)", got, want, res.Summary())
			}

			counter.Reset()
			res, err = e.Apply(ctx, g3, kube.ApplyOptions{})
			if err != nil || res.Unchanged != 1 || counter.Stats().Writes != 0 || counter.Stats().Requests != 1 {
				t.Errorf("rerun: %v, %s, %+v; want one GET and no write", err, res.Summary(), counter.Stats())
			}

			// The CRD makes levels immutable, as Kueue's and KAI's do.
			o, err := c.Dynamic().Resource(gvr).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{"nodeLabel": keys.Hostname}}, "spec", "levels")
			if _, err := c.Dynamic().Resource(gvr).Update(ctx, o, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
				t.Errorf("in-place level change = %v, want Invalid (immutable)", err)
			}

			// The fabric loses a tier: a new object, and a clear warning.
			g2 := (kubetest.Fabric{Prefix: name, Nodes: 64, Tiers: 2}).MustGraph(t)
			res, err = e.Apply(ctx, g2, kube.ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Changed != 1 || len(res.Changes) != 1 || len(res.Warnings) < 2 {
				t.Fatalf("depth change: %s, warnings %v", res.Summary(), res.Warnings)
			}
			alt := res.Changes[0].Name
			if !strings.HasPrefix(alt, name+"-") || !strings.Contains(strings.Join(res.Warnings, "\n"), "immutable") {
				t.Errorf("new object %q, warnings %v", alt, res.Warnings)
			}
			if got := levels(t, c, gvr, alt); len(got) != 3 || got[2] != keys.Hostname {
				t.Errorf("new object levels = %v", got)
			}
			if got := levels(t, c, gvr, name); !slices.Equal(got, want) {
				t.Errorf("old object changed: %v", got)
			}
			counter.Reset()
			res, err = e.Apply(ctx, g2, kube.ApplyOptions{})
			if err != nil || res.Unchanged != 1 || counter.Stats().Writes != 0 {
				t.Errorf("rerun after the depth change: %v, %s, %+v", err, res.Summary(), counter.Stats())
			}

			// The operator deletes the old object, as the warning says: the
			// engine stays on the new one, writes nothing and warns no more
			// (it once created the old name again, with the new levels).
			if err := c.Dynamic().Resource(gvr).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			counter.Reset()
			res, err = e.Apply(ctx, g2, kube.ApplyOptions{})
			if err != nil || res.Unchanged != 1 || len(res.Warnings) != 0 || counter.Stats().Writes != 0 {
				t.Errorf("rerun after the old object was deleted: %v, %s, warnings %v, %+v", err, res.Summary(), res.Warnings, counter.Stats())
			}
			if _, err := c.Dynamic().Resource(gvr).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the deleted object %s came back: %v", name, err)
			}
		})
	}
}

// TestRBAC runs each engine with only the rules of its
// charts/toposcope/rbac/<engine>.yaml and checks each rule was needed.
func TestRBAC(t *testing.T) {
	t.Parallel()
	for _, s := range []schedtopo.Scheduler{schedtopo.Kueue, schedtopo.KAI} {
		t.Run(s.Engine, func(t *testing.T) {
			t.Parallel()
			c := env.Require(t)
			rules, err := kubetest.LoadRules("../../charts/toposcope/rbac/" + s.Engine + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			ns := c.Namespace(t)
			rc, err := c.ServiceAccountConfig(context.Background(), ns, "toposcope", rules.Cluster, rules.Namespace)
			if err != nil {
				t.Fatal(err)
			}
			counter := kubetest.NewCounter()
			name := ns + "-fabric"
			e := newEngine(t, s, rc, counter, func(cfg *schedtopo.Config) { cfg.Name = name })
			for _, tiers := range []int{3, 3, 2} { // create, unchanged, new object
				if _, err := e.Apply(context.Background(), (kubetest.Fabric{Prefix: name, Nodes: 16, Tiers: tiers}).MustGraph(t), kube.ApplyOptions{}); err != nil {
					t.Fatalf("publish as the ServiceAccount: %v", err)
				}
			}
			if unused := rules.Unused(counter.Accesses()); len(unused) > 0 {
				t.Errorf("charts/toposcope/rbac/%s.yaml grants permissions the engine never used: %v", s.Engine, unused)
			}
		})
	}
}

package kubetest_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/toposcope/toposcope/testenv/kubetest"
)

var env = kubetest.NewEnv()

func TestMain(m *testing.M) { os.Exit(env.Run(m)) }

func TestParseRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		method, url string
		want        kubetest.Access
	}{
		{"GET", "/api/v1/nodes?limit=500", kubetest.Access{Verb: "list", Resource: "nodes"}},
		{"GET", "/api/v1/nodes?limit=500&continue=abc", kubetest.Access{Verb: "list", Resource: "nodes", Continue: true}},
		{"GET", "/api/v1/nodes?watch=true", kubetest.Access{Verb: "watch", Resource: "nodes"}},
		{"PATCH", "/api/v1/nodes/gpu001", kubetest.Access{Verb: "patch", Resource: "nodes", Name: "gpu001"}},
		{"GET", "/api/v1/namespaces/slurm/configmaps/toposcope-topology", kubetest.Access{Verb: "get", Resource: "configmaps", Namespace: "slurm", Name: "toposcope-topology"}},
		{"POST", "/api/v1/namespaces/slurm/configmaps", kubetest.Access{Verb: "create", Resource: "configmaps", Namespace: "slurm"}},
		{"PUT", "/api/v1/namespaces/x/serviceaccounts/sa/token", kubetest.Access{Verb: "update", Resource: "serviceaccounts", Namespace: "x", Name: "sa", Subresource: "token"}},
		{"GET", "/api/v1/namespaces/x", kubetest.Access{Verb: "get", Resource: "namespaces", Name: "x"}},
		{"POST", "/apis/kueue.x-k8s.io/v1beta2/topologies", kubetest.Access{Verb: "create", Group: "kueue.x-k8s.io", Resource: "topologies"}},
		{"DELETE", "/apis/kai.scheduler/v1alpha1/topologies/t", kubetest.Access{Verb: "delete", Group: "kai.scheduler", Resource: "topologies", Name: "t"}},
		{"DELETE", "/api/v1/nodes", kubetest.Access{Verb: "deletecollection", Resource: "nodes"}},
		{"GET", "/readyz", kubetest.Access{Verb: "get"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(tt.method, "https://h"+tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := kubetest.ParseRequest(req); got != tt.want {
				t.Errorf("ParseRequest = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRulesUnused(t *testing.T) {
	t.Parallel()
	r := kubetest.Rules{
		Cluster:   []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list", "patch"}}},
		Namespace: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cm"}, Verbs: []string{"get", "update"}}},
	}
	got := r.Unused([]kubetest.Access{{Verb: "list", Resource: "nodes"}, {Verb: "get", Resource: "configmaps", Namespace: "ns", Name: "cm"}})
	want := []string{"patch core/nodes", "update core/configmaps/cm"}
	if !slices.Equal(got, want) {
		t.Errorf("Unused = %v, want %v", got, want)
	}
}

func TestFabric(t *testing.T) {
	t.Parallel()
	f := kubetest.Fabric{Prefix: "p", Nodes: 100, DomainSize: 8, SubDomainSize: 4, DomainNodes: 64}
	g, err := f.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes()) != 100 || g.Depth() != 3 || len(g.Domains()) != 8 || len(g.Roots()) != 1 {
		t.Errorf("nodes %d depth %d domains %d roots %d", len(g.Nodes()), g.Depth(), len(g.Domains()), len(g.Roots()))
	}
	if p := g.Path(f.NodeName(99)); len(p) != 3 || p[0].ID != "p-leaf007" || p[1].ID != "p-spine02" {
		t.Errorf("path of the last node = %v", p)
	}
}

// TestCluster starts the real apiserver and checks what the other
// packages rely on: admin access, RBAC enforcement for a ServiceAccount
// token, CRD installation and request counting.
func TestCluster(t *testing.T) {
	t.Parallel()
	c := env.Require(t)
	ctx := context.Background()
	p := c.Prefix(t)
	nodes := kubetest.NodeObjects([]string{p + "-a", p + "-b"}, map[string]string{kubetest.PrefixLabel: p})
	if err := c.CreateNodes(ctx, nodes, 2); err != nil {
		t.Fatal(err)
	}
	ns := c.Namespace(t)
	cfg, err := c.ServiceAccountConfig(ctx, ns, "reader",
		[]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	counter := kubetest.NewCounter()
	cs, err := kubernetes.NewForConfig(counter.Instrument(cfg))
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: kubetest.Selector(p)})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("list as the service account: %v (%d nodes)", err, len(list.Items))
	}
	_, err = cs.CoreV1().Nodes().Patch(ctx, p+"-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("patch without the permission = %v, want Forbidden", err)
	}
	s := counter.Stats()
	if s.Requests != 2 || s.Writes != 1 || s.ByVerb["list"] != 1 || s.ByVerb["patch"] != 1 || s.BytesSent == 0 || s.BytesReceived == 0 {
		t.Errorf("stats = %+v", s)
	}
	if err := c.InstallCRDs(ctx, "../../engines/schedtopo/testdata/crds/kai-topologies.yaml"); err != nil {
		t.Fatal(err)
	}
	obj := []byte("apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: " + p + "}\nspec:\n  levels: [{nodeLabel: kubernetes.io/hostname}]\n")
	if err := c.Apply(ctx, obj, ""); err != nil {
		t.Fatal(err)
	}
	bad := []byte("apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: " + p + "-bad}\nspec:\n  levels: [{nodeLabel: kubernetes.io/hostname}, {nodeLabel: a.io/b}]\n")
	if err := c.Apply(ctx, bad, ""); err == nil {
		t.Error("the CRD accepted kubernetes.io/hostname before another level")
	}
}
